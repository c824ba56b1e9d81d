import Foundation
import TripKit
import TripTestSupport
@testable import TripFormats

// Test support for the rejected-text suites: documents of generated trips, some of them bad, in
// JSON, XML and YAML, written by hand here so that each bad trip's exact source text, line and
// column are known.

/// The tests' seeded generator.
typealias RejectedTextRandom = SplitMix64

/// What makes a generated trip bad, and the reason the reader gives.
enum RejectedTextFault: CaseIterable {
    case none, missingName, badDate, untitledItem

    var reason: String? {
        switch self {
        case .none: return nil
        case .missingName: return "missing required field 'name'"
        case .badDate: return "field 'startDate': expected an ISO 8601 date, found 'not a date é'"
        case .untitledItem: return "missing required field 'title' of a BucketListItem"
        }
    }
}

/// A generated trip, as text fields.
struct RejectedTextTrip {
    var name: String
    var destination: String
    var start: String
    var end: String
    var items: [(title: String?, details: String)]
    var accommodation: (address: String, placeName: String)?
    var fault: RejectedTextFault

    static let pieces = ["a", "Oslo", " ", "\"", "'", "\\", "é", "中", "😀", ":", "#", "-", "&", "<", ">", ",", "{", "}",
                         "[", "]", "no", "null", "\t", "\n", "ø", "  "]

    static func string(_ random: inout RejectedTextRandom) -> String {
        (0..<random.int(1...8)).map { _ in random.pick(pieces) }.joined()
    }

    static func make(_ random: inout RejectedTextRandom, badShare: Int) -> RejectedTextTrip {
        let fault: RejectedTextFault = random.chance(badShare) ? random.pick([.missingName, .badDate, .untitledItem]) : .none
        var items: [(title: String?, details: String)] = (0..<random.int(0...3)).map { _ in (string(&random), string(&random)) }
        if fault == .untitledItem {
            items.insert((nil, string(&random)), at: random.int(0...items.count))
        }
        let ms = random.chance(30) ? ".\(random.int(100...999))" : ""
        return RejectedTextTrip(name: string(&random), destination: string(&random),
                                start: fault == .badDate ? "not a date é" : "2024-05-0\(random.int(1...9))T09:30:00\(ms)Z",
                                end: "2024-06-01T10:00:00Z", items: items,
                                accommodation: random.chance(50) ? (string(&random), string(&random)) : nil, fault: fault)
    }
}

/// A bad trip's place and text in a generated document.
struct RejectedTextExpectation: Equatable {
    var record: Int
    var line: Int
    var column: Int
    var text: String
    var reason: String
}

/// A document and what reading it must reject.
struct RejectedTextDocument {
    var text = ""
    var expected: [RejectedTextExpectation] = []
    var tripCount = 0
    private var line = 1
    let newline: String

    init(newline: String = "\n") { self.newline = newline }

    /// Appends text written with `\n` line breaks.
    mutating func add(_ s: String) {
        let converted = newline == "\n" ? s : s.replacingOccurrences(of: "\n", with: newline)
        text += converted
        line += s.filter { $0 == "\n" }.count
    }

    /// Appends a trip's text at `column` of the current line, noting it when the trip is bad.
    mutating func addTrip(_ trip: RejectedTextTrip, _ s: String, column: Int) {
        tripCount += 1
        if let reason = trip.fault.reason {
            let converted = newline == "\n" ? s : s.replacingOccurrences(of: "\n", with: newline)
            expected.append(RejectedTextExpectation(record: tripCount, line: line, column: column, text: converted, reason: reason))
        }
        add(s)
    }

    // MARK: - JSON

    /// A JSON string, or a YAML double-quoted scalar: for the characters the trips hold, the two
    /// escape alike.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// A trip as a JSON object or a YAML flow mapping: keys and dates written by `key` and `date`,
    /// on one line, or (`pretty`) one member a line.
    static func flow(_ t: RejectedTextTrip, key: (String) -> String, date: (String) -> String, pretty: Bool = false) -> String {
        var members: [String] = []
        if t.fault != .missingName { members.append("\(key("name")): \(quoted(t.name))") }
        members.append("\(key("destination")): \(quoted(t.destination))")
        members.append("\(key("startDate")): \(date(t.start))")
        members.append("\(key("endDate")): \(date(t.end))")
        let items = t.items.map { item -> String in
            var m: [String] = []
            if let title = item.title { m.append("\(key("title")): \(quoted(title))") }
            m.append("\(key("details")): \(quoted(item.details))")
            return "{" + m.joined(separator: ", ") + "}"
        }
        members.append("\(key("bucketList")): [" + items.joined(separator: ", ") + "]")
        if let a = t.accommodation {
            members.append("\(key("livingAccommodation")): {\(key("address")): \(quoted(a.address)), \(key("placeName")): \(quoted(a.placeName))}")
        }
        return pretty ? "{\n    " + members.joined(separator: ",\n    ") + "\n  }" : "{" + members.joined(separator: ", ") + "}"
    }

    /// A JSON array of trips, or the `schemaVersion`/`trips` wrapper around one.
    static func json(_ trips: [RejectedTextTrip], wrapped: Bool, seed: UInt64) -> RejectedTextDocument {
        var random = RejectedTextRandom(seed: seed)
        var d = RejectedTextDocument()
        d.add(wrapped ? "{\"schemaVersion\": \"3.0.0\", \"trips\": [\n" : "[\n")
        for (i, t) in trips.enumerated() {
            d.add("  ")
            d.addTrip(t, flow(t, key: quoted, date: quoted, pretty: random.chance(40)), column: 3)
            d.add(i == trips.count - 1 ? "\n" : ",\n")
        }
        d.add(wrapped ? "]}\n" : "]\n")
        return d
    }

