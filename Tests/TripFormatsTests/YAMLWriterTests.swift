import Foundation
import Testing
import TripKit
@testable import TripFormats

@Suite("YAMLWriter")
struct YAMLWriterTests {
    typealias S = YAMLTestSupport

    @Test("a small 3.0.0 case is written exactly")
    func exactTextV3() throws {
        let trips = [
            S.trip("Paris", "Paris, France", "2024-05-01T09:30:00Z", "2024-05-08T18:00:00.250Z",
                   items: [S.item("Louvre", details: "Book: online", hasReservation: true),
                           S.item("no", details: "")],
                   accommodation: S.accommodation("12 Rue de Rivoli", "Hôtel du Louvre")),
            S.trip("2024-05-01", " Lisbon", "2024-06-01T00:00:00Z", "2024-06-02T00:00:00Z"),
        ]
        let expected = """
        schemaVersion: "3.0.0"
        trips:
          - name: Paris
            destination: "Paris, France"
            startDate: 2024-05-01T09:30:00Z
            endDate: 2024-05-08T18:00:00.250Z
            bucketList:
              - title: Louvre
                details: "Book: online"
                hasReservation: true
                isInPlan: false
              - title: "no"
                details: ""
                hasReservation: false
                isInPlan: false
            livingAccommodation:
              address: 12 Rue de Rivoli
              placeName: Hôtel du Louvre
          - name: "2024-05-01"
            destination: " Lisbon"
            startDate: 2024-06-01T00:00:00Z
            endDate: 2024-06-02T00:00:00Z
            bucketList: []
            livingAccommodation: null

        """
        let text = try S.write(trips)
        #expect(text == expected, "\(text)")
    }

    @Test("a small 1.0.0 case is written with 1.0.0's field names")
    func exactTextV1() throws {
        let trips = [
            S.tripV1("Rome", "Italy", "2023-04-01T08:00:00Z", "2023-04-03T08:00:00Z",
                     items: [S.item("Colosseum", isInPlan: true)]),
        ]
        let expected = """
        schemaVersion: "1.0.0"
        trips:
          - name: Rome
            destination: Italy
            start_date: 2023-04-01T08:00:00Z
            end_date: 2023-04-03T08:00:00Z
            bucketList:
              - title: Colosseum
                details: ""
                hasReservation: false
                isInPlan: true
            livingAccommodation: null

        """
        #expect(try S.write(trips, schema: TripSchemaV1.self) == expected)
    }

    @Test("no trips are written as an empty sequence")
    func emptyOutput() throws {
        #expect(try S.write([]) == "schemaVersion: \"3.0.0\"\ntrips: []\n")
    }

    @Test("strings a YAML reader would type or misread are double-quoted", arguments: [
        "no", "No", "on", "OFF", "y", "N", "yes", "true", "False", "null", "NULL", "~", "", "1_000", "0x1F", "0o17",
        "017", "1e3", "1.5", ".inf", "-.inf", ".nan", "12:30", "2024-05-01", "2024-05-01T09:30:00Z", "=", "<<",
        " lead", "trail ", "a: b", "a #b", "-x", "- x", "?x", "[x", "]x", "{x", "}x", "!x", "&x", "*x", "%x", "@x",
        "`x", "|x", ">x", "'x", "\"x", ",x", "#x", "x:", "a,b", "line\nbreak", "tab\there", "é\u{2028}",
        "nbsp\u{A0}x", "\u{FEFF}x", "x\u{85}", "12", "2024-05-01 10", "1 2:3", "10:00 am",
    ])
    func quotesTriggers(_ text: String) {
        var bytes: [UInt8] = []
        YAMLScalarText.append(text, to: &bytes)
        #expect(bytes.first == UInt8(ascii: "\""), "\(text.debugDescription) was written plain")
    }

    @Test("safe words stay plain", arguments: [
        "Paris", "Visit the Louvre", "Saint-Malo", "Old town (2)", "a.b/c_d-e", "Zürich", "東京", "Trip 42", "e5", "Nope", "12 Rue de Rivoli", "1 e3",
    ])
    func keepsSafeWordsPlain(_ text: String) {
        var bytes: [UInt8] = []
        YAMLScalarText.append(text, to: &bytes)
        #expect(bytes == Array(text.utf8))
    }

    @Test("control characters, separators and the BOM are escaped")
    func escapes() {
        var bytes: [UInt8] = []
        YAMLScalarText.append("a\"b\\c\n\r\t\u{0}\u{1B}\u{7F}\u{85}\u{2028}\u{2029}\u{FEFF}\u{FFFF}é", to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #""a\"b\\c\n\r\t\0\x1B\x7F\N\L\P\uFEFF\uFFFFé""#)
    }

    @Test("a failed write leaves no file behind")
    func abortRemovesOutput() throws {
        let path = S.temporaryPath()
        var writer = try FormatFactory.makeWriter(.file(path), format: .yaml, options: WriteOptions())
        try writer.write(S.trip("A", "B", "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"))
        writer.abort()
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
