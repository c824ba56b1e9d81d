#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// Migrating a store in place, and recording its version: run inside the caller's transaction, so a
/// failure anywhere leaves the store as it was.
enum SQLiteMigration {
    /// Whether a store at its version must be migrated to take trips at `target`: false when it is
    /// there already; a usage error when it is newer, or older without `migrate`.
    static func isNeeded(store: SQLiteStoreStructure.Detected, target: any VersionedSchema.Type, path: String,
                         migrate: Bool) throws -> Bool {
        let version = store.version, wanted = target.versionIdentifier
        if version == wanted { return false }
        if version > wanted {
            throw TripError.usage("\(path): store is at \(version), target is \(wanted); a store is never migrated down",
                                  notes: ["convert the store into a new file to get a \(wanted) copy"])
        }
        guard migrate else {
            throw TripError.usage("\(path): store is at \(version), target is \(wanted); pass --migrate to migrate it in place")
        }
        return true
    }

    /// Reads every trip, runs the plan's stages on them (1.0.0 → 2.0.0 deduplicates by name under the
    /// policy), rebuilds the tables at the target version keeping each trip's row id (a merged trip
    /// keeps the id of its first row), and records the migration in the history table.
    static func run(_ connection: SQLiteConnection, store: SQLiteStoreStructure.Detected, to target: any VersionedSchema.Type,
                    policy: DeduplicationPolicy, toolVersion: String) throws -> SQLiteMigrationRecord {
        let path = connection.path
        let context = MigrationContext(schema: store.schema, policy: policy)
        var ids: [Int64] = []
        do {
            let cursor = try SQLiteTripCursor(connection, store: store, byID: false)
            var builder = RecordBuilder(source: path, format: Format.sqlite.rawValue,
                                        options: ReadOptions(sourceVersion: store.version))
            while let id = try cursor.next(into: &builder, record: ids.count + 1) {
                ids.append(id)
                switch builder.endRecord() {
                case .trip(let record):
                    context.insert(record.object, origin: record.origin)
                case .rejected(let rejection):
                    throw TripError.data("\(rejection.origin) (row id \(id)): \(rejection.reason)",
                                         notes: ["the store cannot be migrated until this trip is fixed"])
                }
            }
        }
        let steps: [Migrator<TripMigrationPlan>.Step]
        do {
            steps = try Migrator(TripMigrationPlan.self).migrate(context, to: target.versionIdentifier)
        } catch let error as TripError {
            throw TripError(error.kind, "\(path): cannot migrate the store: \(error.message)", notes: error.notes)
        }

        for sql in SQLiteLayout(store.schema).dropStatements { try connection.execute(sql) }
        let layout = SQLiteLayout(target)
        for sql in layout.createStatements { try connection.execute(sql) }
        let rows = try SQLiteRowWriter(connection, layout: layout)
        for (object, origin) in zip(context.objects, context.origins) {
            guard try rows.insert(object, id: ids[origin.record - 1]) != nil else {
                throw TripError.data("\(path): cannot migrate the store: the unique index refused trip \(origin.record) after deduplication")
            }
        }
        try rows.flush()
        try writeVersion(connection, target.versionIdentifier, toolVersion: toolVersion, isNew: false)

        let record = SQLiteMigrationRecord(from: store.version, to: target.versionIdentifier, appliedAt: now(),
                                           toolVersion: toolVersion, stages: steps.map(\.description).joined(separator: ", "),
                                           tripsBefore: ids.count, tripsAfter: context.objects.count)
        let insert = try connection.prepare("""
            INSERT INTO \(quoted(SQLiteLayout.migrationsTable))
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
        return record
    }

    /// Creates the metadata tables where missing and records the version: `schemaVersion` in the
    /// metadata table and the major number in `PRAGMA user_version`.
    static func writeVersion(_ connection: SQLiteConnection, _ version: SchemaVersion, toolVersion: String, isNew: Bool) throws {
        for sql in SQLiteLayout.metadataStatements { try connection.execute(sql) }
        let set = try connection.prepare("INSERT OR REPLACE INTO \(quoted(SQLiteLayout.metadataTable)) (\"key\", \"value\") VALUES (?1, ?2)",
                                         doing: "cannot record the store's version")
        try set.bind(1, SQLiteLayout.versionKey)
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

    /// The time now, as ISO 8601 text to the second.
    static func now() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(milliseconds: Int64(ts.tv_sec) * 1000).iso8601
    }
}
