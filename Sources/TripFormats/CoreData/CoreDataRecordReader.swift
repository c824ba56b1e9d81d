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
public final class CoreDataRecordReader: StoreRecordReader {
    /// Opens a store to read. A missing file is `.noInput`; a file that is not a Core Data store with
    /// trips is `.data`; a store another process holds locked past the timeout is `.busy`.
    public init(path: String, options: ReadOptions = ReadOptions(), busyTimeoutMilliseconds: Int = 5000) throws {
        var options = options
        options.dateEpoch = .reference
        try super.init(path: path, format: .coredata, options: options, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { c in
            let layout = try CoreDataStoreLayout(c)
            return (layout.version, layout.evidence, layout.tripQueries)
        }
    }
}

extension CoreDataStoreLayout {
    /// The attribute names of an entity across every version, by their column (`ZSTART_DATE` → `start_date`).
    private static func attributeNames(_ entity: String) -> [String: String] {
        var out: [String: String] = [:]
        for schema in TripMigrationPlan.schemas {
            for a in schema.entity(entity)?.attributes ?? [] { out[column(a.name)] = a.name }
        }
        return out
    }

    /// The attribute columns of a table (all but bookkeeping and foreign keys).
    private static func attributeColumns(_ rows: EntityRows, skipping: Set<String>) -> [String] {
        rows.columns.filter { !isBookkeeping($0) && !skipping.contains($0) }
    }

    /// The columns as the builder knows them; a column no version declares keeps its own name, so the
    /// builder reports it as unknown.
    private static func fields(_ columns: [String], of entity: String) -> [String] {
        let names = attributeNames(entity)
        return columns.map { names[$0] ?? $0 }
    }

    /// The statements that read the store's trips: the trip rows of their entity in `Z_PK` order; rows
    /// that name their trip (`ZTRIP`) merge-joined, one query per table; a to-one the trip names only
    /// from its side (`ZLIVINGACCOMMODATION`) looked up by key.
    var tripQueries: StoreTripQueries {
        let pk = quoted(CoreDataStoreLayout.primaryKey)
        let root = TripMigrationPlan.currentSchema.rootEntity
        // The trip's foreign-key columns of every relationship, in any spelling, are not attributes.
        let forwardColumns = Set(root.relationships.map { CoreDataStoreLayout.column($0.name) }
            + TripMigrationPlan.schemas.flatMap { $0.rootEntity.legacySpellings.keys.map(CoreDataStoreLayout.column) })
        let tripColumns = CoreDataStoreLayout.attributeColumns(trips, skipping: forwardColumns)
        var selected = [pk] + tripColumns.map(quoted)
        var related: [StoreTripQueries.Related] = []
        for r in self.related {
            let name = r.relationship.name
            if let inverse = r.inverseColumn {
                let columns = CoreDataStoreLayout.attributeColumns(r.rows, skipping: [inverse])
                let sql = "SELECT \(([inverse] + columns).map(quoted).joined(separator: ", ")) FROM \(quoted(r.rows.table)) "
                    + "WHERE \(r.rows.filter) AND \(quoted(inverse)) IS NOT NULL ORDER BY \(quoted(inverse)), \(pk)"
                related.append(.init(relationship: name, sql: sql, fields: CoreDataStoreLayout.fields(columns, of: r.rows.entity), reach: .joined))
            } else if let forward = r.forwardColumn {
                let tripColumn = Int32(selected.count)
                selected.append(quoted(forward))
                let columns = CoreDataStoreLayout.attributeColumns(r.rows, skipping: [])
                // The key first, as the joined statements have it, so the columns are numbered alike.
                let sql = "SELECT \(([CoreDataStoreLayout.primaryKey] + columns).map(quoted).joined(separator: ", ")) FROM \(quoted(r.rows.table)) "
                    + "WHERE \(pk) = ?1 AND \(r.rows.filter)"
                related.append(.init(relationship: name, sql: sql, fields: CoreDataStoreLayout.fields(columns, of: r.rows.entity),
                                     reach: .lookedUp(tripColumn: tripColumn)))
            }
        }
        return StoreTripQueries(
            tripSQL: "SELECT \(selected.joined(separator: ", ")) FROM \(quoted(trips.table)) WHERE \(trips.filter) ORDER BY \(pk)",
            tripFields: CoreDataStoreLayout.fields(tripColumns, of: root.name), related: related, isByKey: false)
    }
}
