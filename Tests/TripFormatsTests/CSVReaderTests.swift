import Foundation
import Testing
@testable import TripFormats
import TripKit

@Suite("CSV reader")
struct CSVReaderTests {
    static let header = "name,destination,startDate,endDate,livingAccommodation.address,livingAccommodation.placeName,bucketList.1.title,bucketList.1.details,bucketList.1.hasReservation,bucketList.1.isInPlan"

    static func one(_ text: String, options: ReadOptions = ReadOptions()) throws -> ModelObject? {
        let trips = CSVIO.trips(try CSVIO.read(text, options: options).items)
        #expect(trips.count == 1)
        return trips.first
    }

    @Test("a quoted field keeps its comma, doubled quote and line break")
    func quotedField() throws {
        let trip = try #require(try Self.one(Self.header + "\n\"Paris, \"\"the\"\"\nCity\",France,2024-05-01,2024-05-02,,,,,,\n"))
        #expect(trip.attributes[0] == .string("Paris, \"the\"\nCity"))
    }

    @Test("CRLF, LF and lone CR line endings mixed in one file each end a row, and line numbers count each")
    func mixedLineEndings() throws {
        let text = Self.header + "\r\nA,X,2024-05-01,2024-05-02,,,,,,\nB,Y,2024-05-01,2024-05-02,,,,,,\rC,Z,2024-05-01,2024-05-02,,,,,,\r\n"
        let items = try CSVIO.read(text).items
        let trips = CSVIO.trips(items)
        #expect(trips.map { $0.attributes[0] } == [.string("A"), .string("B"), .string("C")])
        let lines = items.compactMap { if case .trip(let t) = $0 { return t.origin.line } else { return nil } }
        #expect(lines == [2, 3, 4])
    }

    @Test("a line break inside quotes is kept as it is, CRLF included, and counted for the next row's line")
    func lineBreakInQuotes() throws {
        let text = Self.header + "\n\"a\r\nb\",X,2024-05-01,2024-05-02,,,,,,\n\"c\rd\",X,2024-05-01,2024-05-02,,,,,,\nE,X,2024-05-01,2024-05-02,,,,,,\n"
        let items = try CSVIO.read(text).items
        #expect(CSVIO.trips(items).map { $0.attributes[0] } == [.string("a\r\nb"), .string("c\rd"), .string("E")])
        let lines = items.compactMap { if case .trip(let t) = $0 { return t.origin.line } else { return nil } }
        #expect(lines == [2, 4, 6])
    }

