import TripKit

/// Writes trips as JSON or JSON Lines, with the field names of the output schema's declarations.
///
/// JSON is the wrapper with one trip per line, so a diff shows which trips changed:
///
/// ```
/// {"schemaVersion": "3.0.0", "trips": [
/// {"name": "Paris", "destination": "France", "startDate": "2024-05-01T09:30:00Z", ...},
/// {"name": "Rome", ...}
/// ]}
/// ```
///
/// JSON Lines is one trip object per line, no wrapper. Members are written in declaration order
/// (attributes, then relationships), transient attributes never; a to-one relationship with no
/// object is `null`. Strings escape `"`, `\`, control characters, U+0085, U+2028 and U+2029, so
/// every line tool sees one trip per line.
///
/// ```swift
/// var writer = try JSONRecordWriter(.file("out.jsonl"), format: .jsonl)
/// try writer.write(trip)
/// try writer.finish()
/// ```
public struct JSONRecordWriter: RecordWriter, RecordEncoding {
    private let output: ByteOutput
    private let isLines: Bool
    private let layout: JSONObjectLayout
    private let header: [UInt8]
    private var count = 0
    private var bytes: [UInt8] = []

    /// Opens an output for JSON (`format: .json`) or JSON Lines (`.jsonl`) in `options.schema`.
    public init(_ location: OutputLocation, format: Format = .json, options: WriteOptions = WriteOptions()) throws {
        guard format == .json || format == .jsonl else {
            throw TripError.usage("the JSON writer writes json or jsonl, not \(format.rawValue)")
        }
        let layout = try JSONObjectLayout.root(of: options.schema)
        output = try ByteOutput(location)
        isLines = format == .jsonl
        self.layout = layout
        header = Array(#"{"schemaVersion": "\#(options.schema.versionIdentifier)", "trips": ["#.utf8)
        bytes.reserveCapacity(1024)
    }

    /// Writes one trip, an object of `options.schema`'s root entity, on a line of its own.
    public mutating func write(_ object: ModelObject) throws {
        bytes.removeAll(keepingCapacity: true)
        if !isLines {
            if count == 0 { bytes.append(contentsOf: header) } else { bytes.append(0x2C) }
            bytes.append(0x0A)
        }
        JSONRecordWriter.encode(object, layout, into: &bytes)
        if isLines { bytes.append(0x0A) }
        try output.write(bytes)
        count += 1
    }

    /// Each trip as `write` adds it after the first: `,\n{…}` (JSON) or `{…}\n` (JSON Lines).
    public func makeEncoder() -> @Sendable (ModelObject, inout [UInt8]) -> Void {
        let layout = self.layout, isLines = self.isLines
        return { object, out in
            if !isLines { out.append(0x2C); out.append(0x0A) }
            JSONRecordWriter.encode(object, layout, into: &out)
            if isLines { out.append(0x0A) }
        }
    }

    /// Writes trips the encoder made; the first trip of the output gets the header, not a comma.
    public mutating func writeEncoded(_ encoded: [UInt8], trips: Int) throws {
        guard trips > 0 else { return }
        if !isLines && count == 0 {
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: header)
            try output.write(bytes)
            try encoded.withUnsafeBufferPointer { try output.write(UnsafeBufferPointer(rebasing: $0.dropFirst())) }
        } else {
            try output.write(encoded)
        }
        count += trips
    }

    /// Closes the wrapper (JSON) and makes the output visible under its name.
    public mutating func finish() throws {
        if !isLines {
            bytes.removeAll(keepingCapacity: true)
            if count == 0 { bytes.append(contentsOf: header) } else { bytes.append(0x0A) }
            bytes.append(contentsOf: "]}\n".utf8)
            try output.write(bytes)
        }
        try output.commit()
    }

    /// Throws the output away, leaving the target as it was.
    public mutating func abort() {
        output.discard()
    }

    // MARK: - Encoding

