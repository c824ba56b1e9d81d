#if canImport(Glibc)
import Glibc
#endif
import TripKit

/// A plan's deduplication state on disk: a `TemporaryDatabase` in `--temp-dir`, its page cache `cacheBytes`.
///
/// A group is found by a hash of its deduplication and tuple (`Hasher`, this process's seed), and
/// its tuple read back and compared with `==`, so tuples are equal exactly when they are in memory
/// (Swift's String equality, `0.0 == -0.0`, NaN equal to nothing). Tables: `grp` (number, hash,
/// deduplication, the survivor's reference, tuple and origin in `ObjectRecordCoding`'s bytes, the
/// merged record of the later duplicates), `dup` and `mrg` (reference to group number), and the
/// ownership lists under `first` and `last` in `ObjectReferenceListTable`'s `lst` (a space per list).
final class DeduplicationTable {
    enum Map { case duplicate, merging }

    private let connection: SQLiteConnection
    let directory: String
    private let find, insertGroup, read, update, setDuplicate, setMerging, getDuplicate, getMerging: SQLiteStatement
    private let lists: ObjectReferenceListTable
    private(set) var count = 0
    private(set) var entries = 0
    private(set) var hasDuplicates = false
    private var scratch: [UInt8] = []

    init(directory: String, cacheBytes: Int) throws {
        self.directory = directory
        let c = try TemporaryDatabase.open(directory: directory, prefix: "dedupe", cacheBytes: cacheBytes, schema: """
            CREATE TABLE grp(g INTEGER PRIMARY KEY, h INTEGER NOT NULL, d INTEGER NOT NULL, rec BLOB NOT NULL, later BLOB);
            CREATE INDEX grp_h ON grp(h);
            CREATE TABLE dup(e INTEGER NOT NULL, k INTEGER NOT NULL, g INTEGER NOT NULL, PRIMARY KEY(e, k)) WITHOUT ROWID;
            CREATE TABLE mrg(e INTEGER NOT NULL, k INTEGER NOT NULL, g INTEGER NOT NULL, PRIMARY KEY(e, k)) WITHOUT ROWID;
            \(ObjectReferenceListTable.schema)
            """)
        do {
            connection = c
            find = try c.prepare("SELECT g, d, rec FROM grp WHERE h = ?")
            insertGroup = try c.prepare("INSERT INTO grp(g, h, d, rec, later) VALUES (?, ?, ?, ?, ?)")
            read = try c.prepare("SELECT d, rec, later FROM grp WHERE g = ?")
            update = try c.prepare("UPDATE grp SET rec = ?, later = ? WHERE g = ?")
            setDuplicate = try c.prepare("INSERT OR REPLACE INTO dup(e, k, g) VALUES (?, ?, ?)")
            setMerging = try c.prepare("INSERT OR REPLACE INTO mrg(e, k, g) VALUES (?, ?, ?)")
            getDuplicate = try c.prepare("SELECT g FROM dup WHERE e = ? AND k = ?")
            getMerging = try c.prepare("SELECT g FROM mrg WHERE e = ? AND k = ?")
            lists = try ObjectReferenceListTable(c)
        } catch let error as TripError {
            throw TemporaryDatabase.failure(error, directory: directory)
        }
    }

    /// A failure of the database: a write that did not happen (a full disk), exit 74 as the trips' spill.
    private func failure(_ error: TripError) -> TripError { TemporaryDatabase.failure(error, directory: directory) }

