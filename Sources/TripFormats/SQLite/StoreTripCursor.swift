import TripKit

/// The statements that read a store's trips, and the field names of their columns, as the store's
/// layout names them (`StoreLayout`'s `trips` and `trip_id`, or Core Data's `ZTRIP` and `Z_PK`).
struct StoreTripQueries {
    /// How a relationship's rows are found for a trip.
    enum Reach {
        /// By a merge join on the trip's key: the statement's first column holds it, and its rows
        /// come in the order of the trips.
        case joined
        /// By the key the trip row holds in this column of the trip statement, bound to `?1`.
        case lookedUp(tripColumn: Int32)
    }

    /// The rows at the other end of one relationship of the trip.
    struct Related {
        /// The relationship's name, as the builder knows it.
        let relationship: String
        let sql: String
        /// The field names of the statement's columns after the first.
        let fields: [String]
        let reach: Reach
    }

    /// The trip rows in key order (or the one trip whose key binds `?1`): the key first, then the
    /// attribute columns `tripFields` names, then any columns `Reach.lookedUp` points at.
    let tripSQL: String
    let tripFields: [String]
    let related: [Related]
    /// Whether the statements read the one trip `StoreTripCursor.rewind(key:)` names, rather than all.
    let isByKey: Bool
}

/// Feeds a store's trips to a `RecordBuilder`: the trip rows in key order, each followed by its related
/// rows, read by a merge join on the trip's key (one query per table, not one per trip) or, for a to-one
/// only the trip's row names, looked up by key.
final class StoreTripCursor {
    /// One relationship's rows.
    private final class Related {
        let relationship: String
        let statement: SQLiteStatement
        let isJoined: Bool
        /// The trip statement's column holding the key to look up (a looked-up relationship).
        let tripColumn: Int32
        var columns: StoreColumns
        var field: Int?
        var hasRow = false
        var rowTrip: Int64 = 0

        init(_ query: StoreTripQueries.Related, statement: SQLiteStatement) {
            relationship = query.relationship
            self.statement = statement
            columns = StoreColumns(names: query.fields)
            switch query.reach {
            case .joined: isJoined = true; tripColumn = -1
            case .lookedUp(let column): isJoined = false; tripColumn = column
            }
        }

        func advance() throws {
            hasRow = try statement.step()
            if hasRow { rowTrip = statement.int64(0) }
        }
    }

    let path: String
    private let trips: SQLiteStatement
    private var tripColumns: StoreColumns
    private let related: [Related]
    private let isByKey: Bool
    private var isStarted = false

    init(_ connection: SQLiteConnection, _ queries: StoreTripQueries) throws {
        path = connection.path
        isByKey = queries.isByKey
        tripColumns = StoreColumns(names: queries.tripFields)
        trips = try connection.prepare(queries.tripSQL)
        related = try queries.related.map { Related($0, statement: try connection.prepare($0.sql)) }
    }

    /// Makes the next `next` read the trip with this key (a cursor of `isByKey` queries).
    func rewind(key: Int64) throws {
        trips.reset()
        try trips.bind(1, key)
        for r in related where r.isJoined {
            r.statement.reset()
            try r.statement.bind(1, key)
            r.hasRow = false
        }
        isStarted = false
    }

    /// Feeds the next trip to the builder, from `beginRecord` to its last related object (the caller
    /// ends the record); returns the trip's key, or nil after the last trip.
    func next(into builder: inout RecordBuilder, record: Int) throws -> Int64? {
        if !isStarted {
            isStarted = true
            for r in related where r.isJoined { try r.advance() }
        }
        guard try trips.step() else { return nil }
        let key = trips.int64(0)
        builder.beginRecord(origin: RecordOrigin(source: path, record: record))
        if !tripColumns.isResolved {
            for r in related { r.field = builder.field(r.relationship) }
        }
        tripColumns.feed(trips, into: &builder)
        for r in related {
            guard let field = r.field else { continue }
            if r.isJoined {
                // Rows whose trip is gone (a store written without foreign keys), or is another
                // entity's row, are stepped over.
                while r.hasRow, r.rowTrip < key { try r.advance() }
                while r.hasRow, r.rowTrip == key {
                    take(r, field, into: &builder)
                    try r.advance()
                }
            } else if !trips.isNull(r.tripColumn) {
                try r.statement.bind(1, trips.int64(r.tripColumn))
                if try r.statement.step() { take(r, field, into: &builder) }
                r.statement.reset()
            }
        }
        // One trip read: nothing is left open on the connection, which the caller may write on.
        if isByKey { trips.reset() }
        return key
    }

    /// The next trip as a whole record, with its key, for a migration: a trip the builder rejects
    /// stops it, named by `place` (else the trip's origin) and its row id. Nil after the last trip.
    func nextTrip(into builder: inout RecordBuilder, record: Int, place: String? = nil) throws -> (id: Int64, record: TripRecord)? {
        guard let id = try next(into: &builder, record: record) else { return nil }
        switch builder.endRecord() {
        case .trip(let trip):
            return (id, trip)
        case .rejected(let rejection):
            throw TripError.data("\(place ?? rejection.origin.description) (row id \(id)): \(rejection.reason)",
                                 notes: ["the store cannot be migrated until this trip is fixed"])
        }
    }

