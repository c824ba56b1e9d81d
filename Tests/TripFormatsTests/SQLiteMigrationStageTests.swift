import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

// Migrating a store in place, stage by stage: what each stage does to the tables, that rows and
// ids survive, that every failure leaves the store as it was, backups, locks and WAL stores.

/// Helpers of the migration suites: stores at an old version, their contents as the sqlite3 tool
/// prints them, and a migration through `SQLiteStore`.
enum SQLiteMigrationTesting {
    typealias F = SQLiteFixtures

    /// Trips at 1.0.0 where 'Alpha' occurs three times, 'Beta' once and 'Gamma' twice.
    static let v1Trips: [ModelObject] = [
        F.trip("Alpha", destination: "Rome", items: [F.item("Colosseum", details: "old"), F.item("Gelato")],
               accommodation: F.accommodation("Via 1", "Hotel A"), schema: TripSchemaV1.self),
        F.trip("Beta", destination: "Oslo", items: [F.item("Opera house", inPlan: true)],
               accommodation: F.accommodation("Karl Johans gate 1", "Hotel B"), schema: TripSchemaV1.self),
        F.trip("Alpha", destination: "Roma", end: "2024-05-09T18:00:00Z", items: [F.item("Colosseum", details: "new", reservation: true)],
               schema: TripSchemaV1.self),
        F.trip("Gamma", destination: "Quito", schema: TripSchemaV1.self),
        F.trip("Alpha", destination: "Roma, Italia", items: [F.item("Pantheon")],
               accommodation: F.accommodation("Via 2", "Hotel A2"), schema: TripSchemaV1.self),
        F.trip("Gamma", destination: "Quito, Ecuador", items: [F.item("Mitad del Mundo")], schema: TripSchemaV1.self),
    ]

    /// Writes trips into a new store at a version.
    static func makeStore(_ trips: [ModelObject], at path: String, schema: any VersionedSchema.Type) throws {
        try SQLiteTesting.writeStore(trips, to: path, schema: schema, policy: .first)
    }

    /// The rows of a table as the sqlite3 tool prints them, in id order.
    static func rows(_ path: String, _ table: String, _ columns: String = "*") throws -> String {
        try SQLiteCLI.run(path, "SELECT \(columns) FROM \"\(table)\" ORDER BY id;")
    }

    /// Everything in the store, as text: to tell that a failed migration changed nothing.
    static func dump(_ path: String) throws -> String {
        try SQLiteCLI.run(path, ".dump")
    }

    /// Migrates through `SQLiteStore`, as `tripconv migrate` does.
    @discardableResult
    static func migrate(_ path: String, to schema: any VersionedSchema.Type = TripSchemaV3.self, policy: DeduplicationPolicy = .merge,
                        backup: String? = nil, toolVersion: String = "0.1.0") throws -> StoreMigrationReport? {
        let store = try SQLiteStore.open(path: path, readOnly: false)
        return try store.migrate(to: schema, policy: policy, toolVersion: toolVersion, backup: backup)
    }

    /// The trips `convert` makes of a store: read, through the plan, deduplicated, with its ledger.
    static func converted(_ path: String, policy: DeduplicationPolicy) throws -> (trips: [ModelObject], ledger: [SetAsideRecord]) {
        var trips: [ModelObject] = []
        var ledger: [SetAsideRecord] = []
        struct Collector: RecordWriter {
            let sink: (ModelObject) -> Void
            mutating func write(_ object: ModelObject) throws { sink(object) }
            mutating func finish() throws {}
        }
        var pipeline = Pipeline()
        pipeline.policy = policy
        _ = try pipeline.run([PipelineInput(name: path, open: { try SQLiteRecordReader(path: path) })],
                             into: { Collector(sink: { trips.append($0) }) }, setAside: { ledger.append($0) })
        return (trips, ledger)
    }
}

