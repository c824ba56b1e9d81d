import TripKit

/// The write side of migrating a tripconv PostgreSQL store of objects in place (`ObjectStoreMigration`):
/// one connection holds one transaction from before the first object is read to the commit. In it,
/// the store is locked (tripconv's advisory locks, exclusively, as `convert -o` and trips' `migrate`
/// take them; then its tables `IN EXCLUSIVE MODE`, so that no other writer changes a row while the
/// plan's readers, on connections of their own, read them once or twice), the target's tables are
/// written by `PGObjectWriter` into a scratch schema, and then the store's tables are dropped, the
/// new ones moved into its schema with `ALTER TABLE … SET SCHEMA`, the scratch schema dropped and
/// the history recorded. PostgreSQL's DDL is transactional: a failure anywhere, a lost connection or
/// a killed process rolls all of it back, the scratch schema with it; nobody else ever sees it.
final class PGObjectStoreSwap {
    private let connection: PGConnection
    /// The store's schema, as the server resolved it, and the scratch schema's name.
    private var schema = ""
    private let scratch = "tripconv_migrating_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    private var isOpen = false

    var name: String { connection.name }

    /// Connects to the store at `address` (in `schema`, else the search path's first); nothing is
    /// locked yet.
    init(address: String, schema: String?) throws {
        connection = try PGConnection(address, schema: schema)
    }

    deinit { abandon() }

    /// Begins the transaction and takes the store's locks, waiting up to `busyTimeoutMilliseconds` for
    /// another writer (then `.busy`, exit 75); checks that the store is still at the version `model`
    /// was read at (another process may have migrated it since: `.busy`), and that its schema holds
    /// the store alone (another table there: `.cantCreate`, as `convert -o` refuses it). `appending`:
    /// the lock is an append's (`ObjectStoreAppend`), and its messages say so.
    func lock(expecting model: ObjectModel, busyTimeoutMilliseconds: Int, appending: Bool = false) throws {
        let c = connection
        try c.execute("BEGIN", doing: "cannot lock the store")
        isOpen = true
        try c.execute("SET LOCAL lock_timeout = \(max(busyTimeoutMilliseconds, 1))")
        schema = try PGStoreStructure(c).confine()
        try c.execute("SELECT pg_advisory_xact_lock(\(PGRecordWriter.createLockKey)); SELECT pg_advisory_xact_lock(\(PGRecordWriter.lockKey))",
                      doing: "cannot lock the store")
        let now = try PGObjectReader.model(c)
        let nothing = appending ? "nothing was written" : "nothing was migrated"
        guard now.versionIdentifiers == model.versionIdentifiers else {
            throw TripError(.busy, "\(c.name): another process changed the store (now at \(now.versionIdentifiers.joined(separator: ", "))) "
                            + "while it was looked at; \(nothing)", notes: [appending ? "run the conversion again" : "run the migration again"])
        }
        let tables = try PGStoreStructure(c).tableNames()
        let ours = try Self.storeAlone(c, tables, appending: appending)
        // Readers go on (ACCESS SHARE); writers, ours and anyone's, wait for the commit.
        try c.execute("LOCK TABLE " + tables.filter(ours.contains).map(quoted).joined(separator: ", ") + " IN EXCLUSIVE MODE",
                      doing: "cannot lock the store")
    }

    /// The store's own tables among the schema's `tables`; a table there that is not the store's is
    /// `.cantCreate` (exit 73), naming it: the migration or the append would drop or leave it beside
    /// tables it replaces.
    private static func storeAlone(_ c: PGConnection, _ tables: [String], appending: Bool) throws -> Set<String> {
        let (ours, _, others) = PGObjectWriter.relations(c, tables)
        guard others.isEmpty else {
            throw TripError(.cantCreate, "\(c.name): holds tables that are not of the store (\(others.prefix(5).joined(separator: ", "))"
                            + "\(others.count > 5 ? ", …" : "")); \(appending ? "nothing was written" : "nothing was migrated")",
                            notes: [appending ? "objects are appended to a store only in a schema of its own: move those tables to another schema, "
                                    + "or write the objects to another with --pg-schema"
                                    : "a store is migrated in place only in a schema of its own: move those tables to another schema, "
                                    + "or write a migrated copy with `tripconv ADDRESS --model PLAN -o NEW`"])
        }
        return ours
    }

