import TripKit

/// Rows in COPY's text format, built in a byte buffer: fields between tabs, a row per line, `\N`
/// for NULL, and backslash, tab, newline and carriage return escaped. Dates go as ISO 8601 in UTC
/// to the millisecond, Booleans as `t`/`f`.
struct PGCopyRows {
    private(set) var bytes: [UInt8] = []
    private(set) var rows = 0
    private var atRowStart = true

    init() { bytes.reserveCapacity(1 << 20) }

    mutating func field(_ value: Value) {
        separate()
        switch value {
        case .null: bytes += [0x5C, 0x4E]
        case .string(let s): text(s)
        case .date(let t): t.appendISO8601(to: &bytes)
        case .bool(let b): bytes.append(b ? 0x74 : 0x66)
        case .int(let n): bytes += String(n).utf8
        }
    }

    mutating func field(_ n: Int64) {
        separate()
        bytes += String(n).utf8
    }

    mutating func field(_ s: String) {
        separate()
        text(s)
    }

    mutating func endRow() {
        bytes.append(0x0A)
        rows += 1
        atRowStart = true
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        rows = 0
        atRowStart = true
    }

    private mutating func separate() {
        if !atRowStart { bytes.append(0x09) }
        atRowStart = false
    }

    private mutating func text(_ s: String) {
        for b in s.utf8 {
            switch b {
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x09: bytes += [0x5C, 0x74]
            case 0x0A: bytes += [0x5C, 0x6E]
            case 0x0D: bytes += [0x5C, 0x72]
            default: bytes.append(b)
            }
        }
    }
}

enum PGValues {
    /// Why PostgreSQL cannot hold a trip as it is, or nil: its text fields may not contain NUL.
    static func unstorable(_ object: ModelObject, _ entity: Entity, schema: any VersionedSchema.Type) -> String? {
        for (a, v) in zip(entity.attributes, object.attributes) {
            if case .string(let s) = v, s.utf8.contains(0) {
                return "field '\(a.name)': PostgreSQL text cannot hold a NUL character (U+0000)"
            }
        }
        for (r, related) in zip(entity.relationships, object.relationships) {
            guard let destination = schema.entity(r.destination) else { continue }
            for o in related.objects {
                if let why = unstorable(o, destination, schema: schema) { return "\(r.name): " + why }
            }
        }
        return nil
    }

    /// A value the server gave as text (dates selected by `PGLayout.selected`), as the model holds it.
    static func decode(_ text: String, _ type: AttributeType, column: String, place: String) throws -> Value {
        switch type {
        case .string: return .string(text)
        case .date:
            guard let t = Timestamp(iso8601: text) else { throw TripError.data("\(place): column \(column): not a date: \(text.quotedForMessage)") }
            return .date(t)
        case .bool: return .bool(text == "true" || text == "t")
        case .int:
            guard let n = Int64(text) else { throw TripError.data("\(place): column \(column): not an integer: \(text.quotedForMessage)") }
            return .int(n)
        }
    }
}
