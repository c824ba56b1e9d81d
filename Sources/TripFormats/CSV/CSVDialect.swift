import TripKit

/// The bytes that separate cells, and how a cell carries the bytes that would end it.
struct CSVDialect: Sendable, Equatable {
    /// `,` or a tab.
    var separator: UInt8
    /// TSV: no quoting (`"` is an ordinary byte); `\t`, `\n`, `\r` and `\\` escapes inside cells.
    var usesEscapes: Bool

    /// RFC 4180: comma-separated, double-quoted cells with doubled quotes inside.
    static let csv = CSVDialect(separator: UInt8(ascii: ","), usesEscapes: false)
    /// Tab-separated, with backslash escapes.
    static let tsv = CSVDialect(separator: UInt8(ascii: "\t"), usesEscapes: true)

    init(separator: UInt8, usesEscapes: Bool) {
        self.separator = separator; self.usesEscapes = usesEscapes
    }

    init(_ format: Format) { self = format == .tsv ? .tsv : .csv }
}

/// How the bytes of a text input map to characters.
enum CSVTextEncoding: Sendable, Equatable {
    /// UTF-8, validated: any other byte sequence is a data error with its line and column.
    case utf8
    /// ISO 8859-1: every byte is the code point of its value.
    case latin1

    /// Reads `ReadOptions.inputEncoding`.
    init(option: String) throws {
        switch option.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "latin1", "latin-1", "iso-8859-1", "iso8859-1", "l1": self = .latin1
        default:
            throw TripError.usage("unsupported input encoding \(option.quotedForMessage)",
                                  notes: ["CSV and TSV read utf-8 (the default) or latin1"])
        }
    }
}

/// The sizes past which a CSV input is refused rather than read.
struct CSVLimits: Sendable {
    var maxFieldBytes = 16 << 20
    var maxColumns = 10_000
    var maxRowBytes = 64 << 20
}
