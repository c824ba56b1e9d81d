import TripKit

/// Inserts trips and their related rows through prepared statements of one layout, reused for every
/// row: no SQL is built per row, and every value is a bound parameter.
final class SQLiteRowWriter {
    let layout: SQLiteLayout
    private let connection: SQLiteConnection
    private let insertRoot: SQLiteStatement
    /// The attribute slots of the root's columns, in parameter order (plain integers: the per-row
    /// loop copies nothing that needs reference counting).
    private let rootSlots: [Int]
    private let children: [Child]

    private struct Child {
        let relationshipSlot: Int
        let attributeSlots: [Int]
        let statement: SQLiteStatement
    }

    init(_ connection: SQLiteConnection, layout: SQLiteLayout) throws {
        self.connection = connection
        self.layout = layout
        insertRoot = try connection.prepare(layout.insertRootSQL, doing: "cannot write a trip")
        rootSlots = layout.rootColumns.map(\.slot)
        children = try layout.children.map {
            Child(relationshipSlot: $0.slot, attributeSlots: $0.columns.map(\.slot),
                  statement: try connection.prepare(layout.insertChildSQL($0), doing: "cannot write a \($0.entity.name)"))
        }
    }

    /// Inserts a trip with the given row id (or the next one) and its related rows; returns its id,
    /// or nil when the unique index refused it (then nothing of it is written).
    func insert(_ object: ModelObject, id: Int64?) throws -> Int64? {
        if let id { try insertRoot.bind(1, id) } else { try insertRoot.bindNull(1) }
        try bind(object, rootSlots, to: insertRoot, from: 2)
        guard try insertRoot.insert() == .inserted else { return nil }
        let tripID = id ?? connection.lastInsertedRowID
        for child in children where child.relationshipSlot < object.relationships.count {
            let statement = child.statement
            switch object.relationships[child.relationshipSlot] {
            case .toMany(let items):
                var position: Int64 = 0
                for item in items {
                    try statement.bind(1, tripID)
                    try statement.bind(2, position)
                    try bind(item, child.attributeSlots, to: statement, from: 3)
                    try statement.run()
                    position += 1
                }
            case .toOne(let item?):
                try statement.bind(1, tripID)
                try bind(item, child.attributeSlots, to: statement, from: 2)
                try statement.run()
            case .toOne(nil):
                break
            }
        }
        return tripID
    }

    @inline(__always)
    private func bind(_ object: ModelObject, _ slots: [Int], to statement: SQLiteStatement, from first: Int32) throws {
        // Borrowed in place: reading through the buffer spares a retain and release per value.
        try object.attributes.withUnsafeBufferPointer { values in
            var parameter = first
            for slot in slots {
                try statement.bind(parameter, values[slot])
                parameter += 1
            }
        }
    }
}
