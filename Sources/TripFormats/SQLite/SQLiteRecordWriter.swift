import TripKit

/// Writes trips into a SQLite store, in one transaction.
///
/// A new store is built in a temporary file beside the target and renamed over it by `finish()`, so
/// it appears only complete; `abort()` removes it. An existing store is opened and locked, migrated
/// in place first when it is older than the target and `migrate` is set, then takes the trips:
/// where the store's trip name is unique, a name it already holds is merged, replaced, kept or
/// refused under the policy, and each such incoming trip is listed in `ledger` (kept in memory up to
/// a bound, then in an anonymous temporary file).
///
/// ```swift
/// let writer = try SQLiteRecordWriter(path: "out.sqlite", options: WriteOptions(schema: TripSchemaV3.self))
/// for trip in trips { try writer.write(trip) }
/// try writer.finish()
/// ```
public final class SQLiteRecordWriter: RecordWriter, LedgerKeeping, InPlaceMigrating {
    /// The target store's file.
    public let path: String
    /// Whether trips go into a store that existed (an upsert), rather than a new one.
    public let isUpdatingExistingStore: Bool
    /// The incoming trips merged into a stored one (`.merged`) or dropped in its favour
    /// (`.dropped`), with why. A trip that replaces one the store held before (`last`) is written as
    /// given: it is not here but counted in `replacedStoredTrips`; one that replaces a trip of the
    /// same run is here as `.merged`.
    private let setAside: SetAsideLog
    /// Stored trips that incoming ones replaced under `last`.
    public private(set) var replacedStoredTrips = 0
    /// Trips with row ids up to this were in the store before this run (0 for a new store).
    private var storedIDLimit: Int64 = 0
    /// Stored trips replaced in this run: a second replacement of one replaces this run's trip.
    private var replacedIDs = RowIDSet()
    /// The in-place migration run before writing, if one was.
    public private(set) var migration: StoreMigrationReport?
    /// The stored trips that migration merged or dropped.
    private var migrationSetAside: SetAsideLog?
    /// The backup that migration took, until the transaction commits: removed if it does not.
    private var uncommittedBackup: String?

    private let options: WriteOptions
    private let layout: StoreLayout
    private let temporaryPath: String?
    private var connection: SQLiteConnection?
    private var rows: SQLiteRowWriter?
    private var duplicates: DuplicateStatements?
    private var incoming = 0
    /// Whether trips go into the store many per INSERT (a new store): they wait in `pending`, with
    /// their record numbers, until a batch is full or `finish()`.
    private let batchesTrips: Bool
    private var pending: [(object: ModelObject, record: Int, origin: RecordOrigin?)] = []
    /// Under `fail`, the distinct names refused, up to `refusedNamesKept` of them (the pipeline
    /// sends each name once, so beyond that only the count grows).
    private var refusedNames: [String] = []
    private var refusedNameCount = 0
    static let refusedNamesKept = 100_000
    private var refusedSet: Set<String> = []
    private var refusedCount = 0
    private var isDone = false
    /// A write failed part-way: the transaction may hold half a trip, so it must never be committed.
    private var hasFailed = false
    /// Whether SQLite enforces the foreign keys (and runs their ON DELETE actions) on this connection.
    /// Not while a new store is filled, nor after a migration in the same transaction: then replaced
    /// trips' related rows are deleted by name.
    private var foreignKeysEnforced = true
    /// Whether `finish()` checks the foreign keys before committing: after a migration, which rebuilt
    /// tables with them off. A new store needs no check, see `init`.
    private var checksForeignKeysAtFinish = false

    /// The statements needed only when a name is already in the store.
    private struct DuplicateStatements {
        let lookup: SQLiteStatement
        let deleteRoot: SQLiteStatement
        /// Per child table: a delete of its rows by trip, where the delete rule does not cascade.
        let deleteChildren: [SQLiteStatement?]
        let loader: StoreTripCursor
    }

