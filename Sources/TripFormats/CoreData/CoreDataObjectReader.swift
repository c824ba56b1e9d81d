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
    /// The keys of the rows read of each entity a later entity's check names (`CoreDataKeyBits`):
    /// a bit per key, held until the read ends.
    private var known: [Int: CoreDataKeyBits] = [:]
    private let named: Set<Int>

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
            named = Set(layout.entities.flatMap { $0.checks.compactMap(\.destination) })
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
        guard let (cursor, key, record) = try nextRow() else { return nil }
        return try reading { try cursor.item(key: key, record: record, reusing: &spent) }
    }

    /// The next row of the store (entity by entity, as `next()` gives its objects): the cursor standing on
    /// it, its `Z_PK` and its record number; nil after the last (the read transaction ends). What is read
    /// of the row after this goes through `reading(_:)`.
    func nextRow() throws -> (cursor: CoreDataEntityCursor, key: Int64, record: Int)? {
        guard !isDone else { return nil }
        return try reading {
            while position < layout.entities.count {
                if cursor == nil {
                    let plan = layout.entities[position]
                    cursor = try CoreDataEntityCursor(snapshot.connection, plan, layout.entityByNumber, path: path, known: known,
                                                      recordsKeys: named.contains(plan.index))
                }
                if let key = try cursor!.step() {
                    count += 1
                    return (cursor!, key, count)
                }
                if let keys = cursor!.keys { known[layout.entities[position].index] = keys }
                cursor = nil
                position += 1
            }
            finish()
            return nil
        }
    }

    /// Runs `body`, which reads the store; on its error the read ends (the snapshot let go) before it is thrown.
    func reading<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            finish()
            throw error
        }
    }

    /// Ends the read (the snapshot let go); `next()` gives nil after.
    func finish() {
        isDone = true
        cursor = nil
        snapshot.end()
    }
}

/// The objects of one entity: its rows in `Z_PK` order and, per to-many, a statement in owner order.
///
/// The checks that every key names a row (`CoreDataObjectLayout.Check`) are made as the keys are read
/// where they can be: a to-one's key and a join table's key against a bitmap of the destination's keys
/// (those of its rows read before, else one scan of them), a to-many's owner key by the merge join
/// stepping over it. The first key that may name no row runs every check of the entity in order with
/// `NOT IN` (`CoreDataKeyCheck.firstDangling`), as they all ran before the first object once, so the
/// error names the row it always named; objects before it were given, as those of earlier entities are.
final class CoreDataEntityCursor {
    private final class List {
        let statement: SQLiteStatement
        let table: String
        let column: String
        // Read per reference: unchecked, as the cursor alone uses a list (no access checks per read).
        @exclusivity(unchecked) var hasRow = false
        @exclusivity(unchecked) var owner: Int64 = 0
        /// Whether column 1's keys are tested against `keys`; `missed` once one is not there.
        @exclusivity(unchecked) var testsKeys = false
        @exclusivity(unchecked) var keys = CoreDataKeyBits()
        @exclusivity(unchecked) var missed = false
        /// Whether an owner key the merge join steps over names no row (the owner is this entity alone).
        var testsOwners = false

        init(_ statement: SQLiteStatement, table: String, column: String) {
            self.statement = statement; self.table = table; self.column = column
        }

        func advance() throws {
            hasRow = try statement.step()
            guard hasRow else { return }
            owner = statement.int64(0)
            if testsKeys {
                switch statement.storage(1) {
                case .null: break
                case .integer: if !keys.contains(statement.int64(1)) { missed = true }
                default: missed = true
                }
            }
        }
    }

