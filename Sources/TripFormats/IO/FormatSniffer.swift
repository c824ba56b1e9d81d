import TripKit

/// The format an input's bytes tell, where neither its extension nor `--from` does (issue 25):
/// standard input, and a file whose extension names no format.
public struct SniffedFormat: Sendable, Equatable {
    /// The format the bytes tell.
    public var format: Format
    /// What in the bytes told it, in a message's words: `a header split by ',' into 7 trip columns`.
    public var evidence: String
    /// Whether the bytes could be read another way too, and `format` is the likelier one (the
    /// evidence says why); `-v` and `detect` say so.
    public var isAssumed: Bool

    /// A format told by `evidence`, assumed or not.
    public init(_ format: Format, _ evidence: String, assumed: Bool = false) {
        self.format = format; self.evidence = evidence; self.isAssumed = assumed
    }

    /// `told by its bytes (EVIDENCE)` or `assumed from its bytes (EVIDENCE)`.
    public var phrase: String { (isAssumed ? "assumed from its bytes (" : "told by its bytes (") + evidence + ")" }
}

/// Tells JSON, JSON Lines, XML, YAML, CSV, TSV and an SQLite store apart by an input's first bytes
/// (decompressed): a byte order mark, an Excel `sep=` line, the first non-blank byte, the header.
///
/// It looks at `windowSize` bytes at most, the first chunk a reader reads anyway (kept for it on
/// standard input); nothing else is held. See docs/DESIGN-NOTES.md ("Telling a format by its bytes").
///
/// ```swift
/// let sniffed = FormatSniffer.sniff(Array("name,destination\nParis,France\n".utf8), atEnd: true)
/// print(sniffed.told?.format.rawValue ?? "none")   // csv
/// ```
public enum FormatSniffer {
    /// What an input of no bytes whose format nothing names is: an empty stream, read as JSON
    /// Lines, which holds no trips, rather than a reason to ask for --from. What an input of no
    /// bytes of a named format is, `FormatFactory.emptyReader` says (the rule for empty inputs, issue 25).
    public static let noBytes = SniffedFormat(.jsonl, "no bytes: an empty stream, no trips", assumed: true)

    /// The most bytes looked at: 64 KiB, a reader's first chunk.
    public static let windowSize = 64 << 10

    /// What the bytes say.
    public enum Outcome: Sendable, Equatable {
        /// A format, and how it was told.
        case told(SniffedFormat)
        /// No byte but blanks: nothing to tell a format by. (No bytes at all is `noBytes`.)
        case empty
        /// The bytes tell no format; the payload quotes where they start (`// swift-tools-version: 6.0`).
        case unknown(String)

        /// The format told, if any.
        public var told: SniffedFormat? {
            if case .told(let s) = self { return s }
            return nil
        }
    }

    /// The format of an input whose first bytes (decompressed) are `head`; `atEnd` when they are
    /// all of it. `options` give `--input-encoding` (a byte order mark overrides it) and
    /// `--csv-delimiter`.
    public static func sniff(_ head: [UInt8], atEnd: Bool, options: ReadOptions = ReadOptions()) -> Outcome {
        if head.isEmpty, atEnd { return .told(noBytes) }
        if head.starts(with: Array("SQLite format 3\0".utf8)) { return .told(SniffedFormat(.sqlite, "SQLite's file header")) }
        // UTF-16 XML without a byte order mark: `<` and a NUL, as libxml2 tells it.
        if head.starts(with: [0x3C, 0x00]) || head.starts(with: [0x00, 0x3C]) {
            return .told(SniffedFormat(.xml, "'<' in UTF-16"))
        }
        let (text, mark) = utf8Text(head, atEnd: atEnd, encoding: TextEncoding(name: options.inputEncoding) ?? .utf8)
        let bom = mark.map { ", after a \($0) byte order mark" } ?? ""
        let view = SniffText(text, atEnd: atEnd)
        guard let first = view.firstNonBlank else { return .empty }
        switch text[first] {
        case UInt8(ascii: "<"):
            return .told(SniffedFormat(.xml, "'<' first\(bom)"))
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            return view.sniffBracketed(at: first, bom: bom)
        default:
            return view.sniffLines(options: options, bom: bom)
        }
    }

