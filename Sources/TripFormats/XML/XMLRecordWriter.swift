import TripKit

/// Writes trips as XML in one schema version, a trip at a time:
///
/// ```xml
/// <?xml version="1.0" encoding="UTF-8"?>
/// <trips schemaVersion="3.0.0">
///   <trip>
///     <name>Paris</name>
///     …
///     <bucketList>
///       <item>
///         <title>Louvre</title>
///         …
///       </item>
///     </bucketList>
///     <livingAccommodation>…</livingAccommodation>
///   </trip>
/// </trips>
/// ```
///
/// Field names come from the schema's declarations, in declaration order (`start_date` at 1.0.0
/// and 2.0.0); transient attributes are never written; a trip without an accommodation has no
/// `livingAccommodation` element. Indentation goes between elements, never inside a value.
/// `&`, `<` and `>` are escaped, and a carriage return is written `&#13;` so that end-of-line
/// normalization keeps it. XML 1.0 cannot carry the other control characters (U+0000–U+001F
/// but tab, line feed and carriage return) or U+FFFE/U+FFFF in any form, not even as character
/// references, so a trip holding one is refused with a `.data` error naming the trip and field.
///
/// ```swift
/// var writer = try XMLRecordWriter(.file("out.xml"), options: WriteOptions(schema: TripSchemaV3.self))
/// try writer.write(trip)
/// try writer.finish()
/// ```
public struct XMLRecordWriter: RecordWriter {
    private let output: ByteOutput
    private let plan: XMLWritePlan
    private let version: String
    private var started = false
    private var record = RecordBuffer()
    private var count = 0

    /// Opens the output; nothing is visible until `finish()`.
    public init(_ location: OutputLocation, options: WriteOptions = WriteOptions()) throws {
        output = try ByteOutput(location, compression: options.compression)
        plan = XMLWritePlan(options.schema)
        version = options.schema.versionIdentifier.description
    }

    /// Writes one trip, an object of `options.schema`'s root entity, as a `<trip>` element (the
    /// first write writes the declaration and `<trips>` first); a trip holding a character
    /// XML 1.0 cannot carry is refused with a `.data` error naming the trip and field.
    public mutating func write(_ object: ModelObject) throws {
        if !started { try start() }
        count += 1
        record.removeAll()
        do {
            try XMLRecordWriter.append(object, entity: 0, element: plan.tripElement, indent: 1, plan, to: &record)
        } catch let problem as XMLWriteProblem {
            let tripName = plan.nameSlot.flatMap { object.attributes[$0].stringValue }
            let which = tripName.map { "trip \($0.quotedForMessage)" } ?? "trip \(count)"
            throw TripError.data("\(output.name): \(which): field '\(problem.field)': \(problem.what)",
                                 notes: ["XML 1.0 cannot carry control characters other than tab, line feed and carriage return, even as character references; write this trip as JSON, YAML or SQLite instead"])
        }
        try output.write(record.bytes)
    }

    /// Closes `<trips>` (an output without trips is an empty `<trips>`) and makes the output
    /// visible under its name.
    public mutating func finish() throws {
        if !started { try start() }
        try output.write(Array("</trips>\n".utf8))
        try output.commit()
    }

    /// Throws the output away, leaving the target as it was.
    public mutating func abort() {
        output.discard()
    }

