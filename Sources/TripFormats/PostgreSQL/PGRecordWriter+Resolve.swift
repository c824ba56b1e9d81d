#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// Moving staged trips into a store whose name is unique, under the policy, in set-based statements.
///
/// Each round:
/// 1. locks, in name order, the stored trips whose names the round's trips carry (`FOR UPDATE`):
///    from here to the commit no other loader changes them, so what is merged into them is what a
///    load run after theirs would have merged;
/// 2. inserts the rest in name order with `ON CONFLICT (name) DO NOTHING` (another loader's
///    uncommitted trip of a name makes this wait until it commits or rolls back; the name order
///    keeps two loaders from waiting on each other here), and their related rows;
/// 3. meets the policy for the locked ones: `first` keeps the stored trip, `last` replaces its values
///    and related rows with the incoming trip's (its id stays), `merge` merges the two with the same
///    code that merges every duplicate (`DuplicateResolver.merge`) and writes the result in its
///    place, `fail` refuses the run. Which of these runs, the ledger's records and counts and the
///    refusal are `DuplicateResolver`'s decisions; the SQL is this writer's.
/// The first round takes every staged trip; a later one only the first of each name still waiting
/// (the same name twice in one run, which a pipeline never sends but a caller may, or a name another
/// loader committed between the two statements).
extension PGRecordWriter {
    /// Tries the resolution again after a deadlock or a serialization failure, from a savepoint,
    /// after a growing random wait; the staged rows stay.
    static let maximumRetries = 8

    /// The advisory lock (two keys: the store's schema, a backend's pid) a loader holds from the
    /// moment its first round inserts trips to its commit: others wait for it there, holding nothing.
    static let holdingKey = "hashtext('tripconv holding ' || current_schema())"

    /// The SQL condition on a `pg_locks` row (`alias`) that it is a loader's holding lock on this
    /// store, granted: the row's `pid` is that loader's backend.
    static func isHoldingLock(_ alias: String) -> String {
        """
        \(alias).locktype = 'advisory' AND \(alias).objsubid = 2 AND \(alias).granted AND \(alias).mode = 'ExclusiveLock'
          AND \(alias).database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND \(alias).classid::bigint = (\(holdingKey)::bigint & 4294967295)
        """
    }

    func resolveWithRetries() throws {
        let c = connection
        try c.execute("SAVEPOINT tripconv_resolve")
        let watcher = PGWatcher(address: address, schema: options.pgSchema, watching: c)
        defer { watcher?.stop() }
        var attempt = 0
        while true {
            do {
                try resolve(yielding: yields < yieldLimit, watcher: watcher)
                try c.execute("RELEASE SAVEPOINT tripconv_resolve")
                return
            } catch let error as TripError where yields < yieldLimit && (c.lastSQLState == "55P03" || c.lastSQLState == "57014") {
                // The first round met a name (or a stored trip) another loader holds and gave way:
                // it rolls back what it inserted, so that no loader waits for it, waits for the
                // loader holding that name to commit (the watcher named it; on a lock timeout
                // alone, for every loader holding names), and begins again. Without this, each
                // loader waiting for another would hold names a third waits for: a chain, one
                // loader's whole finish after another's (issue 16's four loaders).
                let holder = watcher?.end()
                guard c.lastSQLState == "55P03" || holder != nil else { throw error }
                yields += 1
                try c.execute("ROLLBACK TO SAVEPOINT tripconv_resolve", doing: "cannot try again")
                try waitForHolders(holder.map { [$0] })
            } catch let error as TripError where c.lastFailureIsTransient {
                guard attempt < Self.maximumRetries else {
                    throw TripError(.busy, "\(name): gave up after \(attempt + 1) deadlocks or serialization failures with other loaders: \(error.message)",
                                    notes: ["nothing of this run was committed; run it again"])
                }
                attempt += 1
                retries += 1
                try c.execute("ROLLBACK TO SAVEPOINT tripconv_resolve", doing: "cannot try again")
                // 20 ms, 40 ms, … up to about 2.5 s, each with up to as much again at random.
                let base = 10_000 << min(attempt, 8)
                usleep(UInt32(base + Int.random(in: 0...base)))
            }
        }
    }

