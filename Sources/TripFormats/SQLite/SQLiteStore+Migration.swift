import TripKit

extension SQLiteStore {
    /// Migrates the store in place to a newer version, in one transaction; nil when it is already
    /// there (then nothing is written, and no backup taken).
    ///
    /// The store must be opened with `readOnly: false`. A target older than the store is a usage
    /// error. The store is locked for writing first (waiting up to the busy timeout for another
    /// writer, then failing `.busy`); then, unless `backup` is `.none`, the store as it is is copied
    /// through SQLite's online backup API, before anything changes, to a file that replaces none
    /// (see `StoreBackup`; the report's `backup` names it); then the plan's stages run (see
    /// `SQLiteMigration`) and the transaction commits. Whatever fails, or however the process ends,
    /// the store is either as it was or entirely at the target; a migration that fails removes the
    /// backup it took.
    ///
    /// The store's trips are held under `memoryLimit` bytes (default as `--memory-limit`'s), the rest
    /// in anonymous temporary files in `temporaryDirectory` (default `$TMPDIR`). The trips merged or
    /// dropped go to `setAside` once the migration has committed, or, without one, into the
    /// report's `ledger` (then in memory, all of them).
    ///
    /// ```swift
    /// let store = try SQLiteStore.open(path: "trips.sqlite", readOnly: false)
    /// if let report = try store.migrate(to: TripSchemaV3.self, policy: .merge, backup: .besideStore) {
    ///     print(report.stages.map(\.stages), report.merged, report.tripsAfter, report.backup ?? "")
    /// }
    /// ```
    @discardableResult
    public func migrate(to target: any VersionedSchema.Type, policy: DeduplicationPolicy = .merge,
                        toolVersion: String = WriteOptions().toolVersion, backup: StoreBackup = .none,
                        memoryLimit: Int? = nil, temporaryDirectory: String? = nil,
                        setAside: ((SetAsideRecord) throws -> Void)? = nil) throws -> StoreMigrationReport? {
        let budget = SpillBudget(limit: memoryLimit ?? SpillBudget.defaultLimit, directory: temporaryDirectory)
        guard !isReadOnly else { throw TripError.usage("\(path): opened read-only; open it with readOnly: false to migrate it") }
        // SQLite's procedure for rebuilding tables wants foreign keys off, and the pragma is a no-op
        // inside a transaction: set it before BEGIN. They are checked before the commit.
        try connection.execute("PRAGMA foreign_keys = OFF")
        // A larger page cache keeps a large migration's pages in memory until the commit instead of
        // spilling them to the file midway; it changes nothing of what is durable when.
        try connection.execute("PRAGMA cache_size = -65536")
        defer { try? connection.execute("PRAGMA foreign_keys = ON") }
        try connection.execute("BEGIN IMMEDIATE", doing: "cannot lock the store")
        var taken: String?
        do {
            let found = try SQLiteStoreStructure(connection).detect()
            guard try SQLiteMigration.isNeeded(store: found, target: target, path: path, migrate: true) else {
                try connection.execute("COMMIT", doing: "cannot commit")
                try refresh()
                return nil
            }
            var (report, ledger) = try SQLiteMigration.inPlace(connection, store: found, to: target, policy: policy, toolVersion: toolVersion,
                                                               budget: budget, backup: backup, busyTimeout: busyTimeout)
            taken = report.backup
            try connection.execute("COMMIT", doing: "cannot commit")
            taken = nil
            try refresh()
            if let setAside {
                try ledger.forEach(setAside)
            } else {
                try ledger.forEach { report.ledger.append($0) }
            }
            return report
        } catch {
            connection.rollbackQuietly()
            if let taken { FileSystem.remove(taken) }
            throw error
        }
    }

    /// Migrates the store in place, backing it up first to `backup` (or to `backup.N`, when that
    /// name is taken), or taking no backup when it is nil: `migrate(to:…backup:)` with `.file` or `.none`.
    @discardableResult
    public func migrate(to target: any VersionedSchema.Type, policy: DeduplicationPolicy = .merge,
                        toolVersion: String = WriteOptions().toolVersion, backup: String?) throws -> StoreMigrationReport? {
        try migrate(to: target, policy: policy, toolVersion: toolVersion, backup: backup.map(StoreBackup.file) ?? .none)
    }

    /// What `migrate` would do, found without changing anything: the stages and what each does to
    /// the tables, the names that several trips share with the fields on which they differ, and the
    /// trips that would be merged or dropped. A target older than the store is a usage error. The
    /// whole preview is in memory; the other `previewMigration` streams it.
    public func previewMigration(to target: any VersionedSchema.Type, policy: DeduplicationPolicy = .merge) throws -> StoreMigrationPreview {
        var duplicates: [StoreMigrationPreview.DuplicateName] = [], ledger: [SetAsideRecord] = []
        var preview = try previewMigration(to: target, policy: policy, summary: { _ in },
                                           duplicate: { duplicates.append($0) }, setAside: { ledger.append($0) })
        preview.duplicates = duplicates
        preview.ledger = ledger
        return preview
    }

    /// What `migrate` would do, streamed: `summary` gets the stages and counts; then `duplicate`
    /// each name several trips share (in the order of its first trip) and `setAside` each trip that
    /// would be merged or dropped. The store's trips are held under `memoryLimit` (default as
    /// `--memory-limit`'s), the rest in anonymous temporary files in `temporaryDirectory`.
    public func previewMigration(to target: any VersionedSchema.Type, policy: DeduplicationPolicy = .merge,
                                 memoryLimit: Int? = nil, temporaryDirectory: String? = nil,
                                 summary: (StoreMigrationPreview) throws -> Void,
                                 duplicate: (StoreMigrationPreview.DuplicateName) throws -> Void,
                                 setAside: (SetAsideRecord) throws -> Void) throws -> StoreMigrationPreview {
        let budget = SpillBudget(limit: memoryLimit ?? SpillBudget.defaultLimit, directory: temporaryDirectory)
        try connection.execute("BEGIN", doing: "cannot read the store")
        defer { connection.rollbackQuietly() }
        let found = try SQLiteStoreStructure(connection).detect()
        if found.version > target.versionIdentifier {
            _ = try SQLiteMigration.isNeeded(store: found, target: target, path: path, migrate: true)
        }
        return try SQLiteMigration.preview(connection, store: found, to: target, policy: policy, budget: budget,
                                           summary: summary, duplicate: duplicate, setAside: setAside)
    }

    /// Copies the store to a file through SQLite's online backup API: complete or absent, and with
    /// what the store's WAL holds. A file `target` names is never replaced: the copy goes to the
    /// first of `target.2`, `target.3`, … that is free; the name it got is returned.
    @discardableResult
    public func backUp(to target: String) throws -> String {
        if FileSystem.isSameFile(target, path) { throw TripError.usage("\(target): the backup cannot be the store itself") }
        return try SQLiteBackup.copy(path, to: target, busyTimeout: busyTimeout)
    }
}