    private func take(_ r: Related, _ field: Int, into builder: inout RecordBuilder) {
        builder.beginObject(field)
        r.columns.feed(r.statement, into: &builder)
        builder.endObject()
    }
}

/// A table's attribute columns, each handed to the builder under a field name, resolved to the
/// builder's fields on first use.
struct StoreColumns {
    struct Column {
        let column: Int32
        let name: String
    }

    var list: [Column] = []
    private var fields: [Int?] = []
    private var kinds: [SchemaVocabulary.FieldKind?] = []
    private(set) var isResolved = false

    /// The longest value read: a store made by anyone may hold a value of a gigabyte.
    static let maximumValueBytes = 16 << 20

    /// Why a value of `size` bytes is not read.
    static func tooLong(_ size: Int) -> String {
        "a value of \(size) bytes is longer than the limit of \(maximumValueBytes >> 20) MiB"
    }

    /// Columns numbered from 1 (column 0 is the key the query selects first).
    init(names: [String]) {
        list = names.enumerated().map { Column(column: Int32($0.offset + 1), name: $0.element) }
    }

    mutating func resolve(_ builder: RecordBuilder) {
        fields = list.map { builder.field($0.name) }
        kinds = fields.map { $0.map(builder.kind(of:)) }
        isResolved = true
    }

    /// Hands a row to the builder, column by column: a SQLite statement's current row, or a row
    /// of a PostgreSQL result.
    mutating func feed(_ row: some StoreRow, into builder: inout RecordBuilder) {
        if !isResolved { resolve(builder) }
        for (i, source) in list.enumerated() {
            guard let field = fields[i], let kind = kinds[i] else {
                builder.unknownField(source.name)
                continue
            }
            switch row.value(source.column, kind: kind) {
            case .token(let token): builder.set(field, token)
            case .failure(let reason): builder.fail("field '\(source.name)': \(reason)")
            }
        }
    }

    /// A column's value as the scalar the builder expects for the field's type: text for strings,
    /// ISO 8601 text (or a number of the date epoch) for dates, 0/1 for Booleans. `text` is the
    /// column's text when it was read (and checked) already.
    static func token(_ s: SQLiteStatement, _ column: Int32, _ storage: SQLiteStatement.Storage,
                      _ kind: SchemaVocabulary.FieldKind, text: String? = nil) -> ScalarToken {
        if storage == .null { return .null }
        switch kind {
        case .attribute(.string):
            return .string(text ?? s.text(column))
        case .attribute(.date):
            return storage == .integer || storage == .real ? .number(s.text(column)) : .string(text ?? s.text(column))
        case .attribute(.int):
            return .number(text ?? s.text(column))
        default:
            // Booleans (0 and 1, or their spellings in text) and anything else: text the schema types.
            return .text(text ?? s.text(column))
        }
    }

    /// Why bytes are not UTF-8: the first byte that breaks it and where, e.g. "text is not valid
    /// UTF-8: byte 0xE9 at offset 4 of 5".
    static func describeInvalidUTF8(_ bytes: [UInt8]) -> String {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .error(let length):
                let shown = bytes[offset..<min(offset + max(length, 1), bytes.count)].map { "0x" + String($0, radix: 16, uppercase: true) }
                return "text is not valid UTF-8: \(shown.joined(separator: " ")) at byte \(offset) of \(bytes.count)"
            case .emptyInput: return "text is not valid UTF-8"
            }
        }
    }
}

/// One row of a store's query as `StoreColumns` reads it, column by column.
protocol StoreRow {
    /// A column's value as the scalar the builder expects for a field of `kind`, or why it cannot be.
    func value(_ column: Int32, kind: SchemaVocabulary.FieldKind) -> StoreValue
}

/// A column's value for the builder, or why it cannot be read.
enum StoreValue {
    case token(ScalarToken)
    case failure(String)
}

extension SQLiteStatement: StoreRow {
    /// The current row's value: by its storage class first, since asking a number for its size
    /// converts it, after which its storage class is undefined.
    func value(_ column: Int32, kind: SchemaVocabulary.FieldKind) -> StoreValue {
        let storage = storage(column)
        var text: String? = nil
        if storage == .text || storage == .blob {
            let size = byteCount(column)
            guard size <= StoreColumns.maximumValueBytes else { return .failure(StoreColumns.tooLong(size)) }
            if case .attribute = kind {
                // Bytes another tool stored are never guessed at: a BLOB has no encoding, and text
                // that is not UTF-8 would be repaired into other characters.
                guard storage == .text else { return .failure("expected text, found a BLOB of \(size) bytes") }
                guard let valid = validText(column) else { return .failure(StoreColumns.describeInvalidUTF8(bytes(column))) }
                text = valid
            }
        }
        return .token(StoreColumns.token(self, column, storage, kind, text: text))
    }
}
