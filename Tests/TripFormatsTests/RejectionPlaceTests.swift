import Foundation
import Testing
import TripKit
@testable import TripFormats

/// A rejected trip is placed at the value, related object or unknown field its reason is about
/// (`SetAsideRecord.place`), not at the trip's first line, in every text format; the record's own
/// origin stays the trip's. Each document has a good trip and a bad one whose fault lies lines
/// below its first; the expected line and column are where the fault's text is found in the
/// document (its first character; for a missing field, the object's start).
@Suite("Places of rejections")
struct RejectionPlaceTests {
    /// A fault put into a document in place of a good value, and where it shows.
    struct Fault: CustomTestStringConvertible, Sendable {
        var name: String
        /// Placeholder to text: the values that make the trip bad.
        var values: [String: String]
        /// The text the place is at (its first occurrence).
        var marker: String
        var reason: String
        var testDescription: String { name }
    }

    /// A document with placeholders, what each holds in a good trip, and its faults.
    struct Document: CustomTestStringConvertible, Sendable {
        var name: String
        var format: Format
        var template: String
        var good: [String: String]
        var faults: [Fault]
        /// Columns count bytes (JSON) rather than characters; the documents are ASCII, so either.
        var testDescription: String { name }

        func text(_ fault: Fault) -> String {
            var text = template
            for (key, value) in good { text = text.replacingOccurrences(of: key, with: fault.values[key] ?? value) }
            return text
        }
    }

    static let badDate = "field 'endDate': expected an ISO 8601 date, found 'next week'"
    static let noTitle = "missing required field 'title' of a BucketListItem"
    static let unknown = "unknown field 'bogus' matches no schema version"

