import TripKit

// The types of scalars and tags: what the reader gives the builder for each scalar.
extension YAMLRecordReader {
    enum TagKind { case none, nonSpecific, str, bool, int, null, timestamp, map, seq, merge }

    /// The tag of a node; an unknown tag is a data error: tags are never "executed".
    func tagKind(_ event: YAMLEvent) throws -> TagKind {
        guard let tag = event.tag else { return .none }
        switch tag {
        case "!": return .nonSpecific
        case "tag:yaml.org,2002:str": return .str
        case "tag:yaml.org,2002:bool": return .bool
        case "tag:yaml.org,2002:int": return .int
        case "tag:yaml.org,2002:null": return .null
        case "tag:yaml.org,2002:timestamp": return .timestamp
        case "tag:yaml.org,2002:map": return .map
        case "tag:yaml.org,2002:seq": return .seq
        case "tag:yaml.org,2002:merge": return .merge
        default:
            throw TripError.data("\(place(event.line, event.column)): unknown tag \(displayTag(tag).quotedForMessage)",
                                 notes: ["tripconv honours only the tags !!str, !!bool, !!int, !!timestamp, !!null, !!seq, !!map and !!merge"])
        }
    }

    func expectTag(_ event: YAMLEvent, _ expected: TagKind) throws {
        let tag = try tagKind(event)
        guard tag == .none || tag == .nonSpecific || tag == expected else {
            throw TripError.data("\(place(event.line, event.column)): tag \(displayTag(event.tag ?? "").quotedForMessage) does not fit \(describe(event))")
        }
    }

    /// The token a scalar value gives the builder, or nil when the record was failed instead.
    mutating func token(_ event: YAMLEvent, field: Int, entity: Int) throws -> ScalarToken? {
        let tag = try tagKind(event)
        let value = event.value
        let name = fieldNames[entity][field]
        switch tag {
        case .none:
            return event.style == .plain ? .plain(value) : .string(value)
        case .nonSpecific, .str:
            return .string(value)
        case .null:
            guard isYAMLNull(value) else {
                builder.fail("field '\(name)': \(value.quotedForMessage) is not a !!null value")
                return nil
            }
            return .null
        case .bool:
            guard let b = parseBool(value) else {
                builder.fail("field '\(name)': \(value.quotedForMessage) is not a !!bool value")
                return nil
            }
            return .bool(b)
        case .int:
            guard let n = yamlInteger(value) else {
                builder.fail("field '\(name)': \(value.quotedForMessage) is not a !!int value")
                return nil
            }
            return .number(String(n))
        case .timestamp:
            guard Timestamp(iso8601: value) != nil else {
                builder.fail("field '\(name)': \(value.quotedForMessage) is not a !!timestamp value")
                return nil
            }
            if case .attribute(.date) = fieldKinds[entity][field] { return .string(value) }
            builder.fail("field '\(name)': expected \(fieldKinds[entity][field].yamlExpectation), found the timestamp \(value.quotedForMessage)")
            return nil
        case .map, .seq, .merge:
            throw TripError.data("\(place(event.line, event.column)): tag \(displayTag(event.tag ?? "").quotedForMessage) does not fit a scalar")
        }
    }

    func place(_ line: Int32, _ column: Int32) -> String { "\(source):\(line + 1):\(column + 1)" }

    func shapeError(_ event: YAMLEvent, expected: String) -> TripError {
        TripError.data("\(place(event.line, event.column)): expected \(expected), found \(describe(event))")
    }

    func describe(_ event: YAMLEvent) -> String {
        switch event.kind {
        case .scalar: return "a scalar \(event.value.quotedForMessage)"
        case .sequenceStart: return "a sequence"
        case .mappingStart: return "a mapping"
        default: return "the end of a node"
        }
    }
}

/// `!!str` for `tag:yaml.org,2002:str`.
func displayTag(_ tag: String) -> String {
    let prefix = "tag:yaml.org,2002:"
    if tag.hasPrefix(prefix) { return "!!" + tag.dropFirst(prefix.count) }
    return tag
}

/// A YAML 1.1 or 1.2 integer: decimal, `0x`, `0o`, `0b`, or a leading-zero octal, with `_` separators.
func yamlInteger(_ text: String) -> Int64? {
    var s = Substring(text)
    var negative = false
    if let first = s.first, first == "-" || first == "+" { negative = first == "-"; s = s.dropFirst() }
    var radix = 10
    if s.hasPrefix("0x") { radix = 16; s = s.dropFirst(2) }
    else if s.hasPrefix("0o") { radix = 8; s = s.dropFirst(2) }
    else if s.hasPrefix("0b") { radix = 2; s = s.dropFirst(2) }
    else if s.count > 1, s.hasPrefix("0") { radix = 8; s = s.dropFirst() }
    let digits = s.filter { $0 != "_" }
    guard !digits.isEmpty, let magnitude = UInt64(digits, radix: radix) else { return nil }
    if negative {
        guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
        return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
    }
    guard magnitude <= UInt64(Int64.max) else { return nil }
    return Int64(magnitude)
}

extension SchemaVocabulary.FieldKind {
    var yamlExpectation: String {
        switch self {
        case .attribute(let t): return t == .date ? "a date" : "a \(t.rawValue)"
        case .toMany: return "a list of objects"
        case .toOne: return "an object or null"
        case .transient: return "anything"
        }
    }
}
