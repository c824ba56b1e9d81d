import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

@Suite("CSV tables layout")
struct CSVTablesTests {
    static let trips = [
        CSVTrip.trip("Paris", "France", items: [CSVTrip.item("Louvre", details: "a, \"b\"", reservation: true), CSVTrip.item("Seine")],
                     place: CSVTrip.place("1 Rue", "Inn")),
        CSVTrip.trip("Rome", "Italy"),
        CSVTrip.trip("Oslo", "", items: [CSVTrip.item("")], place: CSVTrip.place("", "Hut")),
    ]

    static func write(_ trips: [ModelObject], to directory: String, format: Format = .csv,
                      schema: any VersionedSchema.Type = TripSchemaV3.self) throws {
        var writer = try CSVFormat.makeTablesWriter(directory: directory, format: format, options: WriteOptions(schema: schema))
        for t in trips { try writer.write(t) }
        try writer.finish()
    }

    @Test("the tables are three files joined by trip_id, items with their position")
    func exactFiles() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let out = dir.file("export")
        try Self.write(Self.trips, to: out)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted()
                == ["bucket_list_items.csv", "living_accommodations.csv", "trips.csv"])
        #expect(try String(contentsOfFile: out + "/trips.csv", encoding: .utf8) == """
            trip_id,name,destination,startDate,endDate
            1,Paris,France,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z
            2,Rome,Italy,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z
            3,Oslo,"",2024-05-01T09:30:00Z,2024-05-04T09:30:00Z

            """)
        #expect(try String(contentsOfFile: out + "/bucket_list_items.csv", encoding: .utf8)
                == "trip_id,position,title,details,hasReservation,isInPlan\n1,1,Louvre,\"a, \"\"b\"\"\",true,false\n1,2,Seine,,false,false\n3,1,\"\",,false,false\n")
        #expect(try String(contentsOfFile: out + "/living_accommodations.csv", encoding: .utf8)
                == "trip_id,address,placeName\n1,1 Rue,Inn\n3,,Hut\n")
    }

    @Test("a tables directory reads back the trips, through makeReader too", arguments: [Format.csv, .tsv])
    func roundTrip(format: Format) throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let out = dir.file("export")
        try Self.write(Self.trips, to: out, format: format)
        #expect(CSVFormat.isTablesDirectory(out, format: format))
        #expect(!CSVFormat.isTablesDirectory(dir.path, format: format))
        let viaTables = try CSVFormat.makeTablesReader(directory: out, format: format, options: ReadOptions())
        let viaFactory = try FormatFactory.makeReader(.file(out), format: format, options: ReadOptions())
        for var reader in [viaTables, viaFactory] {
            var items: [ReadItem] = []
            while let item = try reader.next() { items.append(item) }
            // Oslo's empty destination reads as a missing one: that trip is a bad record.
            CSVTrip.expectRead(items, wrote: Self.trips)
            #expect(reader.detection.version == SchemaVersion(3, 0, 0))
        }
    }

    @Test("generated trips round trip through tables", arguments: [UInt64(21), 22, 23])
    func property(seed: UInt64) throws {
        var generator = ArbitraryTrips.csv(seed: seed)
        let trips = (0..<30).map { _ in generator.trip(schema: TripSchemaV2.self) }
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        try Self.write(trips, to: dir.file("t"), schema: TripSchemaV2.self)
        let (items, detection) = try CSVIO.read(path: dir.file("t"))
        CSVTrip.expectRead(items, wrote: trips)
        #expect(detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("related rows may come in any order")
    func anyOrder() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        try "trip_id,name,destination,startDate,endDate\nb,B,Y,2024-05-01,2024-05-02\na,A,X,2024-05-01,2024-05-02\n"
            .write(toFile: dir.file("trips.csv"), atomically: true, encoding: .utf8)
        try "title,position,trip_id\nsecond,2,a\nonly,1,b\nfirst,1,a\n"
            .write(toFile: dir.file("bucket_list_items.csv"), atomically: true, encoding: .utf8)
        let trips = CSVIO.trips(try CSVIO.read(path: dir.path).items)
        #expect(trips.map { $0.relationships[0].objects.map { $0.attributes[0] } }
                == [[.string("only")], [.string("first"), .string("second")]])
    }

    @Test("a related row whose trip_id matches no trip is a data error")
    func orphan() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        try "trip_id,name,destination,startDate,endDate\n1,A,X,2024-05-01,2024-05-02\n"
            .write(toFile: dir.file("trips.csv"), atomically: true, encoding: .utf8)
        try "trip_id,address,placeName\n1,a,b\n7,c,d\n"
            .write(toFile: dir.file("living_accommodations.csv"), atomically: true, encoding: .utf8)
        let error = CSVIO.error { _ = try CSVIO.read(path: dir.path) }
        #expect(error?.message == "\(dir.path)/living_accommodations.csv:3:1: trip_id '7' matches no trip in \(dir.path)/trips.csv")
    }

    @Test("an aborted tables writer leaves no directory behind")
    func abort() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        var writer = try CSVFormat.makeTablesWriter(directory: dir.file("out"), options: WriteOptions())
        try writer.write(Self.trips[0])
        writer.abort()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("an earlier tables directory is replaced whole; a directory of other files is refused")
    func replace() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let out = dir.file("out")
        try Self.write(Self.trips, to: out)
        try Self.write([Self.trips[1]], to: out)
        #expect(try String(contentsOfFile: out + "/trips.csv", encoding: .utf8).split(separator: "\n").count == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out"])
        let other = dir.file("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
        try "keep".write(toFile: other + "/notes.txt", atomically: true, encoding: .utf8)
        let error = CSVIO.error { try Self.write(Self.trips, to: other) }
        #expect(error?.kind == .cantCreate)
        #expect(try FileManager.default.contentsOfDirectory(atPath: other) == ["notes.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["other", "out"])
    }
}