    /// Waits until the loaders `pids` names (nil: every other loader of this store holding names)
    /// have committed or rolled back: their lock taken and given back at once, nothing kept.
    private func waitForHolders(_ pids: [Int]?) throws {
        let c = connection
        var holders = pids ?? []
        if pids == nil {
            let r = try c.query("""
                SELECT l.pid FROM pg_locks l WHERE l.pid <> pg_backend_pid() AND \(Self.isHoldingLock("l"))
                """, doing: "cannot wait for the other loaders")
            holders = (0..<r.rowCount).map { Int(r.int64($0, 0)) }
        }
        for pid in holders {
            try c.execute("SELECT pg_advisory_lock_shared(\(Self.holdingKey), \(pid)); SELECT pg_advisory_unlock_shared(\(Self.holdingKey), \(pid))",
                          doing: "cannot wait for the other loaders")
        }
        // Loaders that waited for the same holder would begin again at the same moment and meet each
        // other's names half-way: a random pause lets one begin first. Inserting in name order, the
        // later one then meets the earlier one's names, never the reverse, and gives way alone.
        usleep(UInt32(Int.random(in: 20_000...250_000)))
    }

    private var stage: String { quoted(stageTable(layout.rootTable)) }
    private var rootColumns: [String] { layout.tables.rootColumns.map { quoted($0.name) } }

    private func resolve(yielding: Bool, watcher: PGWatcher?) throws {
        guard let unique = layout.uniqueColumn else { return }
        let c = connection, name = quoted(unique.name), root = quoted(layout.rootTable)
        let columns = rootColumns.joined(separator: ", ")
        try c.execute("""
            CREATE TEMP TABLE tripconv_conflicts ("stage_id" bigint PRIMARY KEY, "stored_id" bigint NOT NULL, "round" integer NOT NULL) ON COMMIT DROP;
            CREATE TEMP TABLE tripconv_waiting ("id" bigint PRIMARY KEY) ON COMMIT DROP;
            CREATE TEMP TABLE tripconv_round ("id" bigint PRIMARY KEY) ON COMMIT DROP
            """, doing: "cannot stage the trips")
        try makeReplacementTables()
        // Temporary tables are never analyzed by autovacuum: without this the planner guesses.
        try c.execute("ANALYZE \(quoted(PGStaging.table))", doing: "cannot stage the trips")
        let staged = staging.trips
        let sessionLockTimeout = try c.query("SELECT current_setting('lock_timeout')").textIfAny ?? "0"
        var resolved = 0
        var round = 0
        while resolved < staged {
            round += 1
            guard round <= 1000 else { throw TripError.data("\(self.name): trips kept meeting names that vanished; nothing was written") }
            // The round's trips: every staged one at first, then the first of each name still waiting.
            let candidates: String, size: Int
            if round == 1 {
                candidates = "SELECT * FROM \(stage)"
                size = staged
            } else {
                // Two statements: `query` sends one (a prepared statement takes no more).
                try c.execute("TRUNCATE tripconv_round")
                size = try c.query("INSERT INTO tripconv_round SELECT DISTINCT ON (\(name)) s.\"id\" "
                                   + "FROM \(stage) s JOIN tripconv_waiting w ON w.\"id\" = s.\"id\" ORDER BY \(name), s.\"id\"").changedRows
                try c.execute("DELETE FROM tripconv_waiting w USING tripconv_round r WHERE w.\"id\" = r.\"id\"")
                candidates = "SELECT s.* FROM \(stage) s JOIN tripconv_round r ON r.\"id\" = s.\"id\""
            }
            if round == 1 {
                // From here to the commit this loader holds names; while it may give way, it waits
                // for none that another loader holds (see `resolveWithRetries`).
                try c.execute("SELECT pg_advisory_xact_lock(\(Self.holdingKey), pg_backend_pid())", doing: "cannot lock the store")
                if yielding {
                    try c.execute("SET LOCAL lock_timeout = 100")
                    watcher?.begin()
                }
            }
            // The names stored already: locked in name order, one incoming trip per stored trip.
            let met = try c.query("""
                WITH candidates AS (\(candidates)),
                locked AS (
                  SELECT t."id" AS stored_id, k."id" AS stage_id FROM \(root) t JOIN candidates k ON k.\(name) = t.\(name)
                  ORDER BY t.\(name) FOR UPDATE OF t)
                INSERT INTO tripconv_conflicts SELECT DISTINCT ON (stored_id) stage_id, stored_id, \(round) FROM locked ORDER BY stored_id, stage_id
                """, doing: "cannot lock the stored trips").changedRows
            // The rest, in name order: a name another loader has just inserted waits for its commit.
            let inserted = try c.query("""
                WITH candidates AS (\(candidates))
                INSERT INTO \(root) ("id", \(columns)) SELECT "id", \(columns) FROM candidates s
                WHERE NOT EXISTS (SELECT 1 FROM tripconv_conflicts k WHERE k."stage_id" = s."id")
                ORDER BY \(name), "id" ON CONFLICT (\(name)) DO NOTHING
                """, doing: "cannot insert the trips").changedRows
            if round == 1, yielding {
                watcher?.end()
                try c.execute("SET LOCAL lock_timeout = \(PGStoreVersion.literal(sessionLockTimeout))")
            }
            // Those neither inserted nor met (a name given twice, or one another loader committed
            // meanwhile) wait for the next round.
            let skipped = inserted + met < size
            if skipped {
                try c.execute("""
                    WITH candidates AS (\(candidates))
                    INSERT INTO tripconv_waiting SELECT s."id" FROM candidates s
                    WHERE NOT EXISTS (SELECT 1 FROM tripconv_conflicts k WHERE k."stage_id" = s."id")
                    AND NOT EXISTS (SELECT 1 FROM \(root) t WHERE t."id" = s."id")
                    """, doing: "cannot insert the trips")
            }
            if round == 1 {
                // The related rows went in with their batches: those of the trips not inserted (met,
                // or waiting) move to the staging tables, for the policy.
                try c.execute("CREATE TEMP TABLE tripconv_held (\"id\" bigint PRIMARY KEY) ON COMMIT DROP")
                let held = try c.query("INSERT INTO tripconv_held SELECT \"stage_id\" FROM tripconv_conflicts UNION SELECT \"id\" FROM tripconv_waiting").changedRows
                if held > 0 {
                    try c.execute("ANALYZE tripconv_held")
                    try staging.holdChildren(c, held: "tripconv_held") { stageTable($0.name) }
                }
            } else {
                try insertChildren(round: round, skipped: skipped)
            }
            resolved += inserted + met
            if met > 0 { try meetPolicy(round: round) }
        }
        try recordLedger()
    }

