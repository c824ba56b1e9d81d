import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

@Suite("JSON writer")
struct JSONWriterTests {
    typealias S = JSONTestSupport

    static let paris = S.trip("Paris", items: [S.item("Louvre", details: "Mona Lisa", reserved: true),
                                               S.item("Seine cruise", inPlan: true)],
                              accommodation: S.accommodation("1 Rue de Rivoli", "Hôtel \"Le Meurice\""))
    static let rome = S.trip("Rome", destination: "Italy", start: "2024-06-01T00:00:00.250Z", end: "2024-06-03T12:00:00Z")

    @Test("JSON at 3.0.0 is the wrapper with one trip per line and camel-case dates")
    func jsonAtCurrentVersion() throws {
        let text = try S.write([Self.paris, Self.rome], format: .json)
        #expect(text == """
        {"schemaVersion": "3.0.0", "trips": [
        {"name": "Paris", "destination": "France", "startDate": "2024-05-01T09:30:00Z", "endDate": "2024-05-08T18:00:00Z", \
        "bucketList": [{"title": "Louvre", "details": "Mona Lisa", "hasReservation": true, "isInPlan": false}, \
        {"title": "Seine cruise", "details": "", "hasReservation": false, "isInPlan": true}], \
        "livingAccommodation": {"address": "1 Rue de Rivoli", "placeName": "Hôtel \\"Le Meurice\\""}},
        {"name": "Rome", "destination": "Italy", "startDate": "2024-06-01T00:00:00.250Z", "endDate": "2024-06-03T12:00:00Z", \
        "bucketList": [], "livingAccommodation": null}
        ]}

        """)
    }

    @Test("JSON Lines at 1.0.0 is one trip per line with start_date and end_date and no wrapper")
    func jsonLinesAtFirstVersion() throws {
        let trips = [S.legacyTrip("Paris", items: [S.item("Louvre")]),
                     S.legacyTrip("Rome", accommodation: S.accommodation("Via del Corso", ""))]
        let text = try S.write(trips, format: .jsonl, schema: TripSchemaV1.self)
        #expect(text == """
        {"name": "Paris", "destination": "France", "start_date": "2024-05-01T09:30:00Z", "end_date": "2024-05-08T18:00:00Z", \
        "bucketList": [{"title": "Louvre", "details": "", "hasReservation": false, "isInPlan": false}], "livingAccommodation": null}
        {"name": "Rome", "destination": "France", "start_date": "2024-05-01T09:30:00Z", "end_date": "2024-05-08T18:00:00Z", \
        "bucketList": [], "livingAccommodation": {"address": "Via del Corso", "placeName": ""}}

        """)
    }

    @Test("JSON at 1.0.0 names its version in the wrapper")
    func jsonAtFirstVersion() throws {
        let text = try S.write([S.legacyTrip("Oslo")], format: .json, schema: TripSchemaV1.self)
        #expect(text == """
        {"schemaVersion": "1.0.0", "trips": [
        {"name": "Oslo", "destination": "France", "start_date": "2024-05-01T09:30:00Z", "end_date": "2024-05-08T18:00:00Z", \
        "bucketList": [], "livingAccommodation": null}
        ]}

        """)
    }

    @Test("no trips is an empty trips array in JSON and an empty file in JSON Lines")
    func noTrips() throws {
        #expect(try S.write([], format: .json) == "{\"schemaVersion\": \"3.0.0\", \"trips\": []}\n")
        #expect(try S.write([], format: .jsonl) == "")
    }

    @Test("strings escape quotes, backslashes, control characters and Unicode line separators")
    func escaping() throws {
        let name = "a\"b\\c\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}/é\u{85}\u{2028}\u{2029}😀"
        let text = try S.write([S.trip(name)], format: .jsonl)
        #expect(text.hasPrefix(#"{"name": "a\"b\\c\n\r\t\b\f\u0000\u001f"# + "\u{7F}/é" + #"\u0085\u2028\u2029"# + "😀\", "))
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count == 2)
    }

    @Test("escaping is the same wherever a special character falls, in words of eight bytes or after them")
    func escapingAtEveryOffset() throws {
        // The characters the writer treats apart, and plain ones of one to four bytes.
        let pieces = ["a", "Z", " ", "\"", "\\", "\n", "\u{1}", "\u{7F}", "é", "\u{85}", "\u{A0}", "\u{2028}", "\u{2029}", "\u{2030}", "€", "😀"]
        var random = SplitMix64(seed: 0x5EED_1234)
        func next() -> Int { Int(random.next() % 1_000_003) }
        for _ in 0..<2_000 {
            let plainRun = String(repeating: "x", count: next() % 20)
            let text = plainRun + (0..<(next() % 12)).map { _ in pieces[next() % pieces.count] }.joined() + plainRun
            var buffer = RecordBuffer()
            var copy = text
            copy.withUTF8 { JSONRecordWriter.appendString($0, to: &buffer) }
            let written = String(decoding: buffer.bytes, as: UTF8.self)
            #expect(written == Self.referenceLiteral(text), "\(text.debugDescription)")
        }
    }

    /// A JSON string literal as the writer's rules say, one character at a time.
    static func referenceLiteral(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x00..<0x20: out += String(format: "\\u%04x", scalar.value)
            case 0x85, 0x2028, 0x2029: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test("the transient view count is never written")
    func transientNotWritten() throws {
        var trip = S.trip("Paris")
        trip.attributes[4] = .int(42)
        let text = try S.write([trip], format: .jsonl)
        #expect(!text.contains("tripViews"))
        #expect(!text.contains("42"))
    }

    @Test("an aborted writer leaves no file behind")
    func abortLeavesNothing() throws {
        let dir = try S.temporaryDirectory()
        let path = dir.appendingPathComponent("out.json").path
        var writer = try JSONRecordWriter(.file(path), format: .json)
        try writer.write(Self.paris)
        writer.abort()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("the factory makes the JSON writer for json and jsonl")
    func factory() throws {
        let dir = try S.temporaryDirectory()
        for format in [Format.json, .jsonl] {
            let path = dir.appendingPathComponent("out.\(format.rawValue)").path
            var writer = try FormatFactory.makeWriter(.file(path), format: format, options: WriteOptions())
            try writer.write(Self.rome)
            try writer.finish()
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains(#""name": "Rome""#))
            #expect(text.hasPrefix("{\"schemaVersion\"") == (format == .json))
        }
    }
}
