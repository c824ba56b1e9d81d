import TripKit

extension ObjectConversion {
    /// Whether `output` names an existing tripconv SQLite store of objects, or a PostgreSQL schema
    /// (`pgSchema`, else the address's search path's first) holding one, which a run to it appends to
    /// (`append(into:…)`) rather than replaces. An empty or missing schema is written as a new store.
    public static func appendsTo(_ output: OutputLocation, format: Format, pgSchema: String? = nil) -> Bool {
        guard case .file(let path) = output else { return false }
        switch format {
        case .sqlite: return isObjectStore(path)
        case .postgresql: return Format.isPostgreSQLAddress(path) && PGObjectReader.isObjectStore(address: path, schema: pgSchema)
        default: return false
        }
    }

    /// Looks at the existing store at `path` (a PostgreSQL one in `--pg-schema`) for this run's objects (`ObjectStoreAppend`): of the
    /// run's model, at its version, or older and migrated first when `migrate` (the plan named
    /// `planName`). Refuses what it cannot take before any object is read into it.
    public func appending(into path: String, migrate: Bool, planName: String?) throws -> ObjectStoreAppend {
        try ObjectStoreAppend(store: path, pgSchema: options.reading.pgSchema, model: migration?.target ?? model, plan: plan, planName: planName,
                              migrate: migrate, temporaryDirectory: options.temporaryDirectory)
    }

    /// Appends every object of the input to `append`'s store under the run's `--dedupe`, in one
    /// transaction with the store's migration when there is one, backed up as `RunOptions.backup`
    /// says; each record set aside (the store's migration's first) to `setAside`.
    public func append(_ append: ObjectStoreAppend, setAside: (SetAsideRecord) throws -> Void) throws -> ObjectStoreAppend.Report {
        let budget = SpillBudget(limit: options.memoryLimit, directory: options.temporaryDirectory)
        let states = SpillingObjectHoldings(budget: budget)
        var planReader: ObjectMigrationReader?
        var report = try append.run(policy: policy, backup: options.backup, toolVersion: options.toolVersion, budget: budget, input: {
            let (source, plan) = try openSource(states)
            planReader = plan
            return source
        }, setAside: setAside)
        if let planReader { report.summary.note(planReader) }
        report.summary.note(removed: referenceRemovals)
        report.summary.note(spilled: states)
        // The plan's counts by --dedupe take in those met against the store.
        let met = report.deduplicated
        report.summary.updateMigrationCounts { $0.merged += met.merged; $0.dropped += met.dropped }
        return report
    }
}
