import TripKit

/// Writes trips into a PostgreSQL store, at COPY speed, in one transaction per run.
///
/// The store's tables are created when the schema has none (under an advisory lock of creation, so
/// loaders starting together create them once and none waits for another's load). Trips then go in
/// with `COPY … FROM STDIN`, a batch at a time (the trips, then each related table), never a
/// statement per row:
/// - where the version's name is not unique (1.0.0), straight into the store's tables, under ids
///   reserved from the trips' sequence;
/// - where it is unique, into temporary staging tables; `finish()` then moves them in set-based
///   statements: `INSERT … ON CONFLICT (name) DO NOTHING` in name order, and the names the store
///   already held are locked (`FOR UPDATE`, in name order) and met under the policy — merged (by
///   the same code that merges every other duplicate), replaced, kept or refused. A deadlock or a
///   serialization failure there rolls back to a savepoint and is tried again after a backoff, a
///   bounded number of times. See `PGRecordWriter+Resolve.swift`.
///
/// Memory: one batch of COPY rows (at most `batchTrips` trips) and the ledger's bounded log.
/// The load transaction holds a shared advisory lock that migration in place takes exclusively.
public final class PGRecordWriter: RecordWriter, LedgerKeeping, InPlaceMigrating {
    /// The store as messages name it (`host:port/database[/schema]`, never the password).
    public let name: String
    /// Whether the store's tables existed before this run.
    public private(set) var isUpdatingExistingStore = false
    /// Stored trips that incoming ones replaced under `last`.
    public internal(set) var replacedStoredTrips = 0
    /// The in-place migration run before writing (`--migrate`), if one was.
    public private(set) var migration: StoreMigrationReport?
    /// The stored trips that migration merged or dropped.
    private var migrationSetAside: SetAsideLog?
    /// How many times a deadlock or serialization failure made the writer try again.
    public internal(set) var retries = 0
    /// How many times the writer gave way to another loader holding names it met (rolled back what it
    /// had inserted, waited for that loader's commit, and began again).
    public internal(set) var yields = 0
    /// How many times it may give way before it waits in line, holding its names.
    var yieldLimit = 6

    let connection: PGConnection
    /// The store's address, for the connection that watches the resolution (`PGWatcher`).
    let address: String
    let layout: PGLayout
    let options: WriteOptions
    /// Whether trips go through staging tables (the name is unique) rather than straight in.
    let isStaged: Bool
    let setAside: SetAsideLog
    /// Sends the batches from a thread of its own (nil: from this one).
    private let sender: PGSender?
    private var batch: PGCopyBatch
    var staging: PGStaging
    private var reservedIDs: [Int64] = []
    private var sequence: String?
    private var nextReserved = 0
    private var incoming = 0
    private var isDone = false
    private var hasFailed = false

    /// Trips per COPY batch.
    static let batchTrips = 8192
    /// The advisory-lock key of a store: its schema's name, hashed by the server.
    static let lockKey = "hashtext('tripconv ' || current_schema())"
    /// The advisory-lock key under which a loader creates a store's tables.
    static let createLockKey = "hashtext('tripconv create ' || current_schema())"
    static let stagePrefix = "tripconv_stage_"

    /// Connects, creates the store's tables where there are none, and begins the load.
    /// Fails `.usage` for a store older than `options.schema` without `options.migrate`, or newer.
    public init(address: String, options: WriteOptions) throws {
        self.options = options
        self.address = address
        layout = PGLayout(options.schema)
        isStaged = layout.uniqueColumn != nil
        let budget = options.budget ?? SpillBudget(limit: SpillBudget.defaultLimit)
        setAside = SetAsideLog(directory: budget.directory, memoryLimit: budget.setAsideInMemory)
        batch = PGCopyBatch(layout)
        staging = PGStaging(layout)
        let c = try PGConnection(address, schema: options.pgSchema, creatingSchema: true)
        connection = c
        name = c.name
        sender = PGSender()
        do {
            try begin()
        } catch {
            try? c.execute("ROLLBACK")
            throw error
        }
    }

    deinit {
        if !isDone { abort() }
    }

