import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

// A store's paths under a memory budget (issue 15): a migration in place whose trips spill to
// temporary files gives the very store an in-memory migration gives, ids and all, with the same
// ledger; a store writer's ledger past its in-memory bound comes back from its file whole and in
// order, naming each trip by the origin it was given.

@Suite("Store paths under a memory budget")
struct BoundedStoreTests {
    typealias F = SQLiteFixtures
    typealias M = SQLiteMigrationTesting
    let scratch = ScratchDirectory()

    /// 3,000 trips at 1.0.0 with items and accommodations, a name in ten repeated up to three times.
    static let manyTrips: [ModelObject] = {
        var random = SplitMix64(seed: 15)
        return (0..<3000).map { i -> ModelObject in
            let name = random.next() % 10 == 0 ? "T\(random.next() % 100)" : "U\(i)"
            let items = (0..<Int(random.next() % 4)).map { F.item("item \(i).\($0)", details: "d\(random.next() % 7)") }
            let accommodation = random.next() % 3 == 0 ? nil : F.accommodation("street \(i)", "place \(random.next() % 50)")
            return F.trip(name, destination: "city \(random.next() % 300)", items: items, accommodation: accommodation,
                          schema: TripSchemaV1.self)
        }
    }()

    /// The trip tables of a store as the sqlite3 tool prints them, ids included.
    static func tables(_ path: String) throws -> String {
        try ["trips", "bucket_list_items", "living_accommodations"].map { try M.rows(path, $0) }.joined(separator: "--\n")
    }

