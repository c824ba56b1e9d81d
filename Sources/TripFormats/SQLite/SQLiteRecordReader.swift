import TripKit

/// Reads the trips of a SQLite store, in row-id order, through the same `RecordBuilder` as every
/// other format: each column is handed over as a scalar named by the column, so the schema decides
/// its type and a trip comes out as from any other input.
///
/// The store's version comes from its metadata, or from its columns and indexes (`start_date` and no
/// unique index on `name` is 1.0.0). The store is opened read-only and read in one read transaction,
/// so a writer committing meanwhile is not half-seen.
///
/// ```swift
/// let reader = try SQLiteRecordReader(path: "samples/trips-v1.sqlite")
/// while let item = try reader.next() { … }
/// print(reader.detection.version!)            // 1.0.0
/// ```
public final class SQLiteRecordReader: RecordReader {
    /// The store's file, as messages and origins name it.
    public let path: String
    private var reading: StoreReading

    /// Opens a store to read. A missing file is `.noInput`; a file that is not a trip store is `.data`;
    /// a store another process holds locked past `busyTimeoutMilliseconds` is `.busy`.
    public init(path: String, options: ReadOptions = ReadOptions(), busyTimeoutMilliseconds: Int = 5000) throws {
        self.path = path
        reading = try StoreReading(path: path, format: .sqlite, options: options, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { c in
            let store = try SQLiteStoreStructure(c).detect()
            return (store.version, store.evidence, try SQLiteTripCursor(c, store: store, byID: false))
        }
    }

    /// The next trip in row-id order with its items and accommodation, or a rejection; nil at the end.
    public func next() throws -> ReadItem? { try reading.next() }

    /// The store's version and how it was told (or `--source-version`, when given).
    public var detection: Detection { reading.detection }
}

/// Feeds a store's trips to a `RecordBuilder`: the trip rows in id order, each followed by its related
/// rows, which are read by a merge join on the foreign key (one query per table, not one per trip).
/// With `byID`, it reads the one trip whose id `rewind(id:)` names.
final class SQLiteTripCursor: StoreTripCursor {
    private final class Child {
        let table: SQLiteLayout.ChildTable
        let statement: SQLiteStatement
        var sources: StoreColumns
        var relationshipField: Int?
        var hasRow = false
        var rowTripID: Int64 = 0

        init(table: SQLiteLayout.ChildTable, statement: SQLiteStatement, sources: StoreColumns) {
            self.table = table; self.statement = statement; self.sources = sources
        }

        func advance() throws {
            hasRow = try statement.step()
            if hasRow { rowTripID = statement.int64(0) }
        }
    }

    let path: String
    private let trips: SQLiteStatement
    private var tripSources: StoreColumns
    private let children: [Child]
    private let byID: Bool
    private var isStarted = false

    init(_ connection: SQLiteConnection, store: SQLiteStoreStructure.Detected, byID: Bool) throws {
        path = connection.path
        self.byID = byID
        let layout = SQLiteLayout(store.schema)
        let id = SQLiteLayout.idColumn
        guard store.rootColumns.contains(id) else {
            throw TripError.data("\(path): the \(layout.rootTable) table has no \(id) column")
        }
        let tripNames = store.rootColumns.filter { $0 != id }
        tripSources = StoreColumns(names: tripNames)
        trips = try connection.prepare("SELECT \(([id] + tripNames).map(quoted).joined(separator: ", ")) FROM \(quoted(layout.rootTable))"
                                       + (byID ? " WHERE \(quoted(id)) = ?1" : " ORDER BY \(quoted(id))"))
        var children: [Child] = []
        for table in layout.children {
            guard let columns = store.childColumns[table.name] else { continue }
            let key = layout.foreignKey
            guard columns.contains(key) else {
                throw TripError.data("\(path): the \(table.name) table has no \(key) column")
            }
            let skipped: Set<String> = [id, key, SQLiteLayout.positionColumn]
            let names = columns.filter { !skipped.contains($0) }
            var order = [quoted(key)]
            if columns.contains(SQLiteLayout.positionColumn) { order.append(quoted(SQLiteLayout.positionColumn)) }
            if columns.contains(id) { order.append(quoted(id)) }
            let filter = byID ? "\(quoted(key)) = ?1" : "\(quoted(key)) IS NOT NULL"
            let sql = "SELECT \(([key] + names).map(quoted).joined(separator: ", ")) FROM \(quoted(table.name)) "
                + "WHERE \(filter) ORDER BY \(order.joined(separator: ", "))"
            let sources = StoreColumns(names: names)
            children.append(Child(table: table, statement: try connection.prepare(sql), sources: sources))
        }
        self.children = children
    }

    /// Makes the next `next` read the trip with this id (a `byID` cursor).
    func rewind(id: Int64) throws {
        trips.reset()
        try trips.bind(1, id)
        for c in children {
            c.statement.reset()
            try c.statement.bind(1, id)
            c.hasRow = false
        }
        isStarted = false
    }

    /// Feeds the next trip to the builder, from `beginRecord` to its last related object (the caller
    /// ends the record); returns the trip's row id, or nil after the last trip.
    func next(into builder: inout RecordBuilder, record: Int) throws -> Int64? {
        if !isStarted {
            isStarted = true
            for c in children { try c.advance() }
        }
        guard try trips.step() else { return nil }
        let id = trips.int64(0)
        builder.beginRecord(origin: RecordOrigin(source: path, record: record))
        if !tripSources.isResolved {
            for c in children { c.relationshipField = builder.field(c.table.relationship.name) }
        }
        tripSources.feed(trips, into: &builder)
        if byID { trips.reset() }
        for c in children {
            // Rows of trips that are gone (a store written without foreign keys) are stepped over.
            while c.hasRow, c.rowTripID < id { try c.advance() }
            while c.hasRow, c.rowTripID == id {
                guard let field = c.relationshipField else { break }
                builder.beginObject(field)
                c.sources.feed(c.statement, into: &builder)
                builder.endObject()
                try c.advance()
            }
        }
        return id
    }

    /// The longest value read: a store made by anyone may hold a value of a gigabyte.
    static let maximumValueBytes = 16 << 20

    /// A column's value as the scalar the builder expects for the field's type: text for strings,
    /// ISO 8601 text (or a number of the date epoch) for dates, 0/1 for Booleans.
    static func token(_ s: SQLiteStatement, _ column: Int32, _ storage: SQLiteStatement.Storage,
                              _ kind: SchemaVocabulary.FieldKind) -> ScalarToken {
        if storage == .null { return .null }
        switch kind {
        case .attribute(.string):
            return .string(s.text(column))
        case .attribute(.date):
            return storage == .integer || storage == .real ? .number(s.text(column)) : .string(s.text(column))
        case .attribute(.int):
            return .number(s.text(column))
        default:
            // Booleans (0 and 1, or their spellings in text) and anything else: text the schema types.
            return .text(s.text(column))
        }
    }
}
