import TripKit

/// Reads the trips of a Core Data SQLite store (SwiftData's `default.store`), in `Z_PK` order,
/// through the same `RecordBuilder` as every other format.
///
/// The store is opened read-only (`SQLITE_OPEN_READONLY`: nothing of it is ever written) and read in
/// one read transaction; a `-wal` file beside it is honoured, so trips the app committed but did not
/// yet checkpoint are read. The version comes from the model version the store's metadata names,
/// else from the trip table's columns (`ZSTART_DATE` or `ZSTARTDATE`) and its unique index on `ZNAME`.
/// Dates are seconds since 2001-01-01, whatever `--date-epoch` says for other inputs.
///
/// ```swift
/// let reader = try CoreDataRecordReader(path: "samples/coredata-v3.store")
/// while let item = try reader.next() { … }
/// print(reader.detection.version!, reader.detection.evidence)
/// ```
public final class CoreDataRecordReader: RecordReader {
    /// The store's file, as messages and origins name it.
    public let path: String
    private let connection: SQLiteConnection
    private let layout: CoreDataStoreLayout
    private var builder: RecordBuilder
    private var cursor: CoreDataTripCursor?
    private let isOverridden: Bool
    private var count = 0

    /// Opens a store to read. A missing file is `.noInput`; a file that is not a Core Data store with
    /// trips is `.data`; a store another process holds locked past the timeout is `.busy`.
    public init(path: String, options: ReadOptions = ReadOptions(), busyTimeoutMilliseconds: Int = 5000) throws {
        self.path = path
        try SQLiteStore.requireFile(path)
        connection = try SQLiteConnection(path: path, access: .reading, busyTimeout: Int32(clamping: busyTimeoutMilliseconds))
        try connection.execute("BEGIN", doing: "cannot read the store")
        do {
            layout = try CoreDataStoreLayout(connection)
            var builderOptions = options
            builderOptions.dateEpoch = .reference
            isOverridden = options.sourceVersion != nil
            if !isOverridden { builderOptions.sourceVersion = layout.version }
            builder = RecordBuilder(source: path, format: Format.coredata.rawValue, options: builderOptions)
            cursor = try CoreDataTripCursor(connection, layout: layout)
        } catch {
            connection.rollbackQuietly()
            throw error
        }
    }

    /// The next trip with its items and accommodation, or a rejection; nil at the end.
    public func next() throws -> ReadItem? {
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

    private func end() {
        cursor = nil
        connection.rollbackQuietly()
    }

    /// The store's version and how it was told (or `--source-version`, when given).
    public var detection: Detection {
        var d = builder.detection
        if !isOverridden {
            d.version = layout.version
            d.evidence = layout.evidence
            d.recordsVersion = nil
        }
        return d
    }
}

/// Feeds a Core Data store's trips to a `RecordBuilder`: the trip rows in `Z_PK` order, each followed
/// by its related rows. Rows that name their trip (`ZTRIP`) are read by a merge join, one query per
/// table; a to-one the trip names only from its side (`ZLIVINGACCOMMODATION`) is looked up by key.
final class CoreDataTripCursor {
    /// An attribute column, handed to the builder under the attribute's name.
    private struct Source {
        let column: Int32
        let name: String
    }

    private struct Sources {
        var list: [Source] = []
        var fields: [Int?] = []
        var kinds: [SchemaVocabulary.FieldKind?] = []
        var isResolved = false

        mutating func resolve(_ builder: RecordBuilder) {
            fields = list.map { builder.field($0.name) }
            kinds = fields.map { $0.map(builder.kind(of:)) }
            isResolved = true
        }
    }

    /// One relationship's rows.
    private final class Related {
        let rows: CoreDataStoreLayout.RelatedRows
        let statement: SQLiteStatement
        /// Merge-joined by the trip's key (true), or looked up by the key the trip row holds.
        let isJoined: Bool
        /// The trip statement's column holding the key to look up.
        let forwardColumn: Int32
        var sources: Sources
        var field: Int?
        var hasRow = false
        var rowTrip: Int64 = 0

        init(rows: CoreDataStoreLayout.RelatedRows, statement: SQLiteStatement, isJoined: Bool, forwardColumn: Int32, sources: Sources) {
            self.rows = rows; self.statement = statement; self.isJoined = isJoined
            self.forwardColumn = forwardColumn; self.sources = sources
        }

        func advance() throws {
            hasRow = try statement.step()
            if hasRow { rowTrip = statement.int64(0) }
        }
    }

    let path: String
    private let trips: SQLiteStatement
    private var tripSources: Sources
    private let related: [Related]
    private var isStarted = false

    /// The attribute names of an entity across every version, by their column (`ZSTART_DATE` → `start_date`).
    private static func attributeNames(_ entity: String) -> [String: String] {
        var out: [String: String] = [:]
        for schema in TripMigrationPlan.schemas {
            for a in schema.entity(entity)?.attributes ?? [] { out[CoreDataStoreLayout.column(a.name)] = a.name }
        }
        return out
    }

