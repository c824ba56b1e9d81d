import TripKit

/// A cursor over a store's trips that feeds each to a `RecordBuilder`, from `beginRecord` to its last
/// related object; returns the trip's key, or nil after the last trip.
protocol StoreTripCursor: AnyObject {
    func next(into builder: inout RecordBuilder, record: Int) throws -> Int64?
}

/// What the SQLite and Core Data store readers share: the store opened read-only in one read
/// transaction (a writer committing meanwhile is not half-seen), a cursor feeding the builder, and the
/// version the store's metadata or structure gives unless `--source-version` overrides it.
struct StoreReading {
    let connection: SQLiteConnection
    var builder: RecordBuilder
    private var cursor: (any StoreTripCursor)?
    private let version: SchemaVersion?
    private let evidence: VersionEvidence
    private let isOverridden: Bool
    private var count = 0

    /// `open` looks at the store inside the read transaction and gives its version, how that was told,
    /// and the cursor; `options` are the reader's own (a store's dates may ignore `--date-epoch`).
    init(path: String, format: Format, options: ReadOptions, busyTimeoutMilliseconds: Int,
         open: (SQLiteConnection) throws -> (version: SchemaVersion?, evidence: VersionEvidence, cursor: any StoreTripCursor)) throws {
        try SQLiteStore.requireFile(path)
        connection = try SQLiteConnection(path: path, access: .reading, busyTimeout: Int32(clamping: busyTimeoutMilliseconds))
        try connection.execute("BEGIN", doing: "cannot read the store")
        do {
            let opened = try open(connection)
            version = opened.version; evidence = opened.evidence; cursor = opened.cursor
            var builderOptions = options
            isOverridden = options.sourceVersion != nil
            if !isOverridden { builderOptions.sourceVersion = opened.version }
            builder = RecordBuilder(source: path, format: format.rawValue, options: builderOptions)
        } catch {
            connection.rollbackQuietly()
            throw error
        }
    }

    /// The next trip with its related objects, or a rejection; nil at the end (the transaction ends).
    mutating func next() throws -> ReadItem? {
        guard let cursor else { return nil }
        let found: Bool
        do {
            found = try cursor.next(into: &builder, record: count + 1) != nil
        } catch {
            end()
            throw error
        }
        guard found else { end(); return nil }
        count += 1
        return builder.endRecord()
    }

    private mutating func end() {
        cursor = nil
        connection.rollbackQuietly()
    }

    var detection: Detection {
        var d = builder.detection
        if !isOverridden {
            d.version = version
            d.evidence = evidence
            d.recordsVersion = nil
        }
        return d
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

    /// Columns numbered from 1 (column 0 is the key the query selects first).
    init(names: [String]) {
        list = names.enumerated().map { Column(column: Int32($0.offset + 1), name: $0.element) }
    }

    mutating func resolve(_ builder: RecordBuilder) {
        fields = list.map { builder.field($0.name) }
        kinds = fields.map { $0.map(builder.kind(of:)) }
        isResolved = true
    }

    /// Hands the statement's current row to the builder, column by column.
    mutating func feed(_ statement: SQLiteStatement, into builder: inout RecordBuilder) {
        if !isResolved { resolve(builder) }
        for (i, source) in list.enumerated() {
            guard let field = fields[i], let kind = kinds[i] else {
                builder.unknownField(source.name)
                continue
            }
            // The storage class first: asking a number for its size converts it, after which its
            // storage class is undefined.
            let storage = statement.storage(source.column)
            if storage == .text || storage == .blob {
                let size = statement.byteCount(source.column)
                guard size <= SQLiteTripCursor.maximumValueBytes else {
                    builder.fail("field '\(source.name)': a value of \(size) bytes is longer than the limit of \(SQLiteTripCursor.maximumValueBytes >> 20) MiB")
                    continue
                }
            }
            builder.set(field, SQLiteTripCursor.token(statement, source.column, storage, kind))
        }
    }
}
