import Foundation
import Testing
@testable import TripFormats
import TripKit

// MARK: - Trips

/// Builds trips in a schema's positional layout, for the CSV and TSV tests.
enum CSVTrip {
    static func item(_ title: String, details: String = "", reservation: Bool = false, inPlan: Bool = false) -> ModelObject {
        ModelObject(attributes: [.string(title), .string(details), .bool(reservation), .bool(inPlan)])
    }

    static func place(_ address: String, _ name: String) -> ModelObject {
        ModelObject(attributes: [.string(address), .string(name)])
    }

    /// A trip of `schema` (3.0.0 has the transient tripViews, whose value readers set to its default 0).
    static func trip(_ name: String, _ destination: String, start: Int64 = 1_714_555_800_000, end: Int64 = 1_714_815_000_000,
                     items: [ModelObject] = [], place: ModelObject? = nil,
                     schema: any VersionedSchema.Type = TripSchemaV3.self) -> ModelObject {
        var attributes: [Value] = [.string(name), .string(destination),
                                   .date(Timestamp(milliseconds: start)), .date(Timestamp(milliseconds: end))]
        if schema.rootEntity.attributes.count == 5 { attributes.append(.int(0)) }
        return ModelObject(attributes: attributes, relationships: [.toMany(items), .toOne(place)])
    }

    /// What a reader gives back for a trip: an accommodation of nothing but defaults is none.
    static func normalized(_ trip: ModelObject) -> ModelObject {
        var t = trip
        if case .toOne(let p?) = t.relationships[1], p.attributes.allSatisfy({ $0 == .string("") }) {
            t.relationships[1] = .toOne(nil)
        }
        return t
    }
}

// MARK: - Files

/// A fresh temporary directory, removed by `remove()`.
struct CSVTemporaryDirectory {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "tripconv-csv-tests-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> String { path + "/" + name }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

enum CSVIO {
    /// Writes trips with the format's writer and returns the file's bytes as text.
    static func written(_ trips: [ModelObject], format: Format = .csv, options: WriteOptions = WriteOptions()) throws -> String {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("out.\(format.rawValue)")
        var writer = try CSVFormat.makeWriter(.file(path), format: format, options: options)
        for t in trips { try writer.write(t) }
        try writer.finish()
        return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    /// Reads bytes with the format's reader, from memory under the name `name`: every item, and the detection.
    static func read(_ bytes: [UInt8], format: Format = .csv, options: ReadOptions = ReadOptions(),
                     name: String = "in.csv") throws -> (items: [ReadItem], detection: Detection) {
        let encoding = try CSVTextEncoding(option: options.inputEncoding)
        var offset = 0
        let rows = CSVRowReader(name: name, dialect: CSVDialect(format), encoding: encoding) { buffer in
            let n = min(buffer.count, bytes.count - offset)
            if n <= 0 { return 0 }
            bytes.withUnsafeBytes { src in buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<offset + n])) }
            offset += n
            return n
        }
        var reader = CSVRecordReader(rows: rows, format: format, options: options)
        var items: [ReadItem] = []
        while let item = try reader.next() { items.append(item) }
        return (items, reader.detection)
    }

    static func read(_ text: String, format: Format = .csv, options: ReadOptions = ReadOptions(),
                     name: String = "in.csv") throws -> (items: [ReadItem], detection: Detection) {
        try read(Array(text.utf8), format: format, options: options, name: name)
    }

    static func read(path: String, format: Format = .csv, options: ReadOptions = ReadOptions()) throws -> (items: [ReadItem], detection: Detection) {
        var reader = try CSVFormat.makeReader(.file(path), format: format, options: options)
        var items: [ReadItem] = []
        while let item = try reader.next() { items.append(item) }
        return (items, reader.detection)
    }

    /// The trips of a read; fails the test on a rejection.
    static func trips(_ items: [ReadItem]) -> [ModelObject] {
        items.compactMap { item in
            switch item {
            case .trip(let t): return t.object
            case .rejected(let r): Issue.record("unexpected rejection: \(r.origin): \(r.reason)"); return nil
            }
        }
    }

    static func rejections(_ items: [ReadItem]) -> [Rejection] {
        items.compactMap { if case .rejected(let r) = $0 { return r } else { return nil } }
    }

    /// The error a throwing call throws, as a TripError.
    static func error(_ body: () throws -> Void) -> TripError? {
        do { try body(); return nil } catch let e as TripError { return e } catch { return TripError(.io, "\(error)") }
    }

    /// Every row of bytes through the row-level reader, as strings.
    static func rows(_ bytes: [UInt8], dialect: CSVDialect = .csv, encoding: CSVTextEncoding = .utf8,
                     chunkSize: Int = 1 << 18, limits: CSVLimits = CSVLimits()) throws -> [[String]] {
        var offset = 0
        let reader = CSVRowReader(name: "t.csv", dialect: dialect, encoding: encoding, limits: limits, chunkSize: chunkSize) { buffer in
            // Hand out at most 7 bytes at a time when the chunk is small, to split every kind of token.
            let n = min(buffer.count, bytes.count - offset, chunkSize < 64 ? 7 : Int.max)
            if n <= 0 { return 0 }
            bytes.withUnsafeBytes { src in buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<offset + n])) }
            offset += n
            return n
        }
        var rows: [[String]] = []
        while try reader.nextRow() { rows.append(reader.strings) }
        return rows
    }
}