    /// Opens the target: an existing SQLite store to write into, else a new store in a temporary file.
    /// Fails `.usage` for a store older than `options.schema` without `options.migrate`, or newer.
    public init(path: String, options: WriteOptions, busyTimeoutMilliseconds: Int = 5000) throws {
        self.path = path
        self.options = options
        let budget = options.budget ?? SpillBudget(limit: SpillBudget.defaultLimit)
        setAside = SetAsideLog(directory: budget.directory, memoryLimit: budget.setAsideInMemory)
        layout = StoreLayout(options.schema)
        let timeout = Int32(clamping: busyTimeoutMilliseconds)
        if try SQLiteRecordWriter.isSQLiteFile(path) {
            isUpdatingExistingStore = true
            // Upserts meet stored names often; a batch holding one would be undone and redone.
            batchesTrips = false
            temporaryPath = nil
            let c = try SQLiteConnection(path: path, access: .writing, busyTimeout: timeout)
            connection = c
            do {
                // A migration rebuilds tables with foreign keys off, as SQLite's procedure says, and the
                // pragma is a no-op inside a transaction: decide before BEGIN, from a first look.
                let first = try SQLiteStoreStructure(c).detect()
                let migrating = try SQLiteMigration.isNeeded(store: first, target: options.schema, path: path, migrate: options.migrate)
                try c.execute("PRAGMA foreign_keys = \(migrating ? "OFF" : "ON")")
                foreignKeysEnforced = !migrating
                checksForeignKeysAtFinish = migrating
                try c.execute("BEGIN IMMEDIATE", doing: "cannot lock the store")
                let store = try SQLiteStoreStructure(c).detect()
                if try SQLiteMigration.isNeeded(store: store, target: options.schema, path: path, migrate: options.migrate) {
                    guard migrating else {
                        throw TripError(.busy, "\(path): store is busy: another process changed it while it was being opened",
                                        notes: ["try again"])
                    }
                    // The same migration, backup and accounting as `tripconv migrate`'s.
                    let done = try SQLiteMigration.inPlace(c, store: store, to: options.schema, policy: options.policy,
                                                           toolVersion: options.toolVersion, budget: budget,
                                                           backup: options.backup, busyTimeout: timeout)
                    (migration, migrationSetAside, uncommittedBackup) = (done.report, done.setAside, done.report.backup)
                } else {
                    try SQLiteMigration.writeVersion(c, options.schema.versionIdentifier, toolVersion: options.toolVersion, isNew: false)
                }
                rows = try SQLiteRowWriter(c, layout: layout)
                let last = try c.prepare("SELECT coalesce(max(\(quoted(StoreLayout.idColumn))), 0) FROM \(quoted(layout.rootTable))")
                storedIDLimit = try last.step() ? last.int64(0) : 0
            } catch {
                c.rollbackQuietly()
                connection = nil
                discardBackup()
                throw error
            }
        } else {
            isUpdatingExistingStore = false
            batchesTrips = true
            let temporary = try TemporaryPaths.makeStoreFile(beside: path)
            temporaryPath = temporary
            do {
                let c = try SQLiteConnection(path: temporary, access: .writing, busyTimeout: timeout)
                connection = c
                // A brand-new file that is renamed into place only when complete needs no journal and
                // no syncing per transaction: a failed run deletes it, and finish() syncs it once.
                // Foreign keys stay off while the writer fills it, as in a bulk load: the tables keep
                // their REFERENCES and ON DELETE rules for whoever opens the store with foreign keys on.
                // Looking each related row's trip up (the check a new store's rows cannot fail: a related
                // row only ever gets the row id of the trip just inserted, and a trip is only deleted by
                // `replace`, which deletes its related rows itself) cost 3 % of a JSON to store
                // conversion, and `PRAGMA foreign_key_check` at the end another 2 %.
                try c.execute("""
                    PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;
                    PRAGMA cache_size = -32768; PRAGMA foreign_keys = OFF
                    """, doing: "cannot create the store")
                foreignKeysEnforced = false
                try c.execute("BEGIN", doing: "cannot create the store")
                for sql in layout.createStatements { try c.execute(sql, doing: "cannot create the store") }
                try SQLiteMigration.writeVersion(c, options.schema.versionIdentifier, toolVersion: options.toolVersion, isNew: true)
                rows = try SQLiteRowWriter(c, layout: layout)
            } catch {
                removeTemporaryStore()
                throw error.renamingPath(temporary, to: path)
            }
        }
    }

