#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// Migrating a store in place, stage by stage, inside the caller's transaction, so a failure (or a
/// crash) anywhere leaves the store as it was. `tripconv migrate` (through `SQLiteStore.migrate`)
/// and `convert --migrate` (through `SQLiteRecordWriter`) both run this.
///
/// For each stage of the plan from the store's version to the target:
/// 1. a custom stage's `willMigrate` runs on every trip of the store, loaded as objects of the
///    source version, exactly as `convert` runs it on an input; what it changed is written back row
///    by row: trips it removed (merged or dropped duplicates) are deleted with their related rows, a
///    trip whose values it changed is updated under its own row id and its related rows replaced,
///    and every other row is left untouched, ids and all;
/// 2. the structural step derived from the two versions' layouts (`SQLiteStructuralStep`): an
///    index added, or tables rebuilt by SQLite's 12-step procedure, keeping every row and its id;
/// 3. a custom stage's `didMigrate`, likewise, on objects of the target version;
/// 4. the stage is recorded in the history table, with when, the tool's version and the trip counts.
///
/// Foreign keys must be off on the connection (the rebuild drops and renames tables other tables
/// refer to); once every stage is applied, the foreign keys of the trip tables are checked.
enum SQLiteMigration {
    /// Whether a store at its version must be migrated to take trips at `target`: false when it is
    /// there already; a usage error when it is newer, or older without `migrate`.
    static func isNeeded(store: DetectedStore, target: any VersionedSchema.Type, path: String,
                         migrate: Bool) throws -> Bool {
        try StoreMigration.isNeeded(version: store.version, target: target, path: path, migrate: migrate)
    }

    /// A migration in place, as `tripconv migrate` (`SQLiteStore.migrate`) and `convert --migrate`
    /// (`SQLiteRecordWriter`) both make it, in the open transaction that holds the store's write
    /// lock: the store is backed up first as `backup` says (the lock keeps other writers out until
    /// the commit, so the backup holds exactly the store the migration starts from), then the stages
    /// run. The trips merged or dropped are held in the log returned, for the caller to pass on once
    /// it has committed. A backup is removed again when the stages fail; when the caller's
    /// transaction does not commit, the caller removes `report.backup`: a migration that changed
    /// nothing leaves no backup behind.
    static func inPlace(_ connection: SQLiteConnection, store: DetectedStore, to target: any VersionedSchema.Type,
                        policy: DeduplicationPolicy, toolVersion: String, budget: SpillBudget, backup: StoreBackup,
                        busyTimeout: Int32) throws -> (report: StoreMigrationReport, setAside: SetAsideLog) {
        let path = connection.path
        var taken: String?
        if let name = backup.name(store: path, version: store.version) {
            if FileSystem.isSameFile(name, path) { throw TripError.usage("\(name): the backup cannot be the store itself") }
            taken = try SQLiteBackup.copy(path, to: name, busyTimeout: busyTimeout)
        }
        do {
            let ledger = SetAsideLog(directory: budget.directory, memoryLimit: budget.setAsideInMemory)
            var report = try run(connection, store: store, to: target, policy: policy, toolVersion: toolVersion,
                                 budget: budget, setAside: ledger)
            report.backup = taken
            (report.spilledTrips, report.spilledBytes) = budget.spilled
            return (report, ledger)
        } catch {
            if let taken { FileSystem.remove(taken) }
            throw error
        }
    }

    /// Applies the plan's stages from the store's version to the target, in the open transaction.
    /// The trips merged or dropped go to `setAside` (in memory up to the budget's bound, then on
    /// disk); the caller passes them on once the transaction has committed.
    static func run(_ connection: SQLiteConnection, store: DetectedStore, to target: any VersionedSchema.Type,
                    policy: DeduplicationPolicy, toolVersion: String, budget: SpillBudget,
                    setAside: SetAsideLog? = nil) throws -> StoreMigrationReport {
        let path = connection.path
        let steps = try Migrator(TripMigrationPlan.self).path(from: store.version, to: target.versionIdentifier)
        guard steps.allSatisfy({ !$0.isReversed }) else {
            throw TripError.usage("\(path): store is at \(store.version), target is \(target.versionIdentifier); a store is never migrated down")
        }
        for sql in StoreLayout.metadataStatements { try connection.execute(sql) }
        let tripsBefore = try tripCount(connection, store.schema)
        var current = store
        let ledger = setAside ?? SetAsideLog(directory: budget.directory, memoryLimit: budget.setAsideInMemory)
        var merged = 0, dropped = 0
        func note(_ record: SetAsideRecord) throws {
            if record.kind == .merged { merged += 1 } else if record.kind == .dropped { dropped += 1 }
            try ledger.append(record)
        }
        var records: [StoreMigrationRecord] = []
        for step in steps {
            let before = try tripCount(connection, step.from)
            if case .custom(_, _, let willMigrate?, _) = step.stage {
                try runCustomCode(willMigrate, connection, store: current, policy: policy, budget: budget, setAside: note)
            }
            try SQLiteStructuralStep(from: step.from, to: step.to).apply(connection)
            try writeVersion(connection, step.to.versionIdentifier, toolVersion: toolVersion, isNew: false)
            current = try SQLiteStoreStructure(connection).detect()
            if case .custom(_, _, _, let didMigrate?) = step.stage {
                try runCustomCode(didMigrate, connection, store: current, policy: policy, budget: budget, setAside: note)
            }
            let record = StoreMigrationRecord(from: step.from.versionIdentifier, to: step.to.versionIdentifier, appliedAt: StoreMigration.now(),
                                               toolVersion: toolVersion, stages: step.description,
                                               tripsBefore: before, tripsAfter: try tripCount(connection, step.to))
            try insertHistory(connection, record)
            records.append(record)
        }
        let problems = try SQLiteStructuralStep.foreignKeyProblems(connection, layout: StoreLayout(target))
        guard problems.isEmpty else {
            throw TripError.data("\(path): cannot migrate the store: \(problems.joined(separator: ", ")) refer to trips that are not there",
                                 notes: ["`sqlite3 \(path) 'PRAGMA foreign_key_check'` lists them; the store was left as it was"])
        }
        var report = StoreMigrationReport(from: store.version, to: target.versionIdentifier, stages: records, ledger: [],
                                           tripsBefore: tripsBefore, tripsAfter: try tripCount(connection, target))
        report.merged = merged
        report.dropped = dropped
        return report
    }

