import TripKit

/// Reads the objects of any model out of a Core Data SQLite store (a SwiftData `default.store` is
/// one): entity by entity in the model's order, each entity's objects in `Z_PK` order, each an
/// `ObjectRecord` whose key is its `Z_PK` and whose relationships are references.
///
/// The store is read as SQLite reads it, its `-wal` honoured, at one snapshot, and none of its files
/// is written, not even the `-shm` (`StoreSnapshot`). Memory is bounded: one row of each open
/// statement, the object being built and its references; a to-many is a statement ordered by the
/// owner's key, merge-joined with the owner rows.
///
/// A value of the wrong storage class (text in an INTEGER column) sets its object aside, naming
/// table, `Z_PK` and column; a reference that names no row, or a layout that is not Core Data's for
/// this model, is `.data` (exit 65) with the place.
///
/// ```swift
/// let reader = try CoreDataObjectReader(path: "default.store", model: model)
/// while let item = try reader.next() { … }
/// ```
public final class CoreDataObjectReader: ObjectRecordReader {
    /// The model whose objects are read, as given.
    public let model: ObjectModel
    /// The store's file, as messages and origins name it.
    public let path: String
    private let snapshot: StoreSnapshot
    private let layout: CoreDataObjectLayout
    private var position = 0
    @exclusivity(unchecked) private var cursor: CoreDataEntityCursor?
    private var count = 0
    private var isDone = false

    /// Opens a store to read the objects of `model`. `entityNumbers` are `Z_PRIMARYKEY`'s `Z_ENT` by
    /// entity name; when nil they are read from the store. A missing file is `.noInput`; a store
    /// whose tables do not hold this model as Core Data lays it out is `.data`; a lock held past
    /// the timeout is `.busy`. A store with a `-wal` but no `-shm` is read from a private copy made in
    /// `temporaryDirectory` (`--temp-dir`; nil: `$TMPDIR`, else `/tmp`).
    public init(path: String, model: ObjectModel, entityNumbers: [String: Int64]? = nil, busyTimeoutMilliseconds: Int = 5000,
                temporaryDirectory: String? = nil) throws {
        self.path = path
        self.model = model
        snapshot = try StoreSnapshot(path: path, busyTimeout: Int32(clamping: busyTimeoutMilliseconds), temporaryDirectory: temporaryDirectory)
        do {
            let c = snapshot.connection!
            guard CoreDataStoreLayout.isCoreData(tables: try SQLiteStoreStructure(c).tableNames()) else {
                throw TripError.data("\(path): not a Core Data store: it has no Z_PRIMARYKEY and Z_METADATA tables")
            }
            layout = try CoreDataObjectLayout(c, model: model, numbers: try entityNumbers ?? CoreDataObjectLayout.entityNumbers(c))
        } catch {
            snapshot.end()
            throw error
        }
    }

    /// How the store was opened (for tests and `detect`): immutable, with a read-only `-shm`, from a
    /// private copy, or in rollback-journal mode.
    var route: StoreSnapshot.Route { snapshot.route }

    /// The next object, or a record set aside; nil after the last (the read transaction ends).
    public func next() throws -> ObjectReadItem? {
        var none: ObjectReadItem?
        return try next(reusing: &none)
    }

    /// `next()`, made in the arrays of `spent`, an item this reader gave before that no one holds
    /// any more (its values and references are dropped here, on the reading thread, and their
    /// arrays' room used again): no array allocated per object where the spent one has the room.
    func next(reusing spent: inout ObjectReadItem?) throws -> ObjectReadItem? {
        guard !isDone else { return nil }
        do {
            while position < layout.entities.count {
                if cursor == nil {
                    cursor = try CoreDataEntityCursor(snapshot.connection, layout.entities[position], layout.entityByNumber, path: path)
                }
                if let item = try cursor!.next(record: count + 1, reusing: &spent) {
                    count += 1
                    return item
                }
                cursor = nil
                position += 1
            }
        } catch {
            finish()
            throw error
        }
        finish()
        return nil
    }

    private func finish() {
        isDone = true
        cursor = nil
        snapshot.end()
    }
}

/// The objects of one entity: its rows in `Z_PK` order and, per to-many, a statement in owner order.
final class CoreDataEntityCursor {
    private final class List {
        let statement: SQLiteStatement
        let table: String
        let column: String
        // Read per reference: unchecked, as the cursor alone uses a list (no access checks per read).
        @exclusivity(unchecked) var hasRow = false
        @exclusivity(unchecked) var owner: Int64 = 0

        init(_ statement: SQLiteStatement, table: String, column: String) {
            self.statement = statement; self.table = table; self.column = column
        }

        func advance() throws {
            hasRow = try statement.step()
            if hasRow { owner = statement.int64(0) }
        }
    }

    private let plan: CoreDataObjectLayout.EntityPlan
    private let entityByNumber: [Int64: Int]
    private let path: String
    private let rows: SQLiteStatement
    private let lists: [List?]
    /// Per relationship, the entity number last met and its entity: most references name one entity.
    @exclusivity(unchecked) private var lastNumber: [Int64]
    @exclusivity(unchecked) private var lastEntity: [Int]
    /// The attributes' kinds and columns (-1: transient), read without copying their descriptions.
    private let kinds: [AttributeKind]
    /// Per attribute: binary data that may be kept in a file beside the store (a marker byte first).
    private let external: [Bool]
    /// `.<store>_SUPPORT/_EXTERNAL_DATA` beside the store, where such files are.
    private let supportDirectory: String
    private let columns: [Int32]
    /// Per relationship: a to-one's first column in the owner statement, -1 for a to-many (read
    /// per object without copying the slots' texts, which only messages use).
    private let toOneColumns: [Int32]

