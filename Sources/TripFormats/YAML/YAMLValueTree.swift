import TripKit

/// A YAML node as a JSON-like value, typed by the YAML 1.2 core schema. For parser-level tests and
/// diagnostics only: the trip reader never builds trees.
indirect enum YAMLValue: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case sequence([YAMLValue])
    /// Keys are the keys' text (a collection key gets a placeholder); a repeated key keeps its last value.
    case mapping([String: YAMLValue])

    static func == (a: YAMLValue, b: YAMLValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y || (x.isNaN && y.isNaN)
        case (.string(let x), .string(let y)): return x == y
        case (.sequence(let x), .sequence(let y)): return x == y
        case (.mapping(let x), .mapping(let y)): return x == y
        default: return false
        }
    }

    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return String(n)
        case .string(let s): return s.debugDescription
        case .sequence(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .mapping(let pairs):
            return "{" + pairs.sorted { $0.key < $1.key }.map { "\($0.key.debugDescription): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

/// Loads every document of a YAML stream as values, through the same parser and alias resolver as
/// the trip reader, so the limits (depth, alias expansion, scalar length) apply.
enum YAMLValueLoader {
    static func load(_ bytes: [UInt8], name: String = "<yaml>", limits: YAMLLimits = YAMLLimits()) throws -> [YAMLValue] {
        var nodes = YAMLNodeStream(parser: YAMLEventParser(bytes: bytes, name: name, limits: limits))
        var documents: [YAMLValue] = []
        enum Container {
            case sequence([YAMLValue])
            case mapping([String: YAMLValue], key: String?)
        }
        var stack: [Container] = []
        var root: YAMLValue? = nil

        func add(_ value: YAMLValue, asKey keyText: String) {
            guard let top = stack.popLast() else { root = value; return }
            switch top {
            case .sequence(var items):
                items.append(value)
                stack.append(.sequence(items))
            case .mapping(var pairs, let key):
                if let key {
                    pairs[key] = value
                    stack.append(.mapping(pairs, key: nil))
                } else {
                    stack.append(.mapping(pairs, key: keyText))
                }
            }
        }

        while true {
            let event = try nodes.next()
            switch event.kind {
            case .streamEnd:
                return documents
            case .documentEnd:
                documents.append(root ?? .null)
                root = nil
            case .scalar:
                add(resolve(event), asKey: event.value)
            case .sequenceStart:
                stack.append(.sequence([]))
            case .mappingStart:
                stack.append(.mapping([:], key: nil))
            case .sequenceEnd, .mappingEnd:
                let done = stack.removeLast()
                switch done {
                case .sequence(let items): add(.sequence(items), asKey: "<sequence key>")
                case .mapping(let pairs, _): add(.mapping(pairs), asKey: "<mapping key>")
                }
            default:
                break
            }
        }
    }

    /// A scalar's value under the YAML 1.2 core schema, honouring the standard tags.
    static func resolve(_ event: YAMLEvent) -> YAMLValue {
        let s = event.value
        switch event.tag {
        case "tag:yaml.org,2002:str", "!": return .string(s)
        case "tag:yaml.org,2002:null": return .null
        case "tag:yaml.org,2002:bool": return coreBool(s).map(YAMLValue.bool) ?? .string(s)
        case "tag:yaml.org,2002:int", "tag:yaml.org,2002:float": return coreNumber(s).map(YAMLValue.number) ?? .string(s)
        case nil: break
        default: return .string(s)
        }
        guard event.style == .plain else { return .string(s) }
        switch s {
        case "", "~", "null", "Null", "NULL": return .null
        default: break
        }
        if let b = coreBool(s) { return .bool(b) }
        if let n = coreNumber(s) { return .number(n) }
        return .string(s)
    }

    static func coreBool(_ s: String) -> Bool? {
        switch s {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: return nil
        }
    }

    /// Core-schema integers (`12`, `0o14`, `0xC`) and floats (`1.5`, `-.inf`, `.nan`).
    static func coreNumber(_ s: String) -> Double? {
        let b = Array(s.utf8)
        guard !b.isEmpty else { return nil }
        if b.count > 2, b[0] == 48, b[1] == 111 { return UInt64(String(s.dropFirst(2)), radix: 8).map { Double($0) } }
        if b.count > 2, b[0] == 48, b[1] == 120 { return UInt64(String(s.dropFirst(2)), radix: 16).map { Double($0) } }
        switch s {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default: break
        }
        // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
        var i = 0
        if b[i] == 43 || b[i] == 45 { i += 1 }
        func digits() -> Int { let s = i; while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }; return i - s }
        let whole = digits()
        if i < b.count, b[i] == 46 {
            i += 1
            let fraction = digits()
            if whole == 0 && fraction == 0 { return nil }
        } else if whole == 0 {
            return nil
        }
        if i < b.count, b[i] == 101 || b[i] == 69 {
            i += 1
            if i < b.count, b[i] == 43 || b[i] == 45 { i += 1 }
            if digits() == 0 { return nil }
        }
        guard i == b.count else { return nil }
        return Double(s)
    }
}
