import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Migrating a PostgreSQL store in place (issue 16) gives what migrating a SQLite store holding
/// the same trips gives: the same trips, the same counts, under every policy; history per stage;
/// a dry run changes nothing.
@Suite("PostgreSQL migration", .needsPostgres)
struct PGMigrationTests {
    /// 60 trips of 1.0.0 whose names come from 20, so the 1.0.0 -> 2.0.0 stage has work to do.
    static func legacyTrips(seed: UInt64) -> [ModelObject] {
        // JSON's hard text but NUL, which PostgreSQL's text cannot hold (the writer sets such trips aside).
        let text = TripText(pieces: TripText.json.pieces.filter { !$0.unicodeScalars.contains("\u{0}") }, allows: { $0.value != 0 })
        var g = ArbitraryTrips(seed: seed, text: text, schema: TripSchemaV1.self)
        var names = SplitMix64(seed: seed ^ 0x5eed)
        return g.trips(60).map { trip in
            var t = trip
            t.attributes[0] = .string("trip \(names.int(0...19))")
            return t
        }
    }

    static func withSchema(_ body: (String, String) throws -> Void) throws {
        let server = try PGConnectionTests.server()
        let schema = "t_mig_\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? PGConnection(server).execute("DROP SCHEMA IF EXISTS \(quoted(schema)) CASCADE") }
        try body(server, schema)
    }

    /// The trips of a PostgreSQL store at `schema`'s version, in id order.
    static func pgTrips(_ server: String, _ pgSchema: String, _ schema: any VersionedSchema.Type) throws -> [ModelObject] {
        let c = try PGConnection(server, schema: pgSchema)
        var out: [ModelObject] = []
        try PGMigration.forEachTrip(c, PGLayout(schema)) { _, trip in out.append(trip) }
        return out
    }

    static func sqliteTrips(_ path: String) throws -> [ModelObject] {
        let reader = try SQLiteRecordReader(path: path)
        var out: [ModelObject] = []
        while let item = try reader.next() {
            if case .trip(let record) = item { out.append(record.object) }
        }
        return out
    }

    @Test("PostgreSQL and SQLite stores migrate alike under every policy", arguments: [DeduplicationPolicy.merge, .first, .last])
    func sameAsSQLite(policy: DeduplicationPolicy) throws {
        try Self.withSchema { server, pgSchema in
            let trips = Self.legacyTrips(seed: 16)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pgmig-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let path = dir + "/v1.sqlite"
            var options = WriteOptions(schema: TripSchemaV1.self)
            let sqlite = try SQLiteRecordWriter(path: path, options: options)
            for t in trips { try sqlite.write(t) }
            try sqlite.finish()
            options.pgSchema = pgSchema
            let pg = try PGRecordWriter(address: server, options: options)
            for t in trips { try pg.write(t) }
            try pg.finish()
            #expect(try Self.pgTrips(server, pgSchema, TripSchemaV1.self) == Self.sqliteTrips(path))

            var pgLedger: [SetAsideRecord] = []
            let pgReport = try #require(try PGStoreMigration.migrate(address: server, schema: pgSchema, to: TripSchemaV3.self,
                                                                     policy: policy) { pgLedger.append($0) })
            let store = try SQLiteStore.open(path: path, readOnly: false)
            let sqliteReport = try #require(try store.migrate(to: TripSchemaV3.self, policy: policy))
            #expect(pgReport.tripsBefore == 60 && pgReport.tripsAfter == sqliteReport.tripsAfter)
            #expect(pgReport.merged == sqliteReport.merged && pgReport.dropped == sqliteReport.dropped)
            #expect(pgLedger.count == pgReport.merged + pgReport.dropped)
            #expect(pgReport.stages.map(\.stages) == sqliteReport.stages.map(\.stages))
            #expect(pgReport.stages.map(\.tripsAfter) == sqliteReport.stages.map(\.tripsAfter))
            let migrated = try Self.pgTrips(server, pgSchema, TripSchemaV3.self)
            #expect(migrated == (try Self.sqliteTrips(path)))
            #expect(Set(migrated.map(\.attributes[0])).count == migrated.count)

