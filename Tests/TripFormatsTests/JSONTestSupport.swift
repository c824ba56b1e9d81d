import Foundation
import Testing
import TripKit
@testable import TripFormats

/// Reading and writing JSON in memory and in temporary files, for the JSON suites.
enum JSONTestSupport {
    struct ReadResult {
        var trips: [TripRecord] = []
        var rejections: [Rejection] = []
        /// Trips and rejections in input order: `T` or `R`.
        var order = ""
        var detection: Detection
        var objects: [ModelObject] { trips.map(\.object) }
    }

    /// Reads every item of a document held in memory.
    static func read(_ text: String, format: Format = .json, options: ReadOptions = ReadOptions(),
                     chunkSize: Int = 1 << 16, limits: JSONLimits = .standard) throws -> ReadResult {
        try read(bytes: Array(text.utf8), format: format, options: options, chunkSize: chunkSize, limits: limits)
    }

    static func read(bytes: [UInt8], format: Format = .json, options: ReadOptions = ReadOptions(),
                     chunkSize: Int = 1 << 16, limits: JSONLimits = .standard, name: String = "t.json") throws -> ReadResult {
        let source = JSONMemorySource(bytes)
        var reader = JSONRecordReader(name: name, format: format, options: options, chunkSize: chunkSize,
                                      limits: limits, source: source.read)
        var result = ReadResult(detection: reader.detection)
        while let item = try reader.next() {
            switch item {
            case .trip(let t): result.trips.append(t); result.order += "T"
            case .rejected(let r): result.rejections.append(r); result.order += "R"
            }
        }
        #expect(try reader.next() == nil, "a reader gives nil again after the end")
        result.detection = reader.detection
        return result
    }

    /// The message of the error reading throws, or nil when it throws none.
    static func readError(_ text: String, format: Format = .json, chunkSize: Int = 1 << 16,
                          limits: JSONLimits = .standard) -> String? {
        readError(bytes: Array(text.utf8), format: format, chunkSize: chunkSize, limits: limits)
    }

    static func readError(bytes: [UInt8], format: Format = .json, chunkSize: Int = 1 << 16,
                          limits: JSONLimits = .standard) -> String? {
        do {
            _ = try read(bytes: bytes, format: format, chunkSize: chunkSize, limits: limits)
            return nil
        } catch let error as TripError {
            return error.message
        } catch {
            return "unexpected error \(error)"
        }
    }

    /// A fresh directory for a test's files.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-json-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes objects through the real writer to a file and returns the file's path.
    static func writeFile(_ objects: [ModelObject], format: Format = .json,
                          schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> String {
        let path = try temporaryDirectory().appendingPathComponent("out.\(format.rawValue)").path
        var writer = try JSONRecordWriter(.file(path), format: format, options: WriteOptions(schema: schema))
        for o in objects { try writer.write(o) }
        try writer.finish()
        return path
    }

    /// Writes objects and returns the text written.
    static func write(_ objects: [ModelObject], format: Format = .json,
                      schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> String {
        let path = try writeFile(objects, format: format, schema: schema)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    static func date(_ iso: String) -> Value { .date(Timestamp(iso8601: iso)!) }

    /// A 3.0.0 trip.
    static func trip(_ name: String, destination: String = "France", start: String = "2024-05-01T09:30:00Z",
                     end: String = "2024-05-08T18:00:00Z", items: [ModelObject] = [],
                     accommodation: ModelObject? = nil) -> ModelObject {
        ModelObject(attributes: [.string(name), .string(destination), date(start), date(end), .int(0)],
                    relationships: [.toMany(items), .toOne(accommodation)])
    }

    /// A 1.0.0 (or 2.0.0) trip: no transient view count.
    static func legacyTrip(_ name: String, destination: String = "France", start: String = "2024-05-01T09:30:00Z",
                           end: String = "2024-05-08T18:00:00Z", items: [ModelObject] = [],
                           accommodation: ModelObject? = nil) -> ModelObject {
        ModelObject(attributes: [.string(name), .string(destination), date(start), date(end)],
                    relationships: [.toMany(items), .toOne(accommodation)])
    }

    static func item(_ title: String, details: String = "", reserved: Bool = false, inPlan: Bool = false) -> ModelObject {
        ModelObject(attributes: [.string(title), .string(details), .bool(reserved), .bool(inPlan)])
    }

    static func accommodation(_ address: String, _ placeName: String) -> ModelObject {
        ModelObject(attributes: [.string(address), .string(placeName)])
    }

    /// The package root, from this file's path.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `../shared/conformance/JSONTestSuite/test_parsing`, if it is there.
    static var conformanceDirectory: URL? {
        let url = packageRoot.deletingLastPathComponent()
            .appendingPathComponent("shared/conformance/JSONTestSuite/test_parsing")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
        return url
    }

    /// The names of the JSONTestSuite files with a prefix (`y_`, `n_`, `i_`), sorted; empty without the suite.
    static func conformanceFiles(_ prefix: String) -> [String] {
        guard let dir = conformanceDirectory,
              let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
    }

    static func conformanceBytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: conformanceDirectory!.appendingPathComponent(name)))
    }