    static let json = Document(
        name: "JSON", format: .json,
        template: """
        {"schemaVersion": "3.0.0", "trips": [
          {"name": "Good", "destination": "Portugal", "startDate": "2024-11-02T09:00:00Z", "endDate": "2024-11-09T21:00:00Z"},
          {"name": "Bad",
           "destination": "Portugal",
           "startDate": "2024-11-02T09:00:00Z",
           "endDate": END,
           "bucketList": [
             {"title": "Tram 28", "hasReservation": false},
             {ITEM,
              "hasReservation": RES}],
           "livingAccommodation": {"address": "Rua 1",
             "placeName": PLACE}EXTRA}
        ]}

        """,
        good: ["END": #""2024-11-09T21:00:00Z""#, "ITEM": #""title": "Belem""#, "RES": "true", "PLACE": #""Casa""#, "EXTRA": ""],
        faults: [
            Fault(name: "date", values: ["END": #""next week""#], marker: #""next week""#, reason: badDate),
            Fault(name: "item", values: ["ITEM": #""details": "pasteis""#], marker: #"{"details""#, reason: noTitle),
            Fault(name: "bool", values: ["RES": #""maybe""#], marker: #""maybe""#,
                  reason: "field 'hasReservation': expected true or false, found the string 'maybe'"),
            Fault(name: "accommodation", values: ["PLACE": #"["x"]"#], marker: #"["x"]"#,
                  reason: "field 'placeName': expected a string, found an array"),
            Fault(name: "unknown", values: ["EXTRA": #",\#n   "bogus": 1"#], marker: #""bogus""#, reason: unknown),
        ])

    /// The bad trip first: its version is not known until it ends, so its objects wait (the
    /// builder's pending objects) and are checked at the record's end.
    static let jsonLines = Document(
        name: "JSON Lines", format: .jsonl,
        template: """
        {"name": "Bad", "destination": "Portugal", "startDate": "2024-11-02T09:00:00Z", "endDate": END, "bucketList": [{"title": "Tram 28"}, {ITEM, "hasReservation": RES}], "livingAccommodation": {"address": "Rua 1", "placeName": PLACE}EXTRA}
        {"name": "Good", "destination": "Portugal", "startDate": "2024-11-02T09:00:00Z", "endDate": "2024-11-09T21:00:00Z"}

        """,
        good: json.good,
        faults: json.faults.map { f in
            var f = f
            if f.name == "unknown" { f.values = ["EXTRA": #", "bogus": 1"#] }
            return f
        })

    static let yamlFaults = [
        Fault(name: "date", values: ["END": "next week"], marker: "next week", reason: badDate),
        Fault(name: "item", values: ["ITEM": "details: pasteis"], marker: "details: pasteis", reason: noTitle),
        Fault(name: "bool", values: ["RES": "maybe"], marker: "maybe", reason: "field 'hasReservation': expected true or false, found 'maybe'"),
        Fault(name: "accommodation", values: ["PLACE": "[x]"], marker: "[x]", reason: "field 'placeName': expected a string, found a sequence"),
        Fault(name: "unknown", values: ["EXTRA": "\n    bogus: 1"], marker: "bogus", reason: unknown),
    ]

    static let yamlBlock = Document(
        name: "YAML, block style", format: .yaml,
        template: """
        schemaVersion: "3.0.0"
        trips:
          - name: Good
            destination: Portugal
            startDate: 2024-11-02T09:00:00Z
            endDate: 2024-11-09T21:00:00Z
          - name: Bad
            destination: Portugal
            startDate: 2024-11-02T09:00:00Z
            endDate: END
            bucketList:
              - title: Tram 28
                hasReservation: false
              - ITEM
                hasReservation: RES
            livingAccommodation:
              address: Rua 1
              placeName: PLACEEXTRA

        """,
        good: ["END": "2024-11-09T21:00:00Z", "ITEM": "title: Belem", "RES": "true", "PLACE": "Casa", "EXTRA": ""],
        faults: yamlFaults)

    /// Flow style is read by libyaml; the bad trip first, as in JSON Lines.
    static let yamlFlow = Document(
        name: "YAML, flow style", format: .yaml,
        template: """
        - {name: Bad, destination: Portugal, startDate: 2024-11-02T09:00:00Z,
           endDate: END,
           bucketList: [{title: Tram 28}, {ITEM,
             hasReservation: RES}],
           livingAccommodation: {address: Rua 1,
             placeName: PLACE}EXTRA}
        - {name: Good, destination: Portugal, startDate: 2024-11-02T09:00:00Z, endDate: 2024-11-09T21:00:00Z}

        """,
        good: yamlBlock.good,
        faults: yamlFaults.map { f in
            var f = f
            if f.name == "item" { f.marker = "{details" }
            if f.name == "unknown" { f.values = ["EXTRA": ",\n   bogus: 1"] }
            return f
        })

    static let xml = Document(
        name: "XML", format: .xml,
        template: """
        <?xml version="1.0" encoding="UTF-8"?>
        <trips schemaVersion="3.0.0">
          <trip><name>Good</name><destination>Portugal</destination><startDate>2024-11-02T09:00:00Z</startDate><endDate>2024-11-09T21:00:00Z</endDate></trip>
          <trip>
            <name>Bad</name>
            <destination>Portugal</destination>
            <startDate>2024-11-02T09:00:00Z</startDate>
            <endDate>END</endDate>
            <bucketList>
              <item><title>Tram 28</title></item>
              <item>ITEM<hasReservation>RES</hasReservation></item>
            </bucketList>
            <livingAccommodation><address>Rua 1</address>
              <placeName>PLACE</placeName></livingAccommodation>EXTRA
          </trip>
        </trips>

        """,
        good: ["END": "2024-11-09T21:00:00Z", "ITEM": "<title>Belem</title>", "RES": "true", "PLACE": "Casa", "EXTRA": ""],
        faults: [
            Fault(name: "date", values: ["END": "next week"], marker: "<endDate>next week", reason: badDate),
            Fault(name: "item", values: ["ITEM": "<details>pasteis</details>"], marker: "<item><details>", reason: noTitle),
            Fault(name: "bool", values: ["RES": "maybe"], marker: "<hasReservation>maybe",
                  reason: "field 'hasReservation': expected true or false, found 'maybe'"),
            Fault(name: "accommodation", values: ["PLACE": "<x>x</x>"], marker: "<x>",
                  reason: "field 'placeName': expected text, found the element <x>"),
            Fault(name: "unknown", values: ["EXTRA": "\n    <bogus>1</bogus>"], marker: "<bogus>", reason: unknown),
        ])

    /// A quoted cell holds a line break before the faults, so a row's cells span lines. The header
    /// has no title for the second item: its group is where the item starts.
    static func separated(_ format: Format) -> Document {
        let s = format == .csv ? "," : "\t"
        let details = format == .csv ? "\"two\nlines\"" : "one line"
        return Document(
            name: format.rawValue, format: format,
            template: ["name", "destination", "startDate", "endDate", "bucketList.1.title", "bucketList.1.details",
                       "bucketList.2.details", "bucketList.2.hasReservation"].joined(separator: s) + "\n"
                + ["Good", "Portugal", "2024-11-02T09:00:00Z", "2024-11-09T21:00:00Z", "", "", "", ""].joined(separator: s) + "\n"
                + ["Bad", "Portugal", "2024-11-02T09:00:00Z", "END", "Tram 28", details, "ITEM", "RES"].joined(separator: s) + "\n",
            good: ["END": "2024-11-09T21:00:00Z", "ITEM": "", "RES": ""],
            faults: [
                Fault(name: "date", values: ["END": "next week"], marker: "next week", reason: badDate),
                Fault(name: "item", values: ["ITEM": "pasteis"], marker: "pasteis", reason: noTitle),
                Fault(name: "bool", values: ["RES": "maybe"], marker: "maybe",
                      reason: "field 'hasReservation': expected true or false, found 'maybe'"),
            ])
    }

    static let cases: [(Document, Fault)] = [json, jsonLines, yamlBlock, yamlFlow, xml, separated(.csv), separated(.tsv)]
        .flatMap { d in d.faults.map { (d, $0) } }

    /// The 1-based line and column of the first occurrence of `marker`.
    static func place(of marker: String, in text: String) throws -> (line: Int, column: Int) {
        let range = try #require(text.range(of: marker), "\(marker) is not in the document")
        let before = text[..<range.lowerBound]
        let line = before.reduce(1) { $0 + ($1 == "\n" ? 1 : 0) }
        let lineStart = before.lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
        return (line, text[lineStart..<range.lowerBound].count + 1)
    }

    @Test("a rejection is placed at its fault, its origin stays the trip's", arguments: cases)
    func placed(_ document: Document, _ fault: Fault) throws {
        let text = document.text(fault)
        let good = try rejectedTextRead(Array(document.text(Fault(name: "", values: [:], marker: "", reason: "")).utf8),
                                        format: document.format)
        #expect(good.rejections.isEmpty && good.trips.count == 2, "the document without faults is good")
        let read = try rejectedTextRead(Array(text.utf8), format: document.format)
        let rejection = try #require(read.rejections.first, "no rejection in\n\(text)")
        #expect(read.rejections.count == 1 && read.trips.count == 1)
        #expect(rejection.reason == fault.reason)
        let expected = try Self.place(of: fault.marker, in: text)
        #expect(rejection.place.line == expected.line && rejection.place.column == expected.column,
                "placed at \(rejection.place), the fault is at \(expected.line):\(expected.column) in\n\(text)")
        #expect(rejection.place.record == rejection.origin.record && rejection.place.source == rejection.origin.source)
    }

    @Test("the YAML block scanner and libyaml place a fault alike", arguments: yamlFaults)
    func yamlParsersAgree(_ fault: Fault) throws {
        let text = Self.yamlBlock.text(fault)
        var places: [String] = []
        for scanner in [true, false] {
            var limits = YAMLLimits()
            limits.usesBlockScanner = scanner
            let parser = YAMLEventParser(bytes: Array(text.utf8), name: "t.yaml", limits: limits)
            var reader = YAMLRecordReader(parser: parser, options: ReadOptions(), threaded: false)
            var rejections: [SetAsideRecord] = []
            while let item = try reader.next() { if case .rejected(let r) = item { rejections.append(r) } }
            // A flow sequence is outside the block scanner's subset: libyaml reads that document either way.
            if fault.name != "accommodation" { #expect(parser.readsWithBlockScanner == scanner) }
            places += rejections.map { "\($0.place): \($0.reason)" }
        }
        let expected = try Self.place(of: fault.marker, in: text)
        #expect(places == Array(repeating: "t.yaml:\(expected.line):\(expected.column): \(fault.reason)", count: 2))
    }

    @Test("a byte that is not UTF-8 in a YAML value is placed at its line and column, not at a byte offset")
    func yamlEncoding() throws {
        let text = Self.yamlBlock.text(Fault(name: "", values: ["PLACE": "Caf\u{E9} Lisboa"], marker: "", reason: ""))
        let expected = try Self.place(of: "\u{E9}", in: text)
        // The é as ISO 8859-1 writes it: one byte, 0xE9, which starts no UTF-8 character of one byte.
        let bytes = Array(text.unicodeScalars.map { UInt8($0.value) })
        let file = YAMLTestSupport.temporaryPath()
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(throws: TripError.self) { _ = try YAMLTestSupport.readFile(file) }
        do {
            _ = try YAMLTestSupport.readFile(file)
        } catch let error as TripError {
            #expect(error.message.hasPrefix("\(file):\(expected.line):\(expected.column): "), "\(error.message)")
            #expect(!error.message.contains("at byte"))
        }
    }
}
