import Foundation
import Testing
import TripKit
import TripFormats

// Test support for the SQLite suites: scratch directories, the sqlite3 tool as an independent
// checker, small trip builders, and a seeded generator of arbitrary trips.

/// A scratch directory, removed when released.
final class SQLiteScratch {
    let directory: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/tripconv-sqlite-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "cannot make a scratch directory")
        directory = String(cString: made!)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func path(_ name: String) -> String { directory + "/" + name }

    /// The names in the directory, hidden ones included (a temporary store is `.NAME.tripconv-XXXXXX`).
    func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory))?.sorted() ?? [] }

    /// A copy of a file of the repository's samples/ directory.
    func copySample(_ name: String) throws -> String {
        let target = path(name)
        try FileManager.default.copyItem(atPath: SQLiteScratch.samplesDirectory + "/" + name, toPath: target)
        return target
    }

    static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let samplesDirectory = packageRoot + "/samples"
}

/// The sqlite3 command-line tool: an independent reader of what we write.
enum SQLiteCLI {
    static let path = "/usr/bin/sqlite3"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }
    static let absentNote: Comment = "needs the sqlite3 tool at /usr/bin/sqlite3 (apt-get install sqlite3)"

    /// Runs SQL on a database with the tool and returns what it prints.
    @discardableResult
    static func run(_ database: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-batch", database]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 || !err.isEmpty {
            throw SQLiteCLIFailure(message: String(decoding: err, as: UTF8.self), status: process.terminationStatus)
        }
        return String(decoding: out, as: UTF8.self)
    }

    struct SQLiteCLIFailure: Error, CustomStringConvertible {
        let message: String
        let status: Int32
        var description: String { "sqlite3 exited \(status): \(message)" }
    }
}

/// The SQLite suites' helpers, in one namespace so they cannot clash with other formats' tests.
enum SQLiteTesting {
    /// Expects the store to be sound: the sqlite3 tool's `PRAGMA integrity_check` says ok and
    /// `PRAGMA foreign_key_check` finds nothing. Without the tool, SQLite's own checks through our
    /// connection stand in, and the test says so.
    static func expectSoundStore(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if SQLiteCLI.isAvailable {
            let integrity = try SQLiteCLI.run(path, "PRAGMA integrity_check;")
            #expect(integrity == "ok\n", "integrity_check of \(path)", sourceLocation: sourceLocation)
            let keys = try SQLiteCLI.run(path, "PRAGMA foreign_key_check;")
            #expect(keys == "", "foreign_key_check of \(path)", sourceLocation: sourceLocation)
        } else {
            print("note: sqlite3 tool absent; checking \(path) through tripconv's own connection instead")
            #expect(try SQLiteStore.open(path: path).problems() == [], sourceLocation: sourceLocation)
        }
    }

    /// Writes trips into a store (new or existing), then checks it with the sqlite3 tool.
    @discardableResult
    static func writeStore(_ trips: [ModelObject], to path: String, schema: any VersionedSchema.Type = TripSchemaV3.self,
                           policy: DeduplicationPolicy = .merge, migrate: Bool = false,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> SQLiteRecordWriter {
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions(schema: schema, policy: policy, migrate: migrate))
        do {
            for t in trips { try writer.write(t) }
            try writer.finish()
        } catch {
            writer.abort()
            throw error
        }
        try expectSoundStore(path, sourceLocation: sourceLocation)
        return writer
    }

    /// Reads a store to the end, and checks the reader says nil again after it.
    static func readStore(_ path: String, options: ReadOptions = ReadOptions()) throws -> SQLiteReadResult {
        let reader = try SQLiteRecordReader(path: path, options: options)
        var result = SQLiteReadResult(detection: reader.detection)
        while let item = try reader.next() {
            switch item {
            case .trip(let record): result.trips.append(record.object); result.origins.append(record.origin)
            case .rejected(let rejection): result.rejected.append(rejection)
            }
        }
        result.detection = reader.detection
        #expect(try reader.next() == nil, "nil again after the end")
        return result
    }

