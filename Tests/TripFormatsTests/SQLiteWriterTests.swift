import Foundation
import Testing
import TripKit
import TripFormats
import TripTestSupport

@Suite("SQLite atomic writes")
struct SQLiteAtomicWriteTests {
    let scratch = ScratchDirectory()

    @Test("a new store is absent until finish, and only the store remains after it")
    func absentUntilFinish() throws {
        let path = scratch.path("out.sqlite")
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions())
        try writer.write(SQLiteFixtures.trip("Paris Getaway"))
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(scratch.names().count == 1)
        #expect(scratch.names().allSatisfy { $0.hasPrefix(".out.sqlite.tripconv-") })
        try writer.finish()
        #expect(scratch.names() == ["out.sqlite"])
        #expect(try SQLiteTesting.readStore(path).trips == [SQLiteFixtures.trip("Paris Getaway")])
        try SQLiteTesting.expectSoundStore(path)
    }

    @Test("abort leaves nothing behind")
    func abortLeavesNothing() throws {
        let path = scratch.path("out.sqlite")
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions())
        try writer.write(SQLiteFixtures.trip("Paris Getaway"))
        writer.abort()
        #expect(scratch.names() == [])
    }

    @Test("a trip the store refuses fails the write, and no file appears")
    func refusedTripLeavesNothing() throws {
        let path = scratch.path("out.sqlite")
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions())
        var broken = SQLiteFixtures.trip("Paris Getaway")
        broken.attributes[1] = .null
        let error = SQLiteTesting.tripError { try writer.write(broken) }
        #expect(error?.kind == .data)
        #expect(error?.message == "\(path): cannot write a trip: NOT NULL constraint failed: trips.destination")
        writer.abort()
        #expect(scratch.names() == [])
    }

    @Test("after a failed write, finish commits nothing", arguments: [false, true])
    func finishAfterFailure(existing: Bool) throws {
        let path = scratch.path("out.sqlite")
        if existing { try SQLiteTesting.writeStore([SQLiteFixtures.trip("Alpha")], to: path) }
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions())
        try writer.write(SQLiteFixtures.trip("Beta"))
        var broken = SQLiteFixtures.trip("Gamma")
        broken.attributes[1] = .null
        #expect(SQLiteTesting.tripError { try writer.write(broken) }?.kind == .data)
        let error = SQLiteTesting.tripError { try writer.finish() }
        #expect(error == TripError.data("\(path): a write failed earlier; nothing was written"))
        if existing {
            #expect(try SQLiteTesting.readStore(path).trips == [SQLiteFixtures.trip("Alpha")])
        } else {
            #expect(scratch.names() == [])
        }
    }

    @Test("an item the store refuses fails the run no later than finish, and nothing is committed", arguments: [false, true])
    func refusedItem(existing: Bool) throws {
        let path = scratch.path("out.sqlite")
        if existing { try SQLiteTesting.writeStore([SQLiteFixtures.trip("Alpha")], to: path) }
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions())
        var broken = SQLiteFixtures.trip("Gamma")
        broken.relationships[0] = .toMany([ModelObject(attributes: [.null, .string(""), .bool(false), .bool(false)])])
        // Items wait in batches, so the refusal may come at a later write or at finish.
        let error = SQLiteTesting.tripError {
            try writer.write(broken)
            try writer.finish()
        }
        writer.abort()
        #expect(error == TripError.data("\(path): cannot write a BucketListItem: NOT NULL constraint failed: bucket_list_items.title"))
        if existing {
            #expect(try SQLiteTesting.readStore(path).trips == [SQLiteFixtures.trip("Alpha")])
        } else {
            #expect(scratch.names() == [])
        }
    }

    @Test("a file that is not SQLite is replaced by the new store, as any output file is")
    func replacesNonStore() throws {
        let path = scratch.path("out.sqlite")
        try Data("[{\"name\": \"not a store\"}]".utf8).write(to: URL(fileURLWithPath: path))
        try SQLiteTesting.writeStore([SQLiteFixtures.trip("Paris Getaway")], to: path)
        #expect(try SQLiteTesting.readStore(path).trips == [SQLiteFixtures.trip("Paris Getaway")])
    }

    @Test("a SQLite database that is not a trip store is refused and left alone", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func refusesForeignDatabase() throws {
        let path = scratch.path("other.db")
        try SQLiteCLI.run(path, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL);")
        let before = try SQLiteCLI.run(path, ".dump")
        let error = SQLiteTesting.tripError { _ = try SQLiteRecordWriter(path: path, options: WriteOptions()) }
        #expect(error == TripError.data("\(path): not a trip store: it has no trips table", notes: ["its tables: invoices"]))
        #expect(try SQLiteCLI.run(path, ".dump") == before)
    }

    @Test("a target in a missing directory cannot be created")
    func missingDirectory() {
        let path = scratch.path("missing/out.sqlite")
        let error = SQLiteTesting.tripError { _ = try SQLiteRecordWriter(path: path, options: WriteOptions()) }
        #expect(error?.kind == .cantCreate)
        #expect(error?.message == "\(path): cannot create: No such file or directory")
    }
}