    /// The bytes as UTF-8 for looking at (their byte order mark dropped, UTF-16 transcoded, anything
    /// invalid replaced), and the mark's name.
    static func utf8Text(_ head: [UInt8], atEnd: Bool, encoding: TextEncoding) -> ([UInt8], String?) {
        var bytes = head[...]
        var encoding = encoding
        var mark: String?
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            bytes = bytes.dropFirst(3); mark = "UTF-8"; encoding = .utf8
        } else if bytes.starts(with: [0xFF, 0xFE]), !bytes.starts(with: [0xFF, 0xFE, 0, 0]) {
            bytes = bytes.dropFirst(2); mark = "UTF-16LE"; encoding = .utf16le
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            bytes = bytes.dropFirst(2); mark = "UTF-16BE"; encoding = .utf16be
        }
        switch encoding {
        case .utf16le, .utf16be, .utf16:
            let big = encoding != .utf16le
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var i = bytes.startIndex
            while i + 1 < bytes.endIndex {
                units.append(big ? UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]) : UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i]))
                i += 2
            }
            return (Array(String(decoding: units, as: UTF16.self).utf8), mark)
        case .utf8, .latin1, .windows1252:
            // ASCII is all that is looked at; other bytes only need to stay valid for the CSV reader.
            return (Array(String(decoding: bytes, as: UTF8.self).utf8), mark)
        }
    }
}

/// The text a sniff looks at, and the rules for each shape of its first non-blank byte.
struct SniffText {
    let bytes: [UInt8]
    let atEnd: Bool

    init(_ bytes: [UInt8], atEnd: Bool) { self.bytes = bytes; self.atEnd = atEnd }

    static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    var firstNonBlank: Int? { bytes.firstIndex { !SniffText.isBlank($0) } }

    func skipBlanks(from i: Int) -> Int {
        var i = i
        while i < bytes.count, SniffText.isBlank(bytes[i]) { i += 1 }
        return i
    }

    /// The line holding `i`, without its line end, as a message quotes it (at most 60 characters).
    func quotedLine(at i: Int) -> String {
        var start = i, end = i
        while start > 0, bytes[start - 1] != 0x0A, bytes[start - 1] != 0x0D { start -= 1 }
        while end < bytes.count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
        let line = String(decoding: bytes[start..<end], as: UTF8.self)
        return line.count > 60 ? String(line.prefix(57)) + "..." : line
    }

    // MARK: - `{` and `[`: JSON, JSON Lines, or YAML's flow style

    /// A `{` or `[` first: JSON (a document: the wrapper, an array, one trip over several lines),
    /// JSON Lines (a trip object ending on its first line), or YAML in the flow style (a plain,
    /// unquoted key: `{schemaVersion: 1.0.0, trips: [...]}`).
    func sniffBracketed(at first: Int, bom: String) -> FormatSniffer.Outcome {
        var object = first
        if bytes[first] == UInt8(ascii: "[") {
            object = skipBlanks(from: first + 1)
            guard object < bytes.count, bytes[object] == UInt8(ascii: "{") else {
                return .told(SniffedFormat(.json, "'[' first\(bom)"))
            }
        }
        let keyStart = skipBlanks(from: object + 1)
        guard keyStart < bytes.count else {
            return .told(SniffedFormat(.json, "'\(Character(UnicodeScalar(bytes[first])))' first\(bom)", assumed: !atEnd))
        }
        if bytes[keyStart] != UInt8(ascii: "\""), bytes[keyStart] != UInt8(ascii: "}") {
            return .told(SniffedFormat(.yaml, "a flow mapping with an unquoted key first\(bom)"))
        }
        if object != first { return .told(SniffedFormat(.json, "an array of objects\(bom)")) }
        let key = bytes[keyStart] == UInt8(ascii: "\"") ? string(at: keyStart) : nil
        if key == "schemaVersion" || key == "trips" {
            return .told(SniffedFormat(.json, "an object whose first key is \"\(key!)\"\(bom)"))
        }
        // A trip object (or another): one per line is JSON Lines; one over several lines, JSON.
        switch endOfValue(from: first) {
        case .multiline:
            return .told(SniffedFormat(.json, "one object over several lines\(bom)"))
        case .ends(let end):
            let next = skipBlanks(from: end)
            if next < bytes.count, bytes[next] == UInt8(ascii: "{") {
                return .told(SniffedFormat(.jsonl, "an object on each of its first lines\(bom)"))
            }
            return .told(SniffedFormat(.jsonl, "an object on its first line\(bom)"))
        case .beyondWindow:
            return .told(SniffedFormat(.jsonl, "an object on a first line longer than the \(FormatSniffer.windowSize >> 10) KiB looked at\(bom)",
                                       assumed: true))
        }
    }