    /// What `lock` refuses of the schema of the store at `address` (in `schema`), looked at without a
    /// transaction or a lock: a dry run (`migrate --model --dry-run`) fails as the migration would, with
    /// the same message and exit status (was: it said nothing of a table not of the store, exit 0).
    static func refuseTablesNotOfTheStore(address: String, schema: String?) throws {
        let c = try PGConnection(address, schema: schema)
        try PGStoreStructure(c).confine()
        _ = try storeAlone(c, try PGStoreStructure(c).tableNames(), appending: false)
    }

    /// The largest key among the store's `tables` (0 for none), read in this transaction under its
    /// locks: an append's objects are numbered past it. Before `writer()`, which leaves the store's schema.
    func largestKey(of tables: [String]) throws -> Int64 {
        guard isOpen, !tables.isEmpty else { return 0 }
        let key = quoted(ObjectStoreLayout.keyColumn)
        let r = try connection.query("SELECT greatest(0, " + tables.map { "(SELECT max(\(key)) FROM \(quoted($0)))" }.joined(separator: ", ") + ")",
                                     doing: "cannot read the store")
        return r.int64(0, 0)
    }

    /// A writer of the target's tables, into the scratch schema, in this transaction.
    func writer() throws -> PGObjectWriter {
        guard isOpen else { throw TripError.usage("\(name): the store is written before it is locked") }
        try connection.execute("CREATE SCHEMA \(quoted(scratch)); SET search_path TO \(quoted(scratch))", doing: "cannot migrate the store")
        return PGObjectWriter(within: connection)
    }

    /// Drops the store's tables and views but its history, moves the scratch schema's tables and
    /// views into the store's schema, drops the scratch schema, records `history` after the earlier
    /// rows (none: nothing, the history table not made), and commits.
    func replace(history: [ObjectStoreMigration.Stage], toolVersion: String) throws {
        guard isOpen else { throw TripError.usage("\(name): the store is replaced before it is locked") }
        let c = connection
        _ = try c.query("SELECT set_config('search_path', quote_ident($1), false)", [schema], doing: "cannot migrate the store")
        try PGObjectWriter.clear(c, try PGStoreStructure(c).tableNames(), keepingHistory: true)
        let made = try c.query("""
            SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v') ORDER BY c.oid
            """, [scratch], doing: "cannot migrate the store")
        for row in 0..<made.rowCount {
            // A table's indexes, constraints and owned sequences go with it; a view keeps naming its table.
            let kind = made.text(row, 1) == "v" ? "VIEW" : "TABLE"
            try c.execute("ALTER \(kind) \(quoted(scratch)).\(quoted(made.text(row, 0))) SET SCHEMA \(quoted(schema))", doing: "cannot migrate the store")
        }
        // Not CASCADE: anything left there is an error, and the whole migration is rolled back.
        try c.execute("DROP SCHEMA \(quoted(scratch))", doing: "cannot migrate the store")
        // An append that migrated nothing (`ObjectStoreAppend`) records nothing, nor makes the table.
        if !history.isEmpty { try c.execute(PGLayout.metadataStatements[1], doing: "cannot record the migration") }
        let now = StoreMigration.now()
        for s in history {
            _ = try c.query("""
                INSERT INTO \(quoted(StoreLayout.migrationsTable))
                ("from_version", "to_version", "applied_at", "tool_version", "stages", "trips_before", "trips_after")
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                """, [s.from, s.to, now, toolVersion, s.stages, String(s.objectsBefore), String(s.objectsAfter)], doing: "cannot record the migration")
        }
        // The deferred foreign keys are checked here.
        try c.execute("COMMIT", doing: "cannot commit")
        isOpen = false
    }

