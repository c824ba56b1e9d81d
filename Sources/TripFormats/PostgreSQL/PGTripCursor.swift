import TripKit

/// Feeds a PostgreSQL store's trips to a `RecordBuilder`, as `StoreTripCursor` feeds a SQLite store's:
/// the trip rows in id order, each followed by its related rows, read by a merge join on `trip_id`
/// (one query per table, never one per trip). Each query is a server-side cursor read `FETCH`
/// by `FETCH`, so what is held is one batch of rows per table, whatever the store's size.
final class PGTripCursor {
    /// One relationship's rows.
    private final class Related {
        let relationship: String
        let rows: PGBatches
        var columns: StoreColumns
        let numericDates: [Bool]
        var field: Int?
        var hasRow = false
        var rowTrip: Int64 = 0

        init(_ query: StoreTripQueries.Related, rows: PGBatches, numericDates: [Bool]) {
            relationship = query.relationship
            self.rows = rows
            columns = StoreColumns(names: query.fields)
            self.numericDates = numericDates
        }

        func advance() throws {
            hasRow = try rows.advance()
            if hasRow { rowTrip = rows.int64(0) }
        }

        var row: PGRow { PGRow(result: rows.result!, row: rows.row, numericDates: numericDates) }
    }

    /// Origins name the store by this (the connection's name, never its password).
    let name: String
    private let trips: PGBatches
    private var tripColumns: StoreColumns
    private let tripNumericDates: [Bool]
    private let related: [Related]
    private var isStarted = false

    /// Declares the cursors (inside the caller's transaction) that read the store `found` describes.
    init(_ connection: PGConnection, _ found: DetectedStore) throws {
        name = connection.name
        let layout = StoreLayout(found.schema)
        let structure = PGStoreStructure(connection)
        var categories: [String: [String: String]] = [:]
        var attributes: [String: [String: AttributeType]] = [layout.rootTable: [:]]
        for c in layout.rootColumns { attributes[layout.rootTable]![c.name] = c.attribute.type }
        for child in layout.children { attributes[child.name] = Dictionary(child.columns.map { ($0.name, $0.attribute.type) }) { a, _ in a } }
        for table in [layout.rootTable] + Array(found.childColumns.keys) {
            categories[table] = Dictionary(try structure.typedColumns(of: table).map { ($0.name, $0.category) }) { a, _ in a }
        }
        // Dates as ISO 8601 text in UTC to the millisecond, Booleans as true/false; a date another
        // tool stored as a number is handed over as one (a count of the date epoch).
        func selecting(_ table: String, _ column: String) -> String {
            switch categories[table]?[column] {
            case "D"?: return PGLayout.selected(column, .date)
            case "B"?: return PGLayout.selected(column, .bool)
            default: return PGLayout.selected(column, nil)
            }
        }
        func numericDates(_ table: String, _ fields: [String]) -> [Bool] {
            [false] + fields.map { attributes[table]?[$0] == .date && categories[table]?[$0] == "N" }
        }
        let queries = try found.tripQueries(connection.name, byID: false, selecting: selecting)
        trips = try PGBatches(connection, cursor: "tripconv_trips", sql: queries.tripSQL)
        tripColumns = StoreColumns(names: queries.tripFields)
        tripNumericDates = numericDates(layout.rootTable, queries.tripFields)
        var related: [Related] = []
        for (i, query) in queries.related.enumerated() {
            let table = layout.children.first { $0.relationship.name == query.relationship }?.name ?? ""
            related.append(Related(query, rows: try PGBatches(connection, cursor: "tripconv_related_\(i)", sql: query.sql),
                                   numericDates: numericDates(table, query.fields)))
        }
        self.related = related
    }

    /// Feeds the next trip to the builder, from `beginRecord` to its last related object (the caller
    /// ends the record); false after the last trip.
    func next(into builder: inout RecordBuilder, record: Int) throws -> Bool {
        if !isStarted {
            isStarted = true
            for r in related { try r.advance() }
        }
        guard try trips.advance() else { return false }
        let key = trips.int64(0)
        builder.beginRecord(origin: RecordOrigin(source: name, record: record))
        if !tripColumns.isResolved {
            for r in related { r.field = builder.field(r.relationship) }
        }
        tripColumns.feed(PGRow(result: trips.result!, row: trips.row, numericDates: tripNumericDates), into: &builder)
        for r in related {
            guard let field = r.field else { continue }
            // Rows whose trip is gone (a store made without foreign keys) are stepped over.
            while r.hasRow, r.rowTrip < key { try r.advance() }
            while r.hasRow, r.rowTrip == key {
                builder.beginObject(field)
                r.columns.feed(r.row, into: &builder)
                builder.endObject()
                try r.advance()
            }
        }
        return true
    }
}

/// A server-side cursor (`DECLARE … NO SCROLL CURSOR`), read `FETCH` by `FETCH`: one batch of rows
/// at a time is held, the previous one freed before the next is fetched.
final class PGBatches {
    /// The rows of one FETCH.
    static let batchSize = 10_000

    private let connection: PGConnection
    private let fetch: String
    /// The batch the current row is in, nil before the first and after the last.
    private(set) var result: PGResult?
    /// The current row of `result`.
    private(set) var row = -1
    private var isLast = false

    /// Declares the cursor; the caller's transaction must be open, and stays open while it is read.
    init(_ connection: PGConnection, cursor: String, sql: String) throws {
        self.connection = connection
        try connection.execute("DECLARE \(quoted(cursor)) NO SCROLL CURSOR FOR \(sql)", doing: "cannot read the store")
        fetch = "FETCH \(PGBatches.batchSize) FROM \(quoted(cursor))"
    }

    /// Moves to the next row, fetching the next batch when this one is done; false after the last.
    func advance() throws -> Bool {
        if let result, row + 1 < result.rowCount {
            row += 1
            return true
        }
        result = nil
        row = -1
        guard !isLast else { return false }
        let next = try connection.query(fetch, doing: "cannot read the store")
        // A short batch is the last: no FETCH more to learn that there is nothing.
        isLast = next.rowCount < PGBatches.batchSize
        guard next.rowCount > 0 else { return false }
        result = next
        row = 0
        return true
    }

    /// A column of the current row as an integer (the key the queries select first).
    func int64(_ column: Int) -> Int64 { result!.int64(row, column) }
}

/// A row of a PostgreSQL result as `StoreColumns` reads it: every value arrives as text (the
/// connection asks for UTF-8), which the schema types as the SQLite store's reader types its text.
struct PGRow: StoreRow {
    let result: PGResult
    let row: Int
    /// Which columns hold dates as numbers (a count of the date epoch), by column.
    let numericDates: [Bool]

    func value(_ column: Int32, kind: SchemaVocabulary.FieldKind) -> StoreValue {
        let c = Int(column)
        if result.isNull(row, c) { return .token(.null) }
        let bytes = result.bytes(row, c)
        guard bytes.count <= StoreColumns.maximumValueBytes else { return .failure(StoreColumns.tooLong(bytes.count)) }
        // A database whose encoding is SQL_ASCII hands over its bytes unconverted: never repaired.
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(StoreColumns.describeInvalidUTF8(Array(bytes)))
        }
        switch kind {
        case .attribute(.string): return .token(.string(text))
        case .attribute(.date): return .token(numericDates[c] ? .number(text) : .string(text))
        case .attribute(.int): return .token(.number(text))
        default:
            // Booleans (`true`/`false` as selected, or 0/1 from an integer column) and anything else:
            // text the schema types.
            return .token(.text(text))
        }
    }
}