@Suite("SQLite upsert into an existing store")
struct SQLiteUpsertTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures

    // The store holds Alpha and Beta; Alpha comes again with other values, and Gamma is new.
    static let alpha = F.trip("Alpha", destination: "Rome, Italy", start: "2024-03-01T08:00:00Z", end: "2024-03-05T20:00:00Z",
                              items: [F.item("Colosseum", details: "Book ahead"), F.item("Gelato", details: "old")],
                              accommodation: F.accommodation("Via del Corso 1", "Hotel Alpha"))
    static let beta = F.trip("Beta", destination: "Oslo, Norway", items: [F.item("Opera house")])
    static let alphaAgain = F.trip("Alpha", destination: "Roma, Italia", start: "2024-03-02T08:00:00Z", end: "2024-03-06T20:00:00Z",
                                   items: [F.item("Gelato", details: "new", reservation: true), F.item("Pantheon")])
    static let gamma = F.trip("Gamma", destination: "Quito, Ecuador", accommodation: F.accommodation("Calle Larga 9", "Casa Gamma"))

    private func upsert(_ policy: DeduplicationPolicy) throws -> (path: String, writer: SQLiteRecordWriter) {
        let path = scratch.path("store.sqlite")
        try SQLiteTesting.writeStore([Self.alpha, Self.beta], to: path)
        let writer = try SQLiteTesting.writeStore([Self.alphaAgain, Self.gamma], to: path, policy: policy)
        #expect(writer.isUpdatingExistingStore)
        return (path, writer)
    }

    @Test("merge takes the incoming scalars, unites the bucket lists by title and keeps the latest accommodation")
    func merge() throws {
        let (path, writer) = try upsert(.merge)
        let merged = F.trip("Alpha", destination: "Roma, Italia", start: "2024-03-02T08:00:00Z", end: "2024-03-06T20:00:00Z",
                            items: [F.item("Colosseum", details: "Book ahead"), F.item("Gelato", details: "new", reservation: true), F.item("Pantheon")],
                            accommodation: F.accommodation("Via del Corso 1", "Hotel Alpha"))
        #expect(try SQLiteTesting.readStore(path).trips == [merged, Self.beta, Self.gamma])
        #expect(try writer.ledger == [SetAsideRecord(kind: .merged, origin: RecordOrigin(source: path, record: 1),
                                                 reason: "duplicate name 'Alpha': merged into the trip the store holds (row id 1)")])
    }

    @Test("last replaces the stored trip, its items and accommodation, under the same row id; the incoming trip counts as written")
    func last() throws {
        let (path, writer) = try upsert(.last)
        #expect(try SQLiteTesting.readStore(path).trips == [Self.alphaAgain, Self.beta, Self.gamma])
        // Written as given: no ledger entry (which would count it as not written), one replacement.
        #expect(try writer.ledger.isEmpty)
        #expect(writer.replacedStoredTrips == 1)
    }

    @Test("last twice on one stored name: the first replaces the stored trip, the second this run's, and is in the ledger")
    func lastTwice() throws {
        let path = scratch.path("store.sqlite")
        try SQLiteTesting.writeStore([Self.alpha, Self.beta], to: path)
        let writer = try SQLiteTesting.writeStore([Self.alphaAgain, Self.alpha], to: path, policy: .last)
        #expect(try SQLiteTesting.readStore(path).trips == [Self.alpha, Self.beta])
        #expect(writer.replacedStoredTrips == 1)
        #expect(try writer.ledger.map(\.kind) == [.merged])
        #expect(try writer.ledger.first?.origin.record == 2)
    }

    @Test("first keeps the stored trip and drops the incoming one")
    func first() throws {
        let (path, writer) = try upsert(.first)
        #expect(try SQLiteTesting.readStore(path).trips == [Self.alpha, Self.beta, Self.gamma])
        #expect(try writer.ledger == [SetAsideRecord(kind: .dropped, origin: RecordOrigin(source: path, record: 1),
                                                 reason: "duplicate name 'Alpha': dropped, the trip the store holds (row id 1) stays")])
    }

    @Test("fail names the names the store already holds and writes nothing")
    func fail() throws {
        let path = scratch.path("store.sqlite")
        try SQLiteTesting.writeStore([Self.alpha, Self.beta], to: path)
        let error = SQLiteTesting.tripError {
            try SQLiteTesting.writeStore([Self.alphaAgain, Self.gamma, Self.beta], to: path, policy: .fail)
        }
        #expect(error == TripError.data("\(path): 2 names are already in the store ('Alpha', 'Beta'); --dedupe fail writes nothing",
                                        notes: ["2 incoming trips would have changed stored ones; use --dedupe merge, last or first to let them"]))
        #expect(try SQLiteTesting.readStore(path).trips == [Self.alpha, Self.beta])
        try SQLiteTesting.expectSoundStore(path)
    }

    @Test("replacing at 2.0.0, where the rule is nullify, deletes the old items rather than orphaning them",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func replaceWithoutCascade() throws {
        let path = scratch.path("v2.sqlite")
        let v2 = TripSchemaV2.self
        let stored = F.trip("Alpha", items: [F.item("Colosseum"), F.item("Gelato")], accommodation: F.accommodation("Via 1", "Hotel"), schema: v2)
        let incoming = F.trip("Alpha", destination: "Roma", items: [F.item("Pantheon")], schema: v2)
        try SQLiteTesting.writeStore([stored], to: path, schema: v2)
        try SQLiteTesting.writeStore([incoming], to: path, schema: v2, policy: .last)
        #expect(try SQLiteTesting.readStore(path).trips == [incoming])
        #expect(try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items; SELECT count(*) FROM living_accommodations;") == "1\n0\n")
    }

    @Test("at 1.0.0, where names may repeat, incoming trips are appended")
    func appendAtV1() throws {
        let path = scratch.path("v1.sqlite")
        let v1 = TripSchemaV1.self
        let stored = F.trip("Alpha", items: [F.item("Colosseum")], schema: v1)
        let incoming = F.trip("Alpha", destination: "Roma", items: [F.item("Pantheon")], schema: v1)
        try SQLiteTesting.writeStore([stored], to: path, schema: v1)
        let writer = try SQLiteTesting.writeStore([incoming], to: path, schema: v1, policy: .fail)
        #expect(try SQLiteTesting.readStore(path).trips == [stored, incoming])
        #expect(try writer.ledger.isEmpty)
    }

    @Test("incoming trips that repeat a name among themselves meet the policy too")
    func duplicatesAmongIncoming() throws {
        let path = scratch.path("new.sqlite")
        let writer = try SQLiteTesting.writeStore([Self.alpha, Self.alphaAgain], to: path, policy: .last)
        #expect(try SQLiteTesting.readStore(path).trips == [Self.alphaAgain])
        #expect(try writer.ledger.map { $0.kind } == [SetAsideRecord.Kind.merged])
    }

    @Test("a store another writer holds is busy")
    func busyWriter() throws {
        let path = scratch.path("store.sqlite")
        try SQLiteTesting.writeStore([Self.alpha], to: path)
        let holder = try SQLiteRecordWriter(path: path, options: WriteOptions())
        defer { holder.abort() }
        let error = SQLiteTesting.tripError {
            _ = try SQLiteRecordWriter(path: path, options: WriteOptions(), busyTimeoutMilliseconds: 100)
        }
        #expect(error?.kind == .busy)
        #expect(error?.message == "\(path): store is busy: another process holds its lock (database is locked)")
    }
}