    deinit {
        if !isDone { abort() }
    }

    // MARK: - Writing

    /// Inserts a trip with its items and accommodation, or meets the policy when the store holds its
    /// name; a trip set aside is named as the `N`th given.
    public func write(_ object: ModelObject) throws { try write(object, origin: nil) }

    /// Inserts a trip, or meets the policy; a trip set aside is named by `origin`.
    public func write(_ object: ModelObject, origin: RecordOrigin) throws { try write(object, origin: Optional(origin)) }

    private func write(_ object: ModelObject, origin: RecordOrigin?) throws {
        guard let rows, !isDone else { throw TripError(.io, "\(path): the store is already closed") }
        incoming += 1
        do {
            if batchesTrips && !rows.isRefusedAlone(object) {
                pending.append((object, incoming, origin))
                if pending.count == rows.rootBatchRows { try writePending() }
            } else {
                // Trips in their order: those waiting go first.
                try writePending()
                try insertOne(object, record: incoming, origin: origin)
            }
        } catch {
            hasFailed = true
            throw error.renamingPath(temporaryPath, to: path)
        }
    }

    /// Inserts the trips waiting: all in one statement when they fill a batch and the store refuses
    /// none, else one at a time, each meeting the policy in turn, as if each had come on its own.
    private func writePending() throws {
        guard let rows, !pending.isEmpty else { return }
        let trips = pending
        pending.removeAll(keepingCapacity: true)
        if trips.count == rows.rootBatchRows, try rows.insertAll(trips.lazy.map(\.object)) { return }
        for trip in trips { try insertOne(trip.object, record: trip.record, origin: trip.origin) }
    }

    /// Inserts one trip, or meets the policy when the store holds its name.
    private func insertOne(_ object: ModelObject, record: Int, origin: RecordOrigin?) throws {
        if try rows?.insert(object, id: nil) == nil {
            try takeDuplicate(object, record: record, origin: origin ?? RecordOrigin(source: path, record: record))
        }
    }

    /// An incoming trip (the `record`th) whose unique name the store holds: merge, replace, keep the
    /// stored one, or refuse.
    private func takeDuplicate(_ object: ModelObject, record: Int, origin: RecordOrigin) throws {
        guard let unique = layout.uniqueColumn, let connection else {
            throw TripError.data("\(path): trip \(record): a unique index of the store refused it")
        }
        // The rows waiting in batches go in first: the stored trip may be among them.
        try rows?.flush()
        let name = object.attributes[unique.slot]
        let statements = try duplicateStatements(connection)
        try statements.lookup.bind(1, name)
        guard try statements.lookup.step() else {
            throw TripError.data("\(path): trip \(record): a unique index of the store other than \(unique.name)'s refused it")
        }
        let storedID = statements.lookup.int64(0)
        statements.lookup.reset()
        let value = name.stringValue ?? name.literal
        let resolver = DuplicateResolver(policy: options.policy)
        var writtenThisRun = false
        switch resolver.outcome {
        case .refuse:
            refusedCount += 1
            if refusedSet.contains(value) { return }
            refusedNameCount += 1
            if refusedSet.count < Self.refusedNamesKept {
                refusedSet.insert(value)
                refusedNames.append(value)
            }
            return
        case .keepKept:
            break
        case .takeIncoming:
            try replace(storedID, with: object, statements, record: record)
            // A trip the store held before is replaced once; a row replaced already, or one this run
            // wrote (the pipeline never sends two of a name; a caller of the writer may), is this run's.
            writtenThisRun = !(storedID <= storedIDLimit && replacedIDs.insert(storedID))
        case .mergeIncomingIntoKept:
            let stored = try load(storedID, statements)
            try replace(storedID, with: DuplicateResolver.merge(stored, with: object, entity: options.schema.rootEntity), statements, record: record)
        }
        let decision = resolver.resolve(DuplicateResolver.Key(attribute: unique.name, value: value),
                                        kept: .stored(rowID: storedID, writtenThisRun: writtenThisRun), incoming: origin)
        if decision.replacesStoredTrip { replacedStoredTrips += 1 }
        if let record = decision.setAside { try setAside.append(record) }
    }

