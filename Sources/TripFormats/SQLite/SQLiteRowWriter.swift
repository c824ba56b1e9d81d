import TripKit

/// Inserts trips and their related rows through prepared statements of one layout, reused for every
/// row: no SQL is built per row, and every value is a bound parameter.
///
/// A trip is inserted at once (`insert`: its unique name may refuse it, and its children need its
/// row id), or many trips in one INSERT (`insertAll`, undone when the unique index refuses one);
/// items and accommodations wait in a batch and go in many rows per INSERT. Many rows per statement
/// spare SQLite most of its per-statement work. `flush()` writes the related rows that wait: call it
/// before reading or deleting rows, and before committing.
///
/// Values are bound from `SQLiteRowValues`, whose text SQLite reads in place instead of copying.
final class SQLiteRowWriter {
    let layout: StoreLayout
    private let connection: SQLiteConnection
    private let insertRoot: SQLiteStatement
    /// The attribute slots of the root's columns, in parameter order (plain integers: the per-row
    /// loop copies nothing that needs reference counting).
    private let rootSlots: [Int]
    /// Trips per `insertAll`: `batchRows`, or fewer when SQLite allows fewer parameters.
    let rootBatchRows: Int
    private let rootRow = SQLiteRowValues()
    private let children: [ChildBatch]
    private var updateRoot: SQLiteStatement?
    /// For `insertAll`, prepared when first used: the many-row INSERT, the largest row id, and the
    /// delete that undoes a batch.
    private var insertRoots: SQLiteStatement?
    private var largestRootID: SQLiteStatement?
    private var deleteRootsAbove: SQLiteStatement?

    /// Rows per batched INSERT of related rows, at most: each row then costs about a tenth of what a
    /// one-row INSERT does (measured: 1 row per step 1.97 G instructions for 20k trips, 8 rows 1.73 G,
    /// 32 rows 1.70 G, 128 rows 1.69 G), and SQLite allows that many parameters even in old builds.
    static let batchRows = 128

    /// The rows of one related table waiting to be inserted.
    private final class ChildBatch {
        let relationshipSlot: Int
        let attributeSlots: [Int]
        let isToMany: Bool
        let columns: Int
        /// Rows per batched INSERT: `batchRows`, or fewer when SQLite allows fewer parameters.
        let batchRows: Int
        let one: SQLiteStatement
        /// The batched INSERT, prepared when a first batch is full: a small run never pays for it.
        private var many: SQLiteStatement?
        private let manySQL: String
        private let connection: SQLiteConnection
        private let doing: String
        let rows = SQLiteRowValues()

        init(_ child: StoreLayout.ChildTable, layout: StoreLayout, connection: SQLiteConnection) throws {
            relationshipSlot = child.slot
            attributeSlots = child.columns.map(\.slot)
            isToMany = child.isToMany
            columns = 1 + (child.isToMany ? 1 : 0) + child.columns.count
            batchRows = max(1, min(SQLiteRowWriter.batchRows, connection.parameterLimit / columns))
            doing = "cannot write a \(child.entity.name)"
            self.connection = connection
            one = try connection.prepare(layout.insertChildSQL(child, rows: 1), doing: doing)
            manySQL = layout.insertChildSQL(child, rows: batchRows)
        }

        func add(_ object: ModelObject, tripID: Int64, position: Int64) throws {
            rows.append(tripID)
            if isToMany { rows.append(position) }
            rows.append(object.attributes, attributeSlots)
            if rows.count == batchRows * columns {
                defer { rows.removeAll() }
                let statement = try many ?? connection.prepare(manySQL, doing: doing)
                many = statement
                try rows.bind(0..<rows.count, to: statement) { try statement.run() }
            }
        }

        func flush() throws {
            defer { rows.removeAll() }
            var start = 0
            while start < rows.count {
                try rows.bind(start..<start + columns, to: one) { try one.run() }
                start += columns
            }
        }
    }

    init(_ connection: SQLiteConnection, layout: StoreLayout) throws {
        self.connection = connection
        self.layout = layout
        insertRoot = try connection.prepare(layout.insertRootSQL, doing: "cannot write a trip")
        rootSlots = layout.rootColumns.map(\.slot)
        rootBatchRows = max(1, min(SQLiteRowWriter.batchRows, connection.parameterLimit / (1 + rootSlots.count)))
        children = try layout.children.map { try ChildBatch($0, layout: layout, connection: connection) }
    }

