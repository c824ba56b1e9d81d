import Foundation
import Testing
import TripKit
import TripFormats
import TripTestSupport

@Suite("SQLite round trips")
struct SQLiteRoundTripTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures

    @Test("a store written and read back gives the same trips", arguments: TripMigrationPlan.versions)
    func example(version: SchemaVersion) throws {
        let schema = SQLiteTesting.schema(version)
        let trips = [
            F.trip("Paris Getaway", destination: "Paris, France", start: "2024-05-01T09:30:00.125Z", end: "2024-05-08T18:00:00Z",
                   items: [F.item("Eiffel Tower", details: "Summit at 20:30", reservation: true, inPlan: true), F.item("Louvre")],
                   accommodation: F.accommodation("12 Rue de Rivoli", "Hôtel du Marais"), schema: schema),
            F.trip("Weekend in Lisbon", schema: schema),
        ]
        let path = scratch.path("round.sqlite")
        try SQLiteTesting.writeStore(trips, to: path, schema: schema)
        let result = try SQLiteTesting.readStore(path)
        #expect(result.trips == trips)
        #expect(result.detection.version == version)
    }

    @Test("the store holds plain values the sqlite3 tool reads", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func exactRows() throws {
        let path = scratch.path("rows.sqlite")
        try SQLiteTesting.writeStore([
            F.trip("Paris Getaway", destination: "Paris, France", start: "2024-05-01T09:30:00.125Z", end: "2024-05-08T18:00:00Z",
                   items: [F.item("Eiffel Tower", details: "Summit", reservation: true, inPlan: true), F.item("Louvre")],
                   accommodation: F.accommodation("12 Rue de Rivoli", "Hôtel du Marais")),
        ], to: path)
        #expect(try SQLiteCLI.run(path, "SELECT * FROM trips;") == "1|Paris Getaway|Paris, France|2024-05-01T09:30:00.125Z|2024-05-08T18:00:00Z\n")
        #expect(try SQLiteCLI.run(path, "SELECT * FROM bucket_list_items;") == "1|1|0|Eiffel Tower|Summit|1|1\n2|1|1|Louvre||0|0\n")
        #expect(try SQLiteCLI.run(path, "SELECT * FROM living_accommodations;") == "1|1|12 Rue de Rivoli|Hôtel du Marais\n")
    }

    @Test("items and accommodations keep their trips, order and row ids across batched inserts", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func batches() throws {
        let path = scratch.path("batches.sqlite")
        // 301 trips of 3 items and an accommodation: 903 item rows (7 full batches of 128 and 7 left
        // over) and 301 accommodations (2 full batches and 45 left over).
        let trips = (0..<301).map { i in
            F.trip("Trip \(i)", items: (0..<3).map { F.item("Item \($0) of \(i)") },
                   accommodation: F.accommodation("\(i) Main Street", "Hotel \(i)"))
        }
        try SQLiteTesting.writeStore(trips, to: path)
        #expect(try SQLiteTesting.readStore(path).trips == trips)
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items WHERE title <> 'Item ' || position || ' of ' || (trip_id - 1) OR id <> 3 * (trip_id - 1) + position + 1;") == "0\n")
        #expect(try SQLiteCLI.run(path, "SELECT count(*), max(id) FROM bucket_list_items;") == "903|903\n")
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM living_accommodations WHERE placeName <> 'Hotel ' || (trip_id - 1) OR id <> trip_id;") == "0\n")
    }

    @Test("long texts in a full batch of items, and empty ones, come back whole")
    func longTexts() throws {
        let path = scratch.path("long.sqlite")
        // 32 items of 2 x 5 000 bytes in one batched INSERT: far past the bound text's first block.
        let long = { (i: Int, what: String) in String(repeating: "\(what) \(i) ünïcödé ", count: 250) }
        let trips = (0..<3).map { t in
            F.trip(long(t, "trip") + "\(t)", destination: "", start: "2024-05-01T09:30:00.125Z",
                   items: (0..<32).map { F.item(long($0, "title"), details: $0 % 5 == 0 ? "" : long($0, "details")) },
                   accommodation: F.accommodation(long(t, "address"), ""))
        }
        try SQLiteTesting.writeStore(trips, to: path)
        #expect(try SQLiteTesting.readStore(path).trips == trips)
    }

    @Test("names with quotes, semicolons and SQL keywords are values, never SQL", arguments: [
        "Robert'); DROP TABLE trips; --", "\"quoted\" trip", "a;b;c", "SELECT * FROM trips", "O'Brien's", "NULL", "",
        "line\nbreak", "nul\u{0}inside", "?1 :name @x $y", "日本の旅 🏔️",
    ])
    func hostileNames(name: String) throws {
        let path = scratch.path("names.sqlite")
        let trip = F.trip(name, destination: name, items: [F.item(name, details: name)], accommodation: F.accommodation(name, "Casa " + name))
        try SQLiteTesting.writeStore([trip, F.trip("Other")], to: path)
        // And again, so the name meets the unique index and the merge path reads it back.
        try SQLiteTesting.writeStore([trip], to: path, policy: .merge)
        #expect(try SQLiteTesting.readStore(path).trips == [trip, F.trip("Other")])
        #expect(try SQLiteStore.open(path: path).tableNames().contains("trips"))
    }

    @Test("generated trips survive a write and a read", arguments: TripMigrationPlan.versions)
    func property(version: SchemaVersion) throws {
        let schema = SQLiteTesting.schema(version)
        for seed in UInt64(1)...25 {
            var generator = ArbitraryTrips.sqlite(seed: seed &* 0x9E37_79B9 &+ UInt64(version.major))
            let trips = (0..<generator.random.below(40)).map { _ in generator.trip(schema: schema) }
            let path = scratch.path("property-\(seed).sqlite")
            try SQLiteTesting.writeStore(trips, to: path, schema: schema)
            let result = try SQLiteTesting.readStore(path)
            #expect(result.rejected == [], "seed \(seed)")
            #expect(result.trips == trips, "seed \(seed)")
        }
    }

    @Test("merging generated trips into a store gives what the migration context's merge gives")
    func mergeProperty() throws {
        for seed in UInt64(1)...10 {
            var generator = ArbitraryTrips.sqlite(seed: seed)
            let stored = (0..<10).map { _ in generator.trip(schema: TripSchemaV3.self) }
            // Incoming: the same names with other values, and some new trips.
            var incoming: [ModelObject] = []
            for (i, s) in stored.enumerated() where i % 2 == 0 {
                var other = generator.trip(schema: TripSchemaV3.self)
                other.attributes[0] = s.attributes[0]
                incoming.append(other)
            }
            incoming += (0..<3).map { _ in generator.trip(schema: TripSchemaV3.self) }
            let path = scratch.path("merge-\(seed).sqlite")
            try SQLiteTesting.writeStore(stored, to: path)
            let writer = try SQLiteTesting.writeStore(incoming, to: path, policy: .merge)
            let expected = MigrationContext(schema: TripSchemaV3.self, policy: .merge, objects: stored + incoming,
                                            origins: (1...(stored.count + incoming.count)).map { RecordOrigin(source: "t", record: $0) })
            try expected.deduplicate("Trip", by: "name")
            #expect(try SQLiteTesting.readStore(path).trips == expected.objects, "seed \(seed)")
            #expect(try writer.ledger.count == 5, "seed \(seed)")
        }
    }
}