    /// A later round's related rows, from the staging tables: those of the round's trips inserted.
    private func insertChildren(round: Int, skipped: Bool) throws {
        let c = connection
        for child in layout.children {
            let names = childColumns(child).joined(separator: ", "), key = quoted(layout.foreignKey)
            var filter = "NOT EXISTS (SELECT 1 FROM tripconv_conflicts k WHERE k.\"stage_id\" = sc.\(key))"
            if skipped { filter += " AND NOT EXISTS (SELECT 1 FROM tripconv_waiting w WHERE w.\"id\" = sc.\(key))" }
            filter += " AND EXISTS (SELECT 1 FROM tripconv_round r WHERE r.\"id\" = sc.\(key))"
            try c.execute("INSERT INTO \(quoted(child.name)) (\(names)) SELECT \(names) FROM \(quoted(stageTable(child.name))) sc WHERE \(filter)",
                          doing: "cannot insert the trips")
        }
    }

    /// The columns of a related table as loaded: the trip's key, the position of a list, the attributes.
    func childColumns(_ child: StoreLayout.ChildTable) -> [String] { layout.childColumns(child).map(quoted) }

    private func makeReplacementTables() throws {
        let c = connection
        try c.execute("CREATE TEMP TABLE tripconv_replacement (LIKE \(quoted(layout.rootTable))) ON COMMIT DROP", doing: "cannot stage the trips")
        for child in layout.children {
            try c.execute("CREATE TEMP TABLE \(quoted("tripconv_replacement_" + child.name)) AS SELECT \(childColumns(child).joined(separator: ", ")) "
                          + "FROM \(quoted(child.name)) WITH NO DATA", doing: "cannot stage the trips")
        }
    }

