internal import CSQLite
import TripKit

/// The write side of migrating a tripconv object store in place (`ObjectStoreMigration`): one
/// connection to the store holds a write transaction from before the first object is read until the
/// new store's tables have replaced the old ones, and commits once.
///
/// Why not rename(2) the new file over the store: a process that has the store open (an app, a
/// server, a `sqlite3` shell) keeps the old inode and would go on reading and writing a file no name
/// leads to, its writes lost without a word; and the old file's `-journal` or `-wal` would be left
/// to meet the new file. Why not SQLite's online backup API into the store: it needs a connection
/// with no transaction open, so the write lock taken before reading would have to be let go before
/// the copy, and a writer could commit in between, its rows then overwritten. Here the rows are
/// copied statement by statement inside the transaction: other writers wait (`BEGIN IMMEDIATE`),
/// readers read the old tables until the commit and the new ones after (SQLite tells every open
/// connection that the schema changed), and a crash before the commit leaves the journal that
/// puts the old store back.
final class SQLiteObjectStoreSwap {
    private let store: String
    private let connection: SQLiteConnection
    private var isOpen = false

    /// Opens the store to write (nothing is written yet).
    init(store: String, busyTimeout: Int32) throws {
        self.store = store
        connection = try SQLiteConnection(path: store, access: .writing, busyTimeout: busyTimeout)
        // Tables are dropped and made in any order; the pragma is a no-op inside a transaction.
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("PRAGMA cache_size = -32768")
    }

    deinit { abandon() }

    /// Takes the store's write lock (waiting for another writer up to the busy timeout, then
    /// `.busy`) and checks that the store is still at the version `model` was read at: another
    /// process may have migrated it since.
    func lock(expecting model: ObjectModel) throws {
        try connection.execute("BEGIN IMMEDIATE", doing: "cannot lock the store")
        isOpen = true
        let now = try SQLiteObjectReader.model(connection, path: store)
        guard now.versionIdentifiers == model.versionIdentifiers else {
            throw TripError(.busy, "\(store): another process changed the store (now at \(now.versionIdentifiers.joined(separator: ", "))) "
                            + "while it was looked at; nothing was migrated", notes: ["run the migration again"])
        }
    }

    /// Replaces every table, view, index and trigger of the store with those of the store at `built`
    /// (rows copied as they are, every value in its storage class), keeps the history table's earlier
    /// rows and records `history` after them (none: nothing), and commits.
    func replace(with built: String, history: [ObjectStoreMigration.Stage], toolVersion: String) throws {
        guard isOpen else { throw TripError.usage("\(store): the store is replaced before it is locked") }
        let kept = StoreLayout.migrationsTable
        for (type, name) in try ObjectStoreSwapSchema.objects(connection, except: kept).reversed() where type != "index" {
            try connection.execute("DROP \(type.uppercased()) IF EXISTS \(quoted(name))", doing: "cannot migrate the store")
        }
        let source = try SQLiteConnection(path: built, access: .reading)
        let made = try ObjectStoreSwapSchema.definitions(source, except: kept)
        for (type, name, sql) in made where type == "table" {
            try connection.execute(sql, doing: "cannot migrate the store")
            try copyRows(of: name, from: source)
        }
        for (type, _, sql) in made where type != "table" { try connection.execute(sql, doing: "cannot migrate the store") }
        try record(history, toolVersion: toolVersion)
        try connection.execute("COMMIT", doing: "cannot commit")
        isOpen = false
    }

    /// Lets go of the lock without changing anything.
    func abandon() {
        guard isOpen else { return }
        isOpen = false
        connection.rollbackQuietly()
    }