    private func duplicateStatements(_ c: SQLiteConnection) throws -> DuplicateStatements {
        if let duplicates { return duplicates }
        guard let unique = layout.uniqueColumn else { preconditionFailure("only a unique name has duplicates") }
        let id = quoted(StoreLayout.idColumn), table = quoted(layout.rootTable)
        let made = DuplicateStatements(
            lookup: try c.prepare("SELECT \(id) FROM \(table) WHERE \(quoted(unique.name)) = ?1"),
            deleteRoot: try c.prepare("DELETE FROM \(table) WHERE \(id) = ?1", doing: "cannot replace a trip"),
            deleteChildren: try layout.children.map { child in
                // A cascading foreign key removes these rows with the trip; other rules need telling,
                // and so does every rule when foreign keys are off.
                child.relationship.deleteRule == .cascade && foreignKeysEnforced ? nil
                    : try c.prepare("DELETE FROM \(quoted(child.name)) WHERE \(quoted(layout.foreignKey)) = ?1",
                                    doing: "cannot replace a trip")
            },
            loader: try StoreTripCursor(c, try SQLiteStoreStructure(c).detect().tripQueries(c.path, byID: true)))
        duplicates = made
        return made
    }

    /// The stored trip with this row id, as an object of the store's (the target's) version.
    private func load(_ id: Int64, _ statements: DuplicateStatements) throws -> ModelObject {
        var builder = RecordBuilder(source: path, format: Format.sqlite.rawValue,
                                    options: ReadOptions(sourceVersion: options.schema.versionIdentifier))
        try statements.loader.rewind(key: id)
        guard try statements.loader.next(into: &builder, record: 0) != nil else {
            throw TripError.data("\(path): the trip with row id \(id) vanished while being merged")
        }
        switch builder.endRecord() {
        case .trip(let record): return record.object
        case .rejected(let rejection):
            throw TripError.data("\(path): the stored trip with row id \(id) cannot be read: \(rejection.reason)")
        }
    }

    /// Deletes the stored trip and its related rows, and inserts the new one under the same row id.
    private func replace(_ id: Int64, with object: ModelObject, _ statements: DuplicateStatements, record: Int) throws {
        for delete in statements.deleteChildren {
            guard let delete else { continue }
            try delete.bind(1, id)
            try delete.run()
        }
        try statements.deleteRoot.bind(1, id)
        try statements.deleteRoot.run()
        guard try rows?.insert(object, id: id) != nil else {
            throw TripError.data("\(path): trip \(record): the store refused the replacement of row id \(id)")
        }
    }

    /// Calls `body` with each incoming trip merged or dropped, in the order they came.
    public func forEachLedgerEntry(_ body: (SetAsideRecord) throws -> Void) throws { try setAside.forEach(body) }

    /// Calls `body` with each stored trip the migration in place merged or dropped, in row-id order.
    public func forEachMigrationEntry(_ body: (SetAsideRecord) throws -> Void) throws { try migrationSetAside?.forEach(body) }

    // MARK: - Finishing