    /// The attribute columns of a table (all but bookkeeping and foreign keys), named as the builder knows
    /// them; a column no version declares keeps its own name, so the builder reports it as unknown.
    private static func attributeColumns(_ rows: CoreDataStoreLayout.EntityRows, skipping: Set<String>) -> [String] {
        rows.columns.filter { !CoreDataStoreLayout.isBookkeeping($0) && !skipping.contains($0) }
    }

    init(_ connection: SQLiteConnection, layout: CoreDataStoreLayout) throws {
        path = connection.path
        let pk = quoted(CoreDataStoreLayout.primaryKey)
        let root = TripMigrationPlan.currentSchema.rootEntity
        let rootNames = CoreDataTripCursor.attributeNames(root.name)
        // The trip's foreign-key columns of every relationship, in any spelling, are not attributes.
        let forwardColumns = Set(root.relationships.map { CoreDataStoreLayout.column($0.name) }
            + TripMigrationPlan.schemas.flatMap { $0.rootEntity.legacySpellings.keys.map(CoreDataStoreLayout.column) })
        let tripColumns = CoreDataTripCursor.attributeColumns(layout.trips, skipping: forwardColumns)
        let lookups = layout.related.filter { $0.inverseColumn == nil && $0.forwardColumn != nil }
        var selected = [pk] + tripColumns.map(quoted)
        var forwardIndex: [Int: Int32] = [:]
        for r in lookups {
            forwardIndex[r.slot] = Int32(selected.count)
            selected.append(quoted(r.forwardColumn!))
        }
        tripSources = Sources(list: tripColumns.enumerated().map {
            Source(column: Int32($0.offset + 1), name: rootNames[$0.element] ?? $0.element)
        })
        trips = try connection.prepare("SELECT \(selected.joined(separator: ", ")) FROM \(quoted(layout.trips.table)) "
                                       + "WHERE \(layout.trips.filter) ORDER BY \(pk)")

        var related: [Related] = []
        for r in layout.related {
            let names = CoreDataTripCursor.attributeNames(r.rows.entity)
            if let inverse = r.inverseColumn {
                let columns = CoreDataTripCursor.attributeColumns(r.rows, skipping: [inverse])
                let sql = "SELECT \(([inverse] + columns).map(quoted).joined(separator: ", ")) FROM \(quoted(r.rows.table)) "
                    + "WHERE \(r.rows.filter) AND \(quoted(inverse)) IS NOT NULL ORDER BY \(quoted(inverse)), \(pk)"
                related.append(Related(rows: r, statement: try connection.prepare(sql), isJoined: true, forwardColumn: -1,
                                       sources: Sources(list: columns.enumerated().map {
                                           Source(column: Int32($0.offset + 1), name: names[$0.element] ?? $0.element)
                                       })))
            } else if let column = forwardIndex[r.slot] {
                let columns = CoreDataTripCursor.attributeColumns(r.rows, skipping: [])
                // The key first, as the joined statements have it, so the columns are numbered alike.
                let sql = "SELECT \(([CoreDataStoreLayout.primaryKey] + columns).map(quoted).joined(separator: ", ")) FROM \(quoted(r.rows.table)) "
                    + "WHERE \(pk) = ?1 AND \(r.rows.filter)"
                related.append(Related(rows: r, statement: try connection.prepare(sql), isJoined: false, forwardColumn: column,
                                       sources: Sources(list: columns.enumerated().map {
                                           Source(column: Int32($0.offset + 1), name: names[$0.element] ?? $0.element)
                                       })))
            }
        }
        self.related = related
    }

    /// Feeds the next trip to the builder (the caller ends the record); returns its `Z_PK`, or nil
    /// after the last trip.
    func next(into builder: inout RecordBuilder, record: Int) throws -> Int64? {
        if !isStarted {
            isStarted = true
            for r in related where r.isJoined { try r.advance() }
        }
        guard try trips.step() else { return nil }
        let key = trips.int64(0)
        builder.beginRecord(origin: RecordOrigin(source: path, record: record))
        if !tripSources.isResolved {
            tripSources.resolve(builder)
            for r in related { r.field = builder.field(r.rows.relationship.name) }
        }
        feed(trips, tripSources, into: &builder)
        for r in related {
            guard let field = r.field else { continue }
            if r.isJoined {
                // Rows whose trip is gone, or is another entity's row, are stepped over.
                while r.hasRow, r.rowTrip < key { try r.advance() }
                while r.hasRow, r.rowTrip == key {
                    take(r, field, into: &builder)
                    try r.advance()
                }
            } else if !trips.isNull(r.forwardColumn) {
                try r.statement.bind(1, trips.int64(r.forwardColumn))
                if try r.statement.step() { take(r, field, into: &builder) }
                r.statement.reset()
            }
        }
        return key
    }

    private func take(_ r: Related, _ field: Int, into builder: inout RecordBuilder) {
        builder.beginObject(field)
        if !r.sources.isResolved { r.sources.resolve(builder) }
        feed(r.statement, r.sources, into: &builder)
        builder.endObject()
    }

    private func feed(_ statement: SQLiteStatement, _ sources: Sources, into builder: inout RecordBuilder) {
        for (i, source) in sources.list.enumerated() {
            guard let field = sources.fields[i], let kind = sources.kinds[i] else {
                builder.unknownField(source.name)
                continue
            }
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
