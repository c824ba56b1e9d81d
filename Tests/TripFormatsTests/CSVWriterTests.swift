import Foundation
import Testing
@testable import TripFormats
import TripKit

@Suite("CSV writer")
struct CSVWriterTests {
    @Test("a trip with one item and an accommodation is written as one row under the 3.0.0 header")
    func smallCase() throws {
        let trip = CSVTrip.trip("Paris", "France", items: [CSVTrip.item("Louvre", details: "Mona Lisa", reservation: true)],
                                place: CSVTrip.place("1 Rue de Rivoli", "Hôtel"))
        #expect(try CSVIO.written([trip]) == """
            name,destination,startDate,endDate,livingAccommodation.address,livingAccommodation.placeName,\
            bucketList.1.title,bucketList.1.details,bucketList.1.hasReservation,bucketList.1.isInPlan
            Paris,France,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,1 Rue de Rivoli,Hôtel,Louvre,Mona Lisa,true,false

            """)
    }

    @Test("only cells holding a comma, a quote or a line break are quoted, quotes doubled")
    func quotesOnlyWhatMust() throws {
        let trip = CSVTrip.trip("a,b", "say \"hi\"", items: [CSVTrip.item("line\nbreak", details: "cr\rlf\r\n"),
                                                              CSVTrip.item(" spaced ", details: "semi;colon\ttab")])
        let header = "name,destination,startDate,endDate,livingAccommodation.address,livingAccommodation.placeName,"
            + "bucketList.1.title,bucketList.1.details,bucketList.1.hasReservation,bucketList.1.isInPlan,"
            + "bucketList.2.title,bucketList.2.details,bucketList.2.hasReservation,bucketList.2.isInPlan\n"
        let row = #""a,b","say ""hi""",2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,,,"line"# + "\n"
            + #"break","cr"# + "\r" + "lf\r\n" + #"",false,false, spaced ,semi;colon"# + "\t" + "tab,false,false\n"
        #expect(try CSVIO.written([trip]) == header + row)
    }

    @Test("rows end with LF only, the last one too")
    func lineEndings() throws {
        let text = try CSVIO.written([CSVTrip.trip("A", "B"), CSVTrip.trip("C", "D")])
        #expect(!text.utf8.contains(13))
        #expect(text.utf8.filter { $0 == 10 }.count == 3)
        #expect(text.hasSuffix("\n"))
    }

    @Test("the header is as wide as the longest bucket list, shorter lists leave their cells empty")
    func headerWidth() throws {
        let trips = [CSVTrip.trip("A", "X", items: [CSVTrip.item("one")]),
                     CSVTrip.trip("B", "Y", items: [CSVTrip.item("1"), CSVTrip.item("2"), CSVTrip.item("3")]),
                     CSVTrip.trip("C", "Z")]
        let lines = try CSVIO.written(trips).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0].hasSuffix("bucketList.3.title,bucketList.3.details,bucketList.3.hasReservation,bucketList.3.isInPlan"))
        #expect(lines[0].split(separator: ",").count == 6 + 3 * 4)
        #expect(lines[1].hasSuffix(",,,one,,false,false,,,,,,,,"))
        #expect(lines[3] == "C,Z,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z" + String(repeating: ",", count: 14))
    }

    @Test("with no items at all there are no bucketList columns")
    func noItems() throws {
        #expect(try CSVIO.written([CSVTrip.trip("A", "B")]) == """
            name,destination,startDate,endDate,livingAccommodation.address,livingAccommodation.placeName
            A,B,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,,

            """)
    }

    @Test("no trips give the header alone")
    func noTrips() throws {
        #expect(try CSVIO.written([]) == "name,destination,startDate,endDate,livingAccommodation.address,livingAccommodation.placeName\n")
    }

    @Test("1.0.0 and 2.0.0 name the dates start_date and end_date")
    func oldNames() throws {
        let trip = CSVTrip.trip("A", "B", items: [CSVTrip.item("t")], schema: TripSchemaV1.self)
        let text = try CSVIO.written([trip], options: WriteOptions(schema: TripSchemaV1.self))
        #expect(text == """
            name,destination,start_date,end_date,livingAccommodation.address,livingAccommodation.placeName,\
            bucketList.1.title,bucketList.1.details,bucketList.1.hasReservation,bucketList.1.isInPlan
            A,B,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,,,t,,false,false

            """)
        let v2 = try CSVIO.written([CSVTrip.trip("A", "B", schema: TripSchemaV2.self)], options: WriteOptions(schema: TripSchemaV2.self))
        #expect(v2.hasPrefix("name,destination,start_date,end_date,"))
    }

    @Test("data is written as it is unless csvSafeFormulas is on")
    func formulasAsIs() throws {
        let trip = CSVTrip.trip("=SUM(A1:A2)", "+33", items: [CSVTrip.item("-x", details: "@me")])
        let text = try CSVIO.written([trip])
        #expect(text.split(separator: "\n")[1] == "=SUM(A1:A2),+33,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,,,-x,@me,false,false")
    }

    @Test("csvSafeFormulas prefixes a quote to cells starting with = + - or @, inside the quotes when quoted")
    func safeFormulas() throws {
        let trip = CSVTrip.trip("=SUM(A1:A2)", "+33", items: [CSVTrip.item("-x", details: "@me, you")],
                                place: CSVTrip.place("a=b", "-"))
        let text = try CSVIO.written([trip], options: WriteOptions(csvSafeFormulas: true))
        #expect(text.split(separator: "\n")[1] == "'=SUM(A1:A2),'+33,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,a=b,'-,'-x,\"'@me, you\",false,false")
    }

    @Test("an empty name is written as a quoted empty cell, an empty default field as an empty cell")
    func emptyStrings() throws {
        let trip = CSVTrip.trip("", "", items: [CSVTrip.item("", details: "")], place: CSVTrip.place("", "p"))
        #expect(try CSVIO.written([trip]).split(separator: "\n")[1]
                == "\"\",\"\",2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,,p,\"\",,false,false")
    }

    @Test("dates keep their milliseconds when they have any")
    func milliseconds() throws {
        let text = try CSVIO.written([CSVTrip.trip("A", "B", start: 1_714_555_800_123, end: 0)])
        #expect(text.split(separator: "\n")[1] == "A,B,2024-05-01T09:30:00.123Z,1970-01-01T00:00:00Z,,")
    }

    @Test("an aborted writer leaves no file and an existing file untouched")
    func abortLeavesNothing() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let fresh = dir.file("fresh.csv"), existing = dir.file("old.csv")
        try "old\n".write(toFile: existing, atomically: true, encoding: .utf8)
        for path in [fresh, existing] {
            var writer = try CSVFormat.makeWriter(.file(path), format: .csv, options: WriteOptions())
            try writer.write(CSVTrip.trip("A", "B"))
            writer.abort()
        }
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "old\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["old.csv"])
    }
}