    /// Begins the load transaction under the shared lock, once the store is at the target version:
    /// creating it under the lock of creation, or migrating it under the exclusive lock, first when it must.
    private func begin() throws {
        let c = connection
        // A schema holding a store of another app's objects takes no trips (as a SQLite file of one).
        if try PGStoreStructure(c).tableNames().contains(ObjectStoreLayout.modelTable) {
            throw TripError.usage("\(name): a tripconv store of another app's objects (its model in \(ObjectStoreLayout.modelTable)): "
                                  + "trips are not written into one", notes: ["name another schema with --pg-schema"])
        }
        var created = false
        for attempt in 0..<4 {
            try c.execute("BEGIN")
            try c.execute("SELECT pg_advisory_xact_lock_shared(\(Self.lockKey))", doing: "cannot lock the store")
            let version = try PGStoreVersion.of(c)
            if let version, !(try StoreMigration.isNeeded(version: version, target: options.schema, path: name, migrate: options.migrate)) {
                if isStaged, !(try layout.deferringStatements(c).isEmpty), attempt < 3 {
                    // A store whose foreign keys cannot be deferred (an earlier tripconv's, or another
                    // tool's): made deferrable once, alone, under the exclusive lock.
                    try c.execute("ROLLBACK; BEGIN")
                    try c.execute("SELECT pg_advisory_xact_lock(\(Self.lockKey))", doing: "cannot lock the store")
                    for sql in try layout.deferringStatements(c) { try c.execute(sql, doing: "cannot make the store's foreign keys deferrable") }
                    try c.execute("COMMIT", doing: "cannot make the store's foreign keys deferrable")
                    continue
                }
                isUpdatingExistingStore = !created
                try startLoad()
                return
            }
            guard attempt < 3 else { break }
            try c.execute("ROLLBACK; BEGIN")
            if version == nil {
                // Creating: one loader at a time, under a lock of its own, not the exclusive one (a
                // loader that created the store may already be loading under the shared lock: waiting
                // for its whole load would serialize loaders that start together on a new store).
                // Another may have created it meanwhile: the next attempt takes it as it is.
                try c.execute("SELECT pg_advisory_xact_lock(\(Self.createLockKey))", doing: "cannot lock the store")
                if try PGStoreVersion.of(c) == nil {
                    for sql in layout.createStatements + PGLayout.metadataStatements { try c.execute(sql, doing: "cannot create the store") }
                    try PGStoreVersion.write(c, options.schema.versionIdentifier, toolVersion: options.toolVersion, isNew: true)
                    created = true
                }
            } else {
                // Migrating: alone, under the exclusive lock.
                try c.execute("SELECT pg_advisory_xact_lock(\(Self.lockKey))", doing: "cannot lock the store")
                if let now = try PGStoreVersion.of(c),
                   try StoreMigration.isNeeded(version: now, target: options.schema, path: name, migrate: options.migrate) {
                    // Migrated and loaded in one transaction, under the exclusive lock: all or nothing.
                    let budget = options.budget ?? SpillBudget(limit: SpillBudget.defaultLimit)
                    let ledger = SetAsideLog(directory: budget.directory, memoryLimit: budget.setAsideInMemory)
                    migration = try PGMigration.run(c, from: now, to: options.schema, policy: options.policy,
                                                    toolVersion: options.toolVersion, budget: budget, setAside: ledger.append)
                    migrationSetAside = ledger
                    isUpdatingExistingStore = true
                    try startLoad()
                    return
                }
            }
            try c.execute("COMMIT", doing: "cannot create the store")
        }
        throw TripError(.busy, "\(name): the store changed while it was being opened", notes: ["try again"])
    }

    /// In the load transaction: the staging table, when trips go through it.
    private func startLoad() throws {
        guard isStaged else { return }
        // The staging table's pages stay in the session's memory up to this (the default is 8 MB);
        // it can be set only before the session first uses a temporary table.
        try? connection.execute("SET temp_buffers = '64MB'")
        // The related rows go in before their trips (see PGStaging): checked at the commit.
        try connection.execute("SET CONSTRAINTS ALL DEFERRED")
        try staging.create(connection, viewName: stageTable)
    }

    func stageTable(_ table: String) -> String { Self.stagePrefix + table }

    // MARK: - Writing

    /// Writes a trip; one set aside is named as the `N`th given.
    public func write(_ object: ModelObject) throws { try write(object, origin: nil) }

    /// Writes a trip; one set aside is named by `origin`.
    public func write(_ object: ModelObject, origin: RecordOrigin) throws { try write(object, origin: Optional(origin)) }

    private func write(_ object: ModelObject, origin: RecordOrigin?) throws {
        guard !isDone else { throw TripError(.io, "\(name): the store is already closed") }
        incoming += 1
        let origin = origin ?? RecordOrigin(source: name, record: incoming)
        if let why = PGValues.unstorable(object, layout.tables.root, schema: options.schema) {
            try setAside.append(SetAsideRecord(kind: .rejected, origin: origin, reason: why))
            return
        }
        do {
            let id = try nextID()
            if isStaged {
                try staging.append(object, id: id, origin: origin, connection, sender)
            } else {
                batch.append(object, id: id)
                if batch.trips.rows >= Self.batchTrips || batch.exceeds(8 << 20) { try flush() }
            }
        } catch {
            hasFailed = true
            throw error
        }
    }