    /// The policy, for the incoming trips of this round whose names the store held.
    private func meetPolicy(round: Int) throws {
        let c = connection
        let resolver = DuplicateResolver(policy: options.policy)
        switch resolver.outcome {
        case .keepKept:
            return
        case .refuse:
            let unique = quoted(layout.uniqueColumn!.name)
            let r = try c.query("SELECT s.\(unique) FROM tripconv_conflicts k JOIN \(stage) s ON s.\"id\" = k.\"stage_id\" ORDER BY k.\"stage_id\"")
            let shown = (0..<min(r.rowCount, DuplicateResolver.namesShown)).map { r.text($0, 0) }
            throw resolver.storeRefusal(place: name, attribute: layout.uniqueColumn!.name, names: shown, nameCount: r.rowCount, incomingCount: nil)
        case .takeIncoming:
            let columns = rootColumns.joined(separator: ", ")
            try c.execute("INSERT INTO tripconv_replacement (\"id\", \(columns)) SELECT k.\"stored_id\", \(rootColumns.map { "s." + $0 }.joined(separator: ", ")) "
                          + "FROM tripconv_conflicts k JOIN \(stage) s ON s.\"id\" = k.\"stage_id\" WHERE k.\"round\" = \(round)")
            for child in layout.children {
                let names = childColumns(child)
                try c.execute("INSERT INTO \(quoted("tripconv_replacement_" + child.name)) SELECT k.\"stored_id\", "
                              + names.dropFirst().map { "sc." + $0 }.joined(separator: ", ")
                              + " FROM tripconv_conflicts k JOIN \(quoted(stageTable(child.name))) sc ON sc.\(quoted(layout.foreignKey)) = k.\"stage_id\" "
                              + "WHERE k.\"round\" = \(round)")
            }
        case .mergeIncomingIntoKept:
            try mergeConflicts(round: round)
        }
        try replaceStoredTrips()
    }

    /// Puts the rows of the replacement tables in place of the stored trips they name: the trip's
    /// values updated under its id, its related rows deleted and inserted anew.
    private func replaceStoredTrips() throws {
        let c = connection, doing = "cannot replace the stored trips"
        let sets = rootColumns.map { "\($0) = r.\($0)" }.joined(separator: ", ")
        try c.execute("UPDATE \(quoted(layout.rootTable)) t SET \(sets) FROM tripconv_replacement r WHERE t.\"id\" = r.\"id\"", doing: doing)
        for child in layout.children {
            let key = quoted(layout.foreignKey), names = childColumns(child).joined(separator: ", ")
            try c.execute("DELETE FROM \(quoted(child.name)) WHERE \(key) IN (SELECT \"id\" FROM tripconv_replacement)", doing: doing)
            try c.execute("INSERT INTO \(quoted(child.name)) (\(names)) SELECT \(names) FROM \(quoted("tripconv_replacement_" + child.name))", doing: doing)
            try c.execute("TRUNCATE \(quoted("tripconv_replacement_" + child.name))")
        }
        try c.execute("TRUNCATE tripconv_replacement")
    }

    /// Merges each incoming trip of the round into the stored trip of its name, a chunk at a time,
    /// and stages the results as replacements.
    private func mergeConflicts(round: Int) throws {
        let c = connection
        let chunk = 1000
        var after: Int64 = -1
        let loader = PGTripLoader(layout: layout, place: name)
        // The staged trips are looked up by id, a chunk at a time: an index, once.
        try c.execute("CREATE INDEX IF NOT EXISTS tripconv_stage_id ON \(quoted(PGStaging.table)) (\"id\")", doing: "cannot stage the trips")
        for child in layout.children {
            try c.execute("CREATE INDEX IF NOT EXISTS \(quoted(stageTable(child.name) + "_key")) ON \(quoted(stageTable(child.name))) "
                          + "(\(quoted(layout.foreignKey)))", doing: "cannot stage the trips")
        }
        while true {
            let r = try c.query("SELECT \"stage_id\", \"stored_id\" FROM tripconv_conflicts WHERE \"round\" = $1 AND \"stage_id\" > $2 "
                                + "ORDER BY \"stage_id\" LIMIT \(chunk)", [String(round), String(after)])
            guard r.rowCount > 0 else { return }
            let pairs = (0..<r.rowCount).map { (stage: r.int64($0, 0), stored: r.int64($0, 1)) }
            after = pairs.last!.stage
            let stored = try loader.load(c, ids: pairs.map(\.stored), root: layout.rootTable, children: { $0.name })
            let incoming = try loader.load(c, ids: pairs.map(\.stage), root: stageTable(layout.rootTable), children: { self.stageTable($0.name) })
            var batch = PGCopyBatch(layout)
            for pair in pairs {
                guard let old = stored[pair.stored], let new = incoming[pair.stage] else {
                    throw TripError.data("\(name): the trip with id \(pair.stored) vanished while being merged")
                }
                batch.append(DuplicateResolver.merge(old, with: new, entity: options.schema.rootEntity), id: pair.stored)
            }
            try batch.send(c, tripsTable: "tripconv_replacement") { "tripconv_replacement_" + $0.name }
        }
    }

