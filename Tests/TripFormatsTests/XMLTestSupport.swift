import Foundation
import TripFormats
import TripKit

// Test support for the XML suites: temporary files, reading and writing through the public API,
// external tools, and a seeded generator of arbitrary trips.

/// Where things are: the package root (from this file's path), samples/, and ../shared.
enum XMLTestPaths {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()
    static var samples: String { packageRoot + "/samples" }
    /// `../shared/conformance` relative to the package root, or nil when it is absent.
    static var conformance: String? {
        let path = URL(fileURLWithPath: packageRoot).deletingLastPathComponent().appendingPathComponent("shared/conformance").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }
}

/// A temporary directory, removed when released.
final class XMLTempDir {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/tripconv-xml-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: made!)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    @discardableResult
    func file(_ name: String, _ bytes: [UInt8]) -> String {
        let p = path + "/" + name
        let created = FileManager.default.createFile(atPath: p, contents: Data(bytes))
        precondition(created, "cannot create \(p)")
        return p
    }

    @discardableResult
    func file(_ name: String, _ text: String) -> String { file(name, Array(text.utf8)) }

    func contents(_ name: String) -> String? {
        FileManager.default.contents(atPath: path + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// What reading an input gave.
struct XMLReadResult {
    var trips: [TripRecord] = []
    var rejections: [Rejection] = []
    var detection: Detection

    var objects: [ModelObject] { trips.map(\.object) }
}

/// Reads a file to the end through the XML reader.
func xmlRead(_ path: String, options: ReadOptions = ReadOptions()) throws -> XMLReadResult {
    var reader = try FormatFactory.makeReader(.file(path), format: .xml, options: options)
    var trips: [TripRecord] = [], rejections: [Rejection] = []
    while let item = try reader.next() {
        switch item {
        case .trip(let t): trips.append(t)
        case .rejected(let r): rejections.append(r)
        }
    }
    // Nil again after the end.
    let again = try reader.next()
    precondition(again == nil)
    return XMLReadResult(trips: trips, rejections: rejections, detection: reader.detection)
}

/// Reads XML text (UTF-8) through a temporary file.
func xmlRead(text: String, options: ReadOptions = ReadOptions()) throws -> XMLReadResult {
    try xmlRead(bytes: Array(text.utf8), options: options)
}

func xmlRead(bytes: [UInt8], options: ReadOptions = ReadOptions()) throws -> XMLReadResult {
    let dir = XMLTempDir()
    return try withExtendedLifetime(dir) { try xmlRead(dir.file("input.xml", bytes), options: options) }
}

/// The error reading gives, or nil when it reads to the end.
func xmlReadError(text: String) -> TripError? {
    do { _ = try xmlRead(text: text); return nil } catch let e as TripError { return e } catch { return TripError(.io, "\(error)") }
}

/// Writes objects of a schema through the XML writer and returns the text.
func xmlWrite(_ objects: [ModelObject], schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> String {
    let dir = XMLTempDir()
    let path = dir.path + "/out.xml"
    var writer = try FormatFactory.makeWriter(.file(path), format: .xml, options: WriteOptions(schema: schema))
    for o in objects { try writer.write(o) }
    try writer.finish()
    return dir.contents("out.xml") ?? ""
}

// MARK: - Building trips

/// A 3.0.0 trip (tripViews at its default).
func xmlTripV3(_ name: String, destination: String = "Lisbon", start: Int64 = 1_714_521_600_000, end: Int64 = 1_715_126_400_000,
               items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
    ModelObject(attributes: [.string(name), .string(destination), .date(Timestamp(milliseconds: start)),
                             .date(Timestamp(milliseconds: end)), .int(0)],
                relationships: [.toMany(items), .toOne(accommodation)])
}

/// A 1.0.0 trip.
func xmlTripV1(_ name: String, destination: String = "Lisbon", start: Int64 = 1_714_521_600_000, end: Int64 = 1_715_126_400_000,
               items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
    ModelObject(attributes: [.string(name), .string(destination), .date(Timestamp(milliseconds: start)),
                             .date(Timestamp(milliseconds: end))],
                relationships: [.toMany(items), .toOne(accommodation)])
}

func xmlItem(_ title: String, _ details: String = "", reserved: Bool = false, planned: Bool = false) -> ModelObject {
    ModelObject(attributes: [.string(title), .string(details), .bool(reserved), .bool(planned)])
}

func xmlPlace(_ address: String, _ placeName: String) -> ModelObject {
    ModelObject(attributes: [.string(address), .string(placeName)])
}

// MARK: - External tools

/// The path of a tool on PATH, or nil.
func xmlToolPath(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let p = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

/// Runs a tool to completion; returns its status, stdout and stderr.
func xmlRun(_ tool: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes to the end before waiting, so a full pipe cannot block the tool.
    final class Box: @unchecked Sendable { var data = Data() }
    let errBox = Box()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async { errBox.data = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return (process.terminationStatus, outData, String(decoding: errBox.data, as: UTF8.self))
}

// MARK: - Arbitrary trips

/// SplitMix64: a small, seeded, reproducible generator.
struct XMLSplitMix64: RandomNumberGenerator {
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

/// Arbitrary trips of a schema: strings of any Unicode that XML 1.0 can carry (quotes, markup
/// characters, CR, LF, CRLF, tabs, leading and trailing spaces, words that look like other types),
/// 0 to many items, with and without an accommodation, dates with and without milliseconds.
struct XMLTripGenerator {
    var random: XMLSplitMix64
    let schema: any VersionedSchema.Type

    init(seed: UInt64, schema: any VersionedSchema.Type = TripSchemaV3.self) {
        random = XMLSplitMix64(seed: seed); self.schema = schema
    }

    private static let pieces: [String] = [
        " ", "  ", "\t", "\n", "\r", "\r\n", "<", ">", "&", "\"", "'", "]]>", "<!--", "&amp;", "&#13;",
        "true", "false", "null", "~", "0", "1e3", "2024-05-01", "yes", "no", "é", "ß", "€", "日本",
        "🧳", "👩‍👩‍👧", "e\u{301}", "\u{00A0}", "\u{0085}", "\u{2028}", "\u{200B}", "\u{FEFF}", "\u{7F}",
        "\u{9F}", "\u{FFFD}", "\u{10FFFF}", "Paris", "Lisbon", "CDATA", "<trip>", "</name>",
    ]

    mutating func string() -> String {
        var s = ""
        let count = Int(random.next() % 8)
        for _ in 0..<count {
            switch random.next() % 4 {
            case 0: s += XMLTripGenerator.pieces[Int(random.next() % UInt64(XMLTripGenerator.pieces.count))]
            case 1: s += String(Character(Unicode.Scalar(UInt8(0x20 + random.next() % 95))))
            default:
                // Any scalar XML 1.0 allows.
                var v = UInt32(random.next() % 0x110000)
                if (0xD800...0xDFFF).contains(v) || v == 0xFFFE || v == 0xFFFF || (v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D) { v = 0x41 }
                s.unicodeScalars.append(Unicode.Scalar(v)!)
            }
        }
        return s
    }

    mutating func date() -> Timestamp {
        // 1900...2100, half of them with milliseconds.
        let seconds = Int64(random.next() % 6_311_390_400) - 2_208_988_800
        let ms = random.next() % 2 == 0 ? 0 : Int64(random.next() % 1000)
        return Timestamp(milliseconds: seconds * 1000 + ms)
    }

    mutating func object(_ entity: Entity) -> ModelObject {
        var attributes: [Value] = []
        for a in entity.attributes {
            if a.isTransient { attributes.append(a.defaultValue ?? .null); continue }
            switch a.type {
            case .string: attributes.append(.string(string()))
            case .date: attributes.append(.date(date()))
            case .bool: attributes.append(.bool(random.next() % 2 == 0))
            case .int: attributes.append(.int(Int64(bitPattern: random.next())))
            }
        }
        var relationships: [Related] = []
        for r in entity.relationships {
            let destination = schema.entity(r.destination)!
            if r.isToMany {
                let n = random.next() % 3 == 0 ? 0 : Int(random.next() % 5)
                relationships.append(.toMany((0..<n).map { _ in object(destination) }))
            } else {
                relationships.append(.toOne(random.next() % 2 == 0 ? nil : object(destination)))
            }
        }
        return ModelObject(attributes: attributes, relationships: relationships)
    }

    mutating func trip() -> ModelObject { object(schema.rootEntity) }

    /// What a reader gives back for an object: an accommodation that holds only defaults is none.
    func expected(_ object: ModelObject) -> ModelObject {
        var o = object
        for (i, r) in schema.rootEntity.relationships.enumerated() where !r.isToMany {
            if case .toOne(let a?) = o.relationships[i], let d = schema.entity(r.destination),
               zip(d.attributes, a.attributes).allSatisfy({ $1 == $0.defaultValue }) {
                o.relationships[i] = .toOne(nil)
            }
        }
        return o
    }
}
