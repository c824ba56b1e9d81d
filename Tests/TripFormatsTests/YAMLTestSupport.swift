import Foundation
import Testing
import TripKit
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

    struct ReadResult {
        var trips: [TripRecord] = []
        var rejections: [Rejection] = []
        var detection: Detection
        var objects: [ModelObject] { trips.map(\.object) }
    }

    static func read(_ text: String, name: String = "t.yaml", options: ReadOptions = ReadOptions()) throws -> ReadResult {
        try read(bytes: Array(text.utf8), name: name, options: options)
    }

    static func read(bytes: [UInt8], name: String = "t.yaml", options: ReadOptions = ReadOptions()) throws -> ReadResult {
        var reader = YAMLRecordReader(parser: YAMLEventParser(bytes: bytes, name: name), options: options)
        var trips: [TripRecord] = [], rejections: [Rejection] = []
        while let item = try reader.next() {
            switch item {
            case .trip(let t): trips.append(t)
            case .rejected(let r): rejections.append(r)
            }
        }
        #expect(try reader.next() == nil)
        return ReadResult(trips: trips, rejections: rejections, detection: reader.detection)
    }

    /// Reads a file through the public factory, as the tool does.
    static func readFile(_ path: String, options: ReadOptions = ReadOptions()) throws -> ReadResult {
        var reader = try FormatFactory.makeReader(.file(path), format: .yaml, options: options)
        var trips: [TripRecord] = [], rejections: [Rejection] = []
        while let item = try reader.next() {
            switch item {
            case .trip(let t): trips.append(t)
            case .rejected(let r): rejections.append(r)
            }
        }
        return ReadResult(trips: trips, rejections: rejections, detection: reader.detection)
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

    /// `../shared` beside the package, or nil when absent.
    static var sharedDirectory: String? {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let shared = package.deletingLastPathComponent().appendingPathComponent("shared").path
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: shared, isDirectory: &isDirectory) && isDirectory.boolValue ? shared : nil
    }

    static var packageDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Whether python3 with PyYAML is available.
    static let hasPyYAML: Bool = {
        (try? runPython("import yaml; print('ok')", arguments: []))?.status == 0
    }()

    /// Runs a python3 script; stdout and the exit status.
    static func runPython(_ script: String, arguments: [String]) throws -> (output: String, error: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), String(decoding: errData, as: UTF8.self), process.terminationStatus)
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

/// SplitMix64: a small seeded PRNG, so a failing property case can be replayed.
struct YAMLSplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Arbitrary trips for round-trip properties: any Unicode, YAML trigger words, edge spaces,
/// newlines (trailing ones too) and CR, tabs, quotes, `: ` and ` #`, 0 to many items, with and
/// without accommodation, dates with and without milliseconds.
struct YAMLTripGenerator {
    var rng: YAMLSplitMix64
    init(seed: UInt64) { rng = YAMLSplitMix64(seed: seed) }

    static let triggers = [
        "no", "No", "NO", "yes", "Yes", "on", "off", "On", "OFF", "y", "Y", "n", "N", "true", "False", "null", "Null",
        "NULL", "~", "", "1_000", "0x1F", "0o17", "017", "1e3", "1.5", "-1", "+1", ".inf", "-.inf", ".NaN", "12:30:45",
        "2024-05-01", "2024-05-01T09:30:00Z", "2001-12-14 21:59:43.10 -5", "=", "<<", "- item", "? key", "[a]", "{a: 1}",
        "!tag", "&anchor", "*alias", "%YAML", "@at", "`tick`", "|", ">", "'single'", "\"double\"", ",", "a: b", "a #b",
        "#comment", " lead", "trail ", " both ", "line\nbreak", "trailing\n", "trailing\n\n", "\n", "cr\rlf\r\n", "\ttab",
        "tab\t", "back\\slash", "---", "...", "--- x", "é", "東京", "emoji 🧳", "\u{85}nel", "ls\u{2028}ps\u{2029}",
        "\u{FEFF}bom", "nbsp\u{A0}", "ctl\u{1}\u{7F}\u{9F}", "zero\u{0}", "Paris", "Saint-Malo", "a  b",
    ]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    mutating func string() -> String {
        switch int(0...5) {
        case 0: return Self.triggers[int(0...Self.triggers.count - 1)]
        case 1: return Self.triggers[int(0...Self.triggers.count - 1)] + Self.triggers[int(0...Self.triggers.count - 1)]
        case 2: return ["Paris", "Visit the Louvre", "Old town (2)", "Zürich", "a.b/c_d-e"][int(0...4)]
        default:
            var s = String.UnicodeScalarView()
            for _ in 0..<int(0...12) {
                let pick = int(0...9)
                let v: UInt32
                switch pick {
                case 0...4: v = UInt32(int(0x20...0x7E))
                case 5: v = UInt32([0x0A, 0x0D, 0x09, 0x20, 0x22, 0x27, 0x3A, 0x23, 0x5C, 0x2D][int(0...9)])
                case 6: v = UInt32(int(0...0x1F))
                case 7: v = UInt32(int(0x80...0x7FF))
                case 8: v = UInt32(int(0x800...0xFFFF))
                default: v = UInt32(int(0x10000...0x10FFFF))
                }
                if let u = Unicode.Scalar(v) { s.append(u) }
            }
            return String(s)
        }
    }

    mutating func date() -> Value {
        // Years 1900...2100, with milliseconds half the time.
        let seconds = Int64(int(-2_208_988_800...4_102_444_799))
        let ms = int(0...1) == 0 ? 0 : Int64(int(0...999))
        return .date(Timestamp(milliseconds: seconds * 1000 + ms))
    }

    mutating func trip(name: String? = nil) -> ModelObject {
        var items: [ModelObject] = []
        for _ in 0..<[0, 0, 1, 2, 3, 7][int(0...5)] {
            items.append(ModelObject(attributes: [.string(string()), .string(string()), .bool(int(0...1) == 1), .bool(int(0...1) == 1)]))
        }
        let accommodation: ModelObject? = int(0...2) == 0 ? nil : ModelObject(attributes: [.string(string()), .string(string())])
        return YAMLTestSupport.normalized(ModelObject(
            attributes: [.string(name ?? string()), .string(string()), date(), date(), .int(0)],
            relationships: [.toMany(items), .toOne(accommodation)]))
    }
}
