import Foundation
import Testing
@testable import TripFormats
import TripKit

@Suite("CSV round trip")
struct CSVRoundTripTests {
    /// Writes trips and reads them back, through files and the public factory entry points.
    static func roundTrip(_ trips: [ModelObject], format: Format, schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> (trips: [ModelObject], detection: Detection) {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("trips.\(format.rawValue)")
        var writer = try FormatFactory.makeWriter(.file(path), format: format, options: WriteOptions(schema: schema))
        for t in trips { try writer.write(t) }
        try writer.finish()
        let (items, detection) = try CSVIO.read(path: path, format: format)
        return (CSVIO.trips(items), detection)
    }

    static let examples: [ModelObject] = [
        CSVTrip.trip("Paris, \"la ville\"", "France\nEurope", start: 1_714_555_800_123, end: 1_714_815_000_000,
                     items: [CSVTrip.item("=1+1", details: " padded ", reservation: true),
                             CSVTrip.item("tab\there", details: "back\\slash \\t", inPlan: true),
                             CSVTrip.item("", details: "cr\ronly")],
                     place: CSVTrip.place("1 Main St\r\nFloor 2", "")),
        CSVTrip.trip("", "", items: [], place: nil),
        CSVTrip.trip("日本 🚀", "\u{FEFF}bom", place: CSVTrip.place("", "Ryokan")),
    ]

    @Test("examples with every quirk come back equal", arguments: [Format.csv, .tsv])
    func examples(format: Format) throws {
        #expect(try Self.roundTrip(Self.examples, format: format).trips == Self.examples.map(CSVTrip.normalized))
    }

    @Test("1.0.0 trips come back as 1.0.0", arguments: [Format.csv, .tsv])
    func oldVersion(format: Format) throws {
        let trips = [CSVTrip.trip("A", "B", items: [CSVTrip.item("x")], schema: TripSchemaV1.self),
                     CSVTrip.trip("A", "C", schema: TripSchemaV1.self)]
        let (read, detection) = try Self.roundTrip(trips, format: format, schema: TripSchemaV1.self)
        #expect(read == trips)
        #expect(detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("generated trips come back equal", arguments: [Format.csv, .tsv], [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func property(format: Format, seed: UInt64) throws {
        var generator = CSVTripGenerator(seed: seed)
        let trips = (0..<40).map { _ in generator.trip() }
        let read = try Self.roundTrip(trips, format: format).trips
        #expect(read.count == trips.count)
        for (i, (a, b)) in zip(read, trips.map(CSVTrip.normalized)).enumerated() where a != b {
            Issue.record("seed \(seed), trip \(i): read \(a), wrote \(b)")
            break
        }
    }
}

@Suite("TSV format")
struct TSVFormatTests {
    @Test("TSV escapes tab, line breaks and backslash and nothing else")
    func exactText() throws {
        let trip = CSVTrip.trip("a\tb", "say \"hi\", \\o/", items: [CSVTrip.item("l1\nl2\r", details: "=x")])
        #expect(try CSVIO.written([trip], format: .tsv) == """
            name\tdestination\tstartDate\tendDate\tlivingAccommodation.address\tlivingAccommodation.placeName\tbucketList.1.title\tbucketList.1.details\tbucketList.1.hasReservation\tbucketList.1.isInPlan
            a\\tb\tsay "hi", \\\\o/\t2024-05-01T09:30:00Z\t2024-05-04T09:30:00Z\t\t\tl1\\nl2\\r\t=x\tfalse\tfalse

            """)
    }

    @Test("csvSafeFormulas applies to TSV too")
    func safeFormulas() throws {
        let text = try CSVIO.written([CSVTrip.trip("@a", "b")], format: .tsv, options: WriteOptions(csvSafeFormulas: true))
        #expect(text.split(separator: "\n")[1].hasPrefix("'@a\tb\t"))
    }

    @Test("a quote in TSV is an ordinary character")
    func quotes() throws {
        let text = "name\tdestination\tstartDate\tendDate\n\"A\tB\"\"\t2024-05-01\t2024-05-02\n"
        let trips = CSVIO.trips(try CSVIO.read(text, format: .tsv).items)
        #expect(trips.first?.attributes[0] == .string("\"A"))
        #expect(trips.first?.attributes[1] == .string("B\"\""))
    }

    @Test("in TSV an empty string field is the empty string, an empty date is missing")
    func empties() throws {
        let items = try CSVIO.read("name\tdestination\tstartDate\tendDate\n\tX\t2024-05-01\t2024-05-02\nA\tX\t\t2024-05-02\n", format: .tsv).items
        guard case .trip(let t) = items[0] else { Issue.record("expected a trip"); return }
        #expect(t.object.attributes[0] == .string(""))
        #expect(CSVIO.rejections(items).first?.reason == "missing required field 'startDate'")
    }

    @Test("TSV escapes round trip through the row reader", arguments: [UInt64(11), 12, 13])
    func escapesRoundTrip(seed: UInt64) throws {
        var generator = CSVTripGenerator(seed: seed)
        let encoder = CSVCellEncoder(dialect: .tsv, safeFormulas: false)
        var cells: [[String]] = []
        var bytes: [UInt8] = []
        for _ in 0..<50 {
            var row = (0..<3).map { _ in generator.string(maxPieces: 8) }
            row[0] = "r" + row[0]   // a row of one empty cell would be a blank line
            cells.append(row)
            for (i, cell) in row.enumerated() {
                if i > 0 { bytes.append(9) }
                var c = cell
                c.withUTF8 { encoder.appendText($0, to: &bytes) }
            }
            bytes.append(10)
        }
        #expect(try CSVIO.rows(bytes, dialect: .tsv) == cells)
        #expect(try CSVIO.rows(bytes, dialect: .tsv, chunkSize: 16) == cells)
    }
}

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
        let viaTables = try CSVFormat.makeTablesReader(directory: out, format: format, options: ReadOptions())
        let viaFactory = try FormatFactory.makeReader(.file(out), format: format, options: ReadOptions())
        for var reader in [viaTables, viaFactory] {
            var items: [ReadItem] = []
            while let item = try reader.next() { items.append(item) }
            #expect(CSVIO.trips(items) == Self.trips)
            #expect(reader.detection.version == SchemaVersion(3, 0, 0))
        }
    }

    @Test("generated trips round trip through tables", arguments: [UInt64(21), 22, 23])
    func property(seed: UInt64) throws {
        var generator = CSVTripGenerator(seed: seed)
        let trips = (0..<30).map { _ in generator.trip(schema: TripSchemaV2.self) }
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        try Self.write(trips, to: dir.file("t"), schema: TripSchemaV2.self)
        let (items, detection) = try CSVIO.read(path: dir.file("t"))
        #expect(CSVIO.trips(items) == trips.map(CSVTrip.normalized))
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
