import TripKit

// A dry run of a migration in place: the stages run on the store's trips held under the budget,
// as `run` holds them, and nothing is written. The names a stage makes unique, and that several
// trips share, are found by SQLite itself (a GROUP BY that sorts on disk past its cache), one name
// at a time, and compared byte for byte, as the unique index and the deduplication compare them.
extension SQLiteMigration {
    /// What `run` would do. `summary` gets the stages and counts first; then `duplicate` each name
    /// several trips share, in the order of its first trip, and `setAside` each trip that would be
    /// merged or dropped. Returns the summary; its `duplicates` and `ledger` stay empty.
    static func preview(_ connection: SQLiteConnection, store: DetectedStore, to target: any VersionedSchema.Type,
                        policy: DeduplicationPolicy, budget: SpillBudget,
                        summary: (StoreMigrationPreview) throws -> Void,
                        duplicate: (StoreMigrationPreview.DuplicateName) throws -> Void,
                        setAside: (SetAsideRecord) throws -> Void) throws -> StoreMigrationPreview {
        let path = connection.path
        let steps = try Migrator(TripMigrationPlan.self).path(from: store.version, to: target.versionIdentifier)
        guard steps.allSatisfy({ !$0.isReversed }) else {
            throw TripError.usage("\(path): store is at \(store.version), target is \(target.versionIdentifier); a store is never migrated down")
        }
        let context = MigrationContext(schema: store.schema, policy: policy, holding: SpillingTrips(budget: budget))
        try forEachTrip(connection, store: store) { _, record in try context.insert(record.object, origin: record.origin) }
        var preview = StoreMigrationPreview(from: store.version, to: target.versionIdentifier, policy: policy, stages: [],
                                             duplicates: [], ledger: [], failure: nil,
                                             tripsBefore: context.count, tripsAfter: context.count)
        var becomingUnique: [String] = []
        let migrator = Migrator(TripMigrationPlan.self)
        for step in steps {
            var changes: [String] = []
            if preview.failure == nil {
                var hooks: [String] = []
                if case .custom(_, _, let willMigrate, let didMigrate) = step.stage {
                    if willMigrate != nil {
                        hooks.append("willMigrate")
                        becomingUnique += try attributesBecomingUnique(step, store: store, path: path)
                    }
                    if didMigrate != nil { hooks.append("didMigrate") }
                }
                let before = context.count
                do {
                    // The stage as `convert` runs it on an input: the custom code and the mapping.
                    try migrator.migrate(context, to: step.to.versionIdentifier)
                    if !hooks.isEmpty {
                        changes.append("run \(hooks.joined(separator: " and ")): \(before) trip\(before == 1 ? "" : "s") -> \(context.count)")
                    }
                } catch let error as TripError {
                    preview.failure = TripError(error.kind, "\(path): cannot migrate the store: \(error.message)", notes: error.notes)
                    changes.append("run \(hooks.joined(separator: " and ")): would fail")
                }
            }
            changes += try SQLiteStructuralStep(from: step.from, to: step.to).descriptions
            preview.stages.append(.init(description: step.description, changes: changes))
        }
        if preview.failure == nil { preview.tripsAfter = context.count }
        try context.trips.forEachSetAside { record in
            if record.kind == .merged { preview.merged += 1 } else if record.kind == .dropped { preview.dropped += 1 }
        }
        for attribute in becomingUnique { preview.duplicateCount += try sharedValueCount(of: attribute, connection, store: store) }
        try summary(preview)
        for attribute in becomingUnique { try sharedValues(of: attribute, connection, store: store, duplicate) }
        try context.trips.forEachSetAside(setAside)
        return preview
    }

    /// The attributes of the store's root that the step makes unique. The values are looked for in
    /// the store as it is, so the step must start from the store's version (the plan's first stage
    /// does: 1.0.0 -> 2.0.0).
    private static func attributesBecomingUnique(_ step: Migrator<TripMigrationPlan>.Step, store: DetectedStore,
                                                 path: String) throws -> [String] {
        let mapping = try LightweightMapping(from: step.from, to: step.to)
        let root = step.from.rootEntity
        let rootMapping = mapping.entities.first { $0.entity == root.name }
        var out: [String] = []
        for change in mapping.changes {
            guard case .uniquenessChanged(let entity, let attribute, true) = change, entity == root.name,
                  let targetSlot = TripMigrationPlan.schema(for: mapping.to)?.rootEntity.attributeIndex(attribute),
                  case .copy(let slot)? = rootMapping?.attributes[targetSlot] else { continue }
            guard step.from.versionIdentifier == store.version else {
                throw TripError.data("\(path): stage \(step.description) makes \(attribute) unique after an earlier stage; "
                                     + "a dry run lists shared values only for the store's own version")
            }
            out.append(root.attributes[slot].name)
        }
        return out
    }

    /// How many values of `attribute` several trips of the store share.
    private static func sharedValueCount(of attribute: String, _ connection: SQLiteConnection,
                                         store: DetectedStore) throws -> Int {
        let table = quoted(StoreLayout(store.schema).rootTable), column = quoted(attribute)
        let sql = "SELECT count(*) FROM (SELECT 1 FROM \(table) WHERE \(column) IS NOT NULL GROUP BY \(column) HAVING count(*) > 1)"
        return Int(try connection.integer(sql) ?? 0)
    }

    /// Calls `body` with each value of `attribute` that several trips of the store share, in the
    /// order of its first trip, with the fields on which those trips differ.
    private static func sharedValues(of attribute: String, _ connection: SQLiteConnection, store: DetectedStore,
                                     _ body: (StoreMigrationPreview.DuplicateName) throws -> Void) throws {
        let path = connection.path, root = store.schema.rootEntity
        guard let slot = root.attributeIndex(attribute) else { return }
        let layout = StoreLayout(store.schema)
        let id = quoted(StoreLayout.idColumn), table = quoted(layout.rootTable), column = quoted(attribute)
        // Two sorts, each on disk past SQLite's cache: by the value (a window over each value's
        // rows), then by each group's first row. (A join of the table with its own GROUP BY has
        // no index to use and SQLite runs it as a nested loop: quadratic, hours at 10M trips.)
        let shared = try connection.prepare("""
            SELECT \(id), first FROM (
                SELECT \(id), min(\(id)) OVER byValue AS first, count(*) OVER byValue AS n FROM \(table)
                WHERE \(column) IS NOT NULL WINDOW byValue AS (PARTITION BY \(column)))
            WHERE n > 1 ORDER BY first, \(id)
            """)
        let loader = try StoreTripCursor(connection, try store.tripQueries(path, byID: true))
        var builder = RecordBuilder(source: path, format: Format.sqlite.rawValue, options: ReadOptions(sourceVersion: store.version))
        var first: Int64?
        var members: [(id: Int64, trip: ModelObject)] = []
        func report() throws {
            guard let key = members.first?.trip.attributes[slot] else { return }
            try body(.init(attribute: attribute, value: key.stringValue ?? key.literal, rowIDs: members.map(\.id),
                           conflicts: StoreMigration.conflicts(members.map(\.trip), entity: root, except: slot, schema: store.schema)))
            members.removeAll(keepingCapacity: true)
        }
        while try shared.step() {
            let rowID = shared.int64(0), groupFirst = shared.int64(1)
            if groupFirst != first {
                try report()
                first = groupFirst
            }
            try loader.rewind(key: rowID)
            guard let (_, record) = try loader.nextTrip(into: &builder, record: 0, place: path) else { continue }
            members.append((rowID, record.object))
        }
        try report()
    }
}