@Suite("SQLite migration stages in place", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
struct SQLiteMigrationStageTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures
    typealias M = SQLiteMigrationTesting

    @Test("1.0.0 -> 2.0.0 deduplicates in place and adds the unique index, leaving other trips' rows and ids alone")
    func deduplicationStage() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let betaItems = try SQLiteCLI.run(path, "SELECT * FROM bucket_list_items WHERE trip_id = 2 ORDER BY id;")
        let betaPlace = try SQLiteCLI.run(path, "SELECT * FROM living_accommodations WHERE trip_id = 2;")
        let report = try M.migrate(path, to: TripSchemaV2.self)
        #expect(report?.stages.map(\.stages) == ["1.0.0 -> 2.0.0 (custom)"])
        #expect(report.map { [$0.tripsBefore, $0.tripsAfter, $0.merged, $0.dropped] } == [6, 3, 3, 0])
        try SQLiteTesting.expectSoundStore(path)
        let store = try SQLiteStore.open(path: path)
        #expect(store.version == SchemaVersion(2, 0, 0))
        #expect(try store.uniqueIndexes(of: "trips").contains(["name"]))
        #expect(try M.rows(path, "trips", "id, name") == "1|Alpha\n2|Beta\n4|Gamma\n")
        // Beta was no duplicate: its rows are the very same rows, ids and all.
        #expect(try SQLiteCLI.run(path, "SELECT * FROM bucket_list_items WHERE trip_id = 2 ORDER BY id;") == betaItems)
        #expect(try SQLiteCLI.run(path, "SELECT * FROM living_accommodations WHERE trip_id = 2;") == betaPlace)
        // The merged Alpha: scalars of the last occurrence, items united by title, the latest accommodation.
        let alpha = try SQLiteTesting.readStore(path).trips[0]
        #expect(alpha == F.trip("Alpha", destination: "Roma, Italia",
                                items: [F.item("Colosseum", details: "new", reservation: true), F.item("Gelato"), F.item("Pantheon")],
                                accommodation: F.accommodation("Via 2", "Hotel A2"), schema: TripSchemaV2.self))
    }

    @Test("2.0.0 -> 3.0.0 rebuilds the tables keeping every row and every id, items and accommodations too")
    func rebuildStage() throws {
        let path = scratch.path("v2.sqlite")
        let v2 = TripSchemaV2.self
        try M.makeStore([F.trip("Alpha", items: [F.item("A1"), F.item("A2", details: "two")], accommodation: F.accommodation("Via 1", "Hotel"), schema: v2),
                         F.trip("Beta", start: "2024-01-01T00:00:00.125Z", items: [F.item("B1", reservation: true)], schema: v2),
                         F.trip("Gamma", accommodation: F.accommodation("Calle 9", "Casa"), schema: v2)], at: path, schema: v2)
        // Gaps in the ids, and an item the nullify rule left without a trip.
        try SQLiteCLI.run(path, """
            PRAGMA foreign_keys = ON;
            DELETE FROM bucket_list_items WHERE title = 'A1';
            INSERT INTO trips (id, name, destination, start_date, end_date) VALUES (40, 'Delta', 'Lima', '2024-02-01T00:00:00Z', '2024-02-02T00:00:00Z');
            INSERT INTO bucket_list_items (id, trip_id, position, title) VALUES (90, 40, 0, 'D1');
            DELETE FROM trips WHERE id = 40;
            """)
        let items = try M.rows(path, "bucket_list_items")
        let places = try M.rows(path, "living_accommodations")
        let trips = try M.rows(path, "trips")
        #expect(items.contains("90||0|D1"))

        let report = try M.migrate(path)
        #expect(report?.stages.map(\.stages) == ["2.0.0 -> 3.0.0 (lightweight)"])
        try SQLiteTesting.expectSoundStore(path)
        #expect(try M.rows(path, "bucket_list_items") == items)
        #expect(try M.rows(path, "living_accommodations") == places)
        #expect(try M.rows(path, "trips") == trips)
        let store = try SQLiteStore.open(path: path)
        #expect(try store.columnNames(of: "trips") == ["id", "name", "destination", "startDate", "endDate"])
        #expect(try store.foreignKeys(of: "bucket_list_items").map(\.onDelete) == ["CASCADE"])
        #expect(try store.foreignKeys(of: "living_accommodations").map(\.onDelete) == ["CASCADE"])
        #expect(try store.uniqueIndexes(of: "trips").contains(["name"]))
        // The derived DDL, exactly: the rebuilt tables are what a new 3.0.0 store has.
        let ddl = try SQLiteCLI.run(path, "SELECT sql FROM sqlite_master WHERE name IN ('trips', 'bucket_list_items', 'living_accommodations', 'trips_name_unique', 'bucket_list_items_trip_id') ORDER BY name;")
        let expected = SQLiteStore.createStatements(for: TripSchemaV3.self).sorted { a, b in
            func name(_ s: String) -> String { String(s.split(separator: "\"")[1]) }
            return name(a) < name(b)
        }
        #expect(ddl == expected.map { $0 + "\n" }.joined())
        // And deleting a trip now takes its rows with it.
        #expect(try SQLiteCLI.run(path, "PRAGMA foreign_keys = ON; DELETE FROM trips WHERE name = 'Alpha'; SELECT count(*) FROM bucket_list_items; SELECT count(*) FROM living_accommodations;")
                == "2\n1\n")
    }

    @Test("the rebuild keeps the indexes, triggers and views someone added")
    func keepsOwnSchema() throws {
        let path = scratch.path("own.sqlite")
        try M.makeStore([F.trip("Alpha", items: [F.item("A1")], schema: TripSchemaV2.self)], at: path, schema: TripSchemaV2.self)
        try SQLiteCLI.run(path, """
            CREATE INDEX "trips by destination" ON trips (destination);
            CREATE VIEW trip_names AS SELECT name FROM trips;
            CREATE TABLE audit (what TEXT);
            CREATE TRIGGER item_added AFTER INSERT ON bucket_list_items BEGIN INSERT INTO audit VALUES (NEW.title); END;
            """)
        try M.migrate(path)
        try SQLiteTesting.expectSoundStore(path)
        #expect(try SQLiteCLI.run(path, "SELECT type, name FROM sqlite_master WHERE name IN ('trips by destination', 'trip_names', 'item_added') ORDER BY type;")
                == "index|trips by destination\ntrigger|item_added\nview|trip_names\n")
        #expect(try SQLiteCLI.run(path, "INSERT INTO bucket_list_items (trip_id, position, title) VALUES (1, 1, 'A2'); SELECT * FROM audit; SELECT * FROM trip_names;") == "A2\nAlpha\n")
    }

    @Test("a view that names a renamed column stops the migration, and the store is left as it was")
    func viewStops() throws {
        let path = scratch.path("view.sqlite")
        try M.makeStore([F.trip("Alpha", schema: TripSchemaV2.self)], at: path, schema: TripSchemaV2.self)
        try SQLiteCLI.run(path, "CREATE VIEW starts AS SELECT start_date FROM trips;")
        let before = try M.dump(path)
        let error = SQLiteTesting.tripError { try M.migrate(path) }
        #expect(error?.kind == .data)
        #expect(error?.message == "\(path): cannot migrate the store: a view or trigger no longer fits the tables: error in view starts: no such column: start_date")
        #expect(try M.dump(path) == before)
    }

    @Test("a column the old version does not declare stops the rebuild rather than being lost")
    func unknownColumnStops() throws {
        let path = scratch.path("extra.sqlite")
        try M.makeStore([F.trip("Alpha", items: [F.item("A1")], schema: TripSchemaV2.self)], at: path, schema: TripSchemaV2.self)
        try SQLiteCLI.run(path, "ALTER TABLE bucket_list_items ADD COLUMN notes TEXT;")
        let before = try M.dump(path)
        let error = SQLiteTesting.tripError { try M.migrate(path) }
        #expect(error == TripError.data("\(path): cannot migrate the store: table bucket_list_items has a column 'notes' that 2.0.0 does not declare, and rebuilding the table would lose it",
                                        notes: ["remove the column, or copy its values elsewhere, then migrate"]))
        #expect(try M.dump(path) == before)
    }

    @Test("an item that names a trip that is not there stops the migration at the foreign-key check")
    func danglingReference() throws {
        let path = scratch.path("dangling.sqlite")
        try M.makeStore([F.trip("Alpha", schema: TripSchemaV2.self)], at: path, schema: TripSchemaV2.self)
        try SQLiteCLI.run(path, "PRAGMA foreign_keys = OFF; INSERT INTO bucket_list_items (trip_id, position, title) VALUES (77, 0, 'lost');")
        let before = try M.dump(path)
        let error = SQLiteTesting.tripError { try M.migrate(path) }
        #expect(error?.message == "\(path): cannot migrate the store: 1 bucket_list_items row refer to trips that are not there")
        #expect(try M.dump(path) == before)
    }

    @Test("each policy migrates the store's trips as convert migrates them, with the same ledger", arguments: [
        DeduplicationPolicy.merge, .last, .first,
    ])
    func sameAsConvert(policy: DeduplicationPolicy) throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let expected = try M.converted(path, policy: policy)
        let report = try M.migrate(path, policy: policy)
        try SQLiteTesting.expectSoundStore(path)
        #expect(try SQLiteTesting.readStore(path).trips == expected.trips)
        #expect(report?.ledger == expected.ledger)
        #expect(report?.tripsAfter == expected.trips.count)
    }

    @Test("under first, the trips that stay are not touched at all: their items keep their ids")
    func firstTouchesNothingKept() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let kept = try SQLiteCLI.run(path, "SELECT * FROM bucket_list_items WHERE trip_id IN (1, 2, 4) ORDER BY id;")
        try M.migrate(path, policy: .first)
        #expect(try SQLiteCLI.run(path, "SELECT * FROM bucket_list_items WHERE trip_id IN (1, 2, 4) ORDER BY id;") == kept)
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items WHERE trip_id NOT IN (SELECT id FROM trips);") == "0\n")
    }

    @Test("generated trips with shared names migrate in place as convert migrates them", arguments: [1, 2, 3] as [UInt64])
    func generated(seed: UInt64) throws {
        var generator = ArbitraryTrips.sqlite(seed: seed)
        var trips = (0..<40).map { _ in generator.trip(schema: TripSchemaV1.self) }
        // Every fourth trip takes an earlier trip's name: names with quotes, semicolons and SQL among them.
        for i in stride(from: 3, to: trips.count, by: 4) {
            let name = trips[generator.random.below(i)].attributes[0]
            trips[i].attributes[0] = name
        }
        let path = scratch.path("generated.sqlite")
        try M.makeStore(trips, at: path, schema: TripSchemaV1.self)
        let expected = try M.converted(path, policy: .merge)
        try M.migrate(path)
        try SQLiteTesting.expectSoundStore(path)
        #expect(try SQLiteTesting.readStore(path).trips == expected.trips)
    }

    @Test("under fail, shared names stop the migration and the store is left as it was")
    func failLeavesStore() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let before = try M.dump(path)
        let error = SQLiteTesting.tripError { try M.migrate(path, policy: .fail) }
        #expect(error == TripError.data("\(path): cannot migrate the store: 2 names occur more than once ('Alpha', 'Gamma'); --dedupe fail writes nothing",
                                        notes: ["3 duplicate records; use --dedupe merge, last or first to keep one per name"]))
        #expect(try M.dump(path) == before)
    }

    @Test("each stage is recorded with when, the tool's version and the trip counts")
    func history() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        try M.migrate(path, to: TripSchemaV2.self, toolVersion: "9.8.7")
        try M.migrate(path, to: TripSchemaV3.self, toolVersion: "9.8.8")
        let rows = try SQLiteCLI.run(path, "SELECT from_version, to_version, tool_version, stages, trips_before, trips_after FROM tripconv_migrations ORDER BY id;")
        #expect(rows == "1.0.0|2.0.0|9.8.7|1.0.0 -> 2.0.0 (custom)|6|3\n2.0.0|3.0.0|9.8.8|2.0.0 -> 3.0.0 (lightweight)|3|3\n")
        #expect(try SQLiteCLI.run(path, "SELECT value FROM tripconv_metadata WHERE key = 'schemaVersion'; PRAGMA user_version;") == "3.0.0\n3\n")
    }

    @Test("a store without tripconv's metadata, told by its columns, is migrated and gains the metadata and history")
    func withoutMetadata() throws {
        let path = scratch.path("bare.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        try SQLiteCLI.run(path, "DROP TABLE tripconv_metadata; DROP TABLE tripconv_migrations; PRAGMA user_version = 0;")
        #expect(try SQLiteStore.open(path: path).evidence == .structure("columns start_date, end_date; no unique index on name"))
        let report = try M.migrate(path)
        #expect(report.map { [$0.tripsBefore, $0.tripsAfter] } == [6, 3])
        try SQLiteTesting.expectSoundStore(path)
        let store = try SQLiteStore.open(path: path)
        #expect(store.evidence == .marker("metadata schemaVersion 3.0.0"))
        #expect(try store.migrationHistory().count == 2)
    }

    @Test("a store already at the target is not touched: same bytes, no backup")
    func alreadyThere() throws {
        let path = scratch.path("v3.sqlite")
        try M.makeStore([F.trip("Alpha")], at: path, schema: TripSchemaV3.self)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(try M.migrate(path, backup: scratch.path("v3.bak")) == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("v3.bak")))
    }

    @Test("a target older than the store is a usage error")
    func downgradeRefused() throws {
        let path = scratch.path("v3.sqlite")
        try M.makeStore([F.trip("Alpha")], at: path, schema: TripSchemaV3.self)
        let error = SQLiteTesting.tripError { try M.migrate(path, to: TripSchemaV1.self) }
        #expect(error?.kind == .usage)
        #expect(error?.message == "\(path): store is at 3.0.0, target is 1.0.0; a store is never migrated down")
    }

    @Test("the backup is the store as it was, complete, taken through the backup API")
    func backup() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let before = try M.dump(path)
        let backup = scratch.path("v1.sqlite.bak")
        let report = try M.migrate(path, backup: backup)
        #expect(report?.backup == backup)
        try SQLiteTesting.expectSoundStore(backup)
        #expect(try M.dump(backup) == before)
        #expect(try SQLiteStore.open(path: backup).version == SchemaVersion(1, 0, 0))
        // Only the store and its backup: no temporary file is left beside them.
        #expect(scratch.names() == ["v1.sqlite", "v1.sqlite.bak"])
    }

    @Test("a backup that cannot be made stops the migration before anything changes")
    func backupFails() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let before = try M.dump(path)
        let error = SQLiteTesting.tripError { try M.migrate(path, backup: scratch.path("missing/v1.bak")) }
        #expect(error?.kind == .cantCreate)
        #expect(try M.dump(path) == before)
        let same = SQLiteTesting.tripError { try M.migrate(path, backup: path) }
        #expect(same == TripError.usage("\(path): the backup cannot be the store itself"))
    }

    @Test("a store another writer holds is busy once the timeout passes, and is not changed")
    func busy() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let holder = try SQLiteRecordWriter(path: path, options: WriteOptions(schema: TripSchemaV1.self))
        defer { holder.abort() }
        let store = try SQLiteStore.open(path: path, readOnly: false, busyTimeoutMilliseconds: 150)
        let started = Date()
        let error = SQLiteTesting.tripError { try store.migrate(to: TripSchemaV3.self) }
        #expect(Date().timeIntervalSince(started) >= 0.1)
        #expect(error?.kind == .busy)
        #expect(error?.message == "\(path): store is busy: another process holds its lock (database is locked)")
        holder.abort()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("convert --migrate shares the migration: an upsert after it replaces related rows and orphans nothing")
    func writerMigratesThenUpserts() throws {
        let path = scratch.path("v1.sqlite")
        try M.makeStore(M.v1Trips, at: path, schema: TripSchemaV1.self)
        let incoming = F.trip("Alpha", destination: "Rome again", items: [F.item("Trevi")])
        let writer = try SQLiteTesting.writeStore([incoming, F.trip("Delta")], to: path, policy: .last, migrate: true)
        #expect(writer.migration?.stages.map(\.stages) == ["1.0.0 -> 2.0.0 (custom)", "2.0.0 -> 3.0.0 (lightweight)"])
        let trips = try SQLiteTesting.readStore(path).trips
        #expect(trips.map { $0.attributes[0] } == ["Alpha", "Beta", "Gamma", "Delta"].map(Value.string))
        #expect(trips[0] == incoming)
        // Foreign keys were off for the migration, so the replaced Alpha's rows were deleted by name.
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items WHERE trip_id NOT IN (SELECT id FROM trips); SELECT count(*) FROM living_accommodations WHERE trip_id NOT IN (SELECT id FROM trips);") == "0\n0\n")
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items;") == "\(trips.reduce(0) { $0 + $1.relationships[0].objects.count })\n")
    }
}

