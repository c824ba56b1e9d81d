import TripKit

/// A PostgreSQL trip store opened to look at, as `SQLiteStore` is a SQLite one: its schema version and
/// how that was told, its tables, its metadata and the history of migrations applied to it. The store
/// is the tables of the connection's current schema (`schema`, else the search path's first).
///
/// ```swift
/// let store = try PGStore.open(address: "postgresql://localhost/trips", schema: "fleet")
/// print(store.version, store.evidence)        // 3.0.0 marker metadata schemaVersion 3.0.0
/// print(try store.tripCount(), try store.migrationHistory())
/// ```
public final class PGStore {
    /// The store as messages name it: `host:port/database`, then `/schema` with one; never the password.
    public var name: String { connection.name }
    /// The store's schema version.
    public private(set) var version: SchemaVersion
    /// How the version was told: the metadata (`marker`), or the columns and indexes (`structure`).
    public private(set) var evidence: VersionEvidence
    /// Whether the store carries tripconv's metadata table.
    public private(set) var hasMetadata: Bool

    let connection: PGConnection

    /// Connects and tells the store's version. An unreachable server is `.unavailable`, refused
    /// credentials `.permission`; a schema that does not exist is `.noInput`; a schema without a trips
    /// table, or a store at a version tripconv does not know, is `.data`.
    public static func open(address: String, schema: String? = nil) throws -> PGStore {
        let connection = try PGConnection(address, schema: schema)
        return PGStore(connection: connection, found: try PGStoreStructure(connection).detect())
    }

    private init(connection: PGConnection, found: DetectedStore) {
        self.connection = connection
        version = found.version; evidence = found.evidence; hasMetadata = found.hasMetadata
    }

    /// Tells the version again (after a migration).
    func refresh() throws {
        let now = try PGStoreStructure(connection).detect()
        version = now.version; evidence = now.evidence; hasMetadata = now.hasMetadata
    }

    // MARK: - What the store holds

    /// The metadata table's entries (`schemaVersion`, `createdBy`); empty without one.
    public func metadata() throws -> [String: String] {
        guard hasMetadata else { return [:] }
        let r = try connection.query("SELECT \"key\", \"value\" FROM \(quoted(StoreLayout.metadataTable))", doing: "cannot read the store's metadata")
        var out: [String: String] = [:]
        for row in 0..<r.rowCount { out[r.text(row, 0)] = r.text(row, 1) }
        return out
    }

    /// The migrations applied to the store in place, oldest first.
    public func migrationHistory() throws -> [StoreMigrationRecord] {
        guard try tableNames().contains(StoreLayout.migrationsTable) else { return [] }
        let r = try connection.query("""
            SELECT "from_version", "to_version", "applied_at", "tool_version", "stages", "trips_before", "trips_after"
            FROM \(quoted(StoreLayout.migrationsTable)) ORDER BY "id"
            """, doing: "cannot read the store's migration history")
        return try (0..<r.rowCount).map { row in
            guard let from = SchemaVersion(r.text(row, 0)), let to = SchemaVersion(r.text(row, 1)) else {
                throw TripError.data("\(name): migration history holds a version that is not one: \(r.text(row, 0).quotedForMessage) to \(r.text(row, 1).quotedForMessage)")
            }
            return StoreMigrationRecord(from: from, to: to, appliedAt: r.text(row, 2), toolVersion: r.text(row, 3),
                                         stages: r.text(row, 4), tripsBefore: Int(r.int64(row, 5)), tripsAfter: Int(r.int64(row, 6)))
        }
    }

    /// The number of rows in the trips table.
    public func tripCount() throws -> Int {
        Int(try connection.query("SELECT count(*) FROM \(quoted(StoreVersionTelling.rootTable))").int64(0, 0))
    }

    /// The names of the store's tables (the current schema's), in the order they were created.
    public func tableNames() throws -> [String] {
        try PGStoreStructure(connection).tableNames()
    }

    /// The column names of a table, in order; empty for a table the store lacks.
    public func columnNames(of table: String) throws -> [String] {
        try PGStoreStructure(connection).columns(of: table)
    }

    /// The columns of each unique index of a table (a UNIQUE column's own index included; the primary
    /// key left out, as SQLite's row id is).
    public func uniqueIndexes(of table: String) throws -> [[String]] {
        try PGStoreStructure(connection).uniqueIndexes(of: table)
    }

    /// The foreign keys of a table, with their ON DELETE actions (`CASCADE`, `SET NULL`, …).
    public func foreignKeys(of table: String) throws -> [StoreForeignKey] {
        try PGStoreStructure(connection).foreignKeys(of: table)
    }

    /// What is wrong with the rows, which the server's constraints normally rule out but a store
    /// made without them may hold: child rows whose trip is missing, and names held by more than one
    /// trip where the store's layout makes names unique. Empty when sound.
    public func problems() throws -> [String] {
        var out: [String] = []
        let layout = PGLayout(TripMigrationPlan.schema(for: version)!)
        let tables = try tableNames()
        let id = quoted(StoreLayout.idColumn), key = quoted(layout.foreignKey), root = quoted(layout.rootTable)
        for child in layout.children where tables.contains(child.name) {
            guard try columnNames(of: child.name).contains(layout.foreignKey) else { continue }
            let r = try connection.query("""
                SELECT c.\(id), count(*) OVER () FROM \(quoted(child.name)) c
                WHERE c.\(key) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(root) t WHERE t.\(id) = c.\(key))
                ORDER BY c.\(id) LIMIT 20
                """, doing: "cannot check the store")
            for row in 0..<r.rowCount { out.append("\(child.name) row \(r.text(row, 0)) refers to a missing \(layout.rootTable) row") }
            if r.rowCount > 0, r.int64(0, 1) > Int64(r.rowCount) {
                out.append("\(child.name): \(r.int64(0, 1) - Int64(r.rowCount)) more rows refer to a missing \(layout.rootTable) row")
            }
        }
        if let unique = layout.uniqueColumn {
            let column = quoted(unique.name)
            let r = try connection.query("""
                SELECT \(column), count(*) FROM \(root) GROUP BY \(column) HAVING count(*) > 1 ORDER BY \(column) LIMIT 20
                """, doing: "cannot check the store")
            for row in 0..<r.rowCount {
                out.append("\(layout.rootTable): \(unique.name) \(r.text(row, 0).quotedForMessage) is held by \(r.int64(row, 1)) rows, "
                           + "where \(version) makes it unique")
            }
        }
        return out
    }
}
