import TripKit

/// The bytes that separate cells, and how a cell carries the bytes that would end it.
struct CSVDialect: Sendable, Equatable {
    /// `,` (or the delimiter given or detected) or a tab.
    var separator: UInt8
    /// TSV: no quoting (`"` is an ordinary byte); `\t`, `\n`, `\r` and `\\` escapes inside cells.
    var usesEscapes: Bool

    /// RFC 4180: comma-separated, double-quoted cells with doubled quotes inside.
    static let csv = CSVDialect(separator: UInt8(ascii: ","), usesEscapes: false)
    /// Tab-separated, with backslash escapes.
    static let tsv = CSVDialect(separator: UInt8(ascii: "\t"), usesEscapes: true)

    /// The separators a CSV input's header is tried with when no delimiter is given or declared, in
    /// the order ties go: comma, semicolon (European spreadsheets), tab, pipe.
    static let detectedSeparators: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: "|")]

    init(separator: UInt8, usesEscapes: Bool) {
        self.separator = separator; self.usesEscapes = usesEscapes
    }

    init(_ format: Format) { self = format == .tsv ? .tsv : .csv }

    /// The dialect of a format with the delimiter the options give, if any. The option is CSV's:
    /// TSV is tab-separated whatever it says (a bulk run may mix both).
    init(_ format: Format, delimiter: UInt8?) {
        self.init(format)
        if let delimiter, format != .tsv { separator = delimiter }
    }

    /// Formula-safe cells (`--csv-safe-formulas`): a text starting with one of these is written behind
    /// a `'` (a formula's start, so that spreadsheets do not run it, or a `'`, so that reading takes
    /// exactly one `'` off and every text reads back as it was).
    static func isGuardedByQuote(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "=") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: "@") || c == UInt8(ascii: "'")
    }

    /// A byte that can separate CSV cells: ASCII, not a quote, a line end or NUL.
    static func isValidSeparator(_ c: UInt8) -> Bool {
        c != 0 && c < 0x80 && c != UInt8(ascii: "\"") && c != 10 && c != 13
    }
}

/// The one parser of `--csv-delimiter`: a single ASCII character, or a name for the ones a shell
/// makes awkward.
public enum CSVDelimiter {
    /// `,` `;` `|` `:` or any other ASCII character but `"` and line ends; `tab` or `\t`, `comma`,
    /// `semicolon`, `pipe`, `space`.
    public static func parse(_ text: String) -> UInt8? {
        switch text.lowercased() {
        case "tab", "\\t": return 9
        case "comma": return UInt8(ascii: ",")
        case "semicolon": return UInt8(ascii: ";")
        case "pipe": return UInt8(ascii: "|")
        case "space": return UInt8(ascii: " ")
        default: break
        }
        let bytes = Array(text.utf8)
        guard bytes.count == 1, CSVDialect.isValidSeparator(bytes[0]) else { return nil }
        return bytes[0]
    }

    /// How a delimiter is written in messages and help.
    public static func describe(_ c: UInt8) -> String {
        c == 9 ? "tab" : String(UnicodeScalar(c))
    }
}

/// The sizes past which a CSV input is refused rather than read.
struct CSVLimits: Sendable {
    var maxFieldBytes = 16 << 20
    var maxColumns = 10_000
    var maxRowBytes = 64 << 20
}