    // MARK: - XML

    static func xmlText(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    static func xml(_ t: RejectedTextTrip) -> String {
        var s = "<trip>\n"
        if t.fault != .missingName { s += "    <name>\(xmlText(t.name))</name>\n" }
        s += "    <destination>\(xmlText(t.destination))</destination>\n"
        s += "    <startDate>\(t.start)</startDate>\n    <endDate>\(t.end)</endDate>\n"
        if t.items.isEmpty {
            s += "    <bucketList/>\n"
        } else {
            s += "    <bucketList>\n"
            for item in t.items {
                s += "      <item>"
                if let title = item.title { s += "<title>\(xmlText(title))</title>" }
                s += "<details>\(xmlText(item.details))</details></item>\n"
            }
            s += "    </bucketList>\n"
        }
        if let a = t.accommodation {
            s += "    <livingAccommodation><address>\(xmlText(a.address))</address><placeName>\(xmlText(a.placeName))</placeName></livingAccommodation>\n"
        }
        return s + "  </trip>"
    }

    static func xml(_ trips: [RejectedTextTrip], newline: String = "\n") -> RejectedTextDocument {
        var d = RejectedTextDocument(newline: newline)
        d.add("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<trips schemaVersion=\"3.0.0\">\n")
        for t in trips {
            d.add("  ")
            d.addTrip(t, xml(t), column: 3)
            d.add("\n")
        }
        d.add("</trips>\n")
        return d
    }

    // MARK: - YAML

    /// A trip as a block mapping whose first key is at `indent`; the text starts at its first key.
    static func yamlBlock(_ t: RejectedTextTrip, indent: Int, random: inout RejectedTextRandom) -> String {
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        if t.fault != .missingName { lines.append("name: \(quoted(t.name))") }
        lines.append("destination: \(quoted(t.destination))" + (random.chance(10) ? "   # where" : ""))
        lines.append("startDate: \(t.fault == .badDate ? quoted(t.start) : t.start)")
        lines.append("endDate: \(t.end)")
        if t.items.isEmpty {
            lines.append("bucketList: []")
        } else {
            lines.append("bucketList:")
            for item in t.items {
                var first = true
                func entry(_ s: String) { lines.append((first ? "  - " : "    ") + s); first = false }
                if let title = item.title { entry("title: \(quoted(title))") }
                entry("details: \(quoted(item.details))")
            }
        }
        if let a = t.accommodation {
            lines.append("livingAccommodation:")
            lines.append("  address: \(quoted(a.address))")
            lines.append("  placeName: \(quoted(a.placeName))")
        } else if random.chance(30) {
            lines.append("livingAccommodation:")
        }
        return lines.enumerated().map { $0.offset == 0 ? $0.element : pad + $0.element }.joined(separator: "\n")
    }

    enum YAMLShape { case wrapper, sequence, documents }

    /// Trips in a wrapper's `trips` sequence, in a bare sequence, or one per document; block
    /// mappings mostly, flow mappings sometimes, comments between them now and then.
    static func yaml(_ trips: [RejectedTextTrip], shape: YAMLShape, newline: String = "\n", seed: UInt64) -> RejectedTextDocument {
        var random = RejectedTextRandom(seed: seed)
        var d = RejectedTextDocument(newline: newline)
        switch shape {
        case .wrapper: d.add("schemaVersion: \"3.0.0\"\ntrips:\n")
        case .sequence: d.add("# trips\n")
        case .documents: break
        }
        for t in trips {
            if random.chance(10) { d.add(shape == .documents ? "# a comment\n" : "  # a comment\n") }
            if shape == .documents {
                d.add("---\n")
                d.addTrip(t, random.chance(20) ? flow(t, key: { $0 }, date: { $0 }) : yamlBlock(t, indent: 0, random: &random), column: 1)
            } else {
                let prefix = shape == .wrapper ? "  - " : "- "
                d.add(prefix)
                d.addTrip(t, random.chance(20) ? flow(t, key: { $0 }, date: { $0 }) : yamlBlock(t, indent: prefix.count, random: &random),
                          column: prefix.count + 1)
            }
            d.add("\n")
        }
        return d
    }
}

/// Generated trips, a share of them bad.
func rejectedTextTrips(_ count: Int, seed: UInt64, badShare: Int = 15) -> [RejectedTextTrip] {
    var random = RejectedTextRandom(seed: seed)
    return (0..<count).map { _ in RejectedTextTrip.make(&random, badShare: badShare) }
}

/// Reads a document of any format through the factory, from a temporary file.
func rejectedTextRead(_ bytes: [UInt8], format: Format, name: String = "in") throws -> (trips: [TripRecord], rejections: [SetAsideRecord]) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("rejected-text-\(UUID().uuidString)-\(name)").path
    precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "cannot create \(path)")
    defer { try? FileManager.default.removeItem(atPath: path) }
    var reader = try FormatFactory.makeReader(.file(path), format: format, options: ReadOptions())
    var trips: [TripRecord] = [], rejections: [SetAsideRecord] = []
    while let item = try reader.next() {
        switch item {
        case .trip(let t): trips.append(t)
        case .rejected(let r): rejections.append(r)
        }
    }
    return (trips, rejections)
}

/// What a reading rejected, in the expectations' terms (the source name left out).
func rejectedTextFound(_ rejections: [SetAsideRecord]) -> [RejectedTextExpectation] {
    rejections.map {
        RejectedTextExpectation(record: $0.origin.record, line: $0.origin.line ?? -1, column: $0.origin.column ?? -1,
                                text: $0.text ?? "<no text>", reason: $0.reason)
    }
}