    /// The store at `address` (in `schema`) locked, still at `model`'s version and alone in its
    /// schema (`lock`); `build` writes the new store through the swap (`largestKey`, then `writer()`)
    /// and returns its result and the history to record; the new tables then replace the store's and
    /// the transaction commits. On an error it is rolled back: nothing changed. `migrate --model` and
    /// appends to a store of objects (`ObjectStoreMigration`, `ObjectStoreAppend`) both run this way,
    /// as a SQLite store's run through `SQLiteObjectStoreSwap.replacing`.
    static func replacing<T>(address: String, schema: String?, expecting model: ObjectModel, busyTimeoutMilliseconds: Int, toolVersion: String,
                             appending: Bool = false,
                             build: (PGObjectStoreSwap) throws -> (T, history: [ObjectStoreMigration.Stage])) throws -> T {
        let swap = try PGObjectStoreSwap(address: address, schema: schema)
        do {
            try swap.lock(expecting: model, busyTimeoutMilliseconds: busyTimeoutMilliseconds, appending: appending)
            let (result, history) = try build(swap)
            try swap.replace(history: history, toolVersion: toolVersion)
            return result
        } catch {
            swap.abandon()
            throw error
        }
    }

    /// Rolls the transaction back: the store as it was, no scratch schema.
    func abandon() {
        guard isOpen else { return }
        isOpen = false
        try? connection.execute("ROLLBACK")
    }
}

extension ObjectStoreMigration {
    /// The model and object counts of the PostgreSQL store of objects at `address`, and its name in
    /// messages; a SampleTrips store there is `.usage` (it is migrated without `--model`).
    static func look(address: String, schema: String?) throws -> (ObjectModel, [String: Int], String) {
        let reader: PGObjectReader
        do {
            reader = try PGObjectReader(address: address, schema: schema)
        } catch let error as TripError where error.kind == .data {
            let c = try PGConnection(address, schema: schema)
            guard try PGStoreStructure(c).tableNames().contains(StoreVersionTelling.rootTable) else { throw error }
            throw TripError.usage("\(c.name): not a store of another app's objects (it has no \(ObjectStoreLayout.modelTable) table); "
                                  + "a SampleTrips store is migrated without --model")
        }
        return (reader.model, try reader.objectCounts(), reader.name)
    }

    /// `migrate(…)` of a PostgreSQL store: the plan's readers read the store on connections of their
    /// own while `PGObjectStoreSwap` holds it locked and writes the target into its scratch schema.
    /// No backup is taken (the migration is one transaction; pg_dump keeps a copy): `--backup FILE`
    /// is `.usage`.
    func migratePostgreSQL(policy: DeduplicationPolicy, backup: StoreBackup, toolVersion: String, busyTimeoutMilliseconds: Int,
                           temporaryDirectory: String?, memoryLimit: Int?, setAside: (SetAsideRecord) throws -> Void) throws -> Report {
        if case .file = backup {
            throw TripError.usage("--backup: a PostgreSQL store is migrated in one transaction and not backed up; use pg_dump to keep a copy")
        }
        return try PGObjectStoreSwap.replacing(address: store, schema: pgSchema, expecting: migration.source,
                                               busyTimeoutMilliseconds: busyTimeoutMilliseconds, toolVersion: toolVersion) { swap in
            var summary = ObjectConversionSummary()
            var read = try planReader(policy: policy, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                      temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit)
            var writer = try swap.writer()
            try ObjectPipeline.run(&read.reader, into: &writer, summary: &summary, setAside: setAside)
            read.note(into: &summary)
            let stages = history(stageInputs: read.plan.tally.stageInputs, written: summary.written)
            return (Report(summary: summary, stages: stages, backup: nil), stages)
        }
    }
}
