import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Helpers for the YAML suites: building trips, reading and writing text, running PyYAML.
enum YAMLTestSupport {
    // MARK: - Trips

    static func date(_ text: String) -> Value { .date(Timestamp(iso8601: text)!) }

    static func item(_ title: String, details: String = "", hasReservation: Bool = false, isInPlan: Bool = false) -> ModelObject {
        ModelObject(attributes: [.string(title), .string(details), .bool(hasReservation), .bool(isInPlan)])
    }

    static func accommodation(_ address: String, _ placeName: String) -> ModelObject {
        ModelObject(attributes: [.string(address), .string(placeName)])
    }

    /// A trip in 3.0.0's layout (tripViews is the transient 0).
    static func trip(_ name: String, _ destination: String, _ start: String, _ end: String,
                     items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
        ModelObject(attributes: [.string(name), .string(destination), date(start), date(end), .int(0)],
                    relationships: [.toMany(items), .toOne(accommodation)])
    }

    /// A trip in 1.0.0's (and 2.0.0's) layout.
    static func tripV1(_ name: String, _ destination: String, _ start: String, _ end: String,
                       items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
        ModelObject(attributes: [.string(name), .string(destination), date(start), date(end)],
                    relationships: [.toMany(items), .toOne(accommodation)])
    }

    // MARK: - Reading and writing

    typealias ReadResult = ReadItems

    static func read(_ text: String, name: String = "t.yaml", options: ReadOptions = ReadOptions()) throws -> ReadResult {
        try read(bytes: Array(text.utf8), name: name, options: options)
    }

    static func read(bytes: [UInt8], name: String = "t.yaml", options: ReadOptions = ReadOptions()) throws -> ReadResult {
        var reader = YAMLRecordReader(parser: YAMLEventParser(bytes: bytes, name: name), options: options)
        let result = try ReadItems(reading: &reader)
        #expect(result.endsAgain)
        return result
    }

    /// Reads a file through the public factory, as the tool does.
    static func readFile(_ path: String, options: ReadOptions = ReadOptions()) throws -> ReadResult {
        var reader = try FormatFactory.makeReader(.file(path), format: .yaml, options: options)
        return try ReadItems(reading: &reader)
    }

    /// The message of the data error a read throws, or nil when it throws none.
    static func readError(_ text: String) -> TripError? {
        do { _ = try read(text); return nil } catch let e as TripError { return e } catch { return TripError.data("\(error)") }
    }