    /// What the policy did with each incoming trip whose name the store held, in the order the
    /// trips came, read a batch at a time into the ledger.
    private func recordLedger() throws {
        let c = connection
        let unique = layout.uniqueColumn!
        let resolver = DuplicateResolver(policy: options.policy)
        // A cursor is planned for its first rows (a nested loop over the staged trips): plan it whole.
        try c.execute("SET LOCAL cursor_tuple_fraction = 1")
        try c.execute("""
            DECLARE tripconv_ledger NO SCROLL CURSOR FOR
            SELECT k."stored_id", s.\(quoted(unique.name)), s."origin_source", s."origin_record", s."origin_line", s."origin_column",
                   own."id" IS NOT NULL
            FROM tripconv_conflicts k JOIN \(stage) s ON s."id" = k."stage_id"
            LEFT JOIN (SELECT "id" FROM \(stage)) own ON own."id" = k."stored_id"
            ORDER BY k."stage_id"
            """)
        while true {
            let r = try c.query("FETCH 10000 FROM tripconv_ledger")
            guard r.rowCount > 0 else { break }
            for row in 0..<r.rowCount {
                let storedID = r.int64(row, 0)
                let source = Int(r.int64(row, 2))
                let origin = RecordOrigin(source: source < staging.sources.count ? staging.sources[source] : name, record: Int(r.int64(row, 3)),
                                          line: r.isNull(row, 4) ? nil : Int(r.int64(row, 4)),
                                          column: r.isNull(row, 5) ? nil : Int(r.int64(row, 5)))
                let isOwn = r.text(row, 6) == "t"
                let decision = resolver.resolve(DuplicateResolver.Key(attribute: unique.name, value: r.text(row, 1)),
                                                kept: .stored(rowID: storedID, writtenThisRun: isOwn), incoming: origin)
                if decision.replacesStoredTrip { replacedStoredTrips += 1 }
                if let record = decision.setAside { try setAside.append(record) }
            }
        }
        try c.execute("CLOSE tripconv_ledger")
    }
}

/// Loads trips by id from a store's tables (or staging tables of the same columns) as objects of
/// the layout's version: for merging a few at a time, not for reading a store (`PGRecordReader`).
struct PGTripLoader {
    let layout: PGLayout
    let place: String

    func load(_ c: PGConnection, ids: [Int64], root: String, children table: (StoreLayout.ChildTable) -> String) throws -> [Int64: ModelObject] {
        let array = "{" + ids.map(String.init).joined(separator: ",") + "}"
        let rootColumns = layout.tables.rootColumns
        let entity = layout.tables.root
        let selected = rootColumns.map { PGLayout.selected($0.name, $0.attribute.type) }.joined(separator: ", ")
        let r = try c.query("SELECT \"id\", \(selected) FROM \(quoted(root)) WHERE \"id\" = ANY($1::bigint[])", [array])
        var out: [Int64: ModelObject] = [:]
        for row in 0..<r.rowCount {
            var attributes = entity.attributes.map { $0.defaultValue ?? .null }
            for (i, column) in rootColumns.enumerated() {
                attributes[column.slot] = r.isNull(row, i + 1) ? .null
                    : try PGValues.decode(r.text(row, i + 1), column.attribute.type, column: column.name, place: place)
            }
            let relationships: [Related] = entity.relationships.map { $0.isToMany ? .toMany([]) : .toOne(nil) }
            out[r.int64(row, 0)] = ModelObject(attributes: attributes, relationships: relationships)
        }
        for child in layout.children {
            let key = quoted(layout.foreignKey)
            let selected = child.columns.map { PGLayout.selected($0.name, $0.attribute.type) }.joined(separator: ", ")
            let order = child.isToMany ? ", \(quoted(StoreLayout.positionColumn))" : ""
            let rows = try c.query("SELECT \(key), \(selected) FROM \(quoted(table(child))) WHERE \(key) = ANY($1::bigint[]) ORDER BY \(key)\(order)", [array])
            for row in 0..<rows.rowCount {
                let trip = rows.int64(row, 0)
                guard var object = out[trip] else { continue }
                var attributes = child.entity.attributes.map { $0.defaultValue ?? .null }
                for (i, column) in child.columns.enumerated() {
                    attributes[column.slot] = rows.isNull(row, i + 1) ? .null
                        : try PGValues.decode(rows.text(row, i + 1), column.attribute.type, column: column.name, place: place)
                }
                let o = ModelObject(attributes: attributes)
                switch object.relationships[child.slot] {
                case .toMany(let list): object.relationships[child.slot] = .toMany(list + [o])
                case .toOne: object.relationships[child.slot] = .toOne(o)
                }
                out[trip] = object
            }
        }
        return out
    }
}