    /// Inserts a trip with the given row id (or the next one) and queues its related rows; returns its
    /// id, or nil when the unique index refused it (then nothing of it is written).
    func insert(_ object: ModelObject, id: Int64?) throws -> Int64? {
        defer { rootRow.removeAll() }
        if let id { rootRow.append(id) } else { rootRow.appendNull() }
        rootRow.append(object.attributes, rootSlots)
        guard try rootRow.bind(0..<rootRow.count, to: insertRoot, { try insertRoot.insert() }) == .inserted else { return nil }
        let tripID = id ?? connection.lastInsertedRowID
        try insertRelated(object, tripID: tripID)
        return tripID
    }


    /// Whether the store refuses this trip whatever else it holds: a NULL in a NOT NULL column (every
    /// column is). Such a trip is for `insert`, whose error then names the column.
    func isRefusedAlone(_ object: ModelObject) -> Bool {
        object.attributes.withUnsafeBufferPointer { values in rootSlots.contains { values[$0].isNull } }
    }

    /// Inserts `rootBatchRows` trips in one statement, under the next row ids in their order, and
    /// queues their related rows; returns true. When the unique index refuses any of them (a name
    /// the store, or an earlier trip of the batch, holds), removes the trips the statement inserted
    /// and returns false, leaving the store as before the call: the caller then inserts them one at
    /// a time and meets its policy for the refused ones.
    func insertAll<C: Collection>(_ objects: C) throws -> Bool where C.Element == ModelObject {
        precondition(objects.count == rootBatchRows)
        let largest = try largestRootID ?? connection.prepare(
            "SELECT coalesce(max(\(quoted(StoreLayout.idColumn))), 0) FROM \(quoted(layout.rootTable))", doing: "cannot write a trip")
        largestRootID = largest
        guard try largest.step() else { return false }
        let before = largest.int64(0)
        largest.reset()
        defer { rootRow.removeAll() }
        for object in objects {
            rootRow.appendNull()
            rootRow.append(object.attributes, rootSlots)
        }
        let statement = try insertRoots ?? connection.prepare(insertRootsSQL(rows: objects.count), doing: "cannot write a trip")
        insertRoots = statement
        try rootRow.bind(0..<rootRow.count, to: statement) { try statement.run() }
        let inserted = connection.changes
        // Rows go in under the largest id + 1 each, so all of them means exactly these ids.
        guard inserted == objects.count, connection.lastInsertedRowID == before + Int64(inserted) else {
            if inserted > 0 {
                let undo = try deleteRootsAbove ?? connection.prepare(
                    "DELETE FROM \(quoted(layout.rootTable)) WHERE \(quoted(StoreLayout.idColumn)) > ?1", doing: "cannot write a trip")
                deleteRootsAbove = undo
                try undo.bind(1, before)
                try undo.run()
            }
            return false
        }
        var tripID = before
        for object in objects {
            tripID += 1
            try insertRelated(object, tripID: tripID)
        }
        return true
    }

    /// `INSERT OR IGNORE INTO "trips" ("id", "name", …) VALUES (?, ?, …), (…), …`, the ids NULL: the
    /// next ones. OR IGNORE: a row a constraint refuses is skipped and the statement goes on (no
    /// statement rollback, which a store written without a journal should not rely on).
    private func insertRootsSQL(rows: Int) -> String {
        let names = [StoreLayout.idColumn] + layout.rootColumns.map(\.name)
        let row = "(" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
        return "INSERT OR IGNORE INTO \(quoted(layout.rootTable)) (\(names.map(quoted).joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Sets the attributes of a stored trip to an object's (its related rows are the caller's to replace).
    func update(_ object: ModelObject, id: Int64) throws {
        let statement = try updateRoot ?? connection.prepare(layout.updateRootSQL, doing: "cannot update a trip")
        updateRoot = statement
        try statement.bind(1, id)
        try object.attributes.withUnsafeBufferPointer { values in
            var parameter: Int32 = 2
            for slot in rootSlots {
                try statement.bind(parameter, values[slot])
                parameter += 1
            }
        }
        try statement.run()
    }

    /// Queues the related rows of a trip whose row is already in the store.
    func insertRelated(_ object: ModelObject, tripID: Int64) throws {
        for child in children where child.relationshipSlot < object.relationships.count {
            switch object.relationships[child.relationshipSlot] {
            case .toMany(let items):
                var position: Int64 = 0
                for item in items {
                    try child.add(item, tripID: tripID, position: position)
                    position += 1
                }
            case .toOne(let item?):
                try child.add(item, tripID: tripID, position: 0)
            case .toOne(nil):
                break
            }
        }
    }

    /// Inserts the related rows still waiting.
    func flush() throws {
        for child in children { try child.flush() }
    }
}

/// The parameter values of rows waiting to be bound, in parameter order: integers and NULLs as they
/// are, text (dates formatted as ISO 8601) as bytes in one buffer of its own.
///
/// SQLite is handed pointers into that buffer and reads the text in place at the step, without
/// copying it at the bind (`SQLITE_STATIC`): so the buffer is only ever appended to, then bound and
/// stepped at once (`bind(_:to:_:)`), then emptied; it never grows between a bind and its step.
final class SQLiteRowValues {
    private enum Cell {
        case null
        case integer(Int64)
        case text(offset: Int, count: Int)
    }