    private func io<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as TripError { throw failure(error) }
    }

    private static func hash(_ deduplication: Int, _ values: [ObjectValue]) -> Int64 {
        var h = Hasher()
        h.combine(deduplication)
        h.combine(values)
        return Int64(truncatingIfNeeded: h.finalize())
    }

    private func encode(_ group: ObjectDeduplicationGroup) -> [UInt8] {
        scratch.removeAll(keepingCapacity: true)
        ObjectRecordCoding.encode(ObjectRecord(entity: group.survivor.entity, key: group.survivor.key, attributes: group.values,
                                               relationships: [], origin: group.origin), to: &scratch)
        return scratch
    }

    private static func encode(_ later: ObjectRecord?) -> [UInt8]? {
        guard let later else { return nil }
        var out: [UInt8] = []
        ObjectRecordCoding.encode(later, to: &out)
        return out
    }

    private static func decode(_ bytes: [UInt8]) throws -> ObjectRecord {
        try bytes.withUnsafeBufferPointer { b in
            var decoder = ObjectRecordCoding.Decoder(bytes: b)
            return try decoder.record()
        }
    }

    func group(_ deduplication: Int, _ values: [ObjectValue]) throws -> Int? {
        try group(deduplication, values, hash: DeduplicationTable.hash(deduplication, values))
    }

    /// The group of `values`, or a new group of one object, `survivor` at `origin`, and nil: the
    /// tuple hashed once for the look-up and the insert.
    func group(_ deduplication: Int, _ values: [ObjectValue], orAdd survivor: ObjectReference, origin: RecordOrigin) throws -> Int? {
        let h = DeduplicationTable.hash(deduplication, values)
        if let g = try group(deduplication, values, hash: h) { return g }
        try insert(count, ObjectDeduplicationGroup(survivor: survivor, origin: origin, values: values, deduplication: deduplication), hash: h)
        return nil
    }

    private func group(_ deduplication: Int, _ values: [ObjectValue], hash: Int64) throws -> Int? {
        try io {
            try find.bind(1, hash)
            defer { find.reset() }
            while try find.step() {
                guard Int(find.int64(1)) == deduplication else { continue }
                if try DeduplicationTable.decode(find.bytes(2)).attributes == values { return Int(find.int64(0)) }
            }
            return nil
        }
    }

    func add(_ group: ObjectDeduplicationGroup) throws -> Int {
        try insert(count, group)
        return count - 1
    }

    /// Inserts `group` as number `g` (the next one).
    func insert(_ g: Int, _ group: ObjectDeduplicationGroup, hash: Int64? = nil) throws {
        try io {
            try insertGroup.bind(1, Int64(g))
            try insertGroup.bind(2, hash ?? DeduplicationTable.hash(group.deduplication, group.values))
            try insertGroup.bind(3, Int64(group.deduplication))
            try insertGroup.bind(4, blob: encode(group))
            if let later = DeduplicationTable.encode(group.later) { try insertGroup.bind(5, blob: later) } else { try insertGroup.bindNull(5) }
            try insertGroup.run()
        }
        count = max(count, g + 1)
        entries += 1
    }

    func group(at index: Int) throws -> ObjectDeduplicationGroup {
        try io {
            try read.bind(1, Int64(index))
            defer { read.reset() }
            guard try read.step() else { throw TripError(.io, "group \(index) is missing") }
            let record = try DeduplicationTable.decode(read.bytes(1))
            let later = read.isNull(2) ? nil : try DeduplicationTable.decode(read.bytes(2))
            return ObjectDeduplicationGroup(survivor: ObjectReference(entity: record.entity, key: record.key), origin: record.origin,
                                            values: record.attributes, deduplication: Int(read.int64(0)), later: later)
        }
    }

    func replace(_ index: Int, with group: ObjectDeduplicationGroup) throws {
        try io {
            try update.bind(1, blob: encode(group))
            if let later = DeduplicationTable.encode(group.later) { try update.bind(2, blob: later) } else { try update.bindNull(2) }
            try update.bind(3, Int64(index))
            try update.run()
        }
    }

    func set(_ map: Map, _ reference: ObjectReference, _ group: Int) throws {
        let s = map == .duplicate ? setDuplicate : setMerging
        try io {
            try s.bind(1, Int64(reference.entity)); try s.bind(2, reference.key); try s.bind(3, Int64(group))
            try s.run()
        }
        entries += 1
        if map == .duplicate { hasDuplicates = true }
    }

    func get(_ map: Map, _ reference: ObjectReference) throws -> Int? {
        let s = map == .duplicate ? getDuplicate : getMerging
        return try io {
            try s.bind(1, Int64(reference.entity)); try s.bind(2, reference.key)
            defer { s.reset() }
            return try s.step() ? Int(s.int64(0)) : nil
        }
    }

    /// Notes `reference` in `object`'s list `list`, after those noted before.
    func append(_ reference: ObjectReference, to object: ObjectReference, in list: Int) throws {
        try io { try lists.append(reference, to: object, in: list) }
        entries += 1
    }

    /// The references noted for `object` in `list`, in the order noted; nil where none.
    func references(of object: ObjectReference, in list: Int) throws -> [ObjectReference]? {
        try io { try lists.references(of: object, in: list) }
    }

    /// Whether any reference was noted in `list`.
    func hasReferences(in list: Int) -> Bool { lists.hasReferences(in: list) }

    /// The database's size: its pages.
    func bytes() throws -> Int {
        try io { try TemporaryDatabase.bytes(connection) }
    }
}
