import TripKit

/// Objects appended into an existing tripconv SQLite or PostgreSQL store of another app's objects
/// (`convert --model … -o STORE.sqlite` or `-o ADDRESS`, issue 27), as SampleTrips' trips are written
/// into an existing store:
/// the store must be of the run's model and at its version (an older one is migrated in place first
/// with `--migrate`, by the plan, as `migrate --model` does), what the model makes unique is
/// deduplicated under `--dedupe` against the objects the store holds (they come first: `merge` keeps
/// the stored object's key, `first` the stored object, `last` the incoming one), and every incoming
/// object is written, merged, dropped or rejected. docs/DESIGN-NOTES.md, "Objects appended to a
/// store of objects".
///
/// How: the store's objects (through the plan's stages when it is migrated) and then the input's,
/// their keys moved past the store's largest, are read into a new store in a temporary folder beside
/// it, which then replaces the store's tables in one transaction on the store itself
/// (`SQLiteObjectStoreSwap`, as `ObjectStoreMigration`), under its write lock from the first read:
/// the store is unchanged, or migrated and appended to. A PostgreSQL store's new tables are written
/// into a scratch schema in the transaction that then puts them in its place (`PGObjectStoreSwap`);
/// its readers are `PGObjectReader`s. No backup is taken of one (`--backup FILE` is `.usage`).
public struct ObjectStoreAppend {
    /// What an append did: the input's objects (read = written + merged + dropped + rejected), the
    /// stored objects an incoming one replaced (`--dedupe last`), and the store's migration in place.
    public struct Report {
        public var summary: ObjectConversionSummary
        public var replacedInStore = 0
        /// The input's objects merged or dropped against the stored ones (or each other) by `--dedupe`.
        public var deduplicated = ObjectMigration.Counts()
        public var migration: ObjectStoreMigration.Report?
    }

    /// The store: a file, or a PostgreSQL address with `pgSchema`; and as messages name it (a
    /// PostgreSQL address without its password).
    public let store: String
    public let pgSchema: String?
    public let name: String
    /// The model the store carries, and the run's (the objects appended are of it).
    public let storeModel: ObjectModel
    public let model: ObjectModel
    /// The store's migration by the plan, when it is older than the run's version and `--migrate` is given.
    public let migration: ObjectStoreMigration?

    /// Looks at the store at `path` (a PostgreSQL address: its schema `pgSchema`, else the search
    /// path's first) for objects of `model` (the run's target). With `plan` (an app's
    /// plan, named `planName`), the store's version must be one of the plan's: an older one than
    /// `model`'s is refused (`.usage`, saying to pass `--migrate`) unless `migrate`, a later one always;
    /// a store of another model than `model` (at its version) is `.data`, naming both. Without a plan,
    /// a store at another version of `model`'s app (an entity of the same name) is `.usage`.
    public init(store location: String, pgSchema: String? = nil, model: ObjectModel, plan: ModelPlan?, planName: String?, migrate: Bool,
                temporaryDirectory: String? = nil) throws {
        let isPG = Format.isPostgreSQLAddress(location)
        store = location
        self.pgSchema = isPG ? pgSchema : nil
        name = isPG ? Format.redactedPostgreSQLAddress(location) : location
        self.model = model
        // Messages name a PostgreSQL store as its reader does (server, database, schema), as `migrate --model`'s.
        let path: String
        if isPG {
            let reader = try PGObjectReader(address: location, schema: pgSchema)
            (storeModel, path) = (reader.model, reader.name)
        } else {
            (storeModel, path) = (try SQLiteObjectReader.model(storeAt: location), location)
        }
        var atVersion = storeModel
        var migration: ObjectStoreMigration?
        if let plan {
            let listed = plan.versions.compactMap(\.versionIdentifiers.first)
            let version = try ObjectStoreMigration.version(of: storeModel, store: path, listed: listed, planName: planName ?? "")
            let target = model.versionIdentifiers.first ?? version
            // Another app's store may name a version this plan lists too: its entities tell.
            if let declared = plan.version(version), Set(declared.entities.map(\.name)) != Set(storeModel.entities.map(\.name)) {
                throw Self.otherModel(store: path, storeModel, declared)
            }
            if let v = listed.firstIndex(of: version), let t = listed.firstIndex(of: target), v != t {
                guard v < t else {
                    throw TripError.usage("\(path): store is at \(version), target is \(target); a store is never migrated down",
                                          notes: ["convert into a new file, or give --target-version \(version)"])
                }
                guard migrate else {
                    let named = isPG ? name + (pgSchema.map { " --pg-schema \($0)" } ?? "") : path
                    throw TripError.usage("\(path): store is at \(version), target is \(target); pass --migrate to migrate it in place",
                                          notes: ["or run `tripconv migrate --model \(planName ?? "PLAN") \(named)` first"])
                }
                migration = try ObjectStoreMigration(store: store, pgSchema: self.pgSchema, plan: plan, planName: planName ?? "", target: target,
                                                     temporaryDirectory: temporaryDirectory)
                atVersion = migration?.migration.target ?? storeModel
            }
        }
        self.migration = migration
        // A model without a plan (one version) at another version of the store's app (their entities
        // meet): the command cannot migrate the store with it, as `migrate --model` cannot (64).
        if plan == nil, let version = storeModel.versionIdentifiers.first, let target = model.versionIdentifiers.first, version != target,
           !Set(storeModel.entities.map(\.name)).isDisjoint(with: model.entities.map(\.name)) {
            throw TripError.usage("\(path): store is at \(version), the objects are at \(target) of a model without a plan"
                                  + (planName.map { " (--model \($0))" } ?? "") + ", which cannot migrate it",
                                  notes: ["give --model the app's plan (its Swift source or plan JSON) and pass --migrate, or write the objects to a new file"])
        }
        try Self.checkSameModel(store: path, atVersion, model)
    }

