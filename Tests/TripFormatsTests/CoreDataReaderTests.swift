import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

@Suite("Core Data stores")
struct CoreDataReaderTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures

    // MARK: - The samples

    static let v1 = TripSchemaV1.self, v2 = TripSchemaV2.self
    static let samples: [Int: [ModelObject]] = [
        1: [
            F.trip("Paris Getaway", destination: "Paris, France", start: "2024-05-01T09:30:00Z", end: "2024-05-08T18:00:00Z",
                   items: [F.item("Eiffel Tower at sunset", details: "Summit tickets for 20:30", reservation: true, inPlan: true),
                           F.item("Louvre", details: "Enter by the Carrousel entrance", reservation: true),
                           F.item("Croissants at Du Pain et des Idées", inPlan: true)],
                   accommodation: F.accommodation("12 Rue de Rivoli, 75004 Paris", "Hôtel du Marais"), schema: v1),
            F.trip("Tokyo Food Tour", destination: "Tokyo, Japan", start: "2024-09-14T01:00:00Z", end: "2024-09-22T12:30:00Z",
                   items: [F.item("Tsukiji outer market", details: "Tamagoyaki and uni for breakfast", inPlan: true),
                           F.item("Ramen in Shinjuku", details: "Fuunji, tsukemen")],
                   accommodation: F.accommodation("1-1-1 Shibuya, Tokyo", "Shibuya Stream Excel Hotel"), schema: v1),
            F.trip("Paris Getaway", destination: "Paris, France", start: "2024-05-01T09:30:00Z", end: "2024-05-09T12:00:00Z",
                   items: [F.item("Eiffel Tower at sunset", details: "Summit tickets for 21:00", reservation: true, inPlan: true),
                           F.item("Musée d'Orsay", details: "Impressionists, 5th floor", inPlan: true),
                           F.item("Seine river cruise", reservation: true)], schema: v1),
            F.trip("Hiking the Dolomites", destination: "Cortina d'Ampezzo, Italy", start: "2024-07-06T07:00:00Z", end: "2024-07-13T16:00:00Z",
                   accommodation: F.accommodation("Località Passo Falzarego", "Rifugio Lagazuoi"), schema: v1),
            F.trip("Tokyo Food Tour", destination: "Tokyo, Japan", start: "2024-09-14T01:00:00Z", end: "2024-09-23T09:15:00Z",
                   items: [F.item("Ramen in Shinjuku", details: "Fuunji, tsukemen; go before 11:00", inPlan: true),
                           F.item("Depachika at Isetan", details: "Basement food hall")],
                   accommodation: F.accommodation("3-7-1-2 Nishi-Shinjuku, Tokyo", "Park Hyatt Tokyo"), schema: v1),
            F.trip("Weekend in Lisbon", destination: "Lisbon, Portugal", start: "2024-10-04T17:45:00.250Z", end: "2024-10-06T21:10:00Z",
                   items: [F.item("Tram 28", details: "Board at Martim Moniz", inPlan: true), F.item("Pastéis de Belém", inPlan: true)], schema: v1),
        ],
        2: [
            F.trip("Weekend in Portland", destination: "Portland, OR", start: "2024-09-06T17:00:00Z", end: "2024-09-08T20:00:00Z",
                   items: [F.item("Powell's Books", inPlan: true)], schema: v2),
            F.trip("Road Trip", destination: "Highway 1", start: "2024-10-01T15:00:00Z", end: "2024-10-05T00:00:00Z",
                   items: [F.item("Bixby Bridge", details: "Pull-out on the north side", inPlan: true),
                           F.item("Hearst Castle", details: "Grand Rooms tour, 10:20", reservation: true, inPlan: true)],
                   accommodation: F.accommodation("Big Sur", "Glen Oaks"), schema: v2),
            F.trip("Kyoto", destination: "京都", start: "2025-04-02T00:00:00Z", end: "2025-04-12T00:00:00Z",
                   items: [F.item("Fushimi Inari", details: "Go early, before 7:00", inPlan: true)],
                   accommodation: F.accommodation("Higashiyama-ku", "Ryokan Ōkura"), schema: v2),
            F.trip("Bob's \"Birthday\"; DROP TABLE ZTRIP; --", destination: "Austin, TX", start: "2025-03-14T18:30:00.125Z", end: "2025-03-16T12:00:00Z",
                   accommodation: F.accommodation("1100 Congress Ave", "Hotel 'Driskill'"), schema: v2),
        ],
        3: [
            F.trip("Reykjavík", destination: "Iceland", start: "2025-02-20T10:00:00Z", end: "2025-02-27T10:00:00Z",
                   items: [F.item("Northern lights", details: "Check the aurora forecast\nand the cloud cover", inPlan: true),
                           F.item("Blue Lagoon", reservation: true, inPlan: true)],
                   accommodation: F.accommodation("Laugavegur 1", "Guesthouse Aurora")),
            F.trip("Weekend in Portland", destination: "Portland, OR", start: "2024-09-06T17:00:00Z", end: "2024-09-08T20:00:00.500Z"),
            F.trip("Kyoto", destination: "京都", start: "2025-04-02T00:00:00Z", end: "2025-04-12T00:00:00Z",
                   items: [F.item("Fushimi Inari", details: "Go early, before 7:00", inPlan: true),
                           F.item("Tea ceremony", details: "Camellia, Ninenzaka", reservation: true)],
                   accommodation: F.accommodation("Higashiyama-ku", "Ryokan Ōkura")),
        ],
    ]

    static let evidence: [Int: String] = [
        1: "columns ZSTART_DATE, ZEND_DATE; no unique index on ZNAME",
        2: "marker Z_METADATA NSStoreModelVersionIdentifiers 2.0.0",
        3: "marker Z_METADATA NSStoreModelVersionIdentifiers 3.0.0",
    ]

    @Test("each sample store reads as the trips its script holds, at its version", arguments: [1, 2, 3])
    func sample(version: Int) throws {
        let path = try scratch.copySample("coredata-v\(version).store")
        let result = try CoreDataTesting.read(path)
        #expect(result.trips == Self.samples[version])
        #expect(result.rejected.isEmpty)
        #expect(result.detection.format == "coredata")
        #expect(result.detection.version == SchemaVersion(version, 0, 0))
        #expect(result.detection.evidence.description == Self.evidence[version])
        #expect(result.origins.map(\.record) == Array(1...Self.samples[version]!.count))
    }

    @Test("each sample store is what its SQL script makes", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote), arguments: [1, 2, 3])
    func sampleScript(version: Int) throws {
        let made = scratch.path("made.store")
        let script = try String(contentsOfFile: TestPaths.samples + "/make-coredata-v\(version).sql", encoding: .utf8)
        _ = try SQLiteCLI.run(made, script)
        let sample = try scratch.copySample("coredata-v\(version).store")
        #expect(try SQLiteCLI.run(made, ".dump") == SQLiteCLI.run(sample, ".dump"))
        #expect(try SQLiteCLI.run(sample, "PRAGMA journal_mode;") == "wal\n")
    }

    @Test("reading a store changes no byte of it and leaves no file beside it")
    func readOnly() throws {
        let path = try scratch.copySample("coredata-v3.store")
        let before = CoreDataTesting.bytes(path)
        _ = try CoreDataTesting.read(path)
        var detect = try FormatFactory.makeReader(.file(path), format: .coredata, options: ReadOptions())
        _ = try detect.next()
        #expect(CoreDataTesting.bytes(path) == before)
        #expect(scratch.names() == ["coredata-v3.store"])
    }

    // MARK: - Layouts

    static let trips: [ModelObject] = [
        F.trip("Alpha", start: "2024-05-01T09:30:00.250Z", items: [F.item("A1", details: "d", reservation: true), F.item("A2", inPlan: true)],
               accommodation: F.accommodation("Via 1", "Hotel")),
        F.trip("Beta", items: [F.item("B1")]),
        F.trip("Gamma", accommodation: F.accommodation("Calle 9", "Casa")),
    ]

    @Test("a WAL store is read with what its -wal file holds, and neither file changes")
    func wal() throws {
        let live = scratch.path("live.store")
        var builder = CoreDataStoreBuilder()
        builder.isWAL = true
        let c = try builder.build(at: live, trips: Self.trips)
        // The app saved one more trip; nothing was checkpointed.
        try c.execute("""
            INSERT INTO ZTRIP (Z_PK, Z_ENT, Z_OPT, ZLIVINGACCOMMODATION, ZSTARTDATE, ZENDDATE, ZNAME, ZDESTINATION)
            VALUES (4, 3, 1, NULL, 736248600.0, 736884000.0, 'Delta', 'Lima');
            INSERT INTO ZBUCKETLISTITEM (Z_PK, Z_ENT, Z_OPT, ZHASRESERVATION, ZISINPLAN, ZTRIP, ZDETAILS, ZTITLE) VALUES (9, 1, 1, 0, 1, 4, '', 'Machu Picchu');
            """)
        let copy = scratch.path("copy.store")
        try FileManager.default.copyItem(atPath: live, toPath: copy)
        try FileManager.default.copyItem(atPath: live + "-wal", toPath: copy + "-wal")
        _ = c
        let store = CoreDataTesting.bytes(copy), wal = CoreDataTesting.bytes(copy + "-wal")
        #expect((wal?.count ?? 0) > 0)
        let result = try CoreDataTesting.read(copy)
        #expect(result.trips == Self.trips + [F.trip("Delta", destination: "Lima", items: [F.item("Machu Picchu", inPlan: true)])])
        #expect(CoreDataTesting.bytes(copy) == store)
        #expect(CoreDataTesting.bytes(copy + "-wal") == wal)
    }

    @Test("entity numbers come from Z_PRIMARYKEY, sub-entities included, never from Core Data's usual order")
    func entityNumbers() throws {
        let path = scratch.path("renumbered.store")
        var builder = CoreDataStoreBuilder()
        builder.numbers = ["Trip": 12, "BucketListItem": 4, "LivingAccommodation": 9]
        builder.extraEntities = [(14, "BusinessTrip", 12), (15, "Archive", 0)]
        let c = try builder.build(at: path, trips: Self.trips)
        // A row of the sub-entity is a trip; a row of another entity in the table is not.
        try c.execute("""
            INSERT INTO ZTRIP (Z_PK, Z_ENT, Z_OPT, ZLIVINGACCOMMODATION, ZSTARTDATE, ZENDDATE, ZNAME, ZDESTINATION)
            VALUES (10, 14, 1, NULL, 736248600.0, 736884000.0, 'Offsite', 'Berlin'),
                   (11, 15, 1, NULL, 736248600.0, 736884000.0, 'Not a trip', 'Nowhere');
            """)
        let result = try CoreDataTesting.read(path)
        #expect(result.trips.map { $0.attributes[0] } == ["Alpha", "Beta", "Gamma", "Offsite"].map(Value.string))
        #expect(Array(result.trips.prefix(3)) == Self.trips)
    }

    @Test("an accommodation linked from either side alone is read", arguments: [
        CoreDataStoreBuilder.AccommodationLink.fromTrip, .fromAccommodation,
    ])
    func accommodationLink(link: CoreDataStoreBuilder.AccommodationLink) throws {
        let path = scratch.path("link.store")
        var builder = CoreDataStoreBuilder()
        builder.link = link
        try builder.build(at: path, trips: Self.trips)
        #expect(try CoreDataTesting.read(path).trips == Self.trips)
    }

    @Test("without model identifiers the version comes from the columns and the unique index", arguments: [
        ("1.0.0", "columns ZSTART_DATE, ZEND_DATE; no unique index on ZNAME"),
        ("2.0.0", "columns ZSTART_DATE, ZEND_DATE; unique index on ZNAME"),
        ("3.0.0", "columns ZSTARTDATE, ZENDDATE; unique index on ZNAME"),
    ])
    func versionFromColumns(version: String, evidence: String) throws {
        let schema = TripMigrationPlan.schema(for: SchemaVersion(version)!)!
        for (n, plist) in [nil, CoreDataStoreBuilder.plist(identifiers: [""])].enumerated() {
            let path = scratch.path("columns-\(n).store")
            var builder = CoreDataStoreBuilder()
            builder.schema = schema
            builder.plist = plist
            let trips = Self.trips.map { t in F.trip(t.attributes[0].stringValue!, start: "2024-05-01T09:30:00.250Z",
                                                     items: t.relationships[0].objects, accommodation: t.relationships[1].objects.first, schema: schema) }
            try builder.build(at: path, trips: trips)
            let result = try CoreDataTesting.read(path)
            #expect(result.detection.version == schema.versionIdentifier)
            #expect(result.detection.evidence == .structure(evidence))
            #expect(result.trips == trips)
        }
    }

    @Test("a model version the columns contradict is a data error")
    func contradiction() throws {
        let path = scratch.path("contradiction.store")
        var builder = CoreDataStoreBuilder()
        builder.plist = CoreDataStoreBuilder.plist(identifiers: ["1.0.0"])
        try builder.build(at: path, trips: Self.trips)
        let error = SQLiteTesting.tripError { _ = try CoreDataTesting.read(path) }
        #expect(error == TripError.data("\(path): the store's metadata names model version 1.0.0, but ZTRIP has columns ZSTARTDATE, ZENDDATE; unique index on ZNAME",
                                        notes: ["its columns fit 3.0.0"]))
    }

    @Test("a damaged metadata plist leaves the version to the columns, and the evidence says so")
    func damagedPlist() throws {
        let path = scratch.path("damaged.store")
        var builder = CoreDataStoreBuilder()
        builder.plist = Array(CoreDataStoreBuilder.plist(identifiers: ["3.0.0"]).dropLast(20))
        try builder.build(at: path, trips: Self.trips)
        let result = try CoreDataTesting.read(path)
        #expect(result.trips == Self.trips)
        guard case .structure(let text) = result.detection.evidence else {
            Issue.record("expected the columns as evidence, got \(result.detection.evidence)")
            return
        }
        #expect(text.hasPrefix("columns ZSTARTDATE, ZENDDATE; unique index on ZNAME; Z_METADATA plist unreadable ("))
    }

    @Test("an identifier that is none of tripconv's versions is said, and the columns decide")
    func foreignIdentifier() throws {
        let path = scratch.path("foreign.store")
        var builder = CoreDataStoreBuilder()
        builder.plist = CoreDataStoreBuilder.plist(identifiers: ["Trips v7 (beta)"])
        try builder.build(at: path, trips: Self.trips)
        #expect(try CoreDataTesting.read(path).detection.evidence
                == .structure("columns ZSTARTDATE, ZENDDATE; unique index on ZNAME; model version 'Trips v7 (beta)' is none of tripconv's"))
    }

    @Test("dates are seconds since 2001, whatever --date-epoch says for other inputs")
    func dateEpoch() throws {
        let path = scratch.path("dates.store")
        try CoreDataStoreBuilder().build(at: path, trips: Self.trips)
        #expect(try CoreDataTesting.read(path, options: ReadOptions(dateEpoch: .unix)).trips == Self.trips)
    }

    @Test("a column no version declares rejects each trip, unless unknown fields are ignored")
    func unknownColumn() throws {
        let path = scratch.path("unknown.store")
        var builder = CoreDataStoreBuilder()
        builder.extraTripColumn = "ZRATING"
        try builder.build(at: path, trips: Self.trips)
        let strict = try CoreDataTesting.read(path)
        #expect(strict.trips.isEmpty)
        #expect(strict.rejected.first?.reason == "unknown field 'ZRATING' matches no schema version")
        let lenient = try CoreDataTesting.read(path, options: ReadOptions(ignoreUnknown: true))
        #expect(lenient.trips == Self.trips)
    }

    @Test("a store without a Trip entity is a data error naming its entities")
    func noTrips() throws {
        let path = scratch.path("other.store")
        var builder = CoreDataStoreBuilder()
        builder.numbers = ["BucketListItem": 1, "LivingAccommodation": 2, "Journey": 3]
        try builder.build(at: path, trips: [])
        let error = SQLiteTesting.tripError { _ = try CoreDataTesting.read(path) }
        #expect(error == TripError.data("\(path): a Core Data store without a Trip entity", notes: ["its entities: BucketListItem, LivingAccommodation, Journey"]))
    }

    // MARK: - Never written

    @Test("tripconv never writes into a Core Data store, nor migrates one")
    func neverWritten() throws {
        let path = try scratch.copySample("coredata-v1.store")
        let before = CoreDataTesting.bytes(path)
        let write = SQLiteTesting.tripError { _ = try SQLiteRecordWriter(path: path, options: WriteOptions(migrate: true)) }
        #expect(write == TripError.data("\(path): a Core Data (SwiftData) store, which tripconv reads but never writes or migrates",
                                        notes: ["convert it into a new store: `tripconv \(path) -o trips.sqlite`"]))
        let migrate = SQLiteTesting.tripError { _ = try SQLiteStore.open(path: path, readOnly: false).migrate(to: TripSchemaV3.self) }
        #expect(migrate?.kind == .data)
        let writer = SQLiteTesting.tripError { _ = try FormatFactory.makeWriter(.file(scratch.path("out.store")), format: .coredata, options: WriteOptions()) }
        #expect(writer?.kind == .usage)
        #expect(CoreDataTesting.bytes(path) == before)
    }

    @Test("--from coredata refuses a store that is not Core Data's, and standard input")
    func notCoreData() throws {
        let path = scratch.path("trips.sqlite")
        try SQLiteTesting.writeStore([F.trip("Alpha")], to: path)
        let error = SQLiteTesting.tripError { _ = try FormatFactory.makeReader(.file(path), format: .coredata, options: ReadOptions()) }
        #expect(error == TripError.data("\(path): not a Core Data store: it has no Z_PRIMARYKEY and Z_METADATA tables"))
        let stdin = SQLiteTesting.tripError { _ = try FormatFactory.makeReader(.standardInput, format: .coredata, options: ReadOptions()) }
        #expect(stdin?.kind == .usage)
        // And a tripconv store read as sqlite is still tripconv's.
        #expect(try CoreDataTesting.read(path).detection.format == "sqlite")
    }
}
