import TripKit

/// Migrating a PostgreSQL store in place, in the caller's transaction: PostgreSQL's DDL is
/// transactional, so a failure anywhere (or a lost connection) leaves the store as it was.
///
/// The store's trips are read in id order as objects of its version, a chunk at a time, into a
/// `MigrationContext` held under the run's memory budget (spilled past it, as a conversion's are);
/// the plan's stages run on them stage by stage through `Migrator` — the same engine, custom stages
/// and derived lightweight mappings as every conversion; then the old tables are dropped, the
/// target version's created, and the trips written back by COPY under their own ids (a merged
/// trip keeps the id of the trip it was merged into; related rows are numbered anew). Each stage is
/// recorded in the history table with its trip counts.
///
/// Where SQLite rebuilds tables row by row keeping every id, this rewrites them: a PostgreSQL
/// store's tables are dropped and created in the same transaction for the price of one COPY, and
/// nothing of the old layout (columns, the foreign keys' ON DELETE rules) is left to alter.
enum PGMigration {
    /// Runs the stages from `version` to `target`; the caller holds the store's exclusive lock.
    static func run(_ c: PGConnection, from version: SchemaVersion, to target: any VersionedSchema.Type,
                    policy: DeduplicationPolicy, toolVersion: String, budget: SpillBudget,
                    setAside: (SetAsideRecord) throws -> Void) throws -> StoreMigrationReport {
        let steps = try Migrator(TripMigrationPlan.self).path(from: version, to: target.versionIdentifier)
        guard steps.allSatisfy({ !$0.isReversed }), let source = TripMigrationPlan.schema(for: version) else {
            throw TripError.usage("\(c.name): store is at \(version), target is \(target.versionIdentifier); a store is never migrated down")
        }
        let old = PGLayout(source), new = PGLayout(target)
        // Nobody else changes the tables until the commit.
        try c.execute("LOCK TABLE " + ([old.rootTable] + old.children.map(\.name)).map(quoted).joined(separator: ", ")
                      + " IN ACCESS EXCLUSIVE MODE", doing: "cannot lock the store")
        let context = MigrationContext(schema: source, policy: policy, holding: SpillingTrips(budget: budget))
        try forEachTrip(c, old) { id, object in
            try context.insert(object, origin: RecordOrigin(source: c.name, record: Int(id)))
        }
        let tripsBefore = context.count
        var records: [StoreMigrationRecord] = []
        for step in steps {
            let before = context.count
            do {
                try Migrator(TripMigrationPlan.self).migrate(context, to: step.to.versionIdentifier)
            } catch let error as TripError {
                throw TripError(error.kind, "\(c.name): cannot migrate the store: \(error.message)", notes: error.notes)
            }
            records.append(StoreMigrationRecord(from: step.from.versionIdentifier, to: step.to.versionIdentifier,
                                                 appliedAt: StoreMigration.now(), toolVersion: toolVersion,
                                                 stages: step.description, tripsBefore: before, tripsAfter: context.count))
        }
        // The tables of the target, and the trips back in them under their ids.
        for sql in old.dropStatements + new.createStatements { try c.execute(sql, doing: "cannot migrate the store") }
        var batch = PGCopyBatch(new)
        try context.forEach { object, origin in
            batch.append(object, id: Int64(origin.record))
            if batch.trips.rows >= PGRecordWriter.batchTrips || batch.exceeds(8 << 20) {
                try batch.send(c, tripsTable: new.rootTable) { $0.name }
            }
        }
        try batch.send(c, tripsTable: new.rootTable) { $0.name }
        try c.execute("SELECT setval(pg_get_serial_sequence(\(PGStoreVersion.literal(quoted(new.rootTable))), 'id'), "
                      + "coalesce(max(\"id\"), 0) + 1, false) FROM \(quoted(new.rootTable))", doing: "cannot migrate the store")
        try PGStoreVersion.write(c, target.versionIdentifier, toolVersion: toolVersion, isNew: false)
        for record in records {
            _ = try c.query("""
                INSERT INTO \(quoted(StoreLayout.migrationsTable))
                ("from_version", "to_version", "applied_at", "tool_version", "stages", "trips_before", "trips_after")
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                """, [record.from.description, record.to.description, record.appliedAt, record.toolVersion, record.stages,
                      String(record.tripsBefore), String(record.tripsAfter)], doing: "cannot record the migration")
        }
        var merged = 0, dropped = 0
        try context.trips.forEachSetAside { entry in
            if entry.kind == .merged { merged += 1 } else if entry.kind == .dropped { dropped += 1 }
            try setAside(entry)
        }
        var report = StoreMigrationReport(from: version, to: target.versionIdentifier, stages: records, ledger: [],
                                           tripsBefore: tripsBefore, tripsAfter: context.count)
        report.merged = merged
        report.dropped = dropped
        (report.spilledTrips, report.spilledBytes) = budget.spilled
        return report
    }

