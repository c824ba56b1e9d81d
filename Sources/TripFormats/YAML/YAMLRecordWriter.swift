import TripKit

/// Writes trips as one YAML document: `schemaVersion: "3.0.0"`, then `trips:` and a block sequence
/// of trip mappings, fields in the schema's declaration order, transient attributes skipped.
///
/// ```yaml
/// schemaVersion: "3.0.0"
/// trips:
///   - name: Paris
///     destination: "Paris, France"
///     startDate: 2024-05-01T09:30:00Z
///     endDate: 2024-05-08T18:00:00.250Z
///     bucketList: []
///     livingAccommodation: null
/// ```
///
/// A string is written plain only when it is a "safe word" that every YAML 1.1 and 1.2 reader reads
/// back as exactly that string; anything else is double-quoted with escapes, on one line.
struct YAMLRecordWriter: RecordWriter {
    private let output: ByteOutput
    private let schema: any VersionedSchema.Type
    private let root: EntityLayout
    private var wroteTrip = false
    private var bytes: [UInt8] = []

    /// The persisted attributes and relationships of an entity, in declaration order, with their
    /// positions in a `ModelObject`.
    private final class EntityLayout {
        let attributes: [(name: [UInt8], index: Int)]
        let relationships: [(name: [UInt8], index: Int, isToMany: Bool, destination: EntityLayout?)]

        init(_ entity: Entity, schema: any VersionedSchema.Type, depth: Int = 0) {
            attributes = entity.attributes.enumerated().filter { !$0.element.isTransient }
                .map { (Array($0.element.name.utf8), $0.offset) }
            relationships = entity.relationships.enumerated().map { i, r in
                let destination = depth < 8 ? schema.entity(r.destination).map { EntityLayout($0, schema: schema, depth: depth + 1) } : nil
                return (Array(r.name.utf8), i, r.isToMany, destination)
            }
        }
    }

    init(output: ByteOutput, schema: any VersionedSchema.Type) throws {
        self.output = output
        self.schema = schema
        self.root = EntityLayout(schema.rootEntity, schema: schema)
        try output.write("schemaVersion: \"\(schema.versionIdentifier)\"\n")
    }

    mutating func write(_ object: ModelObject) throws {
        if !wroteTrip {
            try output.write("trips:\n")
            wroteTrip = true
        }
        bytes.removeAll(keepingCapacity: true)
        append(object, layout: root, indent: 2)
        try output.write(bytes)
    }

    mutating func finish() throws {
        if !wroteTrip { try output.write("trips: []\n") }
        try output.commit()
    }

    mutating func abort() {
        output.discard()
    }

    // MARK: - Objects

    /// Appends `- key: value` lines for an object, the dash at `indent`.
    private mutating func append(_ object: ModelObject, layout: EntityLayout, indent: Int) {
        var first = true
        func key(_ name: [UInt8]) {
            if first {
                bytes.append(contentsOf: repeatElement(32, count: indent))
                bytes.append(45); bytes.append(32)
                first = false
            } else {
                bytes.append(contentsOf: repeatElement(32, count: indent + 2))
            }
            bytes.append(contentsOf: name)
            bytes.append(58)
        }
        for (name, index) in layout.attributes {
            key(name)
            bytes.append(32)
            appendValue(index < object.attributes.count ? object.attributes[index] : .null)
            bytes.append(10)
        }
        for (name, index, isToMany, destination) in layout.relationships {
            key(name)
            let related = index < object.relationships.count ? object.relationships[index] : (isToMany ? .toMany([]) : .toOne(nil))
            if isToMany {
                let list = related.objects
                if list.isEmpty || destination == nil {
                    bytes.append(contentsOf: " []\n".utf8)
                } else {
                    bytes.append(10)
                    for item in list { append(item, layout: destination!, indent: indent + 4) }
                }
            } else if let only = related.objects.first, let destination {
                bytes.append(10)
                appendMapping(only, layout: destination, indent: indent + 4)
            } else {
                bytes.append(contentsOf: " null\n".utf8)
            }
        }
        if first {
            bytes.append(contentsOf: repeatElement(32, count: indent))
            bytes.append(contentsOf: "- {}\n".utf8)
        }
    }

    /// Appends `key: value` lines for a to-one object at `indent`.
    private mutating func appendMapping(_ object: ModelObject, layout: EntityLayout, indent: Int) {
        for (name, index) in layout.attributes {
            bytes.append(contentsOf: repeatElement(32, count: indent))
            bytes.append(contentsOf: name)
            bytes.append(58); bytes.append(32)
            appendValue(index < object.attributes.count ? object.attributes[index] : .null)
            bytes.append(10)
        }
        // The model's related objects have no relationships of their own; were one to, it would be
        // written the same way as a trip's.
        for (name, _, _, _) in layout.relationships {
            bytes.append(contentsOf: repeatElement(32, count: indent))
            bytes.append(contentsOf: name)
            bytes.append(contentsOf: ": null\n".utf8)
        }
    }