@Suite("SQLite migration in place")
struct SQLiteMigrationTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures

    @Test("an older store is refused without migrate, and left as it was", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func refusedWithoutMigrate() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        let before = try SQLiteCLI.run(path, ".dump")
        let error = SQLiteTesting.tripError { try SQLiteTesting.writeStore([F.trip("Gamma")], to: path) }
        #expect(error == TripError.usage("\(path): store is at 1.0.0, target is 3.0.0; pass --migrate to migrate it in place",
                                         notes: ["or run `tripconv migrate \(path)` first"]))
        #expect(error?.kind.rawValue == 64)
        #expect(try SQLiteCLI.run(path, ".dump") == before)
    }

    @Test("a newer store is refused: a store is never migrated down")
    func newerRefused() throws {
        let path = scratch.path("v3.sqlite")
        try SQLiteTesting.writeStore([F.trip("Alpha")], to: path)
        let error = SQLiteTesting.tripError {
            try SQLiteTesting.writeStore([F.trip("Beta", schema: TripSchemaV2.self)], to: path, schema: TripSchemaV2.self, migrate: true)
        }
        #expect(error?.kind == .usage)
        #expect(error?.message == "\(path): store is at 3.0.0, target is 2.0.0; a store is never migrated down")
    }

    /// The sample store after migration to 3.0.0 under merge: duplicates merged, ids of first rows kept.
    static let migratedSample: [ModelObject] = [
        F.trip("Paris Getaway", destination: "Paris, France", start: "2024-05-01T09:30:00Z", end: "2024-05-09T12:00:00Z",
               items: [F.item("Eiffel Tower at sunset", details: "Summit tickets for 21:00", reservation: true, inPlan: true),
                       F.item("Louvre", details: "Enter by the Carrousel entrance", reservation: true),
                       F.item("Croissants at Du Pain et des Idées", inPlan: true),
                       F.item("Musée d'Orsay", details: "Impressionists, 5th floor", inPlan: true),
                       F.item("Seine river cruise", reservation: true)],
               accommodation: F.accommodation("12 Rue de Rivoli, 75004 Paris", "Hôtel du Marais")),
        F.trip("Tokyo Food Tour", destination: "Tokyo, Japan", start: "2024-09-14T01:00:00Z", end: "2024-09-23T09:15:00Z",
               items: [F.item("Tsukiji outer market", details: "Tamagoyaki and uni for breakfast", inPlan: true),
                       F.item("Ramen in Shinjuku", details: "Fuunji, tsukemen; go before 11:00", inPlan: true),
                       F.item("Depachika at Isetan", details: "Basement food hall")],
               accommodation: F.accommodation("3-7-1-2 Nishi-Shinjuku, Tokyo", "Park Hyatt Tokyo")),
        F.trip("Hiking the Dolomites", destination: "Cortina d'Ampezzo, Italy", start: "2024-07-06T07:00:00Z", end: "2024-07-13T16:00:00Z",
               accommodation: F.accommodation("Località Passo Falzarego", "Rifugio Lagazuoi")),
        F.trip("Weekend in Lisbon", destination: "Lisbon, Portugal", start: "2024-10-04T17:45:00.250Z", end: "2024-10-06T21:10:00Z",
               items: [F.item("Tram 28", details: "Board at Martim Moniz", inPlan: true), F.item("Pastéis de Belém", inPlan: true)]),
    ]

    @Test("with migrate, a 1.0.0 store is migrated in place, deduplicated, and takes the trips", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func migratedInPlace() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        let writer = try SQLiteTesting.writeStore([F.trip("Gamma")], to: path, migrate: true)
        #expect(try SQLiteTesting.readStore(path).trips == Self.migratedSample + [F.trip("Gamma")])
        let store = try SQLiteStore.open(path: path)
        #expect(store.version == SchemaVersion(3, 0, 0))
        #expect(try store.userVersion() == 3)
        #expect(try store.columnNames(of: "trips") == ["id", "name", "destination", "startDate", "endDate"])
        #expect(try store.uniqueIndexes(of: "trips").contains(["name"]))
        // Each trip keeps the row id of its first row; every row is kept, the item the 1.0.0 app had
        // orphaned (trip_id NULL) too.
        #expect(try SQLiteCLI.run(path, "SELECT id FROM trips ORDER BY id;") == "1\n2\n4\n6\n7\n")
        #expect(try SQLiteCLI.run(path, "SELECT title FROM bucket_list_items WHERE trip_id IS NULL;") == "Aurora safari\n")
        let history = try store.migrationHistory()
        #expect(history.map { [$0.from, $0.to] } == [[SchemaVersion(1, 0, 0), SchemaVersion(2, 0, 0)], [SchemaVersion(2, 0, 0), SchemaVersion(3, 0, 0)]])
        #expect(history.map(\.stages) == ["1.0.0 -> 2.0.0 (custom)", "2.0.0 -> 3.0.0 (lightweight)"])
        #expect(history.map { [$0.tripsBefore, $0.tripsAfter] } == [[6, 4], [4, 4]])
        #expect(history.allSatisfy { $0.toolVersion == "0.1.0" && Timestamp(iso8601: $0.appliedAt) != nil })
        #expect(writer.migration?.stages == history)
        #expect(writer.migration?.merged == 2)
    }

    @Test("a migration under fail with duplicate names is refused, and the store left as it was", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func migrationFails() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        let before = try SQLiteCLI.run(path, ".dump")
        let error = SQLiteTesting.tripError { try SQLiteTesting.writeStore([], to: path, policy: .fail, migrate: true) }
        #expect(error?.kind == .data)
        #expect(error?.message == "\(path): cannot migrate the store: 2 names occur more than once ('Paris Getaway', 'Tokyo Food Tour'); --dedupe fail writes nothing")
        #expect(try SQLiteCLI.run(path, ".dump") == before)
    }

    @Test("SQLiteStore.migrate migrates a store opened read-write and says what it did")
    func storeMigrate() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        let store = try SQLiteStore.open(path: path, readOnly: false)
        let record = try store.migrate(to: TripSchemaV2.self, policy: .first)
        #expect(record.map { [$0.from, $0.to] } == [SchemaVersion(1, 0, 0), SchemaVersion(2, 0, 0)])
        #expect(store.version == SchemaVersion(2, 0, 0))
        #expect(try store.migrate(to: TripSchemaV2.self) == nil)
        #expect(try store.migrationHistory() == record!.stages)
        let names = try SQLiteTesting.readStore(path).trips.map { $0.attributes[0] }
        #expect(names == ["Paris Getaway", "Tokyo Food Tour", "Hiking the Dolomites", "Weekend in Lisbon"].map(Value.string))
        try SQLiteTesting.expectSoundStore(path)
    }
}