@Suite("SQLite WAL stores", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
struct SQLiteWALTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures
    typealias M = SQLiteMigrationTesting

    /// A 1.0.0 store in WAL mode whose `-wal` file holds trips not yet checkpointed, copied (store
    /// and `-wal`, no `-shm`) to `copy` while the connection that wrote them is still open.
    static func walStore(_ scratch: ScratchDirectory, copy: String) throws {
        let path = scratch.path("live.sqlite")
        try M.makeStore(Array(M.v1Trips.prefix(2)), at: path, schema: TripSchemaV1.self)
        let c = try SQLiteConnection(path: path, access: .writing)
        try c.execute("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0")
        try c.execute("""
            BEGIN;
            INSERT INTO trips (id, name, destination, start_date, end_date) VALUES (3, 'Alpha', 'Roma', '2024-05-01T09:30:00Z', '2024-05-09T18:00:00Z');
            INSERT INTO bucket_list_items (trip_id, position, title) VALUES (3, 0, 'Pantheon');
            INSERT INTO trips (id, name, destination, start_date, end_date) VALUES (4, 'Omega', 'Perth', '2024-06-01T00:00:00Z', '2024-06-08T00:00:00Z');
            COMMIT;
            """)
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        #expect(wal > 0, "the -wal file holds the new trips")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        _ = c
    }

    @Test("a WAL store is read with what its -wal file holds")
    func reads() throws {
        let copy = scratch.path("copy.sqlite")
        try Self.walStore(scratch, copy: copy)
        let names = try SQLiteTesting.readStore(copy).trips.map { $0.attributes[0] }
        #expect(names == ["Alpha", "Beta", "Alpha", "Omega"].map(Value.string))
    }

    @Test("a WAL store is migrated with what its -wal file holds")
    func migrates() throws {
        let copy = scratch.path("copy.sqlite")
        try Self.walStore(scratch, copy: copy)
        let report = try M.migrate(copy, backup: copy + ".bak")
        #expect(report.map { [$0.tripsBefore, $0.tripsAfter, $0.merged] } == [4, 3, 1])
        try SQLiteTesting.expectSoundStore(copy)
        let trips = try SQLiteTesting.readStore(copy).trips
        #expect(trips.map { $0.attributes[0] } == ["Alpha", "Beta", "Omega"].map(Value.string))
        #expect(trips[0].relationships[0].objects.map { $0.attributes[0] } == ["Colosseum", "Gelato", "Pantheon"].map(Value.string))
        // The backup, taken through the backup API, holds the WAL's trips too.
        #expect(try SQLiteTesting.readStore(copy + ".bak").trips.count == 4)
        #expect(try SQLiteCLI.run(copy, "PRAGMA journal_mode;") == "wal\n")
    }

    @Test("a WAL-mode store without a -wal file is read without leaving files beside it")
    func noSideFiles() throws {
        let path = scratch.path("wal.sqlite")
        try M.makeStore([F.trip("Alpha")], at: path, schema: TripSchemaV3.self)
        try SQLiteCLI.run(path, "PRAGMA journal_mode = WAL;")
        #expect(scratch.names() == ["wal.sqlite"])
        #expect(try SQLiteTesting.readStore(path).trips.count == 1)
        #expect(scratch.names() == ["wal.sqlite"])
    }
}

