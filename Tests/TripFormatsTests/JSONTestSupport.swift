import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Reading and writing JSON in memory and in temporary files, for the JSON suites.
enum JSONTestSupport {
    struct ReadResult {
        var trips: [TripRecord] = []
        var rejections: [SetAsideRecord] = []
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
        var reader = JSONRecordReader(name: name, format: format, options: options, encoding: try TextEncoding.of(options),
                                      chunkSize: chunkSize, limits: limits, source: source.read)
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

    /// `../shared/conformance/JSONTestSuite/test_parsing`, if it is there.
    static var conformanceDirectory: URL? {
        guard let conformance = TestPaths.conformance else { return nil }
        let url = URL(fileURLWithPath: conformance).appendingPathComponent("JSONTestSuite/test_parsing")
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
}

// MARK: - Generated trips

extension TripText {
    /// JSON's hard text: quotes, backslashes, control characters, separators, the escapes' own
    /// spelling, words other formats read as types, keys of the wrapper; any scalar.
    static let json = TripText(pieces: [
        "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}",
        ",", ":", "{", "}", "[", "]", "/", "\\u0041", "é", "中", "😀", "👩‍👩‍👧", "\u{FFFD}", "\u{10FFFF}", "\r\n",
        "null", "true", "false", "no", "~", "1e3", "0", "-1", "2024-05-01", "NaN", "schemaVersion", "trips",
    ])
}

extension ArbitraryTrips {
    /// Arbitrary trips for the JSON tests, as a reader gives them back; dates across years 1 to 9999.
    static func json(seed: UInt64) -> ArbitraryTrips {
        ArbitraryTrips(seed: seed, text: .json, dates: ArbitraryTrips.allDates)
    }
}