    /// Commits; for a new store, makes it visible under its name. Under `fail`, names the store
    /// already held are an error and nothing is written.
    public func finish() throws {
        guard !isDone, let connection else { return }
        if hasFailed {
            abort()
            throw TripError.data("\(path): a write failed earlier; nothing was written")
        }
        do {
            // The trips still waiting, before anything looks at what the policy refused.
            try writePending()
        } catch {
            abort()
            throw error.renamingPath(temporaryPath, to: path)
        }
        if !refusedNames.isEmpty {
            abort()
            throw DuplicateResolver(policy: options.policy).storeRefusal(place: path, attribute: layout.uniqueColumn?.name ?? "name", names: refusedNames,
                                                                         nameCount: refusedNameCount, incomingCount: refusedCount)
        }
        do {
            try rows?.flush()
            if checksForeignKeysAtFinish {
                let problems = try SQLiteStructuralStep.foreignKeyProblems(connection, layout: layout)
                guard problems.isEmpty else {
                    throw TripError.data("\(path): \(problems.joined(separator: ", ")) would refer to trips that are not there; nothing was written")
                }
            }
            try connection.execute("COMMIT", doing: "cannot commit")
            uncommittedBackup = nil
            if let temporaryPath {
                try connection.execute("PRAGMA journal_mode = DELETE", doing: "cannot finish the store")
                closeConnection()
                try FileSystem.sync(temporaryPath, name: path)
                try FileSystem.rename(temporaryPath, to: path)
            } else {
                closeConnection()
            }
            isDone = true
        } catch {
            abort()
            throw error.renamingPath(temporaryPath, to: path)
        }
    }

    /// Rolls everything back: an existing store is left as it was; a new one never appears.
    public func abort() {
        guard !isDone else { return }
        isDone = true
        connection?.rollbackQuietly()
        closeConnection()
        removeTemporaryStore()
        discardBackup()
    }

    /// A migration's backup of a store that was not changed after all: a run that fails leaves none.
    private func discardBackup() {
        if let uncommittedBackup { FileSystem.remove(uncommittedBackup) }
        uncommittedBackup = nil
    }

    private func closeConnection() {
        pending.removeAll()
        duplicates = nil
        rows = nil
        connection = nil
    }

    private func removeTemporaryStore() {
        closeConnection()
        if let temporaryPath {
            FileSystem.remove(temporaryPath)
            FileSystem.remove(temporaryPath + "-journal")
        }
    }

    // MARK: - Files

    /// Whether the path is an existing SQLite database (by its header). A directory cannot be a target.
    static func isSQLiteFile(_ path: String) throws -> Bool {
        guard let kind = FileSystem.kind(path) else { return false }
        if kind == .directory { throw TripError(.cantCreate, "\(path): is a directory") }
        return try FileSystem.head(of: path, count: 16, failing: .cantCreate) == SQLiteConnection.fileHeader
    }
}

extension Error {
    /// The error with the temporary file's path in its message replaced by the target's: people know
    /// the store by the name they gave.
    func renamingPath(_ temporary: String?, to path: String) -> Error {
        guard let temporary, var e = self as? TripError else { return self }
        e.message = e.message.replacing(temporary, with: path)
        return e
    }
}

/// A set of row ids: a bitmap for the ids a store numbers densely from 1 (one bit each, so the
/// stored trips a long upsert replaces take an eighth of a byte apiece), a hash set for the rest.
struct RowIDSet {
    /// Ids below this go in the bitmap: at most 32 MiB of it.
    static let bitmapLimit: Int64 = 1 << 28
    private var bits: [UInt64] = []
    private var others: Set<Int64> = []

    /// Adds the id; false when it was there already.
    mutating func insert(_ id: Int64) -> Bool {
        guard id >= 0, id < Self.bitmapLimit else { return others.insert(id).inserted }
        let word = Int(id >> 6), bit = UInt64(1) << UInt64(id & 63)
        if word >= bits.count { bits += [UInt64](repeating: 0, count: max(word + 1 - bits.count, bits.count)) }
        if bits[word] & bit != 0 { return false }
        bits[word] |= bit
        return true
    }
}