@Suite("SQLite in the pipeline")
struct SQLitePipelineTests {
    let scratch = ScratchDirectory()

    @Test("a conversion into an existing store accounts for every trip read")
    func accounting() throws {
        let sample = TestPaths.samples + "/trips-v1.sqlite"
        let path = scratch.path("store.sqlite")
        let stored = SQLiteFixtures.trip("Paris Getaway", destination: "Paris", items: [SQLiteFixtures.item("Sainte-Chapelle")])
        try SQLiteTesting.writeStore([stored], to: path)
        var entries: [SetAsideRecord] = []
        let summary = try Pipeline().run([PipelineInput(name: sample, open: { try SQLiteRecordReader(path: sample) })],
                                         into: { try SQLiteRecordWriter(path: path, options: WriteOptions()) },
                                         setAside: { entries.append($0) })
        // The sample's six trips: two merged by the 1.0.0 -> 2.0.0 stage, one more into the stored trip.
        #expect(summary.read == 6)
        #expect(summary.merged == 3)
        #expect(summary.written == 3)
        #expect(summary.read == summary.written + summary.merged + summary.dropped + summary.rejected)
        // The trip merged into the stored one is named by its place in the input, not in the store.
        let intoStore = entries.filter { $0.reason.contains("the store holds") }
        #expect(intoStore.map(\.reason) == ["duplicate name 'Paris Getaway': merged into the trip the store holds (row id 1)"])
        #expect(intoStore.map(\.origin.source) == [sample])
        #expect(!entries.contains { $0.origin.source == path })
        let names = try SQLiteTesting.readStore(path).trips.map { $0.attributes[0] }
        #expect(names == ["Paris Getaway", "Tokyo Food Tour", "Hiking the Dolomites", "Weekend in Lisbon"].map(Value.string))
        try SQLiteTesting.expectSoundStore(path)
    }
}