    // Only this class touches these, one call at a time and never re-entrantly: Swift's run-time
    // exclusivity checks of a class's stored properties cost as much as SQLite's binds here (61 M
    // instructions of 1.65 G storing 20k trips).
    @exclusivity(unchecked) private var cells: UnsafeMutablePointer<Cell>
    @exclusivity(unchecked) private var cellCapacity = 256
    /// The values held.
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var bytes: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity = 4096
    @exclusivity(unchecked) private var used = 0

    init() {
        bytes = .allocate(byteCount: capacity, alignment: 1)
        cells = .allocate(capacity: cellCapacity)
    }

    deinit {
        bytes.deallocate()
        cells.deallocate()
    }

    private func append(cell: Cell) {
        if count == cellCapacity {
            let moved = UnsafeMutablePointer<Cell>.allocate(capacity: cellCapacity * 2)
            moved.moveInitialize(from: cells, count: count)
            cells.deallocate()
            cells = moved
            cellCapacity *= 2
        }
        (cells + count).initialize(to: cell)
        count += 1
    }

    func appendNull() { append(cell: .null) }

    func append(_ value: Int64) { append(cell: .integer(value)) }

    /// Appends an object's attributes at the given slots: text, ISO 8601 text for a date, 0/1 for a
    /// Boolean, an integer, or NULL.
    @inline(__always)
    func append(_ attributes: [Value], _ slots: [Int]) {
        // Borrowed in place: reading through the buffer spares a retain and release per value.
        attributes.withUnsafeBufferPointer { values in
            for slot in slots { append(values[slot]) }
        }
    }

    func append(_ value: Value) {
        switch value {
        case .null: append(cell: .null)
        case .string(let s): append(text: s)
        case .date(let t):
            reserve(32)
            let length = t.formatISO8601(into: UnsafeMutableRawBufferPointer(start: bytes + used, count: 32))
            append(cell: .text(offset: used, count: length))
            used += length
        case .bool(let b): append(cell: .integer(b ? 1 : 0))
        case .int(let n): append(cell: .integer(n))
        }
    }

    private func append(text: String) {
        var text = text
        text.withUTF8 { utf8 in
            reserve(utf8.count)
            if let base = utf8.baseAddress { (bytes + used).copyMemory(from: base, byteCount: utf8.count) }
            append(cell: .text(offset: used, count: utf8.count))
            used += utf8.count
        }
    }

    private func reserve(_ more: Int) {
        guard used + more > capacity else { return }
        var grown = capacity * 2
        while used + more > grown { grown *= 2 }
        let moved = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 1)
        moved.copyMemory(from: bytes, byteCount: used)
        bytes.deallocate()
        bytes = moved
        capacity = grown
    }

    /// Binds the values in `range` to the statement's parameters 1, 2, … (all of them: none may keep
    /// a pointer from an earlier row) and runs `step` while the text they point to is in place.
    func bind<T>(_ range: Range<Int>, to statement: SQLiteStatement, _ step: () throws -> T) throws -> T {
        precondition(range.count == statement.parameterCount && range.upperBound <= count, "every parameter is bound anew")
        var parameter: Int32 = 1
        for i in range {
            switch cells[i] {
            case .null: try statement.bindNull(parameter)
            case .integer(let n): try statement.bind(parameter, n)
            case .text(let offset, let count): try statement.bind(parameter, staticText: bytes + offset, count: count)
            }
            parameter += 1
        }
        return try step()
    }

    /// Forgets every value, keeping the storage.
    func removeAll() {
        count = 0
        used = 0
    }
}
