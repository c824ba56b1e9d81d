import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

@Suite("TSV format")
struct TSVFormatTests {
    @Test("TSV escapes tab, line breaks and backslash and nothing else")
    func exactText() throws {
        let trip = CSVTrip.trip("a\tb", "say \"hi\", \\o/", items: [CSVTrip.item("l1\nl2\r", details: "=x")])
        #expect(try CSVIO.written([trip], format: .tsv) == """
            name\tdestination\tstartDate\tendDate\tlivingAccommodation.address\tlivingAccommodation.placeName\t\
            bucketList.1.title\tbucketList.1.details\tbucketList.1.hasReservation\tbucketList.1.isInPlan
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

    @Test("in TSV an empty text field is the empty string; an empty name or date is missing")
    func empties() throws {
        let header = "name\tdestination\tstartDate\tendDate\tbucketList.1.title\tbucketList.1.details\n"
        let items = try CSVIO.read(header + "A\tX\t2024-05-01\t2024-05-02\t\tD\n\tX\t2024-05-01\t2024-05-02\t\t\nA\tX\t\t2024-05-02\t\t\n",
                                   format: .tsv).items
        guard case .trip(let t) = items[0] else { Issue.record("expected a trip"); return }
        #expect(t.object.relationships[0].objects.first?.attributes[0...1] == [.string(""), .string("D")])
        #expect(CSVIO.rejections(items).map(\.reason) == ["missing required field 'name'", "missing required field 'startDate'"])
    }

    @Test("TSV escapes round trip through the row reader", arguments: [UInt64(11), 12, 13])
    func escapesRoundTrip(seed: UInt64) throws {
        var generator = ArbitraryTrips.csv(seed: seed)
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
