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
    private let plans: [XMLEntityPlan]
    private let version: String
    private var started = false
    private var record: [UInt8] = []
    private var count = 0

    /// Opens the output; nothing is visible until `finish()`.
    public init(_ location: OutputLocation, options: WriteOptions = WriteOptions()) throws {
        output = try ByteOutput(location)
        plans = XMLEntityPlan.plans(for: options.schema)
        version = options.schema.versionIdentifier.description
        record.reserveCapacity(1024)
    }

    public mutating func write(_ object: ModelObject) throws {
        if !started { try start() }
        count += 1
        record.removeAll(keepingCapacity: true)
        do {
            try append(object, plan: 0, element: XMLEntityPlan.tripElement, indent: 1)
        } catch let problem as XMLWriteProblem {
            let tripName = plans[0].nameSlot.flatMap { object.attributes[$0].stringValue }
            let which = tripName.map { "trip \($0.quotedForMessage)" } ?? "trip \(count)"
            throw TripError.data("\(output.name): \(which): field '\(problem.field)': \(problem.what)",
                                 notes: ["XML 1.0 cannot carry control characters other than tab, line feed and carriage return, even as character references; write this trip as JSON, YAML or SQLite instead"])
        }
        try output.write(record)
    }

    public mutating func finish() throws {
        if !started { try start() }
        try output.write(Array("</trips>\n".utf8))
        try output.commit()
    }

    public mutating func abort() {
        output.discard()
    }

    private mutating func start() throws {
        started = true
        try output.write(Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<trips schemaVersion=\"".utf8))
        var header: [UInt8] = []
        try XMLEscaping.append(version, to: &header, inAttribute: true)
        header.append(contentsOf: Array("\">\n".utf8))
        try output.write(header)
    }

    // MARK: - Elements

    private mutating func append(_ object: ModelObject, plan index: Int, element: [UInt8], indent: Int) throws {
        let plan = plans[index]
        appendIndent(indent)
        record.append(0x3C); record.append(contentsOf: element); record.append(contentsOf: [0x3E, 0x0A])
        for field in plan.attributes {
            let value = object.attributes[field.slot]
            if value.isNull { continue }
            appendIndent(indent + 1)
            record.append(contentsOf: field.open)
            switch value {
            case .string(let s):
                do { try XMLEscaping.append(s, to: &record, inAttribute: false) } catch let p as XMLWriteProblem {
                    throw XMLWriteProblem(field: field.name, what: p.what)
                }
            case .date(let t): t.appendISO8601(to: &record)
            case .bool(let b): record.append(contentsOf: b ? XMLEntityPlan.trueText : XMLEntityPlan.falseText)
            case .int(let n): record.append(contentsOf: String(n).utf8)
            case .null: break
            }
            record.append(contentsOf: field.close)
        }
        for relationship in plan.relationships {
            guard relationship.slot < object.relationships.count else { continue }
            switch object.relationships[relationship.slot] {
            case .toMany(let items):
                appendIndent(indent + 1)
                if items.isEmpty {
                    record.append(contentsOf: relationship.empty)
                    continue
                }
                record.append(contentsOf: relationship.open)
                for item in items {
                    try append(item, plan: relationship.destination, element: XMLEntityPlan.itemElement, indent: indent + 2)
                }
                appendIndent(indent + 1)
                record.append(contentsOf: relationship.close)
            case .toOne(let related):
                guard let related else { continue }
                try append(related, plan: relationship.destination, element: relationship.name, indent: indent + 1)
            }
        }
        appendIndent(indent)
        record.append(contentsOf: [0x3C, 0x2F]); record.append(contentsOf: element); record.append(contentsOf: [0x3E, 0x0A])
    }

    private mutating func appendIndent(_ level: Int) {
        for _ in 0..<(2 * level) { record.append(0x20) }
    }
}

/// The tags of one entity, made once from the schema's declarations.
struct XMLEntityPlan {
    struct Field { let slot: Int; let name: String; let open: [UInt8]; let close: [UInt8] }
    struct Link { let slot: Int; let name: [UInt8]; let destination: Int; let open: [UInt8]; let close: [UInt8]; let empty: [UInt8] }
    var attributes: [Field] = []
    var relationships: [Link] = []
    /// The slot of the entity's unique string attribute (the trip's name), for messages.
    var nameSlot: Int?

    static let tripElement = Array("trip".utf8)
    static let itemElement = Array("item".utf8)
    static let trueText = Array("true".utf8)
    static let falseText = Array("false".utf8)

    /// One plan per entity of the schema, the root first.
    static func plans(for schema: any VersionedSchema.Type) -> [XMLEntityPlan] {
        let entities = schema.entities
        return entities.map { entity in
            var plan = XMLEntityPlan()
            for (slot, a) in entity.attributes.enumerated() where !a.isTransient {
                plan.attributes.append(Field(slot: slot, name: a.name, open: Array("<\(a.name)>".utf8), close: Array("</\(a.name)>\n".utf8)))
            }
            plan.nameSlot = entity.attributes.firstIndex { $0.isUnique && $0.type == .string }
                ?? entity.attributes.firstIndex { $0.name == "name" }
            for (slot, r) in entity.relationships.enumerated() {
                let destination = entities.firstIndex { $0.name == r.destination } ?? 0
                plan.relationships.append(Link(slot: slot, name: Array(r.name.utf8), destination: destination,
                                               open: Array("<\(r.name)>\n".utf8), close: Array("</\(r.name)>\n".utf8),
                                               empty: Array("<\(r.name)/>\n".utf8)))
            }
            return plan
        }
    }
}

/// A value XML cannot hold.
struct XMLWriteProblem: Error {
    var field: String
    var what: String
}

enum XMLEscaping {
    /// Appends text escaped for element content (or a double-quoted attribute value).
    static func append(_ text: String, to out: inout [UInt8], inAttribute: Bool) throws {
        var text = text
        try text.withUTF8 { bytes in
            var runStart = 0
            var i = 0
            let n = bytes.count
            while i < n {
                let c = bytes[i]
                let replacement: [UInt8]
                switch c {
                case 0x26: replacement = amp
                case 0x3C: replacement = lt
                case 0x3E: replacement = gt
                case 0x0D: replacement = cr
                case 0x22 where inAttribute: replacement = quot
                case 0x09 where inAttribute: replacement = tab
                case 0x0A where inAttribute: replacement = lf
                case 0x09, 0x0A:
                    i += 1; continue
                case 0x00..<0x20:
                    throw XMLWriteProblem(field: "", what: "U+\(hex4(UInt32(c))) cannot be written in XML 1.0")
                case 0xEF where i + 2 < n && bytes[i + 1] == 0xBF && (bytes[i + 2] == 0xBE || bytes[i + 2] == 0xBF):
                    throw XMLWriteProblem(field: "", what: "U+\(bytes[i + 2] == 0xBE ? "FFFE" : "FFFF") cannot be written in XML 1.0")
                default:
                    i += 1; continue
                }
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
                out.append(contentsOf: replacement)
                i += 1
                runStart = i
            }
            if runStart < n { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<n])) }
        }
    }

    private static let amp = Array("&amp;".utf8)
    private static let lt = Array("&lt;".utf8)
    private static let gt = Array("&gt;".utf8)
    private static let cr = Array("&#13;".utf8)
    private static let quot = Array("&quot;".utf8)
    private static let tab = Array("&#9;".utf8)
    private static let lf = Array("&#10;".utf8)

    private static func hex4(_ v: UInt32) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
