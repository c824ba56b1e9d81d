import TripKit

/// A tripconv SQLite or PostgreSQL store of another app's objects (`tripconv_model`) migrated in
/// place by that app's plan (`tripconv migrate --model PLAN STORE`; docs/DESIGN-NOTES.md, "Migrating a store of
/// objects in place").
///
/// The plan's stages run as `convert --model` runs them (`ObjectMigrationReader`: renames, added and
/// removed attributes and entities, conversions, duplicates under the policy), from the store into a
/// new store at the target built in a temporary folder beside it; the new store's tables then replace
/// the old ones inside one transaction on the store itself (`SQLiteObjectStoreSwap`), so the store is
/// at its old version or entirely at the target, whatever fails and however the process ends. A
/// PostgreSQL store's target tables are written into a scratch schema inside the transaction that
/// then puts them in the store's place (`PGObjectStoreSwap`).
///
/// ```swift
/// let plan = try ModelPlanSource.read("recipes-plan.json")
/// if let run = try ObjectStoreMigration(store: "recipes.sqlite", plan: plan, planName: "recipes-plan.json") {
///     let report = try run.migrate(backup: .besideStore) { print($0.reason) }
///     print(report.summary.written, report.backup ?? "no backup")
/// }
/// ```
public struct ObjectStoreMigration {
    /// One stage applied, as the history table records it: the objects before and after it.
    public struct Stage: Sendable, Hashable {
        public var from: String
        public var to: String
        /// `1.0.0 -> 2.0.0 (custom)`, the history table's `stages`.
        public var stages: String
        public var objectsBefore: Int
        public var objectsAfter: Int
    }

    /// What a migration did: every object read written, merged, dropped or rejected (the summary),
    /// the stages as recorded, and the backup taken.
    public struct Report {
        public var summary: ObjectConversionSummary
        public var stages: [Stage]
        public var backup: String?
    }

    /// The store (a file, or a PostgreSQL address with `pgSchema`), and the plan's run from its
    /// version to the target.
    public let store: String
    public let pgSchema: String?
    public let migration: ObjectMigration
    /// The objects the store holds, per entity of its own model (what a dry run says first).
    public let objectCounts: [(entity: String, count: Int)]
    /// The store's version and the target.
    public var from: String { migration.stages.first?.from ?? "" }
    public var to: String { migration.stages.last?.to ?? "" }

    /// Looks at the store at `path` (writing none of its files) and chains the plan's stages from its
    /// version to `target` (the plan's current version when nil); nil when it is at the target. A
    /// store whose `tripconv_model` names no version of the plan is `.data` (exit 65) naming both; a
    /// target the plan does not list, or one before the store's version, is `.usage`.
    public init?(store path: String, pgSchema: String? = nil, plan: ModelPlan, planName: String, target: String? = nil,
                 busyTimeoutMilliseconds: Int = 5000, temporaryDirectory: String? = nil) throws {
        let (model, counts, place): (ObjectModel, [String: Int], String)
        if Format.isPostgreSQLAddress(path) {
            (model, counts, place) = try ObjectStoreMigration.look(address: path, schema: pgSchema)
        } else {
            let reader = try SQLiteObjectReader(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, temporaryDirectory: temporaryDirectory)
            (model, counts, place) = (reader.model, try reader.objectCounts(), path)
        }
        let listed = plan.versions.compactMap(\.versionIdentifiers.first)
        let version = try ObjectStoreMigration.version(of: model, store: place, listed: listed, planName: planName)
        let wanted = target ?? listed.last ?? version
        guard let b = listed.firstIndex(of: wanted) else {
            throw TripError.usage("--target-version \(wanted): the plan's versions are \(listed.joined(separator: ", "))")
        }
        if wanted == version { return nil }
        if b < listed.firstIndex(of: version)! {
            throw TripError.usage("\(place): store is at \(version), target is \(wanted); a store is never migrated down",
                                  notes: ["an app's plan runs forward only; the backup a migration took holds the store as it was"])
        }
        store = path
        self.pgSchema = pgSchema
        migration = try ObjectMigration(plan: plan, from: version, to: wanted, reading: model)
        objectCounts = model.entities.map { ($0.name, counts[$0.name] ?? 0) }
    }

    /// The version of the plan a store's model names (its `versionIdentifiers`).
    static func version(of model: ObjectModel, store path: String, listed: [String], planName: String) throws -> String {
        if let own = model.versionIdentifiers.first(where: listed.contains) { return own }
        let says = model.versionIdentifiers.isEmpty ? "names no version"
            : "is at \(model.versionIdentifiers.joined(separator: ", "))"
        throw TripError.data("\(path): the store \(says) (its \(ObjectStoreLayout.modelTable)), which is not a version of the plan "
                             + "\(planName) (\(listed.joined(separator: ", ")))",
                             notes: ["give --model the plan of the app that wrote the store, one that lists its version"])
    }

    /// What the migration would do, found without writing a byte of the store's files: the objects
    /// are read and migrated as `migrate` would, and counted, not written; each one that would be
    /// merged, dropped or rejected goes to `setAside`. A migration that would fail (`--dedupe fail`
    /// meeting duplicates, a PostgreSQL store's schema holding a table not of the store) throws as it would.
    public func preview(policy: DeduplicationPolicy, busyTimeoutMilliseconds: Int = 5000, temporaryDirectory: String? = nil,
                        memoryLimit: Int? = nil,
                        setAside: (SetAsideRecord) throws -> Void) throws -> ObjectConversionSummary {
        if Format.isPostgreSQLAddress(store) { try PGObjectStoreSwap.refuseTablesNotOfTheStore(address: store, schema: pgSchema) }
        var summary = ObjectConversionSummary()
        var read = try planReader(policy: policy, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                  temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit)
        var counter = CountingObjectWriter()
        try ObjectPipeline.run(&read.reader, into: &counter, summary: &summary, setAside: setAside)
        read.note(into: &summary)
        return summary
    }