    /// Refuses a store whose model (at the run's version) has other tables than `model`'s.
    static func checkSameModel(store path: String, _ stored: ObjectModel, _ model: ObjectModel) throws {
        let a = try ObjectStoreLayout(stored, dialect: .sqlite).statements, b = try ObjectStoreLayout(model, dialect: .sqlite).statements
        guard a != b else { return }
        throw otherModel(store: path, stored, model)
    }

    private static func otherModel(store path: String, _ stored: ObjectModel, _ model: ObjectModel) -> TripError {
        func described(_ m: ObjectModel) -> String {
            "entities " + m.entities.map(\.name).joined(separator: ", ")
                + (m.versionIdentifiers.isEmpty ? "" : " at \(m.versionIdentifiers.joined(separator: ", "))")
        }
        return TripError.data("\(path): a store of another model than the objects written: it holds \(described(stored)), "
                             + "the objects are of \(described(model))",
                             notes: ["write them to a new file, or into the store of their own model"])
    }

    /// Appends the objects `input()` reads (opened once per pass, each time in the same order) to the
    /// store under `policy`, migrating it first when `migration` says, backed up as `backup` says (only
    /// then, and only a SQLite store; a run that fails leaves no backup). The store's objects merged or
    /// dropped by its migration and the input's merged, dropped or rejected go to `setAside`, in that order.
    package func run(policy: DeduplicationPolicy, backup: StoreBackup, toolVersion: String, budget: SpillBudget,
                    busyTimeoutMilliseconds: Int = 5000, input: () throws -> any ObjectRecordReader,
                    setAside: (SetAsideRecord) throws -> Void) throws -> Report {
        if Format.isPostgreSQLAddress(store) {
            if case .file = backup {
                throw TripError.usage("--backup: a PostgreSQL store is migrated in one transaction and not backed up; use pg_dump to keep a copy")
            }
            return try PGObjectStoreSwap.replacing(address: store, schema: pgSchema, expecting: storeModel, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                                   toolVersion: toolVersion, appending: true) { swap in
                // The largest key is read under the swap's locks, before its writer leaves the store's schema.
                let offset = try swap.largestKey(of: Array(Set(try ObjectStoreLayout(storeModel, dialect: .postgresql).tableOf)).sorted())
                var writer = try swap.writer()
                return try append(offset: offset, into: &writer, backup: nil, policy: policy, budget: budget,
                                  busyTimeoutMilliseconds: busyTimeoutMilliseconds, input: input, setAside: setAside)
            }
        }
        let name = migration.flatMap { ObjectStoreMigration.backupName(backup, store: store, version: $0.from) }
        return try SQLiteObjectStoreSwap.replacing(store: store, expecting: storeModel, busyTimeout: Int32(clamping: busyTimeoutMilliseconds),
                                                   backup: name, toolVersion: toolVersion) { built, taken in
            var writer = SQLiteObjectWriter(path: built)
            return try append(offset: try largestKey(), into: &writer, backup: taken, policy: policy, budget: budget,
                              busyTimeoutMilliseconds: busyTimeoutMilliseconds, input: input, setAside: setAside)
        }
    }