    static func temporaryPath(_ suffix: String = ".yaml") -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("yaml-test-\(UUID().uuidString)\(suffix)").path
    }

    /// Writes objects through the public factory to a file and returns its path.
    static func writeFile(_ objects: [ModelObject], schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> String {
        let path = temporaryPath()
        var writer = try FormatFactory.makeWriter(.file(path), format: .yaml, options: WriteOptions(schema: schema))
        for o in objects { try writer.write(o) }
        try writer.finish()
        return path
    }

    static func write(_ objects: [ModelObject], schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> String {
        let path = try writeFile(objects, schema: schema)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The trip's value of one field as the tests expect it to come back: a to-one object of nothing
    /// but defaults reads as none.
    static func normalized(_ trip: ModelObject) -> ModelObject {
        var t = trip
        if case .toOne(let a?) = t.relationships[1], a.attributes.allSatisfy({ $0 == .string("") }) {
            t.relationships[1] = .toOne(nil)
        }
        return t
    }

    // MARK: - Shared material and tools

    /// Whether python3 with PyYAML is available.
    static let hasPyYAML: Bool = {
        (try? runPython("import yaml; print('ok')", arguments: []))?.status == 0
    }()

    /// Runs a python3 script; stdout and the exit status.
    static func runPython(_ script: String, arguments: [String]) throws -> (output: String, error: String, status: Int32) {
        let result = try ExternalTool.python(script, arguments)
        return (result.out, result.stderr, result.status)
    }

}

// MARK: - A small JSON reader for expectations (in.json, PyYAML's answers)

/// A JSON value, parsed by `YAMLTestJSON.parseAll`; several texts one after another are allowed.
enum YAMLTestJSON {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func parseAll(_ text: String) throws -> [YAMLValue] {
        var p = Parser(bytes: Array(text.utf8))
        var values: [YAMLValue] = []
        p.skipSpace()
        while p.i < p.bytes.count {
            values.append(try p.value())
            p.skipSpace()
        }
        return values
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        mutating func skipSpace() { while i < bytes.count, [9, 10, 13, 32].contains(bytes[i]) { i += 1 } }

        mutating func value() throws -> YAMLValue {
            skipSpace()
            guard i < bytes.count else { throw Failure(description: "unexpected end") }
            switch bytes[i] {
            case 123:
                i += 1
                var pairs: [String: YAMLValue] = [:]
                skipSpace()
                if bytes[i] == 125 { i += 1; return .mapping(pairs) }
                while true {
                    skipSpace()
                    guard case .string(let key) = try value() else { throw Failure(description: "key") }
                    skipSpace()
                    guard bytes[i] == 58 else { throw Failure(description: "colon at \(i)") }
                    i += 1
                    pairs[key] = try value()
                    skipSpace()
                    if bytes[i] == 44 { i += 1; continue }
                    guard bytes[i] == 125 else { throw Failure(description: "} at \(i)") }
                    i += 1
                    return .mapping(pairs)
                }
            case 91:
                i += 1
                var items: [YAMLValue] = []
                skipSpace()
                if bytes[i] == 93 { i += 1; return .sequence(items) }
                while true {
                    items.append(try value())
                    skipSpace()
                    if bytes[i] == 44 { i += 1; continue }
                    guard bytes[i] == 93 else { throw Failure(description: "] at \(i)") }
                    i += 1
                    return .sequence(items)
                }
            case 34:
                return .string(try string())
            case 116: i += 4; return .bool(true)
            case 102: i += 5; return .bool(false)
            case 110: i += 4; return .null
            default:
                let start = i
                while i < bytes.count, !([44, 93, 125, 9, 10, 13, 32].contains(bytes[i])) { i += 1 }
                guard let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else {
                    throw Failure(description: "number at \(start)")
                }
                return .number(d)
            }
        }

        mutating func string() throws -> String {
            i += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() { scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars); raw.removeAll() }
            while true {
                guard i < bytes.count else { throw Failure(description: "unterminated string") }
                let c = bytes[i]
                i += 1
                if c == 34 { flush(); return String(scalars) }
                if c != 92 { raw.append(c); continue }
                flush()
                let e = bytes[i]
                i += 1
                switch e {
                case 110: scalars.append("\n")
                case 116: scalars.append("\t")
                case 114: scalars.append("\r")
                case 98: scalars.append("\u{08}")
                case 102: scalars.append("\u{0C}")
                case 117:
                    var u = hex4()
                    if (0xD800..<0xDC00).contains(u), i + 1 < bytes.count, bytes[i] == 92, bytes[i + 1] == 117 {
                        i += 2
                        let low = hex4()
                        u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)
                    }
                    scalars.append(Unicode.Scalar(u) ?? "\u{FFFD}")
                default: scalars.append(Unicode.Scalar(e))
                }
            }
        }

        mutating func hex4() -> UInt32 {
            let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) ?? 0xFFFD
            i += 4
            return v
        }
    }
}

// MARK: - Seeded generation

extension TripText {
    /// YAML's hard text: every plain scalar YAML 1.1 or 1.2 resolves to another type, indicators,
    /// comments, document markers, edge spaces, newlines (trailing ones too), CR, tabs, quotes; a third
    /// of the strings are one of them exactly.
    static let yaml = TripText(pieces: [
        "no", "No", "NO", "yes", "Yes", "on", "off", "On", "OFF", "y", "Y", "n", "N", "true", "False", "null", "Null",
        "NULL", "~", "", "1_000", "0x1F", "0o17", "017", "1e3", "1.5", "-1", "+1", ".inf", "-.inf", ".NaN", "12:30:45",
        "2024-05-01", "2024-05-01T09:30:00Z", "2001-12-14 21:59:43.10 -5", "=", "<<", "- item", "? key", "[a]", "{a: 1}",
        "!tag", "&anchor", "*alias", "%YAML", "@at", "`tick`", "|", ">", "'single'", "\"double\"", ",", "a: b", "a #b",
        "#comment", " lead", "trail ", " both ", "line\nbreak", "trailing\n", "trailing\n\n", "\n", "cr\rlf\r\n", "\ttab",
        "tab\t", "back\\slash", "---", "...", "--- x", "é", "東京", "emoji 🧳", "\u{85}nel", "ls\u{2028}ps\u{2029}",
        "\u{FEFF}bom", "nbsp\u{A0}", "ctl\u{1}\u{7F}\u{9F}", "zero\u{0}", "Paris", "Saint-Malo", "a  b",
        "Visit the Louvre", "Old town (2)", "Zürich", "a.b/c_d-e",
    ], wholePiecePercent: 33)
}

extension ArbitraryTrips {
    /// Arbitrary 3.0.0 trips for the YAML tests, as a reader gives them back.
    static func yaml(seed: UInt64) -> ArbitraryTrips { ArbitraryTrips(seed: seed, text: .yaml) }
}