    private mutating func start() throws {
        started = true
        try output.write(Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<trips schemaVersion=\"".utf8))
        var header = RecordBuffer()
        var text = version
        try text.withUTF8 { try XMLEscaping.append($0, to: &header, inAttribute: true) }
        header.append(Array("\">\n".utf8))
        try output.write(header.bytes)
    }

    // MARK: - Elements

    /// Appends an object of the plan's entity `e` as the element `element` (a range of the plan's
    /// bytes), its start tag indented `indent` levels.
    private static func append(_ object: ModelObject, entity e: Int, element: Range<Int>, indent: Int, _ plan: XMLWritePlan,
                               to out: inout RecordBuffer) throws {
        let spans = plan.entities[e]
        out.reserve(2 * indent + element.count + 3)
        appendIndent(indent, to: &out)
        out.put(0x3C); out.put(plan.bytes(element)); out.put(0x3E); out.put(0x0A)
        try object.attributes.withUnsafeBufferPointer { values in
            for m in spans.attributes {
                let field = plan.attributes[m]
                let value = values[field.slot]
                if value.isNull { continue }
                out.reserve(2 * (indent + 1) + field.open.count)
                appendIndent(indent + 1, to: &out)
                out.put(plan.bytes(field.open))
                switch value {
                case .string(var s):
                    do { try s.withUTF8 { try XMLEscaping.append($0, to: &out, inAttribute: false) } } catch let p as XMLWriteProblem {
                        throw XMLWriteProblem(field: plan.names[m], what: p.what)
                    }
                case .date(let t):
                    out.reserve(Timestamp.iso8601MaximumLength)
                    let written = t.formatISO8601(into: out.spare(Timestamp.iso8601MaximumLength))
                    out.count += written
                case .bool(let b): out.append(b ? "true" : "false")
                case .int(let n): out.append(Array(String(n).utf8))
                case .null: break
                }
                out.append(plan.bytes(field.close))
            }
        }
        for m in spans.relationships {
            let link = plan.relationships[m]
            guard link.slot < object.relationships.count else { continue }
            switch object.relationships[link.slot] {
            case .toMany(let items):
                out.reserve(2 * (indent + 1))
                appendIndent(indent + 1, to: &out)
                if items.isEmpty {
                    out.append(plan.bytes(link.empty))
                    continue
                }
                out.append(plan.bytes(link.open))
                for i in items.indices {
                    try append(items[i], entity: link.destination, element: plan.itemElement, indent: indent + 2, plan, to: &out)
                }
                out.reserve(2 * (indent + 1))
                appendIndent(indent + 1, to: &out)
                out.append(plan.bytes(link.close))
            case .toOne(let related):
                guard let related else { continue }
                try append(related, entity: link.destination, element: link.name, indent: indent + 1, plan, to: &out)
            }
        }
        out.reserve(2 * indent + element.count + 4)
        appendIndent(indent, to: &out)
        out.put(0x3C); out.put(0x2F); out.put(plan.bytes(element)); out.put(0x3E); out.put(0x0A)
    }

    /// Two spaces a level, into reserved room.
    @inline(__always)
    private static func appendIndent(_ level: Int, to out: inout RecordBuffer) {
        for _ in 0..<(2 * level) { out.put(0x20) }
    }
}

/// The tags of every entity, made once from the schema's declarations: plain members in flat
/// arrays and every tag's bytes in one block, so writing a trip counts no references.
final class XMLWritePlan {
    struct Field { let slot: Int; let open: Range<Int>; let close: Range<Int> }
    struct Link { let slot: Int; let name: Range<Int>; let destination: Int; let open: Range<Int>; let close: Range<Int>; let empty: Range<Int> }
    /// An entity's fields and links: ranges of `attributes` and `relationships`.
    struct Spans { let attributes: Range<Int>; let relationships: Range<Int> }

    /// Per entity of the schema, the root first.
    let entities: [Spans]
    let attributes: [Field]
    /// The attribute names, by index of `attributes`, for messages.
    let names: [String]
    let relationships: [Link]
    let tripElement: Range<Int>
    let itemElement: Range<Int>
    /// The slot of the root's unique string attribute (the trip's name), for messages.
    let nameSlot: Int?
    private let block: UnsafeMutablePointer<UInt8>