    // MARK: - Custom code on the store's trips

    /// Calls `body` with each trip of the store in row-id order, with its row id; the `N`th has
    /// record `N` in its origin. A trip that cannot be read stops the migration.
    static func forEachTrip(_ connection: SQLiteConnection, store: DetectedStore,
                            _ body: (Int64, TripRecord) throws -> Void) throws {
        let path = connection.path
        let cursor = try StoreTripCursor(connection, try store.tripQueries(path, byID: false))
        var builder = RecordBuilder(source: path, format: Format.sqlite.rawValue, options: ReadOptions(sourceVersion: store.version))
        var count = 0
        while let (id, record) = try cursor.nextTrip(into: &builder, record: count + 1) {
            count += 1
            try body(id, record)
        }
    }

    /// Runs a stage's code on the store's trips, held under the budget (spilled past it, as a
    /// conversion's are), and writes back what it changed; what it set aside goes to `setAside`.
    private static func runCustomCode(_ code: @Sendable (MigrationContext) throws -> Void, _ connection: SQLiteConnection,
                                      store: DetectedStore, policy: DeduplicationPolicy, budget: SpillBudget,
                                      setAside: (SetAsideRecord) throws -> Void) throws {
        let context = MigrationContext(schema: store.schema, policy: policy, holding: SpillingTrips(budget: budget))
        try forEachTrip(connection, store: store) { _, record in try context.insert(record.object, origin: record.origin) }
        do {
            try code(context)
        } catch let error as TripError {
            throw TripError(error.kind, "\(connection.path): cannot migrate the store: \(error.message)", notes: error.notes)
        }
        try SQLiteMigrationWriteBack(connection, store: store, budget: budget).apply(context)
        try context.trips.forEachSetAside(setAside)
    }

    // MARK: - Bookkeeping

    static func tripCount(_ connection: SQLiteConnection, _ schema: any VersionedSchema.Type) throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM \(quoted(StoreLayout(schema).rootTable))") ?? 0)
    }

    private static func insertHistory(_ connection: SQLiteConnection, _ record: StoreMigrationRecord) throws {
        let insert = try connection.prepare("""
            INSERT INTO \(quoted(StoreLayout.migrationsTable))
            ("from_version", "to_version", "applied_at", "tool_version", "stages", "trips_before", "trips_after")
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """, doing: "cannot record the migration")
        try insert.bind(1, record.from.description)
        try insert.bind(2, record.to.description)
        try insert.bind(3, record.appliedAt)
        try insert.bind(4, record.toolVersion)
        try insert.bind(5, record.stages)
        try insert.bind(6, Int64(record.tripsBefore))
        try insert.bind(7, Int64(record.tripsAfter))
        try insert.run()
    }

    /// Creates the metadata tables where missing and records the version: `schemaVersion` in the
    /// metadata table and the major number in `PRAGMA user_version`.
    static func writeVersion(_ connection: SQLiteConnection, _ version: SchemaVersion, toolVersion: String, isNew: Bool) throws {
        for sql in StoreLayout.metadataStatements { try connection.execute(sql) }
        let set = try connection.prepare("INSERT OR REPLACE INTO \(quoted(StoreLayout.metadataTable)) (\"key\", \"value\") VALUES (?1, ?2)",
                                         doing: "cannot record the store's version")
        try set.bind(1, StoreLayout.versionKey)
        try set.bind(2, version.description)
        try set.run()
        if isNew {
            try set.bind(1, "createdBy")
            try set.bind(2, "tripconv \(toolVersion)")
            try set.run()
        }
        // A pragma takes no parameters; the number is ours, not input.
        try connection.execute("PRAGMA user_version = \(version.major)")
    }

}