    private let connection: SQLiteConnection
    let plan: CoreDataObjectLayout.EntityPlan
    private let entityByNumber: [Int64: Int]
    private let path: String
    let rows: SQLiteStatement
    private let lists: [List?]
    /// Per relationship, the entity number last met and its entity: most references name one entity.
    @exclusivity(unchecked) private var lastNumber: [Int64]
    @exclusivity(unchecked) private var lastEntity: [Int]
    /// The attributes' kinds and columns (-1: transient), read without copying their descriptions.
    let kinds: [AttributeKind]
    /// Per attribute: binary data that may be kept in a file beside the store (a marker byte first).
    let external: [Bool]
    /// `.<store>_SUPPORT/_EXTERNAL_DATA` beside the store, where such files are.
    private let supportDirectory: String
    let columns: [Int32]
    /// Per relationship: a to-one's first column in the owner statement, -1 for a to-many (read
    /// per object without copying the slots' texts, which only messages use).
    private let toOneColumns: [Int32]
    /// Per relationship: a to-one's destination number where the destination has no sub-entities
    /// (its statement's columns after the key repeat it), else `Int64.min`.
    private let onlyNumber: [Int64]
    /// Per relationship: the index in `probedKeys` of the keys a to-one's key is tested against as
    /// rows are read, -1 for none.
    private let probeOfSlot: [Int]
    private let probedKeys: [CoreDataKeyBits]
    /// False once every check has run in full and found every key (or before any was deferred).
    @exclusivity(unchecked) private var isProbing = false
    /// The keys of this entity's rows, made as they are read where `recordsKeys`; nil where too
    /// sparse for a bitmap (or not asked for).
    private(set) var keys: CoreDataKeyBits?

    init(_ connection: SQLiteConnection, _ plan: CoreDataObjectLayout.EntityPlan, _ entityByNumber: [Int64: Int], path: String,
         known: [Int: CoreDataKeyBits] = [:], recordsKeys: Bool = false) throws {
        self.connection = connection
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
        onlyNumber = plan.slots.indices.map { n in
            guard case .toOne = plan.slots[n], plan.destinations[n].count == 1 else { return Int64.min }
            return plan.destinations[n].first!
        }
        keys = recordsKeys ? CoreDataKeyBits() : nil
        rows = try connection.prepare(plan.sql)
        lists = try plan.slots.map { slot in
            guard case .toMany(let sql, let table, let column) = slot else { return nil }
            return List(try connection.prepare(sql), table: table, column: column)
        }
        // Each check deferred to the reading of its keys where it can be, else run now.
        var probeOfSlot = Array(repeating: -1, count: plan.slots.count), probedKeys: [CoreDataKeyBits] = []
        var suspect = false
        func destinationKeys(_ check: CoreDataObjectLayout.Check) throws -> CoreDataKeyBits? {
            if let d = check.destination, let k = known[d] { return k }
            return try CoreDataKeyCheck.bits(connection, check.sql)
        }
        for check in plan.checks {
            switch check.probe {
            case .toOne(let column):
                if let k = try destinationKeys(check), let slot = toOneColumns.firstIndex(of: column) {
                    probeOfSlot[slot] = probedKeys.count
                    probedKeys.append(k)
                    continue
                }
            case .listKey(let slot, let nullOwners):
                if let k = try destinationKeys(check) {
                    lists[slot]!.testsKeys = true; lists[slot]!.keys = k
                    // A row with no owner is not among the list's rows: found apart.
                    if try connection.prepare(nullOwners).step() { suspect = true }
                    continue
                }
            case .listOwner(let slot):
                lists[slot]!.testsOwners = true
                continue
            case .none: break
            }
            if try CoreDataKeyCheck.firstDangling(connection, check.sql) != nil { suspect = true }
        }
        self.probeOfSlot = probeOfSlot; self.probedKeys = probedKeys
        isProbing = !plan.checks.isEmpty
        if suspect { try runChecks() }
        for list in lists { try list?.advance() }
        try checkLists()
    }

    /// Every check of the entity in order, with `NOT IN`: the first reference naming no row is
    /// `.data`; when there is none (a key that is text, say), testing stops.
    private func runChecks() throws {
        guard isProbing else { return }
        for check in plan.checks {
            guard let (owner, target) = try CoreDataKeyCheck.firstDangling(connection, check.sql) else { continue }
            let place = check.isJoinTable ? "\(check.table) row of owner Z_PK \(owner)" : "\(check.table) row Z_PK \(owner)"
            throw CoreDataEntityCursor.dangling(path, place: "\(place): column \(check.column)", target: target, side: check.side)
        }
        isProbing = false
        for list in lists {
            list?.testsKeys = false
            list?.testsOwners = false
        }
    }