            // What the store says of itself afterwards: the version, the history, the constraints.
            let c = try PGConnection(server, schema: pgSchema)
            #expect(try PGStoreVersion.of(c) == SchemaVersion(3, 0, 0))
            #expect(try c.column("SELECT to_version FROM tripconv_migrations ORDER BY id") == ["2.0.0", "3.0.0"])
            #expect(try c.column("SELECT confdeltype::text FROM pg_constraint WHERE contype = 'f' AND connamespace = "
                                 + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) ORDER BY conname") == ["c", "c"])
            #expect(try c.column("SELECT count(*) FROM bucket_list_items i WHERE NOT EXISTS (SELECT 1 FROM trips t WHERE t.id = i.trip_id)") == ["0"])
            // New trips get ids after the kept ones.
            var more = WriteOptions(schema: TripSchemaV3.self)
            more.pgSchema = pgSchema
            let w = try PGRecordWriter(address: server, options: more)
            try w.write(ModelObject(attributes: [.string("after the migration"), .string("x"), .date(Timestamp(milliseconds: 0)),
                                                 .date(Timestamp(milliseconds: 1)), .int(0)],
                                    relationships: [.toMany([]), .toOne(nil)]))
            try w.finish()
            #expect(try c.column("SELECT count(*) FROM trips") == [String(migrated.count + 1)])
        }
    }

    @Test("a dry run changes nothing; a store at the target is left alone; a newer one is refused")
    func dryRunAndRefusals() throws {
        try Self.withSchema { server, pgSchema in
            var options = WriteOptions(schema: TripSchemaV1.self)
            options.pgSchema = pgSchema
            let pg = try PGRecordWriter(address: server, options: options)
            for t in Self.legacyTrips(seed: 7) { try pg.write(t) }
            try pg.finish()
            let before = try Self.pgTrips(server, pgSchema, TripSchemaV1.self)
            let preview = try #require(try PGStoreMigration.migrate(address: server, schema: pgSchema, to: TripSchemaV3.self, dryRun: true))
            #expect(preview.tripsBefore == 60 && preview.merged > 0)
            #expect(try Self.pgTrips(server, pgSchema, TripSchemaV1.self) == before)
            #expect(try PGStoreMigration.migrate(address: server, schema: pgSchema, to: TripSchemaV1.self) == nil)
            _ = try PGStoreMigration.migrate(address: server, schema: pgSchema, to: TripSchemaV3.self)
            let c = try PGConnection(server, schema: pgSchema)
            try c.execute("UPDATE tripconv_metadata SET value = '9.0.0' WHERE key = 'schemaVersion'")
            #expect(throws: TripError.self) { try PGStoreMigration.migrate(address: server, schema: pgSchema, to: TripSchemaV3.self) }
        }
    }

    @Test("a migration waits for a load under way, up to the busy timeout: then exit 75")
    func waitsForLoads() throws {
        try Self.withSchema { server, pgSchema in
            var options = WriteOptions(schema: TripSchemaV1.self)
            options.pgSchema = pgSchema
            let first = try PGRecordWriter(address: server, options: options)
            for t in Self.legacyTrips(seed: 3) { try first.write(t) }
            try first.finish()
            // A load under way holds the store's shared lock until it commits.
            let loading = try PGRecordWriter(address: server, options: options)
            try loading.write(Self.legacyTrips(seed: 4)[0])
            do {
                _ = try PGStoreMigration.migrate(address: server, schema: pgSchema, to: TripSchemaV3.self, busyTimeoutMilliseconds: 300)
                Issue.record("migrated under a load")
            } catch let e as TripError {
                #expect(e.kind == .busy && e.kind.rawValue == 75, "\(e.kind): \(e.message)")
            }
            try loading.finish()
            let report = try #require(try PGStoreMigration.migrate(address: server, schema: pgSchema, to: TripSchemaV3.self,
                                                                   busyTimeoutMilliseconds: 5000))
            #expect(report.tripsBefore == 61)
        }
    }
}
