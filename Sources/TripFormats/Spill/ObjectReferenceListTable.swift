import TripKit

/// `ObjectReferenceLists` on disk: a temporary database's table `lst(s, e, k, q, re, rk)` (made by
/// `schema`), keyed by space, object and the order appended (`q`, counted over the table). Where the
/// plan's deduplication (`DeduplicationTable`, a space per `OwnershipList`) and the run's key table
/// (`ObjectKeyTable`'s list spaces) keep their lists once spilled; each maps a failure to
/// `TemporaryDatabase.failure`, as for its other tables.
final class ObjectReferenceListTable {
    static let schema = """
        CREATE TABLE lst(s INTEGER NOT NULL, e INTEGER NOT NULL, k INTEGER NOT NULL, q INTEGER NOT NULL,
                         re INTEGER NOT NULL, rk INTEGER NOT NULL, PRIMARY KEY(s, e, k, q)) WITHOUT ROWID;
        """
    private let insert, read, readSorted: SQLiteStatement
    private var appended: Int64 = 0
    /// Per space, whether anything was appended to it (a list of another is none, without a query).
    private var used: [Bool] = []

    /// The lists in `connection`'s table `lst` (`schema`).
    init(_ connection: SQLiteConnection) throws {
        insert = try connection.prepare("INSERT INTO lst(s, e, k, q, re, rk) VALUES (?, ?, ?, ?, ?, ?)")
        read = try connection.prepare("SELECT re, rk FROM lst WHERE s = ? AND e = ? AND k = ? ORDER BY q")
        readSorted = try connection.prepare("SELECT re, rk FROM lst WHERE s = ? AND e = ? AND k = ? ORDER BY re, rk")
    }

    /// Appends `reference` to `object`'s list in `space`.
    func append(_ reference: ObjectReference, to object: ObjectReference, in space: Int) throws {
        try insert.bind(1, Int64(space)); try insert.bind(2, Int64(object.entity)); try insert.bind(3, object.key)
        try insert.bind(4, appended); try insert.bind(5, Int64(reference.entity)); try insert.bind(6, reference.key)
        try insert.run()
        appended += 1
        if space >= used.count { used += Array(repeating: false, count: space + 1 - used.count) }
        used[space] = true
    }

    /// `object`'s list in `space`, in the order appended, or in reference order (`ObjectReference`'s
    /// `<`) where `sorted`; nil where none was appended to.
    func references(of object: ObjectReference, in space: Int, sorted: Bool = false) throws -> [ObjectReference]? {
        guard hasReferences(in: space) else { return nil }
        let s = sorted ? readSorted : read
        try s.bind(1, Int64(space)); try s.bind(2, Int64(object.entity)); try s.bind(3, object.key)
        defer { s.reset() }
        var out: [ObjectReference] = []
        while try s.step() { out.append(ObjectReference(entity: Int(s.int64(0)), key: s.int64(1))) }
        return out.isEmpty ? nil : out
    }

    /// Whether anything was appended to `space`.
    func hasReferences(in space: Int) -> Bool { space < used.count && used[space] }
}