    /// Appends one object, in its layout, on one line.
    static func encode(_ object: ModelObject, _ layout: JSONObjectLayout, into out: inout [UInt8]) {
        out.append(0x7B)
        var first = true
        for member in layout.attributes {
            if !first { out.append(0x2C); out.append(0x20) }
            first = false
            out.append(contentsOf: member.key)
            let value = member.slot < object.attributes.count ? object.attributes[member.slot] : .null
            encode(value, into: &out)
        }
        for member in layout.relationships {
            if !first { out.append(0x2C); out.append(0x20) }
            first = false
            out.append(contentsOf: member.key)
            let related = member.slot < object.relationships.count ? object.relationships[member.slot] : nil
            let objects = related?.objects ?? []
            let destination = member.destination!
            if member.isToMany {
                out.append(0x5B)
                for (i, o) in objects.enumerated() {
                    if i > 0 { out.append(0x2C); out.append(0x20) }
                    encode(o, destination, into: &out)
                }
                out.append(0x5D)
            } else if let o = objects.first {
                encode(o, destination, into: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        }
        out.append(0x7D)
    }

    static func encode(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .string(let s): appendString(s, to: &out)
        case .date(let t):
            // ISO 8601 text needs no escaping.
            out.append(0x22)
            t.appendISO8601(to: &out)
            out.append(0x22)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let n): out.append(contentsOf: String(n).utf8)
        }
    }

    /// Appends a JSON string literal. A Swift string is valid UTF-8, so the output is too.
    static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        if s.utf8.withContiguousStorageIfAvailable({ appendEscaped($0, to: &out) }) == nil {
            Array(s.utf8).withUnsafeBufferPointer { appendEscaped($0, to: &out) }
        }
        out.append(0x22)
    }

    private static func appendEscaped(_ text: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        var i = 0
        let n = text.count
        while i < n {
            let b = text[i]
            // Plain: printable ASCII but `"` and `\`, and non-ASCII but the lead bytes of U+0085
            // (C2 85) and U+2028/U+2029 (E2 80 A8/A9).
            if b >= 0x20 && b != 0x22 && b != 0x5C && b != 0xC2 && b != 0xE2 { i += 1; continue }
            var escape: StaticString? = nil
            var length = 1
            switch b {
            case 0x22: escape = #"\""#
            case 0x5C: escape = #"\\"#
            case 0x0A: escape = #"\n"#
            case 0x0D: escape = #"\r"#
            case 0x09: escape = #"\t"#
            case 0x08: escape = #"\b"#
            case 0x0C: escape = #"\f"#
            case 0xC2:
                if i + 1 < n, text[i + 1] == 0x85 { escape = #"\u0085"#; length = 2 }
            case 0xE2:
                if i + 2 < n, text[i + 1] == 0x80, text[i + 2] == 0xA8 { escape = #"\u2028"#; length = 3 }
                if i + 2 < n, text[i + 1] == 0x80, text[i + 2] == 0xA9 { escape = #"\u2029"#; length = 3 }
            default:
                break
            }
            if escape == nil && b >= 0x20 { i += 1; continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<i]))
            if let escape {
                out.append(contentsOf: UnsafeBufferPointer(start: escape.utf8Start, count: escape.utf8CodeUnitCount))
            } else {
                let digits: StaticString = "0123456789abcdef"
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, digits.utf8Start[Int(b >> 4)], digits.utf8Start[Int(b & 0x0F)]])
            }
            i += length
            runStart = i
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<n]))
    }
}

/// The members of one entity's objects, with their keys encoded once: `"name": `.
final class JSONObjectLayout: @unchecked Sendable {  // immutable once built
    struct Member {
        let slot: Int
        let key: [UInt8]
        let isToMany: Bool
        var destination: JSONObjectLayout?
    }

    let entityName: String
    private(set) var attributes: [Member] = []
    private(set) var relationships: [Member] = []

    private init(entityName: String) { self.entityName = entityName }

    /// The layout of a schema's root entity, and through its relationships of the others.
    static func root(of schema: any VersionedSchema.Type) throws -> JSONObjectLayout {
        var made: [String: JSONObjectLayout] = [:]
        for entity in schema.entities {
            let layout = JSONObjectLayout(entityName: entity.name)
            for (slot, a) in entity.attributes.enumerated() where !a.isTransient {
                layout.attributes.append(Member(slot: slot, key: key(a.name), isToMany: false, destination: nil))
            }
            made[entity.name] = layout
        }
        for entity in schema.entities {
            let layout = made[entity.name]!
            for (slot, r) in entity.relationships.enumerated() {
                guard let destination = made[r.destination] else {
                    throw TripError.data("\(schema.versionIdentifier): relationship '\(r.name)' leads to '\(r.destination)', which the schema does not declare")
                }
                layout.relationships.append(Member(slot: slot, key: key(r.name), isToMany: r.isToMany, destination: destination))
            }
        }
        return made[schema.rootEntity.name]!
    }

    private static func key(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONRecordWriter.appendString(name, to: &bytes)
        bytes.append(contentsOf: ": ".utf8)
        return bytes
    }
}