    init(_ schema: any VersionedSchema.Type) {
        var entityList = schema.entities
        if let root = entityList.firstIndex(where: { $0.name == schema.rootEntity.name }), root != 0 {
            entityList.swapAt(0, root)
        }
        var all: [UInt8] = []
        func add(_ text: String) -> Range<Int> {
            let start = all.count
            all += text.utf8
            return start..<all.count
        }
        var spans: [Spans] = [], fields: [Field] = [], names: [String] = [], links: [Link] = []
        for entity in entityList {
            let firstField = fields.count, firstLink = links.count
            for (slot, a) in entity.attributes.enumerated() where !a.isTransient {
                fields.append(Field(slot: slot, open: add("<\(a.name)>"), close: add("</\(a.name)>\n")))
                names.append(a.name)
            }
            for (slot, r) in entity.relationships.enumerated() {
                let destination = entityList.firstIndex { $0.name == r.destination } ?? 0
                links.append(Link(slot: slot, name: add(r.name), destination: destination, open: add("<\(r.name)>\n"),
                                  close: add("</\(r.name)>\n"), empty: add("<\(r.name)/>\n")))
            }
            spans.append(Spans(attributes: firstField..<fields.count, relationships: firstLink..<links.count))
        }
        let root = entityList[0]
        nameSlot = root.attributes.firstIndex { $0.isUnique && $0.type == .string } ?? root.attributes.firstIndex { $0.name == "name" }
        tripElement = add("trip")
        itemElement = add("item")
        entities = spans
        attributes = fields
        self.names = names
        relationships = links
        block = .allocate(capacity: max(1, all.count))
        block.initialize(from: all, count: all.count)
    }

    deinit { block.deallocate() }

    @inline(__always)
    func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: block + range.lowerBound, count: range.count)
    }
}

/// A value XML cannot hold.
struct XMLWriteProblem: Error {
    var field: String
    var what: String
}

enum XMLEscaping {
    /// Appends UTF-8 text escaped for element content (or a double-quoted attribute value).
    static func append(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout RecordBuffer, inAttribute: Bool) throws {
        // Room for the worst case at once: every byte replaced by `&quot;`.
        out.reserve(6 * bytes.count)
        let raw = UnsafeRawBufferPointer(bytes)
        var runStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            // Eight bytes at a time to the first that may need a look.
            if i &+ 8 <= n {
                let mask = XMLEscaping.attentionMask(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self), inAttribute: inAttribute)
                if mask == 0 { i &+= 8; continue }
                i &+= mask.trailingZeroBitCount &>> 3
            }
            let c = bytes[i]
            let replacement: StaticString
            switch c {
            case 0x26: replacement = "&amp;"
            case 0x3C: replacement = "&lt;"
            case 0x3E: replacement = "&gt;"
            case 0x0D: replacement = "&#13;"
            case 0x22 where inAttribute: replacement = "&quot;"
            case 0x09 where inAttribute: replacement = "&#9;"
            case 0x0A where inAttribute: replacement = "&#10;"
            case 0x09, 0x0A:
                i += 1; continue
            case 0x00..<0x20:
                throw XMLWriteProblem(field: "", what: "U+\(hex4(UInt32(c))) cannot be written in XML 1.0")
            case 0xEF where i + 2 < n && bytes[i + 1] == 0xBF && (bytes[i + 2] == 0xBE || bytes[i + 2] == 0xBF):
                throw XMLWriteProblem(field: "", what: "U+\(bytes[i + 2] == 0xBE ? "FFFE" : "FFFF") cannot be written in XML 1.0")
            default:
                i += 1; continue
            }
            out.put(UnsafeRawBufferPointer(rebasing: raw[runStart..<i]))
            out.put(UnsafeRawBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
            i += 1
            runStart = i
        }
        out.put(UnsafeRawBufferPointer(rebasing: raw[runStart..<n]))
    }

    /// A word of eight bytes with a bit set in each byte that may need escaping or refusing: `&`,
    /// `<`, `>`, (in an attribute) `"`, a control character, or a non-ASCII byte (U+FFFE and U+FFFF
    /// start with one). The lowest set bit is always a real hit.
    @inline(__always)
    static func attentionMask(_ word: UInt64, inAttribute: Bool) -> UInt64 {
        let w = UInt64(littleEndian: word)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func equal(_ b: UInt64) -> UInt64 {
            let x = w ^ (ones &* b)
            return (x &- ones) & ~x
        }
        var hits = equal(0x26) | equal(0x3C) | equal(0x3E) | (w &- (ones &* 0x20))
        if inAttribute { hits |= equal(0x22) }
        return (hits & ~w & highs) | (w & highs)
    }

    private static func hex4(_ v: UInt32) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
