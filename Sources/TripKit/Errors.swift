/// An error of tripconv: its kind decides the exit status; its message names the place first.
///
/// Messages are lowercase, one line, no final period: `trips.json:1:9812: expected ',' or ']' after
/// array element, found '}'`. Advice goes in `notes`, printed as `note:` lines.
public struct TripError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kinds of failure, each with its sysexits status.
    public enum Kind: Int32, Sendable {
        case usage = 64
        case data = 65
        case noInput = 66
        /// A service tripconv needs (a database server) cannot be reached.
        case unavailable = 69
        case cantCreate = 73
        case io = 74
        case busy = 75
        /// A service refused tripconv's credentials.
        case permission = 77
    }

    public var kind: Kind
    public var message: String
    public var notes: [String]

    /// An error of a kind, with its message (place first) and notes that say what to do.
    public init(_ kind: Kind, _ message: String, notes: [String] = []) {
        self.kind = kind; self.message = message; self.notes = notes
    }

    public var description: String { message }

    /// An error in the input: exit 65.
    public static func data(_ message: String, notes: [String] = []) -> TripError { TripError(.data, message, notes: notes) }
    /// A command used wrongly: exit 64.
    public static func usage(_ message: String, notes: [String] = []) -> TripError { TripError(.usage, message, notes: notes) }
}

extension String {
    /// The value quoted for a message, shortened: errors quote the offending value, never the record.
    public var quotedForMessage: String {
        // Most values are short and need no escape: then they are quoted as they are (this runs for
        // every merged duplicate; counting characters costs more than the message). At most 40
        // bytes is at most 40 characters; no byte below 0x20, no DEL, no quote, and no 0xC2 or 0xE2
        // lead byte (which start every C1 control and U+2028/U+2029) means nothing to escape.
        var copy = self
        let plain = copy.withUTF8 { bytes in
            bytes.count <= 40 && !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "'") || $0 == 0xC2 || $0 == 0xE2 })
        }
        if plain { return "'" + self + "'" }
        var s = self
        if s.count > 40 { s = String(s.prefix(37)) + "..." }
        var out = "'"
        for c in s.unicodeScalars {
            switch c {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "'": out += "\\'"
            default:
                // C0 and C1 controls and the Unicode line separators would break the one-line message.
                if c.value < 0x20 || (0x7F...0x9F).contains(c.value) || c.value == 0x2028 || c.value == 0x2029 {
                    out += "\\u{\(String(c.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(c)
                }
            }
        }
        return out + "'"
    }
}