    /// The error a throwing call throws, as a `TripError` (the test fails when it throws something else).
    static func tripError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> TripError? {
        do {
            try body()
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return nil
        } catch let error as TripError {
            return error
        } catch {
            Issue.record("expected a TripError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    static func schema(_ version: SchemaVersion) -> any VersionedSchema.Type { TripMigrationPlan.schema(for: version)! }
}

/// Everything a reader yields from a store.
struct SQLiteReadResult {
    var trips: [ModelObject] = []
    var origins: [RecordOrigin] = []
    var rejected: [Rejection] = []
    var detection: Detection
}

// MARK: - Trips

/// Builders of small trips in any version's layout.
enum SQLiteFixtures {
    static func item(_ title: String, details: String = "", reservation: Bool = false, inPlan: Bool = false) -> ModelObject {
        ModelObject(attributes: [.string(title), .string(details), .bool(reservation), .bool(inPlan)])
    }

    static func accommodation(_ address: String, _ placeName: String) -> ModelObject {
        ModelObject(attributes: [.string(address), .string(placeName)])
    }

    static func date(_ text: String) -> Value { .date(Timestamp(iso8601: text)!) }

    /// A trip of the schema's root entity: name, destination, the two dates, the transient count at its default.
    static func trip(_ name: String, destination: String = "Lisbon, Portugal",
                     start: String = "2024-05-01T09:30:00Z", end: String = "2024-05-08T18:00:00Z",
                     items: [ModelObject] = [], accommodation: ModelObject? = nil,
                     schema: any VersionedSchema.Type = TripSchemaV3.self) -> ModelObject {
        let values: [Value] = [.string(name), .string(destination), date(start), date(end)]
        var attributes: [Value] = []
        for (i, a) in schema.rootEntity.attributes.enumerated() {
            attributes.append(a.isTransient ? (a.defaultValue ?? .null) : values[i])
        }
        return ModelObject(attributes: attributes, relationships: [.toMany(items), .toOne(accommodation)])
    }
}

// MARK: - Generated trips

/// SplitMix64: a small seeded generator, so a failing case can be replayed from its seed.
struct SQLiteSplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// Arbitrary trips: any Unicode in strings (quotes, separators, newlines, NUL, SQL, trigger words,
/// leading and trailing spaces), 0 to many items, with and without an accommodation, dates with and
/// without milliseconds across years 1 to 9999. Names are unique within one generator.
struct SQLiteTripGenerator {
    var random: SQLiteSplitMix64
    private var names: Set<String> = []

    init(seed: UInt64) { random = SQLiteSplitMix64(seed: seed) }

    static let pieces = [
        "'", "\"", "''", ";", ",", "\t", "\n", "\r\n", "\r", " ", "  leading", "trailing  ", "\u{0}",
        "'); DROP TABLE trips; --", "SELECT", "NULL", "null", "~", "no", "yes", "true", "0", "1e3", "0x1F",
        "2024-05-01", "é", "ß", "日本語", "🏔️", "👩‍👩‍👧", "\u{202E}", "\\", "%", "_", "?1", ":name", "@x", "$y",
        "--", "/*", "*/", "x'00'", "Paris", "&amp;", "<b>",
    ]

    mutating func scalar() -> Character {
        while true {
            let v: UInt32
            switch random.below(4) {
            case 0: v = UInt32(random.below(0x80))
            case 1: v = UInt32(0x80 + random.below(0x780))
            case 2: v = UInt32(random.below(0x10000))
            default: v = UInt32(0x10000 + random.below(0x100000))
            }
            if let s = Unicode.Scalar(v) { return Character(s) }
        }
    }

    mutating func string() -> String {
        var s = ""
        for _ in 0..<random.below(5) {
            if random.chance(50) { s += SQLiteTripGenerator.pieces[random.below(SQLiteTripGenerator.pieces.count)] }
            else { for _ in 0..<(1 + random.below(6)) { s.append(scalar()) } }
        }
        return s
    }

    mutating func timestamp() -> Timestamp {
        let lowest: Int64 = -62_135_596_800_000, highest: Int64 = 253_402_300_799_999
        var ms = lowest + Int64(random.next() % UInt64(highest - lowest + 1))
        if random.chance(50) { ms -= ((ms % 1000) + 1000) % 1000 }
        return Timestamp(milliseconds: ms)
    }

    mutating func trip(schema: any VersionedSchema.Type) -> ModelObject {
        var name = string()
        while names.contains(name) { name += String(scalar()) }
        names.insert(name)
        var items: [ModelObject] = []
        for _ in 0..<(random.chance(20) ? 0 : random.below(7)) {
            items.append(ModelObject(attributes: [.string(string()), .string(string()),
                                                  .bool(random.chance(50)), .bool(random.chance(50))]))
        }
        var accommodation: ModelObject?
        if random.chance(60) {
            var address = string()
            let place = string()
            // A to-one object of nothing but defaults reads back as none, in every format: keep one field.
            if address.isEmpty && place.isEmpty { address = "x" }
            accommodation = ModelObject(attributes: [.string(address), .string(place)])
        }
        let values: [Value] = [.string(name), .string(string()), .date(timestamp()), .date(timestamp())]
        var attributes: [Value] = []
        for (i, a) in schema.rootEntity.attributes.enumerated() {
            attributes.append(a.isTransient ? (a.defaultValue ?? .null) : values[i])
        }
        return ModelObject(attributes: attributes, relationships: [.toMany(items), .toOne(accommodation)])
    }
}