@Suite("SQLite upsert through the cascade", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
struct SQLiteCascadeUpsertTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures

    @Test("an upsert at 3.0.0 replaces items and accommodations and orphans nothing", arguments: [
        DeduplicationPolicy.merge, .last, .first,
    ])
    func nothingOrphaned(policy: DeduplicationPolicy) throws {
        let path = scratch.path("v3.sqlite")
        try SQLiteTesting.writeStore([F.trip("Alpha", items: [F.item("A1"), F.item("A2")], accommodation: F.accommodation("Via 1", "Hotel")),
                                      F.trip("Beta", items: [F.item("B1")], accommodation: F.accommodation("Gate 1", "Inn"))], to: path)
        try SQLiteTesting.writeStore([F.trip("Alpha", destination: "Roma", items: [F.item("A3")], accommodation: F.accommodation("Via 2", "Hotel 2")),
                                      F.trip("Beta", destination: "Bergen"),
                                      F.trip("Gamma", items: [F.item("G1")])], to: path, policy: policy)
        let trips = try SQLiteTesting.readStore(path).trips
        let items = trips.reduce(0) { $0 + $1.relationships[0].objects.count }
        let places = trips.reduce(0) { $0 + $1.relationships[1].objects.count }
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items; SELECT count(*) FROM living_accommodations;") == "\(items)\n\(places)\n")
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items WHERE trip_id IS NULL OR trip_id NOT IN (SELECT id FROM trips);") == "0\n")
        switch policy {
        case .merge: #expect(items == 5 && places == 2)
        case .last: #expect(items == 2 && places == 1)
        default: #expect(items == 4 && places == 2)
        }
    }
}