    /// The next trip id: reserved from the trips' sequence a block at a time, so related rows can
    /// name their trip before it is inserted and no two loaders ever share one.
    private func nextID() throws -> Int64 {
        if nextReserved == reservedIDs.count {
            // 64 at first, doubling: a small load leaves no wide gap in the numbering.
            let count = min(1 << 16, max(64, reservedIDs.count * 2))
            // The connection is the sender's until the batch under way has gone.
            try sender?.drain()
            // The ids come back as a range when no other session took any meanwhile, else one by one.
            if sequence == nil {
                // Looked up once: as nextval's argument it would be looked up for every id.
                sequence = try connection.query("SELECT pg_get_serial_sequence($1, 'id')", [quoted(layout.rootTable)]).textIfAny
            }
            let sequenceName = PGStoreVersion.literal(sequence ?? "") + "::regclass"
            let range = try connection.query("""
                WITH ids AS (SELECT nextval(\(sequenceName)) AS v FROM generate_series(1, \(count)))
                SELECT CASE WHEN max(v) - min(v) + 1 = count(*) THEN min(v)::text
                       ELSE string_agg(v::text, ',' ORDER BY v) END, max(v) - min(v) + 1 = count(*) FROM ids
                """, doing: "cannot number the trips")
            if range.text(0, 1) == "t" {
                let first = range.int64(0, 0)
                reservedIDs = Array(first..<(first + Int64(count)))
            } else {
                reservedIDs = range.text(0, 0).split(separator: ",").compactMap { Int64($0) }
            }
            nextReserved = 0
        }
        defer { nextReserved += 1 }
        return reservedIDs[nextReserved]
    }

    /// Sends the rows waiting: the staged ones, or the batch (the trips, then each related table's).
    private func flush() throws {
        if isStaged {
            try staging.send(connection, sender)
        } else {
            try batch.send(connection, via: sender, tripsTable: layout.rootTable) { $0.name }
        }
    }

    /// Calls `body` with each incoming trip merged, dropped or refused, in the order they came.
    public func forEachLedgerEntry(_ body: (SetAsideRecord) throws -> Void) throws { try setAside.forEach(body) }

    /// Calls `body` with each stored trip the migration in place merged or dropped, in id order.
    public func forEachMigrationEntry(_ body: (SetAsideRecord) throws -> Void) throws { try migrationSetAside?.forEach(body) }

    // MARK: - Finishing

    /// Sends what is left, meets the policy for the names the store held, and commits. Under `fail`,
    /// names the store already held are an error and nothing is written.
    public func finish() throws {
        guard !isDone else { return }
        if hasFailed {
            abort()
            throw TripError.data("\(name): a write failed earlier; nothing was written")
        }
        do {
            try flush()
            try sender?.drain()
            sender?.stop()
            if isStaged { try resolveWithRetries() }
            try connection.execute("COMMIT", doing: "cannot commit")
            isDone = true
        } catch {
            abort()
            throw error
        }
    }

    /// Rolls everything back: the store is left as it was.
    public func abort() {
        guard !isDone else { return }
        isDone = true
        sender?.stop()
        try? connection.execute("ROLLBACK")
    }
}

/// A PostgreSQL store's version as the writer needs it: nil when the schema has no trips table.
enum PGStoreVersion {
    static func of(_ c: PGConnection) throws -> SchemaVersion? {
        let root = StoreLayout(TripMigrationPlan.currentSchema).rootTable
        // In the schema the store's tables are created in, not anywhere on the search path; read
        // from pg_class under the statement's snapshot, not through `to_regclass`, whose cache keeps
        // an earlier look's "none" in a transaction begun before another loader created the table.
        let exists = "SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = \(literal(root)) AND relnamespace = current_schema()::regnamespace)"
        guard try c.column(exists) == ["t"] else { return nil }
        return try PGStoreStructure(c).detect().version
    }

    /// Records the version in the metadata table (and who created the store, when new).
    static func write(_ c: PGConnection, _ version: SchemaVersion, toolVersion: String, isNew: Bool) throws {
        for sql in PGLayout.metadataStatements { try c.execute(sql) }
        let upsert = "INSERT INTO \(quoted(StoreLayout.metadataTable)) (\"key\", \"value\") VALUES ($1, $2) "
            + "ON CONFLICT (\"key\") DO UPDATE SET \"value\" = EXCLUDED.\"value\""
        _ = try c.query(upsert, [StoreLayout.versionKey, version.description], doing: "cannot record the store's version")
        if isNew { _ = try c.query(upsert, ["createdBy", "tripconv \(toolVersion)"], doing: "cannot record the store's version") }
    }

    /// A SQL string literal.
    static func literal(_ s: String) -> String { "'" + s.replacing("'", with: "''") + "'" }
}