    /// The store's objects (through its migration) and then the input's, keys moved past `offset`,
    /// deduplicated over both, into `writer`: the report, and the history of the migration.
    private func append<W: ObjectRecordWriter>(offset: Int64, into writer: inout W, backup taken: String?, policy: DeduplicationPolicy,
                        budget: SpillBudget, busyTimeoutMilliseconds: Int, input: () throws -> any ObjectRecordReader,
                        setAside: (SetAsideRecord) throws -> Void) throws -> (Report, history: [ObjectStoreMigration.Stage]) {
        let states = SpillingObjectHoldings(budget: budget)
        var storeReader: ObjectMigrationReader?
        let openStore: () throws -> any ObjectRecordReader = {
            let open = {
                try ObjectStoreMigration.reader(store: store, pgSchema: pgSchema, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                                temporaryDirectory: budget.directory)
            }
            guard let migration else { return try open() }
            let r = try ObjectMigrationReader(migration.migration, policy: policy, state: states.make, setAside: states.setAside, open: open)
            storeReader = r
            return r
        }
        var reader = try AppendingReader(model: model, policy: policy, state: states.make, offset: offset) {
            (try openStore(), try input())
        }
        var total = ObjectConversionSummary()
        try ObjectPipeline.run(&reader, into: &writer, summary: &total, setAside: setAside)
        var report = Report(summary: total.less(reader.stored), replacedInStore: reader.replaced)
        report.summary.replacedInStore = reader.replaced
        report.deduplicated = reader.deduplicated
        if let migration, let storeReader {
            var stored = reader.migrated
            stored.note(storeReader)
            stored.note(spilled: states)
            let stages = migration.history(stageInputs: storeReader.tally.stageInputs, written: stored.written)
            report.migration = ObjectStoreMigration.Report(summary: stored, stages: stages, backup: taken)
        }
        return (report, report.migration?.stages ?? [])
    }

    /// The largest key of a SQLite store's objects (0 for none): the input's keys are moved past it.
    private func largestKey() throws -> Int64 {
        let snapshot = try StoreSnapshot(path: store, busyTimeout: 5000)
        defer { snapshot.end() }
        var largest: Int64 = 0
        for table in Set(try ObjectStoreLayout(storeModel, dialect: .sqlite).tableOf) {
            let n = try snapshot.connection.integer("SELECT coalesce(max(\(quoted(ObjectStoreLayout.keyColumn))), 0) FROM \(quoted(table))")
            largest = max(largest, n ?? 0)
        }
        return largest
    }
}

/// The store's objects, then the input's with their keys (and the keys they refer to) moved past
/// `offset`, deduplicated on what the model makes unique (`ObjectDeduplication.uniqueness`) under the
/// policy: a first pass notes every object, the second resolves. A stored object an incoming one
/// replaces (`last`) is counted in `replaced`, not set aside; what the store's part gave is in `stored`.
private struct AppendingReader: ObjectRecordReader {
    let model: ObjectModel
    private let offset: Int64
    private let deduplicator: ObjectDeduplicator?
    private var store: any ObjectRecordReader
    private var input: any ObjectRecordReader
    private var inStore = true
    /// The store's part as the pipeline counts it: its objects given on and its migration's records
    /// set aside; and as its migration gave it (the objects an incoming one replaced among those written).
    private(set) var stored = ObjectConversionSummary()
    private(set) var migrated = ObjectConversionSummary()
    private(set) var replaced = 0
    /// The input's objects merged or dropped against the store's (or each other) under the policy.
    private(set) var deduplicated = ObjectMigration.Counts()

