import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

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

    /// A trip with every string of it, and of its related objects, passed through `transform`.
    static func mapStrings(_ object: ModelObject, _ transform: (String) -> String) -> ModelObject {
        var o = object
        o.attributes = o.attributes.map { if case .string(let s) = $0 { return .string(transform(s)) } else { return $0 } }
        o.relationships = o.relationships.map { r in
            switch r {
            case .toMany(let list): return .toMany(list.map { mapStrings($0, transform) })
            case .toOne(let one): return .toOne(one.map { mapStrings($0, transform) })
            }
        }
        return o
    }

    /// Whether CSV and TSV can carry a trip: an empty name or destination reads as a missing one
    /// (a spreadsheet cannot tell an empty cell from an empty string), so that trip is a bad record.
    static func isReadable(_ trip: ModelObject) -> Bool {
        trip.attributes[0] != .string("") && trip.attributes[1] != .string("")
    }

    /// The reason a trip CSV cannot carry gets: its name, else its destination, is missing.
    static func unreadableReason(_ trip: ModelObject) -> String {
        "missing required field '\(trip.attributes[0] == .string("") ? "name" : "destination")'"
    }

    /// Checks a read against the trips written: the readable ones come back equal and in order, each
    /// other one is rejected for its empty name or destination.
    static func expectRead(_ items: [ReadItem], wrote trips: [ModelObject], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(items.count == trips.count, sourceLocation: sourceLocation)
        for (i, (item, trip)) in zip(items, trips).enumerated() {
            switch (item, isReadable(trip)) {
            case (.trip(let t), true) where t.object == normalized(trip): continue
            case (.rejected(let r), false) where r.reason == unreadableReason(trip): continue
            default:
                Issue.record("trip \(i): read \(item), wrote \(trip)", sourceLocation: sourceLocation)
                return
            }
        }
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
        var offset = 0
        let rows = try CSVFormat.makeRowReader(name: name, format: format, options: options) { buffer in
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

    static func rejections(_ items: [ReadItem]) -> [SetAsideRecord] {
        items.compactMap { if case .rejected(let r) = $0 { return r } else { return nil } }
    }

    /// The error a throwing call throws, as a TripError.
    static func error(_ body: () throws -> Void) -> TripError? {
        do { try body(); return nil } catch let e as TripError { return e } catch { return TripError(.io, "\(error)") }
    }

    /// Every row of bytes through the row-level reader, as strings.
    static func rows(_ bytes: [UInt8], dialect: CSVDialect = .csv, encoding: TextEncoding = .utf8,
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

// MARK: - Generated trips

extension TripText {
    /// CSV's and TSV's hard text: separators, quotes, line breaks, backslashes and TSV's escapes, spaces
    /// at the ends, formula starts, words other formats read as types; any scalar but U+0000.
    static let csv = TripText(pieces: [
        "a", "Z", "7", " ", "  ", ",", ";", "\"", "\"\"", "'", "\n", "\r", "\r\n", "\t", "\\", "\\t", "\\n", "\\\\",
        "=", "+", "-", "@", "=SUM(A1)", "null", "[]", "{}", "true", "no", "é", "ß", "日本", "🚀", "👩‍👩‍👧", "\u{301}",
        "\u{FEFF}", "\u{2028}", "\u{7F}", "\u{1}", "Paris", "New York", "#", "trip_id",
    ], allows: { $0 != "\u{0}" })
}

extension ArbitraryTrips {
    /// Arbitrary trips for the CSV and TSV tests (an accommodation of nothing but defaults is kept, to
    /// be read back as none: `CSVTrip.normalized`).
    static func csv(seed: UInt64) -> ArbitraryTrips {
        ArbitraryTrips(seed: seed, text: .csv, keepsDefaultToOne: true)
    }
}