    /// The JSON string starting at the quote at `i`, undecoded; nil if it does not end in the window.
    func string(at i: Int) -> String? {
        var j = i + 1
        while j < bytes.count {
            if bytes[j] == UInt8(ascii: "\\") { j += 2; continue }
            if bytes[j] == UInt8(ascii: "\"") { return String(decoding: bytes[(i + 1)..<j], as: UTF8.self) }
            j += 1
        }
        return nil
    }

    enum ValueEnd { case ends(Int), multiline, beyondWindow }

    /// Where the JSON value opened at `start` closes, or that a line break comes first (outside a
    /// string, where JSON allows none), or that the window ends first.
    func endOfValue(from start: Int) -> ValueEnd {
        var depth = 0, j = start, inString = false
        while j < bytes.count {
            let b = bytes[j]
            if inString {
                if b == UInt8(ascii: "\\") { j += 1 } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") {
                depth += 1
            } else if b == UInt8(ascii: "}") || b == UInt8(ascii: "]") {
                depth -= 1
                if depth == 0 { return .ends(j + 1) }
            } else if b == 0x0A || b == 0x0D {
                return .multiline
            }
            j += 1
        }
        return .beyondWindow
    }
}

extension SniffText {
    // MARK: - Lines: YAML's block style, CSV and TSV

    /// Anything else: the first line that is not blank or a `#` comment decides. YAML by its
    /// document marks, a `- ` item or a `key:` line; CSV or TSV by a header naming trip fields, split
    /// as the CSV reader splits it (`sep=X`, else whichever of `,` `;` tab `|` names the most).
    func sniffLines(options: ReadOptions, bom: String) -> FormatSniffer.Outcome {
        var i = firstNonBlank!, comments = false
        while i < bytes.count, bytes[i] == UInt8(ascii: "#") {
            comments = true
            i = skipBlanks(from: endOfLine(from: i))
        }
        guard i < bytes.count else { return .told(SniffedFormat(.yaml, "only '#' comment lines\(bom)", assumed: true)) }
        if starts(at: i, with: "%YAML") || starts(at: i, with: "%TAG") {
            return .told(SniffedFormat(.yaml, "a '\(starts(at: i, with: "%YAML") ? "%YAML" : "%TAG")' directive\(bom)"))
        }
        if starts(at: i, with: "---"), endsToken(at: i + 3) { return .told(SniffedFormat(.yaml, "a '---' document start\(bom)")) }
        if bytes[i] == UInt8(ascii: "-"), endsToken(at: i + 1) { return .told(SniffedFormat(.yaml, "a '- ' sequence item first\(bom)")) }
        if !comments, let csv = sniffHeader(options: options, bom: bom) { return .told(csv) }
        if let key = yamlKey(at: i) {
            let known = key == "schemaVersion" || key == "trips" || CSVFormat.tripColumnRoots.contains(key)
            return .told(SniffedFormat(.yaml, "a '\(key):' line first\(bom)", assumed: !known))
        }
        return .unknown(quotedLine(at: i))
    }

    func starts(at i: Int, with prefix: String) -> Bool {
        bytes.count - i >= prefix.utf8.count && bytes[i..<(i + prefix.utf8.count)].elementsEqual(prefix.utf8)
    }