    private func copyRows(of table: String, from source: SQLiteConnection) throws {
        let select = try source.prepare("SELECT * FROM \(quoted(table))", doing: "cannot read the migrated store")
        let n = sqlite3_column_count(select.handle)
        guard n > 0 else { return }
        let insert = try connection.prepare("INSERT INTO \(quoted(table)) VALUES (" + (1...n).map { "?\($0)" }.joined(separator: ", ") + ")",
                                            doing: "cannot migrate the store")
        while try select.step() {
            for c in 0..<n {
                let rc = sqlite3_bind_value(insert.handle, c + 1, sqlite3_column_value(select.handle, c))
                guard rc == SQLITE_OK else { throw connection.failure(rc, doing: "cannot migrate the store") }
            }
            try insert.run()
        }
    }

    private func record(_ stages: [ObjectStoreMigration.Stage], toolVersion: String) throws {
        // An append that migrated nothing (`ObjectStoreAppend`) records nothing, nor makes the table.
        if stages.isEmpty { return }
        try connection.execute(StoreLayout.metadataStatements[1], doing: "cannot record the migration")
        let insert = try connection.prepare("""
            INSERT INTO \(quoted(StoreLayout.migrationsTable))
            ("from_version", "to_version", "applied_at", "tool_version", "stages", "trips_before", "trips_after")
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """, doing: "cannot record the migration")
        let now = StoreMigration.now()
        for s in stages {
            try insert.bind(1, s.from); try insert.bind(2, s.to); try insert.bind(3, now); try insert.bind(4, toolVersion)
            try insert.bind(5, s.stages); try insert.bind(6, Int64(s.objectsBefore)); try insert.bind(7, Int64(s.objectsAfter))
            try insert.run()
        }
    }
}

extension SQLiteObjectStoreSwap {
    /// The store locked for writing (still at `model`'s version), a temporary folder beside it, and
    /// the backup `backup` names taken; `build` writes the new store at the path it is given (the
    /// backup taken, if any, with it) and returns its result and the history to record; the new
    /// store's tables then replace the store's and the transaction commits. On an error the lock is
    /// let go and the backup removed: nothing changed. `migrate --model` and appends to a store of
    /// objects (`ObjectStoreMigration`, `ObjectStoreAppend`) both run this way.
    static func replacing<T>(store: String, expecting model: ObjectModel, busyTimeout: Int32, backup: String?, toolVersion: String,
                             build: (_ built: String, _ backup: String?) throws -> (T, history: [ObjectStoreMigration.Stage])) throws -> T {
        let swap = try SQLiteObjectStoreSwap(store: store, busyTimeout: busyTimeout)
        var taken: String?
        let folder = try TemporaryPaths.makeDirectory(beside: store)
        defer {
            FileSystem.removeDirectoryAndFiles(folder)
            TemporaryPaths.unregister(folder)
        }
        do {
            try swap.lock(expecting: model)
            if let backup {
                if FileSystem.isSameFile(backup, store) { throw TripError.usage("\(backup): the backup cannot be the store itself") }
                taken = try SQLiteBackup.copy(store, to: backup, busyTimeout: busyTimeout)
            }
            let built = folder + "/built.sqlite"
            let (result, history) = try build(built, taken)
            try swap.replace(with: built, history: history, toolVersion: toolVersion)
            return result
        } catch {
            swap.abandon()
            if let taken { FileSystem.remove(taken) }
            throw error
        }
    }
}

/// What a SQLite database's schema holds, read from `sqlite_master`.
private enum ObjectStoreSwapSchema {
    /// The tables, views, indexes and triggers (SQLite's own aside), in the order they were made.
    static func objects(_ c: SQLiteConnection, except kept: String) throws -> [(String, String)] {
        try definitions(c, except: kept).map { ($0.0, $0.1) }
    }

    /// Each object's type, name and CREATE statement, in the order they were made.
    static func definitions(_ c: SQLiteConnection, except kept: String) throws -> [(String, String, String)] {
        let s = try c.prepare("""
            SELECT "type", "name", "sql" FROM sqlite_master
            WHERE "sql" IS NOT NULL AND "name" NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND "tbl_name" <> ?1 ORDER BY rowid
            """)
        try s.bind(1, kept)
        var out: [(String, String, String)] = []
        while try s.step() { out.append((s.text(0), s.text(1), s.text(2))) }
        return out
    }
}
