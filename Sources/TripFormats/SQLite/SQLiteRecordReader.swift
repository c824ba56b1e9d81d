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
public final class SQLiteRecordReader: StoreRecordReader {
    /// Opens a store to read. A missing file is `.noInput`; a file that is not a trip store is `.data`;
    /// a store another process holds locked past `busyTimeoutMilliseconds` is `.busy`.
    public init(path: String, options: ReadOptions = ReadOptions(), busyTimeoutMilliseconds: Int = 5000) throws {
        try super.init(path: path, format: .sqlite, options: options, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { c in
            let store = try SQLiteStoreStructure(c).detect()
            return (store.version, store.evidence, try store.tripQueries(c.path, byID: false))
        }
    }
}

extension DetectedStore {
    /// The statements that read the store's trips in `StoreLayout`'s tables: the trips in id order,
    /// and each relationship's table merge-joined on its foreign key, in list order. With `byID`, the
    /// one trip whose id `StoreTripCursor.rewind(key:)` names. `selecting` gives the expression that
    /// selects an attribute's column of a table (the column itself; PostgreSQL's readers format dates).
    func tripQueries(_ path: String, byID: Bool,
                     selecting: (_ table: String, _ column: String) -> String = { quoted($1) }) throws -> StoreTripQueries {
        let layout = StoreLayout(schema)
        let id = StoreLayout.idColumn
        guard rootColumns.contains(id) else {
            throw TripError.data("\(path): the \(layout.rootTable) table has no \(id) column")
        }
        let tripNames = rootColumns.filter { $0 != id }
        let tripSQL = "SELECT \(([quoted(id)] + tripNames.map { selecting(layout.rootTable, $0) }).joined(separator: ", ")) "
            + "FROM \(quoted(layout.rootTable))"
            + (byID ? " WHERE \(quoted(id)) = ?1" : " ORDER BY \(quoted(id))")
        var related: [StoreTripQueries.Related] = []
        for table in layout.children {
            guard let columns = childColumns[table.name] else { continue }
            let key = layout.foreignKey
            guard columns.contains(key) else {
                throw TripError.data("\(path): the \(table.name) table has no \(key) column")
            }
            let skipped: Set<String> = [id, key, StoreLayout.positionColumn]
            let names = columns.filter { !skipped.contains($0) }
            var order = [quoted(key)]
            if columns.contains(StoreLayout.positionColumn) { order.append(quoted(StoreLayout.positionColumn)) }
            if columns.contains(id) { order.append(quoted(id)) }
            let filter = byID ? "\(quoted(key)) = ?1" : "\(quoted(key)) IS NOT NULL"
            let sql = "SELECT \(([quoted(key)] + names.map { selecting(table.name, $0) }).joined(separator: ", ")) FROM \(quoted(table.name)) "
                + "WHERE \(filter) ORDER BY \(order.joined(separator: ", "))"
            related.append(.init(relationship: table.relationship.name, sql: sql, fields: names, reach: .joined))
        }
        return StoreTripQueries(tripSQL: tripSQL, tripFields: tripNames, related: related, isByKey: byID)
    }
}
