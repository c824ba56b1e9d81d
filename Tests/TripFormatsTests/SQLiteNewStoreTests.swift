import Foundation
import Testing
import TripKit
import TripFormats

/// How a new store is filled: with foreign keys off (the writer keeps them true itself), text bound in
/// place from the writer's own buffer (batched inserts: SQLiteRoundTripTests.batches).
@Suite("SQLite new store loading")
struct SQLiteNewStoreTests {
    let scratch = SQLiteScratch()
    typealias F = SQLiteFixtures

    /// Generated trips, and after them the same names again with other values, in a shuffled order.
    private static func tripsRepeatingNames(seed: UInt64) -> [ModelObject] {
        var generator = SQLiteTripGenerator(seed: seed)
        let first = (0..<30).map { _ in generator.trip(schema: TripSchemaV3.self) }
        var trips = first
        for (i, trip) in first.enumerated() where i % 3 != 0 {
            var again = generator.trip(schema: TripSchemaV3.self)
            again.attributes[0] = trip.attributes[0]
            trips.insert(again, at: i + 1 + generator.random.below(trips.count - i))
        }
        return trips
    }

    @Test("names repeated within a new store meet the policy, and replaced trips leave no related rows behind",
          arguments: [DeduplicationPolicy.merge, .last, .first])
    func repeatedNames(policy: DeduplicationPolicy) throws {
        for seed in UInt64(1)...8 {
            let trips = Self.tripsRepeatingNames(seed: seed)
            let path = scratch.path("repeated-\(seed).sqlite")
            // writeStore also has the sqlite3 tool check the finished store: integrity and foreign keys.
            let writer = try SQLiteTesting.writeStore(trips, to: path, policy: policy)
            #expect(!writer.isUpdatingExistingStore)
            let expected = MigrationContext(schema: TripSchemaV3.self, policy: policy, objects: trips,
                                            origins: (1...trips.count).map { RecordOrigin(source: "t", record: $0) })
            try expected.deduplicate("Trip", by: "name")
            // A replaced trip goes back in under its old row id, so rows of the old one left behind would
            // still have a trip: reading back is what finds them.
            #expect(try SQLiteTesting.readStore(path).trips == expected.objects, "seed \(seed)")
            #expect(writer.ledger.count == trips.count - expected.objects.count, "seed \(seed)")
        }
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
        var generator = SQLiteSplitMix64(seed: 7)
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