    /// `runChecks()` where a list met a key that may name no row.
    private func checkLists() throws {
        if lists.contains(where: { $0?.missed == true }) { try runChecks() }
    }

    /// After the entity's last row: the lists' rows past it (an owner key naming no row of it, or a
    /// join table's keys yet to be tested).
    private func finishChecks() throws {
        guard isProbing else { return }
        for case let list? in lists where list.testsKeys || list.testsOwners {
            if list.testsOwners && list.hasRow { return try runChecks() }
            while list.hasRow { try list.advance() }
        }
        try checkLists()
    }

    /// Steps to the entity's next row and gives its `Z_PK`; nil after its last (the lists' rows past it checked).
    func step() throws -> Int64? {
        guard try rows.step() else {
            try finishChecks()
            return nil
        }
        let key = rows.int64(0)
        if keys != nil, !keys!.insert(key) { keys = nil }
        return key
    }

    /// The object of the row `step()` stood on (key `key`), or the record set aside; its arrays those of
    /// `spent` where it is an object (emptied, their room kept: `CoreDataObjectReader.next(reusing:)`).
    func item(key: Int64, record: Int, reusing spent: inout ObjectReadItem?) throws -> ObjectReadItem {
        var values: [ObjectValue] = []
        var references = ObjectRelationships()
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
            switch value(n) {
            case .success(let v): values.append(v)
            case .failure(let why):
                values.append(.null)
                if problem == nil { problem = self.problem(key, n, why) }
            }
        }
        try readReferences(key, into: &references)
        let origin = RecordOrigin(source: path, record: record)
        if let problem { return .rejected(SetAsideRecord(origin: origin, reason: problem)) }
        return .object(ObjectRecord(entity: plan.index, key: key, attributes: values, relationships: references, origin: origin))
    }

    /// The value of attribute `n` (a position in the plan's attributes) in the current row, or why it is
    /// not one of its kind.
    func value(_ n: Int) -> Result<ObjectValue, CoreDataValueProblem> {
        let c = columns[n]
        guard c >= 0 else { return .success(.null) }
        return external[n] ? CoreDataValues.externalData(rows, c, supportDirectory: supportDirectory) : CoreDataValues.value(rows, c, kinds[n])
    }

    /// The reason an object is set aside for attribute `n`'s value in row `key`.
    func problem(_ key: Int64, _ n: Int, _ why: CoreDataValueProblem) -> String {
        "\(plan.table) row Z_PK \(key): column \(plan.attributeColumnNames[n]!) (\(plan.attributes[n].name)): \(why.text)"
    }

    /// Each relationship's references of the current row (key `key`) into `references`, emptied first
    /// (its buffer's room kept) and filled in order.
    func readReferences(_ key: Int64, into references: inout ObjectRelationships) throws {
        references.reset(count: toOneColumns.count)
        for n in toOneColumns.indices {
            let first = toOneColumns[n]
            if first >= 0 {
                let storage = rows.storage(first)
                if storage == .null { continue }
                let target = rows.int64(first)
                let p = probeOfSlot[n]
                if p >= 0, isProbing, storage != .integer || !probedKeys[p].contains(target) { try runChecks() }
                let only = onlyNumber[n]
                let found = only != Int64.min ? only : rows.isNull(first + 1) ? nil : rows.int64(first + 2)
                references.append(try reference(found, target, n, place: "\(plan.table) row Z_PK \(key): column \(toOneColumn(n))"), to: n)
            } else {
                let list = lists[n]!
                while list.hasRow, list.owner < key {
                    if list.testsOwners { try runChecks() }
                    try list.advance()
                }
                while list.hasRow, list.owner == key {
                    let s = list.statement
                    let target = s.int64(1)
                    let found = s.isNull(2) ? nil : s.int64(3)
                    references.append(try reference(found, target, n, place: "\(list.table) row of owner Z_PK \(key): column \(list.column)"), to: n)
                    try list.advance()
                }
            }
        }
        if isProbing { try checkLists() }
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
            try runChecks()
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