    @Test("a migration that spills gives the store and ledger an in-memory one gives",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote), arguments: [
        DeduplicationPolicy.merge, .last, .first,
    ])
    func migrationSpills(policy: DeduplicationPolicy) throws {
        let inMemory = scratch.path("memory-\(policy).sqlite"), spilled = scratch.path("spilled-\(policy).sqlite")
        try M.makeStore(Self.manyTrips, at: inMemory, schema: TripSchemaV1.self)
        try FileManager.default.copyItem(atPath: inMemory, toPath: spilled)
        let expected = try #require(try SQLiteStore.open(path: inMemory, readOnly: false).migrate(to: TripSchemaV3.self, policy: policy))
        #expect(expected.spilledTrips == 0)
        var streamed: [SetAsideRecord] = []
        let report = try #require(try SQLiteStore.open(path: spilled, readOnly: false).migrate(
            to: TripSchemaV3.self, policy: policy, memoryLimit: 64 << 10, temporaryDirectory: scratch.path,
            setAside: { streamed.append($0) }))
        #expect(report.spilledTrips > 0, "the budget was meant to force the spill")
        #expect(try Self.tables(spilled) == Self.tables(inMemory))
        try SQLiteTesting.expectSoundStore(spilled)
        // The two stores' paths differ; what the ledgers say of them must not.
        func said(_ ledger: [SetAsideRecord], _ path: String) -> [String] {
            ledger.map { "\($0.kind) \($0.origin): \($0.reason)".replacing(path, with: "STORE") }
        }
        let same = said(streamed, spilled) == said(expected.ledger, inMemory)
        #expect(same, "the ledgers differ")
        #expect(!streamed.isEmpty && report.ledger.isEmpty)
        #expect(report.merged == expected.merged && report.dropped == expected.dropped)
        #expect(report.tripsBefore == expected.tripsBefore && report.tripsAfter == expected.tripsAfter)
        #expect(report.stages.map(\.tripsAfter) == expected.stages.map(\.tripsAfter))
    }

    @Test("a dry run that spills streams the preview an in-memory one gives")
    func previewSpills() throws {
        let path = scratch.path("preview.sqlite")
        try M.makeStore(Self.manyTrips, at: path, schema: TripSchemaV1.self)
        let store = try SQLiteStore.open(path: path)
        let expected = try store.previewMigration(to: TripSchemaV3.self, policy: .merge)
        var summaries: [StoreMigrationPreview] = [], duplicates: [StoreMigrationPreview.DuplicateName] = [], ledger: [SetAsideRecord] = []
        let streamed = try store.previewMigration(to: TripSchemaV3.self, policy: .merge, memoryLimit: 64 << 10,
                                                  temporaryDirectory: scratch.path, summary: { summaries.append($0) },
                                                  duplicate: { duplicates.append($0) }, setAside: { ledger.append($0) })
        #expect(summaries.count == 1 && summaries.first?.stages == expected.stages)
        #expect(duplicates == expected.duplicates && duplicates.count == expected.duplicateCount && duplicates.count > 50)
        #expect(ledger == expected.ledger && ledger.count == expected.merged)
        #expect(streamed.tripsBefore == 3000 && streamed.tripsAfter == expected.tripsAfter && streamed.merged == expected.merged)
        // The groups come in the order of their first trip, each with its row ids in order.
        let firsts = duplicates.map { $0.rowIDs[0] }
        #expect(firsts == firsts.sorted() && duplicates.allSatisfy { $0.rowIDs == $0.rowIDs.sorted() })
    }

    @Test("names equal only as Unicode text (é precomposed and decomposed) are not shared: the dry run agrees with the migration")
    func canonicallyEquivalentNames() throws {
        let path = scratch.path("nfc.sqlite")
        try M.makeStore([F.trip("caf\u{E9}", schema: TripSchemaV1.self), F.trip("cafe\u{301}", schema: TripSchemaV1.self)],
                        at: path, schema: TripSchemaV1.self)
        let preview = try SQLiteStore.open(path: path).previewMigration(to: TripSchemaV3.self)
        #expect(preview.duplicates.isEmpty && preview.duplicateCount == 0)
        let report = try M.migrate(path)
        #expect(report?.tripsAfter == 2 && report?.merged == 0)
        #expect(preview.tripsAfter == report?.tripsAfter)
    }

    @Test("a store writer's ledger past its in-memory bound comes back whole, in order, with the origins given",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote), arguments: [
        DeduplicationPolicy.merge, .first,
    ])
    func writerLedgerSpills(policy: DeduplicationPolicy) throws {
        let trips = (0..<200).map { F.trip("N\($0)", destination: "d\($0)") }
        let again = (0..<200).map { F.trip("N\(($0 * 7) % 200)", destination: "again \($0)") }
        func upsert(_ path: String, budget: SpillBudget?) throws -> [SetAsideRecord] {
            try SQLiteTesting.writeStore(trips, to: path)
            var options = WriteOptions(schema: TripSchemaV3.self, policy: policy)
            options.budget = budget
            let writer = try SQLiteRecordWriter(path: path, options: options)
            for (i, t) in again.enumerated() { try writer.write(t, origin: RecordOrigin(source: "in.jsonl", record: i + 1, line: i + 1)) }
            try writer.finish()
            return try writer.ledger
        }
        let expected = try upsert(scratch.path("memory.sqlite"), budget: nil)
        let onFile = try upsert(scratch.path("file.sqlite"), budget: SpillBudget(limit: 1 << 20, directory: scratch.path, setAsideInMemory: 8))
        #expect(expected.count == 200)
        #expect(onFile == expected)
        #expect(onFile.map(\.origin) == (1...200).map { RecordOrigin(source: "in.jsonl", record: $0, line: $0) })
        #expect(try Self.tables(scratch.path("file.sqlite")) == Self.tables(scratch.path("memory.sqlite")))
    }

    @Test("the set of replaced row ids: dense ids in a bitmap, others hashed, each seen once")
    func rowIDSet() {
        var set = RowIDSet()
        for id: Int64 in [1, 2, 64, 65, 1_000_000, RowIDSet.bitmapLimit - 1, RowIDSet.bitmapLimit, Int64.max, -3] {
            let first = set.insert(id), again = set.insert(id)
            #expect(first, "first \(id)")
            #expect(!again, "again \(id)")
        }
        let three = set.insert(3), sixtyThree = set.insert(63)
        #expect(three && sixtyThree)
    }
}
