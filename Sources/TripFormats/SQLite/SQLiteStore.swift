import TripKit

/// A SQLite trip store opened to look at: its schema version and how that was told, its tables,
/// its metadata and the history of migrations applied to it.
///
/// ```swift
/// let store = try SQLiteStore.open(path: "trips.sqlite")
/// print(store.version, store.evidence)        // 1.0.0 marker metadata schemaVersion 1.0.0
/// print(try store.tripCount(), try store.migrationHistory())
/// ```
public final class SQLiteStore {
    /// The store's file.
    public let path: String
    /// Whether the store was opened read-only (it must not be, to migrate it).
    public let isReadOnly: Bool
    /// The store's schema version.
    public private(set) var version: SchemaVersion
    /// How the version was told: the metadata (`marker`), or the columns and indexes (`structure`).
    public private(set) var evidence: VersionEvidence
    /// Whether the store carries tripconv's metadata table.
    public private(set) var hasMetadata: Bool

    let connection: SQLiteConnection
    /// How long to wait for another process's lock, in milliseconds.
    let busyTimeout: Int32
    /// A store opened read-only is read through a snapshot, which writes none of its files.
    private let snapshot: StoreSnapshot?

    /// Opens a store: read-only by default; read-write (never creating) to migrate it.
    /// A missing file is `.noInput`; a file that is not a SQLite trip store is `.data`.
    ///
    /// A store opened read-only is opened as `StoreSnapshot` opens it, so looking at it changes no
    /// byte of its files, not even its `-shm`, and creates none; a WAL-mode store whose `-wal` no
    /// process holds open is read from a private copy in `temporaryDirectory` (nil: `$TMPDIR`), kept
    /// until the store is released. Each question asked of it is then its own read transaction.
    public static func open(path: String, readOnly: Bool = true, busyTimeoutMilliseconds: Int = 5000,
                            temporaryDirectory: String? = nil) throws -> SQLiteStore {
        try SQLiteStore.requireFile(path)
        let timeout = Int32(clamping: busyTimeoutMilliseconds)
        guard readOnly else {
            let connection = try SQLiteConnection(path: path, access: .writing, busyTimeout: timeout)
            return SQLiteStore(path: path, connection: connection, snapshot: nil, found: try SQLiteStoreStructure(connection).detect(),
                               busyTimeout: timeout)
        }
        let snapshot = try StoreSnapshot(path: path, busyTimeout: timeout, temporaryDirectory: temporaryDirectory)
        do {
            let found = try SQLiteStoreStructure(snapshot.connection).detect()
            // The snapshot's read transaction ends here: a store kept open does not hold a reader's
            // lock, and `previewMigration` begins its own.
            snapshot.connection.rollbackQuietly()
            return SQLiteStore(path: path, connection: snapshot.connection, snapshot: snapshot, found: found, busyTimeout: timeout)
        } catch {
            snapshot.end()
            throw error
        }
    }

    private init(path: String, connection: SQLiteConnection, snapshot: StoreSnapshot?, found: DetectedStore,
                 busyTimeout: Int32) {
        self.path = path; self.isReadOnly = snapshot != nil; self.connection = connection; self.snapshot = snapshot
        self.busyTimeout = busyTimeout
        version = found.version; evidence = found.evidence; hasMetadata = found.hasMetadata
    }

    /// Tells the version again (after a migration).
    func refresh() throws {
        let now = try SQLiteStoreStructure(connection).detect()
        version = now.version; evidence = now.evidence; hasMetadata = now.hasMetadata
    }

    /// Fails `.noInput` for a store that is missing or not a file (SQLite would create one, or fail vaguely).
    static func requireFile(_ path: String) throws {
        guard try FileSystem.kind(of: path, failing: .noInput) == .file else { throw TripError(.noInput, "\(path): not a regular file") }
    }

    /// Whether a rollback journal with content lies beside the store: a transaction in progress in
    /// another process, or one a crash cut short, which only a read-write open can roll back.
    public static func hasJournal(_ path: String) -> Bool {
        (FileSystem.size(path + "-journal") ?? 0) > 0
    }

    // MARK: - What the store holds

    /// `PRAGMA user_version`: the major number of the schema version tripconv wrote, 0 if none.
    public func userVersion() throws -> Int {
        Int(try connection.integer("PRAGMA user_version") ?? 0)
    }

    /// The metadata table's entries (`schemaVersion`, `createdBy`); empty without one.
    public func metadata() throws -> [String: String] {
        guard hasMetadata else { return [:] }
        let s = try connection.prepare("SELECT \"key\", \"value\" FROM \(quoted(StoreLayout.metadataTable))")
        var out: [String: String] = [:]
        while try s.step() { out[s.text(0)] = s.text(1) }
        return out
    }

    /// The migrations applied to the store in place, oldest first.
    public func migrationHistory() throws -> [StoreMigrationRecord] {
        guard try tableNames().contains(StoreLayout.migrationsTable) else { return [] }
        let s = try connection.prepare("""
            SELECT "from_version", "to_version", "applied_at", "tool_version", "stages", "trips_before", "trips_after"
            FROM \(quoted(StoreLayout.migrationsTable)) ORDER BY "id"
            """)
        var out: [StoreMigrationRecord] = []
        while try s.step() {
            guard let from = SchemaVersion(s.text(0)), let to = SchemaVersion(s.text(1)) else {
                throw TripError.data("\(path): migration history holds a version that is not one: \(s.text(0).quotedForMessage) to \(s.text(1).quotedForMessage)")
            }
            out.append(StoreMigrationRecord(from: from, to: to, appliedAt: s.text(2), toolVersion: s.text(3),
                                             stages: s.text(4), tripsBefore: Int(s.int64(5)), tripsAfter: Int(s.int64(6))))
        }
        return out
    }