    /// Whether a token ends at `i`: a blank, a line end, or the end of the bytes.
    func endsToken(at i: Int) -> Bool { i >= bytes.count || SniffText.isBlank(bytes[i]) }

    func endOfLine(from i: Int) -> Int {
        var i = i
        while i < bytes.count, bytes[i] != 0x0A, bytes[i] != 0x0D { i += 1 }
        return i
    }

    /// The key of a `key: value` or `key:` line at `i`: a plain key of letters, digits, `_`, `-` and
    /// `.` (not prose: `Dear diary: ...` is no key), or a quoted one; nil for anything else.
    func yamlKey(at i: Int) -> String? {
        var j = i
        let key: String
        if bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") {
            j += 1
            while j < bytes.count, bytes[j] != bytes[i], bytes[j] != 0x0A { j += 1 }
            guard j < bytes.count, bytes[j] == bytes[i] else { return nil }
            key = String(decoding: bytes[(i + 1)..<j], as: UTF8.self)
            j += 1
        } else {
            let isKeyByte = { (b: UInt8) in
                (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
                    || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
            }
            guard isKeyByte(bytes[i]), bytes[i] != UInt8(ascii: "-") else { return nil }
            while j < bytes.count, isKeyByte(bytes[j]) { j += 1 }
            key = String(decoding: bytes[i..<j], as: UTF8.self)
        }
        while j < bytes.count, bytes[j] == 0x20 { j += 1 }
        guard j < bytes.count, bytes[j] == UInt8(ascii: ":"), endsToken(at: j + 1) else { return nil }
        return key
    }

    /// CSV or TSV, when the first row, split as the CSV reader splits it, names a trip field. A tab
    /// split is TSV unless a cell in the window is quoted (a spreadsheet's "Unicode text" export
    /// quotes as CSV does).
    func sniffHeader(options: ReadOptions, bom: String) -> SniffedFormat? {
        var given = 0
        let text = bytes
        var utf8 = options
        utf8.inputEncoding = TextEncoding.utf8.rawValue
        let rows = try? CSVFormat.makeRowReader(name: "", format: .csv, options: utf8) { buffer in
            let n = min(buffer.count, text.count - given)
            text.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + given, byteCount: n) }
            given += n
            return n
        }
        guard let rows, (try? rows.nextRow()) == true else { return nil }
        let fields = CSVFormat.tripColumnCount(rows.strings)
        guard fields > 0 else { return nil }
        let separator = rows.dialect.separator
        let declared = starts(at: 0, with: "sep=") || starts(at: 0, with: "SEP=") || starts(at: 0, with: "Sep=")
        let named = separator == 0x09 ? "tabs" : "'\(Character(UnicodeScalar(separator)))'"
        let split = "a header split by \(named) into \(fields) trip column\(fields == 1 ? "" : "s")"
        if declared { return SniffedFormat(.csv, "Excel's 'sep=\(Character(UnicodeScalar(separator)))' line, then \(split)\(bom)") }
        guard separator == 0x09, options.csvDelimiter == nil else { return SniffedFormat(.csv, split + bom) }
        if hasQuotedCell { return SniffedFormat(.csv, "\(split), and quoted cells\(bom)") }
        if hasBackslashEscape { return SniffedFormat(.tsv, "\(split), and backslash escapes\(bom)") }
        return SniffedFormat(.tsv, split + bom + (atEnd ? "" : ", no cell quoted in the first \(FormatSniffer.windowSize >> 10) KiB"),
                             assumed: !atEnd)
    }

    /// Whether a cell opens with a quote: at a line's start or after a tab.
    var hasQuotedCell: Bool {
        bytes.indices.contains { bytes[$0] == UInt8(ascii: "\"") && ($0 == 0 || [0x09, 0x0A, 0x0D].contains(bytes[$0 - 1])) }
    }

    /// Whether TSV's `\t`, `\n`, `\r` or `\\` appears.
    var hasBackslashEscape: Bool {
        bytes.indices.dropLast().contains { i in
            bytes[i] == UInt8(ascii: "\\") && [UInt8(ascii: "t"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "\\")].contains(bytes[i + 1])
        }
    }
}
