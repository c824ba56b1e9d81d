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
    private var reading: StoreReading

    /// Opens a store to read. A missing file is `.noInput`; a file that is not a Core Data store with
    /// trips is `.data`; a store another process holds locked past the timeout is `.busy`.
    public init(path: String, options: ReadOptions = ReadOptions(), busyTimeoutMilliseconds: Int = 5000) throws {
        self.path = path
        var options = options
        options.dateEpoch = .reference
        reading = try StoreReading(path: path, format: .coredata, options: options, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { c in
            let layout = try CoreDataStoreLayout(c)
            return (layout.version, layout.evidence, try CoreDataTripCursor(c, layout: layout))
        }
    }

    /// The next trip with its items and accommodation, or a rejection; nil at the end.
    public func next() throws -> ReadItem? { try reading.next() }

    /// The store's version and how it was told (or `--source-version`, when given).
    public var detection: Detection { reading.detection }
}

/// Feeds a Core Data store's trips to a `RecordBuilder`: the trip rows in `Z_PK` order, each followed
/// by its related rows. Rows that name their trip (`ZTRIP`) are read by a merge join, one query per
/// table; a to-one the trip names only from its side (`ZLIVINGACCOMMODATION`) is looked up by key.
final class CoreDataTripCursor: StoreTripCursor {
    /// One relationship's rows.
    private final class Related {
        let rows: CoreDataStoreLayout.RelatedRows
        let statement: SQLiteStatement
        /// Merge-joined by the trip's key (true), or looked up by the key the trip row holds.
        let isJoined: Bool
        /// The trip statement's column holding the key to look up.
        let forwardColumn: Int32
        var sources: StoreColumns
        var field: Int?
        var hasRow = false
        var rowTrip: Int64 = 0

        init(rows: CoreDataStoreLayout.RelatedRows, statement: SQLiteStatement, isJoined: Bool, forwardColumn: Int32, sources: StoreColumns) {
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
    private var tripSources: StoreColumns
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
        tripSources = StoreColumns(names: tripColumns.map { rootNames[$0] ?? $0 })
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
                                       sources: StoreColumns(names: columns.map { names[$0] ?? $0 })))
            } else if let column = forwardIndex[r.slot] {
                let columns = CoreDataTripCursor.attributeColumns(r.rows, skipping: [])
                // The key first, as the joined statements have it, so the columns are numbered alike.
                let sql = "SELECT \(([CoreDataStoreLayout.primaryKey] + columns).map(quoted).joined(separator: ", ")) FROM \(quoted(r.rows.table)) "
                    + "WHERE \(pk) = ?1 AND \(r.rows.filter)"
                related.append(Related(rows: r, statement: try connection.prepare(sql), isJoined: false, forwardColumn: column,
                                       sources: StoreColumns(names: columns.map { names[$0] ?? $0 })))
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
            for r in related { r.field = builder.field(r.rows.relationship.name) }
        }
        tripSources.feed(trips, into: &builder)
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
        r.sources.feed(r.statement, into: &builder)
        builder.endObject()
    }
}
