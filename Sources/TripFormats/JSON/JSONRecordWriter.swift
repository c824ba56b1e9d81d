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
    private var record = RecordBuffer()

    /// Opens an output for JSON (`format: .json`) or JSON Lines (`.jsonl`) in `options.schema`.
    public init(_ location: OutputLocation, format: Format = .json, options: WriteOptions = WriteOptions()) throws {
        guard format == .json || format == .jsonl else {
            throw TripError.usage("the JSON writer writes json or jsonl, not \(format.rawValue)")
        }
        let layout = try JSONObjectLayout(options.schema)
        output = try ByteOutput(location, compression: options.compression)
        isLines = format == .jsonl
        self.layout = layout
        header = Array(#"{"schemaVersion": "\#(options.schema.versionIdentifier)", "trips": ["#.utf8)
    }

    /// Writes one trip, an object of `options.schema`'s root entity, on a line of its own.
    public mutating func write(_ object: ModelObject) throws {
        record.removeAll()
        if !isLines {
            if count == 0 { record.append(header) } else { record.append(0x2C) }
            record.append(0x0A)
        }
        JSONRecordWriter.encode(object, entity: 0, layout, into: &record)
        if isLines { record.append(0x0A) }
        try output.write(record.bytes)
        count += 1
    }

    /// Each trip as `write` adds it after the first: `,\n{…}` (JSON) or `{…}\n` (JSON Lines).
    public func makeEncoder() -> @Sendable (_ trip: (Int) -> ModelObject, _ range: Range<Int>, _ out: inout [UInt8]) -> Void {
        let layout = self.layout, isLines = self.isLines
        return { trip, range, out in
            var record = RecordBuffer()
            for i in range {
                record.removeAll()
                if !isLines { record.append(0x2C, 0x0A) }
                JSONRecordWriter.encode(trip(i), entity: 0, layout, into: &record)
                if isLines { record.append(0x0A) }
                out.append(contentsOf: record.bytes)
            }
        }
    }

    /// Writes trips the encoder made; the first trip of the output gets the header, not a comma.
    public mutating func writeEncoded(_ encoded: [UInt8], trips: Int) throws {
        guard trips > 0 else { return }
        if !isLines && count == 0 {
            try output.write(header)
            try encoded.withUnsafeBufferPointer { try output.write(UnsafeBufferPointer(rebasing: $0.dropFirst())) }
        } else {
            try output.write(encoded)
        }
        count += trips
    }

    /// Closes the wrapper (JSON) and makes the output visible under its name.
    public mutating func finish() throws {
        if !isLines {
            record.removeAll()
            if count == 0 { record.append(header) } else { record.append(0x0A) }
            record.append(Array("]}\n".utf8))
            try output.write(record.bytes)
        }
        try output.commit()
    }

    /// Throws the output away, leaving the target as it was.
    public mutating func abort() {
        output.discard()
    }

    // MARK: - Encoding

    /// Appends one object of the layout's entity `e`, on one line.
    static func encode(_ object: ModelObject, entity e: Int, _ layout: JSONObjectLayout, into out: inout RecordBuffer) {
        let spans = layout.entities[e]
        out.append(0x7B)
        var first = true
        object.attributes.withUnsafeBufferPointer { values in
            for m in spans.attributes {
                let member = layout.members[m]
                appendKey(member, layout, first: &first, to: &out)
                encode(member.slot < values.count ? values[member.slot] : .null, into: &out)
            }
        }
        object.relationships.withUnsafeBufferPointer { related in
            for m in spans.relationships {
                let member = layout.members[m]
                appendKey(member, layout, first: &first, to: &out)
                // Switched on, not read through `objects`, which makes an array of a to-one object.
                let relation = member.slot < related.count ? related[member.slot] : .toMany([])
                if member.isToMany {
                    out.append(0x5B)
                    switch relation {
                    case .toMany(let items):
                        for i in items.indices {
                            if i > 0 { out.append(0x2C, 0x20) }
                            encode(items[i], entity: member.destination, layout, into: &out)
                        }
                    case .toOne(let o):
                        if let o { encode(o, entity: member.destination, layout, into: &out) }
                    }
                    out.append(0x5D)
                } else {
                    switch relation {
                    case .toOne(let o?): encode(o, entity: member.destination, layout, into: &out)
                    case .toMany(let items) where !items.isEmpty: encode(items[0], entity: member.destination, layout, into: &out)
                    default: out.append(JSONRecordWriter.null)
                    }
                }
            }
        }
        out.append(0x7D)
    }

    /// `, "key": ` (no comma before the first member).
    @inline(__always)
    private static func appendKey(_ member: JSONObjectLayout.Member, _ layout: JSONObjectLayout, first: inout Bool,
                                  to out: inout RecordBuffer) {
        out.reserve(member.keyCount + 2)
        if !first { out.put(0x2C); out.put(0x20) }
        first = false
        out.put(UnsafeRawBufferPointer(start: layout.keyBytes + member.keyStart, count: member.keyCount))
    }

    static func encode(_ value: Value, into out: inout RecordBuffer) {
        switch value {
        case .null: out.append(JSONRecordWriter.null)
        case .string(var s): s.withUTF8 { appendString($0, to: &out) }
        case .date(let t):
            // ISO 8601 text needs no escaping.
            out.reserve(Timestamp.iso8601MaximumLength + 2)
            out.put(0x22)
            let written = t.formatISO8601(into: out.spare(Timestamp.iso8601MaximumLength))
            out.count += written
            out.put(0x22)
        case .bool(let b): out.append(b ? JSONRecordWriter.true : JSONRecordWriter.false)
        case .int(let n): out.append(Array(String(n).utf8))
        }
    }

    private static let null: StaticString = "null"
    private static let `true`: StaticString = "true"
    private static let `false`: StaticString = "false"

    /// Appends a JSON string literal of UTF-8 text (a Swift string's, so valid UTF-8 out too).
    static func appendString(_ text: UnsafeBufferPointer<UInt8>, to out: inout RecordBuffer) {
        // Room for the worst case at once: every byte escaped as \u00XX, and the quotes.
        out.reserve(6 * text.count + 2)
        out.put(0x22)
        var runStart = 0
        var i = 0
        let n = text.count
        while i < n {
            // Eight bytes at a time to the first that may need escaping (the scanner's test: `"`,
            // `\`, a control character, or any non-ASCII byte).
            if i &+ 8 <= n {
                let word = UInt64(littleEndian: UnsafeRawPointer(text.baseAddress! + i).loadUnaligned(as: UInt64.self))
                let mask = JSONScanner.specialMask(word)
                if mask == 0 { i &+= 8; continue }
                i &+= mask.trailingZeroBitCount &>> 3
            }
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
            out.put(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(text)[runStart..<i]))
            if let escape {
                out.put(UnsafeRawBufferPointer(start: escape.utf8Start, count: escape.utf8CodeUnitCount))
            } else {
                let digits: StaticString = "0123456789abcdef"
                for c in [0x5C, 0x75, 0x30, 0x30, digits.utf8Start[Int(b >> 4)], digits.utf8Start[Int(b & 0x0F)]] { out.put(c) }
            }
            i += length
            runStart = i
        }
        out.put(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(text)[runStart..<n]))
        out.put(0x22)
    }
}