    private mutating func appendValue(_ value: Value) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let b): bytes.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let n): bytes.append(contentsOf: String(n).utf8)
        case .date(let t): t.appendISO8601(to: &bytes)
        case .string(let s): YAMLScalarText.append(s, to: &bytes)
        }
    }
}

/// How a string is written as a YAML scalar.
enum YAMLScalarText {
    /// Appends a string plain when that is safe, else double-quoted.
    static func append(_ s: String, to bytes: inout [UInt8]) {
        if isSafePlain(s) {
            bytes.append(contentsOf: s.utf8)
        } else {
            appendDoubleQuoted(s, to: &bytes)
        }
    }

    /// The words YAML 1.1 (PyYAML) or 1.2 read as a Boolean or null when plain.
    static let reservedWords: Set<String> = [
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF",
        "null", "Null", "NULL",
    ]

    /// Whether a string reads back as itself, and as a string, when written plain.
    ///
    /// Conservative: a letter first (or a digit, when a space and a letter follow), then letters,
    /// digits, spaces and `._/()-`, ending in a letter, digit, `.` or `)`, and not a Boolean or null word. No number, date, `.inf`, indicator, `: `,
    /// ` #` or edge space can pass. Non-ASCII letters pass; every other non-ASCII character is quoted.
    static func isSafePlain(_ text: String) -> Bool {
        var s = text
        s.makeContiguousUTF8()
        var isASCII = true
        let shapeIsSafe = s.utf8.withContiguousStorageIfAvailable { p -> Bool in
            guard let first = p.first, let last = p.last else { return false }
            // A digit may lead only text with a space and a letter in it: no number or date of YAML 1.1
            // or 1.2 has a space but no `:` (which never passes).
            guard isASCIILetter(first) || first >= 0x80 || (isDigit(first) && p.contains(32) && p.contains(where: isASCIILetter))
            else { return false }
            guard last >= 0x80 || isASCIILetter(last) || isDigit(last) || last == 46 || last == 41 else { return false }
            for b in p {
                if b >= 0x80 { isASCII = false; continue }
                guard isASCIILetter(b) || isDigit(b) || b == 32 || b == 46 || b == 95 || b == 47
                        || b == 40 || b == 41 || b == 45 else { return false }
            }
            return true
        } ?? false
        guard shapeIsSafe else { return false }
        if !isASCII {
            // Every non-ASCII character must be a letter: no line or paragraph separator, no
            // non-breaking or other space, no control or format character, no BOM.
            for u in s.unicodeScalars where u.value >= 0x80 {
                guard u.properties.isAlphabetic else { return false }
            }
        } else if s.utf8.count <= 5, reservedWords.contains(s) {
            return false
        }
        return true
    }

    @inline(__always)
    private static func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }

    @inline(__always)
    private static func isASCIILetter(_ b: UInt8) -> Bool { (b >= 65 && b <= 90) || (b >= 97 && b <= 122) }

    /// Appends `"..."` with YAML escapes for `"`, `\`, every control character, C1 controls, NEL,
    /// the line and paragraph separators, the BOM and the noncharacters U+FFFE and U+FFFF.
    static func appendDoubleQuoted(_ s: String, to bytes: inout [UInt8]) {
        bytes.append(34)
        for u in s.unicodeScalars {
            let v = u.value
            switch v {
            case 0x22: bytes.append(92); bytes.append(34)
            case 0x5C: bytes.append(92); bytes.append(92)
            case 0x0A: bytes.append(92); bytes.append(110)
            case 0x0D: bytes.append(92); bytes.append(114)
            case 0x09: bytes.append(92); bytes.append(116)
            case 0x00: bytes.append(92); bytes.append(48)
            case 0x20...0x7E: bytes.append(UInt8(v))
            case 0x85: bytes.append(contentsOf: "\\N".utf8)
            case 0x2028: bytes.append(contentsOf: "\\L".utf8)
            case 0x2029: bytes.append(contentsOf: "\\P".utf8)
            case 0..<0x20, 0x7F...0x9F: appendEscape(v, digits: 2, letter: 120, to: &bytes)
            case 0xFEFF, 0xFFFE, 0xFFFF: appendEscape(v, digits: 4, letter: 117, to: &bytes)
            default: bytes.append(contentsOf: String(u).utf8)
            }
        }
        bytes.append(34)
    }

    private static func appendEscape(_ v: UInt32, digits: Int, letter: UInt8, to bytes: inout [UInt8]) {
        bytes.append(92); bytes.append(letter)
        let hex = Array("0123456789ABCDEF".utf8)
        for shift in stride(from: (digits - 1) * 4, through: 0, by: -4) {
            bytes.append(hex[Int((v >> UInt32(shift)) & 0xF)])
        }
    }
}