/// Where ../shared is, relative to the package root; nil when it is absent.
enum CSVShared {
    static var conformance: String? {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/conformance").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }
}

/// Runs a tool and returns its status and output; nil when the tool is not installed.
enum CSVTool {
    static func path(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    static func run(_ tool: String, _ arguments: [String], stdin: Data? = nil) throws -> (status: Int32, stdout: Data, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting, so a large output cannot block the child.
        final class Box: @unchecked Sendable { var data = Data() }
        let stderr = Box()
        let group = DispatchGroup()
        group.enter()
        let handle = err.fileHandleForReading
        DispatchQueue.global().async { stderr.data = handle.readDataToEndOfFile(); group.leave() }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return (process.terminationStatus, stdout, String(decoding: stderr.data, as: UTF8.self))
    }
}

// MARK: - Generated trips

/// SplitMix64: a small seeded generator, so a failing case can be run again.
struct CSVSplitMix64: RandomNumberGenerator {
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

/// Arbitrary trips: any Unicode, separators, quotes, line breaks, backslashes, spaces at the ends,
/// formula starts, empty strings; 0 to many items; with and without accommodation; dates with and
/// without milliseconds.
struct CSVTripGenerator {
    var random: CSVSplitMix64
    init(seed: UInt64) { random = CSVSplitMix64(seed: seed) }

    private static let pieces: [String] = [
        "a", "Z", "7", " ", "  ", ",", ";", "\"", "\"\"", "'", "\n", "\r", "\r\n", "\t", "\\", "\\t", "\\n", "\\\\",
        "=", "+", "-", "@", "=SUM(A1)", "null", "[]", "{}", "true", "no", "é", "ß", "日本", "🚀", "👩‍👩‍👧", "\u{301}",
        "\u{FEFF}", "\u{2028}", "\u{7F}", "\u{1}", "Paris", "New York", "#", "trip_id",
    ]

    mutating func string(maxPieces: Int = 6) -> String {
        let n = Int.random(in: 0...maxPieces, using: &random)
        var s = ""
        for _ in 0..<n {
            if Int.random(in: 0..<8, using: &random) == 0 {
                // Any scalar outside the surrogates.
                var v = UInt32.random(in: 1...0x10FFFF, using: &random)
                if (0xD800...0xDFFF).contains(v) { v = 0xFFFD }
                s.unicodeScalars.append(Unicode.Scalar(v)!)
            } else {
                s += CSVTripGenerator.pieces.randomElement(using: &random)!
            }
        }
        return s
    }

    mutating func date() -> Int64 {
        let seconds = Int64.random(in: -2_208_988_800...4_102_444_800, using: &random)
        let ms = Bool.random(using: &random) ? Int64.random(in: 1...999, using: &random) : 0
        return seconds * 1000 + ms
    }

    mutating func trip(schema: any VersionedSchema.Type = TripSchemaV3.self) -> ModelObject {
        let count = [0, 0, 1, 2, 3, 5, 9].randomElement(using: &random)!
        var items: [ModelObject] = []
        for _ in 0..<count {
            items.append(CSVTrip.item(string(), details: string(), reservation: Bool.random(using: &random),
                                      inPlan: Bool.random(using: &random)))
        }
        let place = Bool.random(using: &random) ? CSVTrip.place(string(), string()) : nil
        return CSVTrip.trip(string(), string(), start: date(), end: date(), items: items, place: place, schema: schema)
    }
}