    /// The number of rows in the trips table.
    public func tripCount() throws -> Int {
        let table = StoreLayout(TripMigrationPlan.currentSchema).rootTable
        return Int(try connection.integer("SELECT count(*) FROM \(quoted(table))") ?? 0)
    }

    /// The names of the store's tables, in the order they were created.
    public func tableNames() throws -> [String] {
        try SQLiteStoreStructure(connection).tableNames()
    }

    /// The column names of a table, in order; empty for a table the store lacks.
    public func columnNames(of table: String) throws -> [String] {
        try SQLiteStoreStructure(connection).columns(of: table)
    }

    /// The columns of each unique index of a table (a UNIQUE column's own index included).
    public func uniqueIndexes(of table: String) throws -> [[String]] {
        try SQLiteStoreStructure(connection).uniqueIndexes(of: table)
    }

    /// The foreign keys of a table, with their ON DELETE actions.
    public func foreignKeys(of table: String) throws -> [StoreForeignKey] {
        let s = try connection.prepare("SELECT \"table\", \"from\", \"to\", \"on_delete\" FROM pragma_foreign_key_list(?1)")
        try s.bind(1, table)
        var out: [StoreForeignKey] = []
        while try s.step() {
            out.append(StoreForeignKey(table: table, column: s.text(1), referencedTable: s.text(0),
                                        referencedColumn: s.text(2), onDelete: s.text(3)))
        }
        return out
    }

    /// What SQLite's own checks find wrong (`integrity_check`, `foreign_key_check`); empty when sound.
    public func problems() throws -> [String] {
        var out: [String] = []
        let integrity = try connection.prepare("PRAGMA integrity_check")
        while try integrity.step() {
            if integrity.text(0) != "ok" { out.append(integrity.text(0)) }
        }
        let keys = try connection.prepare("PRAGMA foreign_key_check")
        while try keys.step() {
            out.append("\(keys.text(0)) row \(keys.int64(1)) refers to a missing \(keys.text(2)) row")
        }
        return out
    }

    /// The SQL that creates a store's trip tables and indexes at a schema version, derived from its
    /// declarations (what `tripconv` writes; the metadata tables are not included).
    public static func createStatements(for schema: any VersionedSchema.Type) -> [String] {
        StoreLayout(schema).createStatements
    }
}


// MARK: - Telling a store's version

/// What a store's catalog says: its tables, columns and unique indexes, and so its version.
struct SQLiteStoreStructure {
    let connection: SQLiteConnection
    init(_ connection: SQLiteConnection) { self.connection = connection }


    func tableNames() throws -> [String] {
        // The first read of the file: a file that is not SQLite fails here with SQLITE_NOTADB.
        let s = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
        var out: [String] = []
        while try s.step() { out.append(s.text(0)) }
        return out
    }

    func columns(of table: String) throws -> [String] {
        let s = try connection.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
        try s.bind(1, table)
        var out: [String] = []
        while try s.step() { out.append(s.text(0)) }
        return out
    }

    func uniqueIndexes(of table: String) throws -> [[String]] {
        let s = try connection.prepare("SELECT name FROM pragma_index_list(?1) WHERE \"unique\" = 1 ORDER BY seq")
        try s.bind(1, table)
        var names: [String] = []
        while try s.step() { names.append(s.text(0)) }
        let info = try connection.prepare("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")
        var out: [[String]] = []
        for name in names {
            try info.bind(1, name)
            var columns: [String] = []
            while try info.step() { columns.append(info.text(0)) }
            out.append(columns)
        }
        return out
    }

    /// Tells the store's version: from tripconv's metadata where the store has it, else from the trips
    /// table's columns (`start_date` or `startDate`) and whether its name has a unique index
    /// (`StoreVersionTelling` decides); metadata that `PRAGMA user_version` contradicts is `.data`.
    func detect() throws -> DetectedStore {
        let path = connection.path
        let tables = try tableNames()
        if CoreDataStoreLayout.isCoreData(tables: tables) {
            throw TripError.data("\(path): a Core Data (SwiftData) store, which tripconv reads but never writes or migrates",
                                 notes: ["convert it into a new store: `tripconv \(path) -o trips.sqlite`"])
        }
        let telling = StoreVersionTelling(name: path, tables: tables, container: "the database")
        try telling.requireRootTable()
        let rootTable = StoreVersionTelling.rootTable
        let columns = try self.columns(of: rootTable)
        let uniqueSingles = Set(try uniqueIndexes(of: rootTable).filter { $0.count == 1 }.map { $0[0] })
        let found = try telling.detect(columns: columns, uniqueSingles: uniqueSingles, metadataVersion: {
            let s = try connection.prepare("SELECT \"value\" FROM \(quoted(StoreLayout.metadataTable)) WHERE \"key\" = ?1")
            try s.bind(1, StoreLayout.versionKey)
            return try s.step() ? s.text(0) : nil
        }, columnsOf: self.columns(of:))
        if found.hasMetadata {
            let user = try connection.integer("PRAGMA user_version") ?? 0
            if user != 0, user != Int64(found.version.major) {
                throw TripError.data("\(path): metadata says \(found.version), but user_version says \(user)")
            }
        }
        return found
    }
}