    init(model: ObjectModel, policy: DeduplicationPolicy, state: (Int) throws -> any ObjectDeduplicationState, offset: Int64,
         open: () throws -> (any ObjectRecordReader, any ObjectRecordReader)) throws {
        self.model = model; self.offset = offset
        stored.entities = model.entities.map(\.name)
        stored.counts = Array(repeating: 0, count: model.entities.count)
        migrated = stored
        let unique = ObjectDeduplication.uniqueness(of: model)
        deduplicator = unique.isEmpty ? nil : ObjectDeduplicator(unique, model: model, policy: policy, state: try state(unique.count))
        if let deduplicator {
            var first = try open()
            while let item = try first.0.next() { if case .object(let o) = item { try deduplicator.note(o) } }
            while let item = try first.1.next() { if case .object(let o) = item { try deduplicator.note(try Self.moved(o, by: offset)) } }
        }
        (store, input) = try open()
    }

    /// `object` with its key and every key it refers to moved by `offset`.
    static func moved(_ object: ObjectRecord, by offset: Int64) throws -> ObjectRecord {
        func move(_ key: Int64) throws -> Int64 {
            let (sum, overflow) = key.addingReportingOverflow(offset)
            if overflow { throw TripError.data("\(object.origin): key \(key) is too large to be appended after the store's \(offset)") }
            return sum
        }
        var out = object
        out.key = try move(object.key)
        _ = try out.relationships.updateReferences { ObjectReference(entity: $0.entity, key: try move($0.key)) }
        return out
    }

    mutating func next() throws -> ObjectReadItem? {
        while true {
            let item: ObjectReadItem
            if inStore {
                guard let next = try store.next() else { inStore = false; continue }
                item = next
            } else {
                guard let next = try input.next() else { return nil }
                guard case .object(let o) = next else { return next }
                item = .object(try Self.moved(o, by: offset))
            }
            guard case .object(let object) = item else {
                if case .rejected(let record) = item, inStore {
                    stored.read += 1; stored.count(record.kind)
                    migrated.read += 1; migrated.count(record.kind)
                }
                return item
            }
            if inStore { migrated.read += 1; migrated.written += 1; migrated.counts[object.entity] += 1 }
            var counts = ObjectMigration.Counts()
            let resolved = try deduplicator?.resolve(object, counts: &counts) ?? .object(object)
            if !inStore { deduplicated.merged += counts.merged; deduplicated.dropped += counts.dropped }
            switch resolved {
            case .object(let o):
                if inStore { stored.read += 1; stored.written += 1; stored.counts[o.entity] += 1 }
                return .object(o)
            case .setAside(let record):
                // A stored object an incoming one takes the place of (`last`): counted, as SampleTrips' replaced trips are.
                if inStore { replaced += 1; continue }
                return .rejected(record)
            }
        }
    }
}

extension ObjectConversionSummary {
    /// Counts a record set aside of `kind`.
    fileprivate mutating func count(_ kind: SetAsideRecord.Kind) {
        switch kind {
        case .rejected: rejected += 1
        case .merged: merged += 1
        case .dropped: dropped += 1
        }
    }

    /// This summary without `part` (counted in it): the input's part of an append.
    fileprivate func less(_ part: ObjectConversionSummary) -> ObjectConversionSummary {
        var out = self
        out.read -= part.read; out.written -= part.written; out.rejected -= part.rejected
        out.merged -= part.merged; out.dropped -= part.dropped
        for i in out.counts.indices where i < part.counts.count { out.counts[i] -= part.counts[i] }
        return out
    }
}

extension ObjectStoreMigration {
    /// The history rows of the stages run: the objects given to each (`stageInputs`), and after the
    /// last, the objects `written`.
    func history(stageInputs inputs: [Int], written: Int) -> [Stage] {
        migration.stages.enumerated().map { i, s in
            Stage(from: s.from, to: s.to, stages: "\(s.from) -> \(s.to) (\(s.kind))", objectsBefore: inputs[i],
                  objectsAfter: i + 1 < inputs.count ? inputs[i + 1] : written)
        }
    }
}