    /// Calls `body` with each name several trips of the store share, in the order of its first
    /// trip, with their ids (compared as bytes, as the unique index will) and the fields on which
    /// they differ (as the SQLite store's dry run tells them), read a batch at a time: the names
    /// 10,000 at a time, their trips about 4,096 at a time.
    static func forEachSharedName(_ c: PGConnection, _ layout: PGLayout, _ body: (StoreMigrationPreview.DuplicateName) throws -> Void) throws {
        let attribute = layout.tables.root.uniqueAttribute?.name ?? "name"
        let root = layout.tables.root, slot = root.attributeIndex(attribute)
        let loader = PGTripLoader(layout: layout, place: c.name)
        var groups: [(value: String, ids: [Int64])] = []
        var pending = 0
        func report() throws {
            guard !groups.isEmpty else { return }
            let trips = try loader.load(c, ids: groups.flatMap(\.ids), root: layout.rootTable) { $0.name }
            for (value, ids) in groups {
                let objects = ids.compactMap { trips[$0] }
                let conflicts = slot.map { StoreMigration.conflicts(objects, entity: root, except: $0, schema: layout.schema) } ?? []
                try body(.init(attribute: attribute, value: value, rowIDs: ids, conflicts: conflicts))
            }
            groups.removeAll(keepingCapacity: true)
            pending = 0
        }
        try c.execute("SET LOCAL cursor_tuple_fraction = 1")
        try c.execute("""
            DECLARE tripconv_shared NO SCROLL CURSOR FOR
            SELECT \(quoted(attribute)), string_agg("id"::text, ',' ORDER BY "id") FROM \(quoted(layout.rootTable))
            GROUP BY \(quoted(attribute)) HAVING count(*) > 1 ORDER BY min("id")
            """, doing: "cannot read the store")
        while true {
            let r = try c.query("FETCH 10000 FROM tripconv_shared")
            guard r.rowCount > 0 else { break }
            for row in 0..<r.rowCount {
                let ids = r.text(row, 1).split(separator: ",").compactMap { Int64($0) }
                groups.append((r.text(row, 0), ids))
                pending += ids.count
                if pending >= 4096 { try report() }
            }
        }
        try report()
        try c.execute("CLOSE tripconv_shared")
    }

    /// Calls `body` with each trip of the store in id order, a chunk of ids at a time.
    static func forEachTrip(_ c: PGConnection, _ layout: PGLayout, _ body: (Int64, ModelObject) throws -> Void) throws {
        let loader = PGTripLoader(layout: layout, place: c.name)
        var after = Int64.min
        while true {
            let r = try c.query("SELECT \"id\" FROM \(quoted(layout.rootTable)) WHERE \"id\" > $1 ORDER BY \"id\" LIMIT 4096", [String(after)],
                                doing: "cannot read the store")
            guard r.rowCount > 0 else { return }
            let ids = (0..<r.rowCount).map { r.int64($0, 0) }
            after = ids.last!
            let trips = try loader.load(c, ids: ids, root: layout.rootTable) { $0.name }
            for id in ids {
                guard let trip = trips[id] else { continue }
                try body(id, trip)
            }
        }
    }
}

/// Migrating a PostgreSQL store in place (`tripconv migrate ADDRESS`).
public enum PGStoreMigration {
    /// Migrates the store at `address` (in `schema`, else the search path's) to `target`, in one
    /// transaction under the store's exclusive lock (waiting for loads under way to commit, up to
    /// `busyTimeoutMilliseconds` when given, then failing `.busy`); nil when
    /// it is at the target already. With `dryRun`, everything is done and then rolled back: the
    /// report says what would happen, and `sharedName` gets each name several trips share first, with
    /// the fields on which they differ.
    /// The trips merged or dropped go to `setAside` after the commit. A schema that does not exist is
    /// `.noInput` (exit 66), as a missing store file and a store of objects' (`migrate --model`).
    public static func migrate(address: String, schema: String? = nil, to target: any VersionedSchema.Type,
                               policy: DeduplicationPolicy = .merge, toolVersion: String = WriteOptions().toolVersion,
                               memoryLimit: Int? = nil, temporaryDirectory: String? = nil, dryRun: Bool = false,
                               busyTimeoutMilliseconds: Int? = nil,
                               setAside: (SetAsideRecord) throws -> Void = { _ in },
                               sharedName: ((StoreMigrationPreview.DuplicateName) throws -> Void)? = nil) throws -> StoreMigrationReport? {
        let budget = SpillBudget(limit: memoryLimit ?? SpillBudget.defaultLimit, directory: temporaryDirectory)
        let c = try PGConnection(address, schema: schema)
        // Not there is no input, named (was: "not a trip store: it has no trips table", 65).
        _ = try PGStoreStructure(c).currentSchema()
        try c.execute("BEGIN")
        do {
            // How long to wait for the loads under way (and any other lock): then exit 75.
            if let ms = busyTimeoutMilliseconds { try c.execute("SET LOCAL lock_timeout = \(max(ms, 1))") }
            try c.execute("SELECT pg_advisory_xact_lock(\(PGRecordWriter.lockKey))", doing: "cannot lock the store")
            guard let version = try PGStoreVersion.of(c) else {
                throw TripError.data("\(c.name): not a trip store: it has no \(StoreLayout(target).rootTable) table")
            }
            guard try StoreMigration.isNeeded(version: version, target: target, path: c.name, migrate: true) else {
                try c.execute("ROLLBACK")
                return nil
            }
            if let sharedName, let source = TripMigrationPlan.schema(for: version) {
                try PGMigration.forEachSharedName(c, PGLayout(source), sharedName)
            }
            let ledger = SetAsideLog(directory: budget.directory, memoryLimit: budget.setAsideInMemory)
            let report = try PGMigration.run(c, from: version, to: target, policy: policy, toolVersion: toolVersion,
                                             budget: budget, setAside: ledger.append)
            try c.execute(dryRun ? "ROLLBACK" : "COMMIT", doing: "cannot commit")
            try ledger.forEach(setAside)
            return report
        } catch {
            try? c.execute("ROLLBACK")
            throw error
        }
    }
}