    init(_ connection: SQLiteConnection, _ plan: CoreDataObjectLayout.EntityPlan, _ entityByNumber: [Int64: Int], path: String) throws {
        self.plan = plan; self.entityByNumber = entityByNumber; self.path = path
        lastNumber = Array(repeating: Int64.min, count: plan.slots.count)
        lastEntity = Array(repeating: 0, count: plan.slots.count)
        kinds = plan.attributes.map(\.kind)
        external = plan.attributes.map { $0.allowsExternalStorage && ($0.kind == .binary || $0.kind == .transformable) }
        supportDirectory = CoreDataValues.supportDirectory(ofStoreAt: path)
        columns = plan.attributeColumns.map { $0 ?? -1 }
        toOneColumns = plan.slots.map { slot in
            if case .toOne(let first, _) = slot { return first }
            return -1
        }
        for check in plan.checks {
            guard let (owner, target) = try CoreDataKeyCheck.firstDangling(connection, check.sql) else { continue }
            let place = check.isJoinTable ? "\(check.table) row of owner Z_PK \(owner)" : "\(check.table) row Z_PK \(owner)"
            throw CoreDataEntityCursor.dangling(path, place: "\(place): column \(check.column)", target: target, side: check.side)
        }
        rows = try connection.prepare(plan.sql)
        lists = try plan.slots.map { slot in
            guard case .toMany(let sql, let table, let column) = slot else { return nil }
            let list = List(try connection.prepare(sql), table: table, column: column)
            try list.advance()
            return list
        }
    }

    /// The next object of the entity, nil after its last; its arrays those of `spent` where it is an
    /// object (emptied, their room kept: `CoreDataObjectReader.next(reusing:)`).
    func next(record: Int, reusing spent: inout ObjectReadItem?) throws -> ObjectReadItem? {
        guard try rows.step() else { return nil }
        let key = rows.int64(0)
        var values: [ObjectValue] = []
        var references: [[ObjectReference]] = []
        if case .object(var old)? = spent {
            // The only holder once `spent` lets go: the arrays are reused, not copied.
            spent = nil
            swap(&values, &old.attributes)
            swap(&references, &old.relationships)
            values.removeAll(keepingCapacity: true)
        }
        values.reserveCapacity(plan.attributes.count)
        var problem: String?
        for n in 0..<kinds.count {
            let c = columns[n]
            guard c >= 0 else { values.append(.null); continue }
            switch external[n] ? CoreDataValues.externalData(rows, c, supportDirectory: supportDirectory)
                               : CoreDataValues.value(rows, c, kinds[n]) {
            case .success(let v): values.append(v)
            case .failure(let why):
                values.append(.null)
                if problem == nil {
                    problem = "\(plan.table) row Z_PK \(key): column \(plan.attributeColumnNames[n]!) (\(plan.attributes[n].name)): \(why.text)"
                }
            }
        }
        // Each relationship's list emptied in place (its room kept), or made where the spent object's
        // entity had other relationships.
        if references.count != toOneColumns.count { references = Array(repeating: [], count: toOneColumns.count) }
        for n in toOneColumns.indices {
            references[n].removeAll(keepingCapacity: true)
            let first = toOneColumns[n]
            if first >= 0 {
                if rows.isNull(first) { continue }
                let target = rows.int64(first)
                let found = rows.isNull(first + 1) ? nil : rows.int64(first + 2)
                references[n].append(try reference(found, target, n, place: "\(plan.table) row Z_PK \(key): column \(toOneColumn(n))"))
            } else {
                let list = lists[n]!
                while list.hasRow, list.owner < key { try list.advance() }
                while list.hasRow, list.owner == key {
                    let s = list.statement
                    let target = s.int64(1)
                    let found = s.isNull(2) ? nil : s.int64(3)
                    references[n].append(try reference(found, target, n, place: "\(list.table) row of owner Z_PK \(key): column \(list.column)"))
                    try list.advance()
                }
            }
        }
        let origin = RecordOrigin(source: path, record: record)
        if let problem { return .rejected(SetAsideRecord(origin: origin, reason: problem)) }
        return .object(ObjectRecord(entity: plan.index, key: key, attributes: values, relationships: references, origin: origin))
    }

    /// The column of the to-one at slot `n`, for a message.
    private func toOneColumn(_ n: Int) -> String {
        if case .toOne(_, let column) = plan.slots[n] { return column }
        return ""
    }

    /// The reference to row `target`, whose `Z_ENT` is `found` (nil when no row has that key);
    /// `place` is made only for the message.
    private func reference(_ found: Int64?, _ target: Int64, _ slot: Int, place: @autoclosure () -> String) throws -> ObjectReference {
        if let found, found == lastNumber[slot] { return ObjectReference(entity: lastEntity[slot], key: target) }
        guard let found, plan.destinations[slot].contains(found), let entity = entityByNumber[found] else {
            throw CoreDataEntityCursor.dangling(path, place: place(), target: target)
        }
        lastNumber[slot] = found
        lastEntity[slot] = entity
        return ObjectReference(entity: entity, key: target)
    }

    private static func dangling(_ path: String, place: String, target: Int64, side: String = "destination") -> TripError {
        TripError.data("\(path): \(place) names Z_PK \(target), which no row of the relationship's \(side) has",
                       notes: ["a reference to a row that is gone: the store is damaged"])
    }
}
