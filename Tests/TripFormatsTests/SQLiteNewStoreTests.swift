import Foundation
import Testing
import TripKit
import TripTestSupport
import TripFormats

/// How a new store is filled: with foreign keys off (the writer keeps them true itself), trips many
/// per INSERT (undone and redone one at a time when the unique index refuses one), text bound in
/// place from the writer's own buffer (related rows' batches: SQLiteRoundTripTests.batches).
@Suite("SQLite new store loading")
struct SQLiteNewStoreTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures

    /// Generated trips (more than two INSERTs' worth, so that batches and the trips left for the
    /// end meet), some names coming again with other values: soon after (in the same batch) or far.
    private static func tripsRepeatingNames(seed: UInt64) -> [ModelObject] {
        var generator = ArbitraryTrips.sqlite(seed: seed)
        var trips = (0..<300).map { _ in generator.trip(schema: TripSchemaV3.self) }
        for k in 0..<40 {
            let from = generator.random.below(trips.count - 1)
            var again = generator.trip(schema: TripSchemaV3.self)
            again.attributes[0] = trips[from].attributes[0]
            let room = trips.count - from
            trips.insert(again, at: from + 1 + generator.random.below(k % 2 == 0 ? min(room, 40) : room))
        }
        return trips
    }

    /// A store's rows, every table in id order, as SQL literals.
    private static func rows(_ path: String) throws -> String {
        try SQLiteCLI.run(path, """
            .mode quote
            SELECT * FROM trips ORDER BY id; SELECT * FROM bucket_list_items ORDER BY id; SELECT * FROM living_accommodations ORDER BY id;
            """)
    }

    @Test("names repeated within a new store meet the policy as in an upsert, trip by trip, and replaced trips leave no rows behind",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote), arguments: [DeduplicationPolicy.merge, .last, .first])
    func repeatedNames(policy: DeduplicationPolicy) throws {
        for seed in UInt64(1)...4 {
            let trips = Self.tripsRepeatingNames(seed: seed)
            // A new store takes trips many per INSERT; an existing one (here empty) one at a time.
            let batched = scratch.path("batched-\(seed).sqlite"), single = scratch.path("single-\(seed).sqlite")
            // writeStore also has the sqlite3 tool check the finished store: integrity and foreign keys.
            let writer = try SQLiteTesting.writeStore(trips, to: batched, policy: policy)
            try SQLiteTesting.writeStore([], to: single)
            let upsert = try SQLiteTesting.writeStore(trips, to: single, policy: policy)
            #expect(!writer.isUpdatingExistingStore && upsert.isUpdatingExistingStore)
            #expect(try Self.rows(batched) == Self.rows(single), "seed \(seed)")
            #expect(try writer.ledger.map(\.reason) == upsert.ledger.map(\.reason), "seed \(seed)")
            // Each repeated name is accounted for under its own record number.
            var seen = Set<Value>()
            let repeats = trips.indices.filter { !seen.insert(trips[$0].attributes[0]).inserted }.map { $0 + 1 }
            #expect(try writer.ledger.map(\.origin.record) == repeats, "seed \(seed)")
            let expected = MigrationContext(schema: TripSchemaV3.self, policy: policy, objects: trips,
                                            origins: (1...trips.count).map { RecordOrigin(source: "t", record: $0) })
            try expected.deduplicate("Trip", by: "name")
            // A replaced trip goes back in under its old row id, so rows of the old one left behind would
            // still have a trip: reading back is what finds them.
            #expect(try SQLiteTesting.readStore(batched).trips == expected.objects, "seed \(seed)")
            #expect(try SQLiteCLI.run(batched, "SELECT count(*), min(id), max(id) FROM trips;") == "\(seen.count)|1|\(seen.count)\n")
        }
    }

    @Test("under fail, names repeated within a new store, in a batch or among the trips left for the end, write nothing")
    func repeatedNamesUnderFail() throws {
        let trips = Self.tripsRepeatingNames(seed: 9) + [F.trip("Last"), F.trip("Last")]
        var seen = Set<Value>(), repeated = Set<Value>()
        for trip in trips where !seen.insert(trip.attributes[0]).inserted { repeated.insert(trip.attributes[0]) }
        let path = scratch.path("fail.sqlite")
        let error = SQLiteTesting.tripError { try SQLiteTesting.writeStore(trips, to: path, policy: .fail) }
        #expect(error?.kind == .data)
        #expect(error?.message.hasPrefix("\(path): \(repeated.count) names are already in the store (") == true, "\(error?.message ?? "")")
        #expect(error?.notes == ["\(trips.count - seen.count) incoming trips would have changed stored ones; use --dedupe merge, last or first to let them"])
        #expect(scratch.names() == [])
    }

    @Test("a trip the store refuses is the error of its own write even while trips wait for a batch")
    func refusedTripWhileBatching() throws {
        let path = scratch.path("refused.sqlite")
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions())
        for i in 0..<200 { try writer.write(F.trip("Trip \(i)")) }
        var broken = F.trip("Broken")
        broken.attributes[2] = .null
        let error = SQLiteTesting.tripError { try writer.write(broken) }
        #expect(error == TripError.data("\(path): cannot write a trip: NOT NULL constraint failed: trips.startDate"))
        writer.abort()
        #expect(scratch.names() == [])
    }

    @Test("deleting a trip from a finished new store cascades for a connection with foreign keys on",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func cascadeAfterLoading() throws {
        let path = scratch.path("cascade.sqlite")
        try SQLiteTesting.writeStore([F.trip("Alpha", items: [F.item("A1"), F.item("A2")], accommodation: F.accommodation("Via 1", "Hotel")),
                                      F.trip("Beta", items: [F.item("B1")])], to: path)
        #expect(try SQLiteCLI.run(path, "PRAGMA foreign_keys;") == "0\n", "the tool's own default, untouched by the store")
        let counts = try SQLiteCLI.run(path, """
            PRAGMA foreign_keys = ON; DELETE FROM trips WHERE name = 'Alpha';
            SELECT count(*) FROM bucket_list_items; SELECT count(*) FROM living_accommodations;
            """)
        #expect(counts == "1\n0\n")
    }

    @Test("text longer than the writer's value buffer, empty text and short text survive batches that outgrow it")
    func textOutgrowingTheBuffer() throws {
        var generator = SplitMix64(seed: 7)
        // Items of every size class: empty, inline in a Swift String (up to 15 bytes), a few KB, and
        // one larger than the buffer's first 4 KiB, so the buffer grows in the middle of a batch.
        let texts = ["", "short", String(repeating: "é", count: 7), String(repeating: "ab'c;", count: 700),
                     String(repeating: "日本🏔️", count: 1000), String(repeating: "x", count: 70_000)]
        let trips = (0..<120).map { i in
            F.trip("Trip \(i) " + texts[generator.below(3)], destination: texts[generator.below(texts.count)],
                   items: (0..<generator.below(6)).map { _ in F.item(texts[generator.below(texts.count)], details: texts[generator.below(texts.count)]) },
                   accommodation: generator.chance(70) ? F.accommodation("x" + texts[generator.below(texts.count)], texts[generator.below(texts.count)]) : nil)
        }
        let path = scratch.path("texts.sqlite")
        try SQLiteTesting.writeStore(trips, to: path)
        #expect(try SQLiteTesting.readStore(path).trips == trips)
    }
}