/// How each entity's objects are written: members in declaration order (attributes, then
/// relationships; transient attributes never), their keys encoded once (`"name": `). Plain values
/// in flat arrays: encoding reads them without reference counting.
final class JSONObjectLayout: @unchecked Sendable {  // immutable once built
    struct Member {
        let slot: Int
        /// Where the member's `"key": ` is in `keyBytes`.
        let keyStart: Int, keyCount: Int
        /// For a relationship: whether to-many, and the destination's index in `entities`.
        let isToMany: Bool
        let destination: Int
    }

    /// An entity's members: ranges of `members`.
    struct Spans {
        let attributes: Range<Int>
        let relationships: Range<Int>
    }

    /// Per entity of the schema, the root first.
    let entities: [Spans]
    let members: [Member]
    let keyBytes: UnsafeMutablePointer<UInt8>

    /// The layout of a schema's entities; fails for a relationship to an entity the schema does not declare.
    init(_ schema: any VersionedSchema.Type) throws {
        var entityList = schema.entities
        if let root = entityList.firstIndex(where: { $0.name == schema.rootEntity.name }), root != 0 {
            entityList.swapAt(0, root)
        }
        var keys: [UInt8] = []
        var members: [Member] = []
        var spans: [Spans] = []
        func key(_ name: String) -> (Int, Int) {
            let start = keys.count
            var s = name
            s.withUTF8 { utf8 in
                var buffer = RecordBuffer()
                JSONRecordWriter.appendString(utf8, to: &buffer)
                keys += buffer.bytes
            }
            keys += ": ".utf8
            return (start, keys.count - start)
        }
        for entity in entityList {
            let attributeStart = members.count
            for (slot, a) in entity.attributes.enumerated() where !a.isTransient {
                let (start, count) = key(a.name)
                members.append(Member(slot: slot, keyStart: start, keyCount: count, isToMany: false, destination: -1))
            }
            let relationshipStart = members.count
            for (slot, r) in entity.relationships.enumerated() {
                guard let destination = entityList.firstIndex(where: { $0.name == r.destination }) else {
                    throw TripError.data("\(schema.versionIdentifier): relationship '\(r.name)' leads to '\(r.destination)', which the schema does not declare")
                }
                let (start, count) = key(r.name)
                members.append(Member(slot: slot, keyStart: start, keyCount: count, isToMany: r.isToMany, destination: destination))
            }
            spans.append(Spans(attributes: attributeStart..<relationshipStart, relationships: relationshipStart..<members.count))
        }
        self.entities = spans
        self.members = members
        keyBytes = .allocate(capacity: max(1, keys.count))
        keyBytes.initialize(from: keys, count: keys.count)
    }

    deinit { keyBytes.deallocate() }
}