    /// The store read through the plan, the deduplication state of each stage in memory up to half
    /// of `memoryLimit` and in a temporary database in `temporaryDirectory` past it, as `convert --model`
    /// holds it (`SpillingDeduplicationState`), the target's required to-one relationships enforced
    /// (`ObjectRequiredRelationshipReader`, the store read again for them when the target has any);
    /// the plan's reader of the read that gives the objects, and the states, to say whether they spilled.
    func planReader(policy: DeduplicationPolicy, busyTimeoutMilliseconds: Int, temporaryDirectory: String?,
                    memoryLimit: Int?) throws -> PlanRead {
        let states = SpillingObjectHoldings(budget: SpillBudget(limit: memoryLimit ?? SpillBudget.defaultLimit, directory: temporaryDirectory))
        let open = {
            try ObjectMigrationReader(migration, policy: policy, state: states.make, setAside: states.setAside) {
                try Self.reader(store: store, pgSchema: pgSchema, busyTimeoutMilliseconds: busyTimeoutMilliseconds, temporaryDirectory: temporaryDirectory)
            }
        }
        guard let required = ObjectRequiredRelationships(migration.target) else {
            let plan = try open()
            return PlanRead(reader: plan, plan: plan, states: states, removed: RemovedCount())
        }
        var last: ObjectMigrationReader?
        let removed = RemovedCount()
        let reader = try ObjectRequiredRelationshipReader(required, rejected: states.rejectedForRequired, removed: { _, _, _ in removed.count += 1 }) {
            let plan = try open()
            last = plan
            return plan
        }
        return PlanRead(reader: reader, plan: last!, states: states, removed: removed)
    }

    /// The objects a migration writes (`planReader`), and what to note of the run once they are read.
    struct PlanRead {
        var reader: any ObjectRecordReader
        let plan: ObjectMigrationReader
        let states: SpillingObjectHoldings
        let removed: RemovedCount

        /// Notes the plan's run, the references removed from kept objects as naming one rejected for
        /// a required relationship, and what spilled.
        func note(into summary: inout ObjectConversionSummary) {
            summary.note(plan)
            if removed.count > 0, summary.migration != nil {
                let n = removed.count
                summary.updateMigrationCounts { $0.referencesRemoved += n }
                summary.referencesRemoved += n
            }
            summary.note(spilled: states)
        }
    }

    /// A count the required relationships' reader adds to as it removes references.
    final class RemovedCount { var count = 0 }

    /// A reader of the objects of the store at `store`: a SQLite file's, or a PostgreSQL store's (in
    /// `pgSchema`) on a connection of its own, whose locks wait `busyTimeoutMilliseconds` (then `.busy`).
    static func reader(store: String, pgSchema: String?, busyTimeoutMilliseconds: Int, temporaryDirectory: String?) throws -> any ObjectRecordReader {
        if Format.isPostgreSQLAddress(store) {
            return try PGObjectReader(address: store, schema: pgSchema, lockTimeoutMilliseconds: busyTimeoutMilliseconds)
        }
        return try SQLiteObjectReader(path: store, busyTimeoutMilliseconds: busyTimeoutMilliseconds, temporaryDirectory: temporaryDirectory)
    }

    /// Migrates the store in place, backing it up first as `backup` says (a backup never replaces a
    /// file; a migration that fails removes the one it took). Each object merged, dropped or rejected
    /// goes to `setAside` as it is met (pass them on only once this returns). The store is locked for
    /// writing from the first read to the replacement; another process's lock is waited for up to
    /// `busyTimeoutMilliseconds`, then `.busy`.
    public func migrate(policy: DeduplicationPolicy = .merge, backup: StoreBackup = .none, toolVersion: String = WriteOptions().toolVersion,
                        busyTimeoutMilliseconds: Int = 5000, temporaryDirectory: String? = nil, memoryLimit: Int? = nil,
                        setAside: (SetAsideRecord) throws -> Void) throws -> Report {
        if Format.isPostgreSQLAddress(store) {
            return try migratePostgreSQL(policy: policy, backup: backup, toolVersion: toolVersion, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                         temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit, setAside: setAside)
        }
        let name = ObjectStoreMigration.backupName(backup, store: store, version: from)
        return try SQLiteObjectStoreSwap.replacing(store: store, expecting: migration.source, busyTimeout: Int32(clamping: busyTimeoutMilliseconds),
                                                   backup: name, toolVersion: toolVersion) { built, taken in
            var summary = ObjectConversionSummary()
            var read = try planReader(policy: policy, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                      temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit)
            var writer = SQLiteObjectWriter(path: built)
            try ObjectPipeline.run(&read.reader, into: &writer, summary: &summary, setAside: setAside)
            read.note(into: &summary)
            let stages = history(stageInputs: read.plan.tally.stageInputs, written: summary.written)
            return (Report(summary: summary, stages: stages, backup: taken), stages)
        }
    }

    /// The file a backup of the store at `version` goes to, nil for none.
    static func backupName(_ backup: StoreBackup, store: String, version: String) -> String? {
        switch backup {
        case .none: return nil
        case .besideStore: return "\(store).\(version).bak"
        case .file(let file): return file
        }
    }
}

/// Counts the objects a dry run would write, and keeps none of them.
private struct CountingObjectWriter: ObjectRecordWriter {
    func begin(_ model: ObjectModel) throws {}
    func write(_ object: ObjectRecord) throws {}
    func finish() throws {}
    func abort() {}
}