    /// The path of an executable on PATH, if any.
    static func executable(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }
}

// MARK: - Generated trips

/// SplitMix64: a small, seeded, reproducible generator.
struct JSONSplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func bool() -> Bool { next() & 1 == 1 }

    mutating func pick<T>(_ options: [T]) -> T { options[int(0...(options.count - 1))] }
}

/// Arbitrary trips of a schema: any Unicode, quotes, separators, newlines, spaces at the ends,
/// words other formats read as something else; 0 to many items; with and without accommodation;
/// dates with and without milliseconds.
struct JSONTripGenerator {
    var random: JSONSplitMix64
    init(seed: UInt64) { random = JSONSplitMix64(seed: seed) }

    static let tricky: [String] = [
        "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}",
        ",", ":", "{", "}", "[", "]", "/", "\\u0041", "é", "中", "😀", "👩‍👩‍👧", "\u{FFFD}", "\u{10FFFF}", "\r\n",
    ]
    static let words: [String] = ["null", "true", "false", "no", "~", "1e3", "0", "-1", "2024-05-01", "NaN", "schemaVersion", "trips"]

    mutating func string() -> String {
        var s = ""
        if random.int(0...9) == 0 { s += " " }
        for _ in 0..<random.int(0...10) {
            switch random.int(0...9) {
            case 0...3: s.unicodeScalars.append(UnicodeScalar(UInt8(random.int(0x20...0x7E))))
            case 4, 5: s += random.pick(JSONTripGenerator.tricky)
            case 6: s += random.pick(JSONTripGenerator.words)
            case 7: s.unicodeScalars.append(UnicodeScalar(UInt32(random.int(0...0x1F)))!)
            default:
                var value = UInt32(random.int(0x80...0x10FFFF))
                if (0xD800...0xDFFF).contains(value) { value = 0xFFFD }
                s.unicodeScalars.append(UnicodeScalar(value)!)
            }
        }
        if random.int(0...9) == 0 { s += "  " }
        return s
    }

    mutating func timestamp() -> Timestamp {
        let seconds = Int64(random.int(-62_135_596_800...253_402_300_799))
        let ms = random.bool() ? Int64(random.int(0...999)) : 0
        return Timestamp(milliseconds: seconds * 1000 + ms)
    }

    /// An object of an entity of the schema, as a reader gives it back.
    mutating func object(_ entity: Entity, in schema: any VersionedSchema.Type) -> ModelObject {
        var attributes: [Value] = []
        for a in entity.attributes {
            if a.isTransient { attributes.append(a.defaultValue ?? .null); continue }
            switch a.type {
            case .string: attributes.append(.string(string()))
            case .date: attributes.append(.date(timestamp()))
            case .bool: attributes.append(.bool(random.bool()))
            case .int: attributes.append(.int(Int64(random.int(-1_000_000...1_000_000))))
            }
        }
        var relationships: [Related] = []
        for r in entity.relationships {
            let destination = schema.entity(r.destination)!
            if r.isToMany {
                let count = random.int(0...3) == 0 ? random.int(4...9) : random.int(0...2)
                relationships.append(.toMany((0..<count).map { _ in object(destination, in: schema) }))
            } else if random.bool() {
                let o = object(destination, in: schema)
                // An object of nothing but defaults reads back as none.
                let isAllDefaults = zip(destination.attributes, o.attributes).allSatisfy { $0.defaultValue == $1 }
                relationships.append(.toOne(isAllDefaults && destination.attributes.allSatisfy { !$0.isRequired } ? nil : o))
            } else {
                relationships.append(.toOne(nil))
            }
        }
        return ModelObject(attributes: attributes, relationships: relationships)
    }

    mutating func trips(_ count: Int, in schema: any VersionedSchema.Type) -> [ModelObject] {
        (0..<count).map { _ in object(schema.rootEntity, in: schema) }
    }
}