    @Test("a UTF-8 byte-order mark before the header is dropped")
    func byteOrderMark() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array((Self.header + "\nA,X,2024-05-01,2024-05-02,,,,,,\n").utf8)
        #expect(CSVIO.trips(try CSVIO.read(bytes).items).count == 1)
    }

    @Test("the last row may end without a line break")
    func noFinalNewline() throws {
        let trip = try #require(try Self.one(Self.header + "\nA,X,2024-05-01,2024-05-02,,,T,d,yes,\"1\""))
        #expect(trip.relationships[0].objects == [CSVTrip.item("T", details: "d", reservation: true, inPlan: true)])
    }

    @Test("empty accommodation and item cells mean no accommodation and no item")
    func emptyGroups() throws {
        let trip = try #require(try Self.one(Self.header + "\nA,X,2024-05-01,2024-05-02,,,,,,\n"))
        #expect(trip.relationships[0] == .toMany([]))
        #expect(trip.relationships[1] == .toOne(nil))
    }

    @Test("an empty cell in an item takes the field's default")
    func emptyCellsTakeDefaults() throws {
        let trip = try #require(try Self.one(Self.header + "\nA,X,2024-05-01,2024-05-02,,Inn,T,,,\n"))
        #expect(trip.relationships[0].objects == [CSVTrip.item("T")])
        #expect(trip.relationships[1].objects == [CSVTrip.place("", "Inn")])
    }

    @Test("an empty name or destination, quoted or not, is a missing one (issue 13)", arguments: [Format.csv, .tsv])
    func emptyNameQuotedOrNot(format: Format) throws {
        let csv = Self.header + "\n,X,2024-05-01,2024-05-02,,,,,,\n\"\",X,2024-05-01,2024-05-02,,,,,,\nA,\"\",2024-05-01,2024-05-02,,,,,,\n"
        let text = format == .tsv ? csv.replacingOccurrences(of: ",", with: "\t").replacingOccurrences(of: "\"\"", with: "") : csv
        let rejections = CSVIO.rejections(try CSVIO.read(text, format: format).items)
        #expect(rejections.map(\.reason) == ["missing required field 'name'", "missing required field 'name'",
                                              "missing required field 'destination'"])
        let separator = format == .tsv ? "\t" : ","
        #expect(rejections.first?.text == ",X,2024-05-01,2024-05-02,,,,,,".replacingOccurrences(of: ",", with: separator))
    }

    @Test("columns may come in any order")
    func anyOrder() throws {
        let text = "bucketList.1.isInPlan,livingAccommodation.placeName,endDate,bucketList.1.title,name,startDate,destination\ntrue,Inn,2024-05-02T00:00:00Z,T,A,2024-05-01T00:00:00Z,X\n"
        let trip = try #require(try Self.one(text))
        #expect(trip == CSVTrip.trip("A", "X", start: 1_714_521_600_000, end: 1_714_608_000_000,
                                     items: [CSVTrip.item("T", inPlan: true)], place: CSVTrip.place("", "Inn")))
    }

    @Test("an unknown column is a data error naming it")
    func unknownColumn() throws {
        let error = CSVIO.error { _ = try CSVIO.read("name,destination,startDate,endDate,rider,bucketList.1.colour\nA,X,2024-05-01,2024-05-02,r,c\n") }
        #expect(error?.kind == .data)
        #expect(error?.message == "in.csv:1:36: unknown columns 'rider', 'bucketList.1.colour' match no schema version")
    }

    @Test("with ignoreUnknown unknown columns are skipped and counted")
    func ignoreUnknown() throws {
        let (items, detection) = try CSVIO.read("name,destination,startDate,endDate,rider\nA,X,2024-05-01,2024-05-02,r\nB,X,2024-05-01,2024-05-02,s\n",
                                                options: ReadOptions(ignoreUnknown: true))
        #expect(CSVIO.trips(items).count == 2)
        #expect(detection.unknownIgnored == 2)
    }

    @Test("a header without the trip columns is a data error naming the missing ones")
    func missingColumns() throws {
        let error = CSVIO.error { _ = try CSVIO.read("a,b,c\n1,2,3\n") }
        #expect(error?.kind == .data)
        #expect(error?.message == "in.csv:1:1: missing trip columns 'name', 'destination', 'startDate', 'endDate' (as 3.0.0 names them)")
        let dates = CSVIO.error { _ = try CSVIO.read("name,destination,start_date\nA,B,2024-05-01\n") }
        #expect(dates?.message == "in.csv:1:1: missing trip column 'end_date' (as 2.0.0 names them)")
    }

    @Test("a repeated column is a data error")
    func repeatedColumn() throws {
        let error = CSVIO.error { _ = try CSVIO.read("name,destination,startDate,endDate,name\nA,X,2024-05-01,2024-05-02,B\n") }
        #expect(error?.message == "in.csv:1:36: column 'name' appears twice (first as column 1)")
    }

    @Test("1.0.0 spellings bucketListItem and livingAccommodations are read, and say 1.0.0")
    func legacySpellings() throws {
        let text = "name,destination,start_date,end_date,livingAccommodations.address,livingAccommodations.placeName,bucketListItem.1.title,bucketListItem.1.isInPlan,bucketListItem.2.title\nA,X,2024-05-01,2024-05-02,Street,Inn,T,no,U\n"
        let (items, detection) = try CSVIO.read(text)
        let trips = CSVIO.trips(items)
        #expect(trips == [CSVTrip.trip("A", "X", start: 1_714_521_600_000, end: 1_714_608_000_000,
                                       items: [CSVTrip.item("T"), CSVTrip.item("U")], place: CSVTrip.place("Street", "Inn"),
                                       schema: TripSchemaV1.self)])
        #expect(detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("start_date says 2.0.0 or older, startDate says 3.0.0")
    func versionFromHeader() throws {
        #expect(try CSVIO.read("name,destination,start_date,end_date\nA,X,2024-05-01,2024-05-02\n").detection.version == SchemaVersion(1, 0, 0))
        #expect(try CSVIO.read("name,destination,startDate,endDate\nA,X,2024-05-01,2024-05-02\n").detection.version == SchemaVersion(3, 0, 0))
    }

    @Test("a tripViews column is ignored and counted")
    func tripViews() throws {
        let (items, detection) = try CSVIO.read("name,destination,startDate,endDate,tripViews\nA,X,2024-05-01,2024-05-02,12\n")
        #expect(CSVIO.trips(items).first?.attributes[4] == .int(0))
        #expect(detection.transientIgnored == 1)
    }

    @Test("booleans are read as true/false, 1/0 and yes/no in any case")
    func booleans() throws {
        var text = "name,destination,startDate,endDate"
        let spellings = ["TRUE", "false", "1", "0", "Yes", "NO"]
        for i in 1...3 { text += ",bucketList.\(i).title,bucketList.\(i).hasReservation,bucketList.\(i).isInPlan" }
        text += "\nA,X,2024-05-01,2024-05-02"
        for i in 0..<3 { text += ",t\(i),\(spellings[2 * i]),\(spellings[2 * i + 1])" }
        let trip = try #require(try Self.one(text + "\n"))
        #expect(trip.relationships[0].objects.map { [$0.attributes[2], $0.attributes[3]] }
                == [[.bool(true), .bool(false)], [.bool(true), .bool(false)], [.bool(true), .bool(false)]])
    }

    @Test("dates are read as ISO 8601 or as numbers of the date epoch")
    func dates() throws {
        let trip = try #require(try Self.one("name,destination,startDate,endDate\nA,X,2024-05-01T09:30:00.5+02:00,0\n",
                                             options: ReadOptions(dateEpoch: .unix)))
        #expect(trip.attributes[2] == .date(Timestamp(milliseconds: 1_714_548_600_500)))
        #expect(trip.attributes[3] == .date(Timestamp(milliseconds: 0)))
    }

    @Test("Miller's [] and null cells in a bare relationship column mean nothing")
    func millerEmpties() throws {
        let text = "name,destination,startDate,endDate,bucketList,livingAccommodation,bucketList.1.title\nA,X,2024-05-01,2024-05-02,[],null,\nB,X,2024-05-01,2024-05-02,,{},T\n"
        let trips = CSVIO.trips(try CSVIO.read(text).items)
        #expect(trips.map { $0.relationships[0].objects.count } == [0, 1])
        #expect(trips.map { $0.relationships[1] } == [.toOne(nil), .toOne(nil)])
    }

    @Test("a row with the wrong number of cells is a rejected record, and reading goes on")
    func wrongCellCount() throws {
        let items = try CSVIO.read("name,destination,startDate,endDate\nA,X,2024-05-01\nB,X,2024-05-01,2024-05-02\n").items
        let rejections = CSVIO.rejections(items)
        #expect(rejections.count == 1)
        #expect(rejections.first?.reason == "expected 4 cells as the header has, found 3")
        #expect(rejections.first?.text == "A,X,2024-05-01")
        #expect(rejections.first?.origin.record == 1)
        #expect(rejections.first?.origin.line == 2)
        #expect(items.count == 2)
    }

    @Test("blank lines and rows of empty cells are skipped")
    func blankRows() throws {
        let items = try CSVIO.read("name,destination,startDate,endDate\n\nA,X,2024-05-01,2024-05-02\r\n\r\n,,,\n").items
        #expect(items.count == 1)
    }

    @Test("an unterminated quoted field is a data error with where it ends and where it opened")
    func unterminatedQuote() throws {
        let error = CSVIO.error { _ = try CSVIO.read("name,destination,startDate,endDate\nA,\"X,2024-05-01,\n2024-05-02\n") }
        #expect(error?.kind == .data)
        #expect(error?.message == "in.csv:4:1: unterminated quoted field (opened at 2:3)")
    }

    @Test("text after a closing quote is a data error")
    func strayQuote() throws {
        let error = CSVIO.error { _ = try CSVIO.read("name,destination,startDate,endDate\n\"A\" \",X,2024-05-01,2024-05-02\n") }
        #expect(error?.message == "in.csv:2:4: expected ',' or a line end after a closing quote, found ' '")
    }

    @Test("bytes that are not UTF-8 are a data error with line and column")
    func invalidUTF8() throws {
        let bytes = Array("name,destination,startDate,endDate\nAé,".utf8) + [0x48, 0xF3, 0x6E] + Array(",2024-05-01,2024-05-02\n".utf8)
        let error = CSVIO.error { _ = try CSVIO.read(bytes) }
        #expect(error?.kind == .data)
        #expect(error?.message == "in.csv:2:5: invalid UTF-8 bytes 0xF3")
    }

    @Test("overlong encodings and surrogates are not UTF-8")
    func strictUTF8() throws {
        for bad: [UInt8] in [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let bytes = Array("name,destination,startDate,endDate\nA,".utf8) + bad + Array(",2024-05-01,2024-05-02\n".utf8)
            #expect(CSVIO.error { _ = try CSVIO.read(bytes) }?.message.hasPrefix("in.csv:2:3: invalid UTF-8 bytes") == true)
        }
    }

    @Test("with the latin1 input encoding Latin-1 bytes are read as their characters")
    func latin1() throws {
        let bytes = Array("name,destination,startDate,endDate\n".utf8) + [0x53, 0xE3, 0x6F, 0x20, 0x50, 0x61, 0x75, 0x6C, 0x6F]
            + Array(",Bras".utf8) + [0xED, 0x6C] + Array("ia,2024-05-01,2024-05-02\n".utf8)
        let trips = CSVIO.trips(try CSVIO.read(bytes, options: ReadOptions(inputEncoding: "latin1")).items)
        #expect(trips.first?.attributes[0] == .string("São Paulo"))
        #expect(trips.first?.attributes[1] == .string("Brasília"))
    }

    @Test("an unknown input encoding is a usage error")
    func unknownEncoding() throws {
        #expect(CSVIO.error { _ = try CSVIO.read("name\n", options: ReadOptions(inputEncoding: "ebcdic")) }?.kind == .usage)
    }

    @Test("an empty input has no trips")
    func emptyInput() throws {
        #expect(try CSVIO.read("").items.isEmpty)
        #expect(try CSVIO.read("name,destination,startDate,endDate\n").items.isEmpty)
    }

    @Test("a bad value rejects its record with the row's text")
    func badValue() throws {
        let items = try CSVIO.read("name,destination,startDate,endDate\nA,X,soon,2024-05-02\n").items
        let r = CSVIO.rejections(items)
        #expect(r.first?.reason == "field 'startDate': expected an ISO 8601 date, found 'soon'")
        #expect(r.first?.text == "A,X,soon,2024-05-02")
    }

    @Test("a directory is read as the tables layout only when it holds trips.csv")
    func directoryWithoutTrips() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let error = CSVIO.error { _ = try CSVFormat.makeReader(.file(dir.path), format: .csv, options: ReadOptions()) }
        #expect(error?.kind == .noInput)
        #expect(error?.message == "\(dir.path): is a directory without trips.csv")
    }

    @Test("unnamed padding columns are allowed while their cells are empty")
    func paddingColumns() throws {
        let items = try CSVIO.read("name,destination,startDate,endDate,,\nA,X,2024-05-01,2024-05-02,,\nB,X,2024-05-01,2024-05-02,,oops\n").items
        #expect(items.count == 2)
        guard case .trip = items[0] else { Issue.record("expected a trip"); return }
        #expect(CSVIO.rejections(items).first?.reason == "unknown field '(column 6, unnamed)' matches no schema version")
    }

    @Test("Excel's sep= first line is honoured (issue 13); it is an error only against another --csv-delimiter")
    func separatorLine() throws {
        #expect(CSVIO.trips(try CSVIO.read("sep=,\nname,destination,startDate,endDate\nA,X,2024-05-01,2024-05-02\n").items).count == 1)
        let semicolons = try CSVIO.read("sep=;\r\nname;destination;startDate;endDate\r\n\"A;1\";X,Y;2024-05-01;2024-05-02\r\n")
        #expect(CSVIO.trips(semicolons.items).map { $0.attributes[0...1] } == [[.string("A;1"), .string("X,Y")]])
        let pipes = try CSVIO.read("SEP=|\nname|destination|startDate|endDate\nA|X|2024-05-01|2024-05-02", options: ReadOptions())
        #expect(CSVIO.trips(pipes.items).count == 1)
        #expect(CSVIO.error { _ = try CSVIO.read("sep=;\nname;destination;startDate;endDate\n",
                                                 options: ReadOptions(csvDelimiter: UInt8(ascii: ","))) }?.message
                == "in.csv:1:5: the file declares the separator ';', but the delimiter given is ','")
        // The line after sep= is line 2 in messages.
        let rejected = CSVIO.rejections(try CSVIO.read("sep=;\nname;destination;startDate;endDate\n;X;2024-05-01;2024-05-02\n").items)
        #expect(rejected.first?.origin.line == 3)
    }
}
