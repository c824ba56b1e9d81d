import TripKit

/// Inserts trips and their related rows through prepared statements of one layout, reused for every
/// row: no SQL is built per row, and every value is a bound parameter.
///
/// A trip is inserted at once (its unique name may refuse it, and its children need its row id);
/// its items and accommodation wait in a batch and go in many rows per INSERT, which spares SQLite
/// most of its per-statement work. `flush()` writes what waits: call it before reading or deleting
/// rows, and before committing.
final class SQLiteRowWriter {
    let layout: SQLiteLayout
    private let connection: SQLiteConnection
    private let insertRoot: SQLiteStatement
    /// The attribute slots of the root's columns, in parameter order (plain integers: the per-row
    /// loop copies nothing that needs reference counting).
    private let rootSlots: [Int]
    private let children: [ChildBatch]
    private var updateRoot: SQLiteStatement?
    /// The text of the statement being bound (one runs at a time).
    private let arena = SQLiteTextArena()

    /// Rows per batched INSERT of related rows.
    static let batchRows = 32

    /// The rows of one related table waiting to be inserted.
    private final class ChildBatch {
        let relationshipSlot: Int
        let attributeSlots: [Int]
        let isToMany: Bool
        let parametersPerRow: Int32
        let one: SQLiteStatement
        let many: SQLiteStatement
        let arena: SQLiteTextArena
        var pending: [(tripID: Int64, position: Int64, object: ModelObject)] = []

        init(_ child: SQLiteLayout.ChildTable, layout: SQLiteLayout, connection: SQLiteConnection, arena: SQLiteTextArena) throws {
            self.arena = arena
            relationshipSlot = child.slot
            attributeSlots = child.columns.map(\.slot)
            isToMany = child.isToMany
            parametersPerRow = Int32(1 + (child.isToMany ? 1 : 0) + child.columns.count)
            let doing = "cannot write a \(child.entity.name)"
            one = try connection.prepare(layout.insertChildSQL(child, rows: 1), doing: doing)
            many = try connection.prepare(layout.insertChildSQL(child, rows: SQLiteRowWriter.batchRows), doing: doing)
            pending.reserveCapacity(SQLiteRowWriter.batchRows)
        }

        func add(_ object: ModelObject, tripID: Int64, position: Int64) throws {
            pending.append((tripID, position, object))
            if pending.count == SQLiteRowWriter.batchRows {
                defer { pending.removeAll(keepingCapacity: true) }
                arena.begin(reserving: pending.reduce(0) { $0 + SQLiteRowWriter.textSize($1.object, attributeSlots) })
                for (r, row) in pending.enumerated() { try bind(row, to: many, at: Int32(r) * parametersPerRow) }
                try many.run()
            }
        }

        func flush() throws {
            defer { pending.removeAll(keepingCapacity: true) }
            for row in pending {
                arena.begin(reserving: SQLiteRowWriter.textSize(row.object, attributeSlots))
                try bind(row, to: one, at: 0)
                try one.run()
            }
        }

        private func bind(_ row: (tripID: Int64, position: Int64, object: ModelObject), to statement: SQLiteStatement,
                          at offset: Int32) throws {
            try statement.bind(offset + 1, row.tripID)
            var first = offset + 2
            if isToMany {
                try statement.bind(first, row.position)
                first += 1
            }
            try SQLiteRowWriter.bind(row.object, attributeSlots, to: statement, from: first, arena: arena)
        }
    }

    init(_ connection: SQLiteConnection, layout: SQLiteLayout) throws {
        self.connection = connection
        self.layout = layout
        insertRoot = try connection.prepare(layout.insertRootSQL, doing: "cannot write a trip")
        rootSlots = layout.rootColumns.map(\.slot)
        children = try layout.children.map { [arena] in try ChildBatch($0, layout: layout, connection: connection, arena: arena) }
    }

    /// Inserts a trip with the given row id (or the next one) and queues its related rows; returns its
    /// id, or nil when the unique index refused it (then nothing of it is written).
    func insert(_ object: ModelObject, id: Int64?) throws -> Int64? {
        if let id { try insertRoot.bind(1, id) } else { try insertRoot.bindNull(1) }
        arena.begin(reserving: SQLiteRowWriter.textSize(object, rootSlots))
        try SQLiteRowWriter.bind(object, rootSlots, to: insertRoot, from: 2, arena: arena)
        guard try insertRoot.insert() == .inserted else { return nil }
        let tripID = id ?? connection.lastInsertedRowID
        try insertRelated(object, tripID: tripID)
        return tripID
    }

    /// Sets the attributes of a stored trip to an object's (its related rows are the caller's to replace).
    func update(_ object: ModelObject, id: Int64) throws {
        let statement = try updateRoot ?? connection.prepare(layout.updateRootSQL, doing: "cannot update a trip")
        updateRoot = statement
        try statement.bind(1, id)
        arena.begin(reserving: SQLiteRowWriter.textSize(object, rootSlots))
        try SQLiteRowWriter.bind(object, rootSlots, to: statement, from: 2, arena: arena)
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

    @inline(__always)
    private static func bind(_ object: ModelObject, _ slots: [Int], to statement: SQLiteStatement, from first: Int32,
                             arena: SQLiteTextArena) throws {
        // Borrowed in place: reading through the buffer spares a retain and release per value.
        try object.attributes.withUnsafeBufferPointer { values in
            var parameter = first
            for slot in slots {
                try statement.bind(parameter, values[slot], placingTextIn: arena)
                parameter += 1
            }
        }
    }

    /// The arena bytes an object's text in these slots takes.
    @inline(__always)
    private static func textSize(_ object: ModelObject, _ slots: [Int]) -> Int {
        object.attributes.withUnsafeBufferPointer { values in
            var total = 0
            for slot in slots { total += SQLiteTextArena.size(of: values[slot]) }
            return total
        }
    }
}
