import TripKit

/// Minimal JSON text for the tool's own files and reports (the rejects file, `--report`, `detect
/// --json`, `schema --json`); package-wide, so the command line renders its reports with it too.
package enum JSONText {
    /// A JSON string. Besides `"`, `\` and control characters, U+0085, U+2028 and U+2029 are escaped:
    /// some line tools (Python's `str.splitlines`, editors) end lines there, and a rejects file is
    /// read line by line, its records' texts holding whatever the input held.
    package static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{85}": out += "\\u0085"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    /// A JSON value for the reports.
    package indirect enum Node {
        case string(String), int(Int), bool(Bool), null
        /// A number with three decimals: seconds to the millisecond (`0.012`).
        case milliseconds(Double)
        case array([Node])
        case object([(String, Node)])

        package func render(indent: Int? = nil, level: Int = 0) -> String {
            let pad = indent.map { String(repeating: " ", count: $0 * (level + 1)) } ?? ""
            let end = indent.map { String(repeating: " ", count: $0 * level) } ?? ""
            let nl = indent == nil ? "" : "\n"
            switch self {
            case .string(let s): return JSONText.quote(s)
            case .int(let n): return String(n)
            case .milliseconds(let x): return format3(x)
            case .bool(let b): return b ? "true" : "false"
            case .null: return "null"
            case .array(let items):
                if items.isEmpty { return "[]" }
                return "[" + nl + items.map { pad + $0.render(indent: indent, level: level + 1) }.joined(separator: "," + nl) + nl + end + "]"
            case .object(let pairs):
                if pairs.isEmpty { return "{}" }
                let sep = indent == nil ? ":" : ": "
                let members = pairs.map { pad + JSONText.quote($0.0) + sep + $0.1.render(indent: indent, level: level + 1) }
                return "{" + nl + members.joined(separator: "," + nl) + nl + end + "}"
            }
        }
    }
}
