#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// Reads the rows of a CSV or TSV input as cells of bytes, streaming.
///
/// The reader keeps a window of the input; the row being read is always whole inside it, from
/// `rowStart`, so a cell is a pair of offsets and no bytes are copied, except for the few cells whose
/// text differs from their bytes (doubled quotes, TSV escapes), which are decoded into `scratch`.
/// When a row runs past the end of the window, the row is moved to the front, the window is filled
/// (grown if the row fills it) and the row is parsed again from its start; filling the window to
/// capacity each time keeps this linear however long the row.
///
/// A row ends at LF, CRLF or a lone CR outside quotes; blank lines are skipped; a UTF-8 byte-order mark
/// at the start is dropped. A quote inside an unquoted CSV cell is an ordinary character.
///
/// ```swift
/// let rows = try CSVRowReader(ByteInput(.file("a.csv")), dialect: .csv)
/// while try rows.nextRow() { for i in 0..<rows.cellCount { print(rows.string(i)) } }
/// ```
final class CSVRowReader {
    /// A cell of the current row.
    struct Cell {
        /// Offsets into the window, or into `scratch` when `isDecoded`.
        var start: Int
        var end: Int
        /// The cell was quoted (`""` is a quoted empty cell, told apart from an empty one).
        var isQuoted: Bool
        var isDecoded: Bool
        /// Where the cell begins in the window (its opening quote, if quoted).
        var rawStart: Int
    }

    let name: String
    /// The dialect rows are read in; its separator is final once the first row is read (a `sep=` line
    /// or the header may decide it, see `SeparatorChoice`).
    private(set) var dialect: CSVDialect
    let limits: CSVLimits
    /// How the separator is chosen at the start of the input.
    private let separatorChoice: SeparatorChoice
    private let source: (UnsafeMutableRawBufferPointer) throws -> Int

    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var filled = 0
    private var rowStart = 0
    private var atEOF = false
    private var started = false

    private var cells: UnsafeMutablePointer<Cell>
    private var cellCapacity = 64
    /// The number of cells of the current row.
    private(set) var cellCount = 0
    private var scratch: UnsafeMutablePointer<UInt8>
    private var scratchCapacity = 1024
    private var scratchCount = 0
    /// Where the current row ends (before its line break) and the next begins.
    private var rowEnd = 0
    private var nextRowStart = 0

    /// The physical line (1-based) where the current row starts.
    private(set) var rowLine = 0
    /// The line where the next row starts.
    private var nextLine = 1
    /// Bytes 0x80 and up, one per byte; `stop` bytes for an unquoted cell.
    private let stops: UnsafeMutablePointer<UInt8>

    private static let quote = UInt8(ascii: "\"")
    private static let lf = UInt8(ascii: "\n")
    private static let cr = UInt8(ascii: "\r")
    private static let backslash = UInt8(ascii: "\\")

    /// How the separator of a CSV input is decided before its first row.
    enum SeparatorChoice {
        /// The dialect's, unless a `sep=X` first line names another (Excel's way of saying it).
        case declaredOrDialect
        /// Given by the user: a `sep=X` first line naming another is an error.
        case fixed
        /// A `sep=X` first line, else the candidate that splits the first row into the most cells
        /// `score` recognizes (column names), else the dialect's.
        case detect(candidates: [UInt8], score: ([String]) -> Int)
    }

    /// Reads an input through `ByteInput`, in `encoding` (a UTF-16 byte order mark overrides it).
    convenience init(_ input: ByteInput, dialect: CSVDialect, encoding: TextEncoding = .utf8,
                     separator: SeparatorChoice = .declaredOrDialect,
                     limits: CSVLimits = CSVLimits(), chunkSize: Int = 1 << 18) {
        self.init(name: input.name, dialect: dialect, encoding: encoding, separator: separator, limits: limits,
                  chunkSize: chunkSize) { try input.read(into: $0) }
    }

    /// Reads text in `encoding` from any source that fills a buffer and returns 0 at the end: the one
    /// place CSV input is transcoded. UTF-8 passes through untouched (one call per window fill), so
    /// that a UTF-16 byte order mark is honoured whatever `encoding` says.
    init(name: String, dialect: CSVDialect, encoding: TextEncoding, separator: SeparatorChoice = .declaredOrDialect,
         limits: CSVLimits = CSVLimits(), chunkSize: Int = 1 << 18,
         source: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
        self.name = name; self.dialect = dialect; self.limits = limits; self.separatorChoice = separator
        self.source = TranscodingSource(name: name, encoding: encoding, detectsBOM: true, source: source).read
        capacity = max(chunkSize, 16)
        buffer = .allocate(capacity: capacity)
        cellCapacity = max(1, min(64, limits.maxColumns))
        cells = .allocate(capacity: cellCapacity)
        scratch = .allocate(capacity: scratchCapacity)
        stops = .allocate(capacity: 256)
        stops.initialize(repeating: 0, count: 256)
        stops[Int(dialect.separator)] = 1
        stops[Int(CSVRowReader.lf)] = 1
        stops[Int(CSVRowReader.cr)] = 1
        if dialect.usesEscapes { stops[Int(CSVRowReader.backslash)] = 2 }
    }

    deinit {
        buffer.deallocate()
        cells.deallocate()
        scratch.deallocate()
        stops.deallocate()
    }

    // MARK: - Rows

    /// Reads the next row; false at the end of input (and again after that).
    func nextRow() throws -> Bool {
        if !started {
            started = true
            try begin()
        }
        rowStart = nextRowStart
        while true {
            switch try (detecting ? parseFirstRow() : parseRow()) {
            case .row:
                try validateUTF8()
                return true
            case .blank(let next):
                rowStart = next; nextRowStart = next; nextLine += 1
            case .needMore:
                try fill()
            case .end:
                cellCount = 0
                return false
            }
        }
    }

    private enum Outcome { case row, blank(Int), needMore, end }

    /// Whether the first row is still to decide the separator (`SeparatorChoice.detect`).
    private var detecting = false

    /// The start of the input: a UTF-8 byte order mark is dropped and, in CSV, a `sep=X` first line
    /// is read and skipped (Excel's declaration of the separator).
    private func begin() throws {
        try fill()
        while filled < 8 && !atEOF { try fill() }
        if filled >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { rowStart = 3; nextRowStart = 3 }
        guard !dialect.usesEscapes else { return }
        let p = rowStart, left = filled - p
        let isLineEnd = { (i: Int) in i >= self.filled || self.buffer[i] == CSVRowReader.lf || self.buffer[i] == CSVRowReader.cr }
        if left >= 5, buffer[p] | 0x20 == UInt8(ascii: "s"), buffer[p + 1] | 0x20 == UInt8(ascii: "e"),
           buffer[p + 2] | 0x20 == UInt8(ascii: "p"), buffer[p + 3] == UInt8(ascii: "="), isLineEnd(p + 5) {
            let declared = buffer[p + 4]
            guard CSVDialect.isValidSeparator(declared) else {
                throw TripError.data("\(name):1:5: the file declares the separator \(describe(p + 4)), which cannot separate CSV cells")
            }
            if case .fixed = separatorChoice, declared != dialect.separator {
                throw TripError.data("\(name):1:5: the file declares the separator \(describe(p + 4)), but the delimiter given is \(String(UnicodeScalar(dialect.separator)).quotedForMessage)",
                                     notes: ["leave out --csv-delimiter to read the file with the separator it declares"])
            }
            setSeparator(declared)
            var next = p + 5
            if next < filled && buffer[next] == CSVRowReader.cr { next += 1 }
            if next < filled && buffer[next] == CSVRowReader.lf { next += 1 }
            rowStart = next; nextRowStart = next; nextLine = 2
            return
        }
        if case .detect = separatorChoice { detecting = true }
    }

    /// The first row of a CSV input whose separator is to be detected: blank lines before it are
    /// skipped as ever; then the separator is chosen and the row parsed with it.
    private func parseFirstRow() throws -> Outcome {
        if rowStart >= filled || buffer[rowStart] == CSVRowReader.lf || buffer[rowStart] == CSVRowReader.cr { return try parseRow() }
        detecting = false
        try chooseSeparator()
        return .row
    }

    /// Decides the separator from the first row: of the candidates, the one that splits it into the
    /// most cells `score` recognizes (then the most cells; then the first candidate), and parses the
    /// row with it. A candidate that cannot parse the row (text after a closing quote, a quote it
    /// would open and not close within 1 MiB) is passed over; if none can, the dialect's separator
    /// parses it and reports what is wrong.
    private func chooseSeparator() throws {
        guard case .detect(let candidates, let score) = separatorChoice else { return }
        let line = nextLine, original = dialect.separator
        var best: (separator: UInt8, score: Int, cells: Int)?
        for c in candidates {
            setSeparator(c)
            nextLine = line
            guard (try? parseAgain(limit: 1 << 20)) == true else { continue }
            let s = score(strings)
            if best == nil || s > best!.score || (s == best!.score && cellCount > best!.cells) {
                best = (c, s, cellCount)
            }
        }
        setSeparator(best?.separator ?? original)
        nextLine = line
        guard try parseAgain(limit: limits.maxRowBytes) else {
            throw TripError.data("\(name):\(line): a row longer than \(limits.maxRowBytes >> 20) MiB")
        }
    }

    /// Parses the row at `rowStart` again, reading more input while the row is within `limit` bytes.
    private func parseAgain(limit: Int) throws -> Bool {
        while true {
            switch try parseRow() {
            case .row: return true
            case .needMore:
                guard filled - rowStart < limit, !atEOF else { return false }
                try fill()
            case .blank, .end: return false
            }
        }
    }

    private func setSeparator(_ c: UInt8) {
        stops[Int(dialect.separator)] = 0
        dialect.separator = c
        stops[Int(c)] = 1
        stops[Int(CSVRowReader.lf)] = 1
        stops[Int(CSVRowReader.cr)] = 1
        if dialect.usesEscapes { stops[Int(CSVRowReader.backslash)] = 2 }
    }

    /// Parses the row at `rowStart` if the window holds all of it.
    private func parseRow() throws -> Outcome {
        let b = buffer, e = filled
        var p = rowStart
        if p >= e { return atEOF ? .end : .needMore }
        if b[p] == CSVRowReader.lf { return .blank(p + 1) }
        if b[p] == CSVRowReader.cr {
            if p + 1 < e { return .blank(b[p + 1] == CSVRowReader.lf ? p + 2 : p + 1) }
            return atEOF ? .blank(p + 1) : .needMore
        }
        cellCount = 0
        scratchCount = 0
        rowLine = nextLine
        var breaks = 0   // line breaks inside quoted cells
        let separator = dialect.separator
        let stops = self.stops
        while true {
            let cellStart = p
            var cell: Cell
            if !dialect.usesEscapes, p < e, b[p] == CSVRowReader.quote {
                // A quoted cell: up to a quote not followed by another.
                var q = p + 1
                var doubled = false
                while true {
                    while q < e {
                        let c = b[q]
                        if c == CSVRowReader.quote { break }
                        if c == CSVRowReader.lf {
                            breaks += 1
                        } else if c == CSVRowReader.cr {
                            // CR LF counts once, at the LF.
                            if q + 1 < e {
                                if b[q + 1] != CSVRowReader.lf { breaks += 1 }
                            } else if !atEOF {
                                return try needMore(cellStart)
                            } else {
                                breaks += 1
                            }
                        }
                        q += 1
                    }
                    if q >= e {
                        if !atEOF { return try needMore(cellStart) }
                        let opened = position(of: cellStart)
                        let at = position(of: e)
                        throw TripError.data("\(name):\(at.line):\(at.column): unterminated quoted field (opened at \(opened.line):\(opened.column))")
                    }
                    // b[q] is a quote.
                    if q + 1 >= e && !atEOF { return try needMore(cellStart) }
                    if q + 1 < e && b[q + 1] == CSVRowReader.quote { doubled = true; q += 2; continue }
                    break
                }
                let contentStart = p + 1, contentEnd = q
                p = q + 1
                if p < e {
                    let c = b[p]
                    if c != separator && c != CSVRowReader.lf && c != CSVRowReader.cr {
                        let at = position(of: p)
                        throw TripError.data("\(name):\(at.line):\(at.column): expected '\(Character(Unicode.Scalar(separator)))' or a line end after a closing quote, found \(describe(p))")
                    }
                }
                if contentEnd - contentStart > limits.maxFieldBytes { try fieldTooLong(cellStart) }
                if doubled {
                    reserveScratch(contentEnd - contentStart)
                    let s = scratchCount
                    var i = contentStart
                    while i < contentEnd {
                        let c = b[i]
                        scratch[scratchCount] = c
                        scratchCount += 1
                        i += (c == CSVRowReader.quote) ? 2 : 1
                    }
                    cell = Cell(start: s, end: scratchCount, isQuoted: true, isDecoded: true, rawStart: cellStart)
                } else {
                    cell = Cell(start: contentStart, end: contentEnd, isQuoted: true, isDecoded: false, rawStart: cellStart)
                }
            } else {
                // An unquoted cell: up to a separator or a line break.
                var escaped = false
                while p < e {
                    let s = stops[Int(b[p])]
                    if s != 0 {
                        if s == 1 { break }
                        escaped = true
                    }
                    p += 1
                }
                if p >= e && !atEOF { return try needMore(cellStart) }
                if p - cellStart > limits.maxFieldBytes { try fieldTooLong(cellStart) }
                if escaped {
                    let s = scratchCount
                    unescape(from: cellStart, to: p)
                    cell = Cell(start: s, end: scratchCount, isQuoted: false, isDecoded: true, rawStart: cellStart)
                } else {
                    cell = Cell(start: cellStart, end: p, isQuoted: false, isDecoded: false, rawStart: cellStart)
                }
            }
            if cellCount == cellCapacity { try growCells(at: cellStart) }
            cells[cellCount] = cell
            cellCount += 1
            // p is at a separator, a line break, or the end of input.
            if p >= e {
                rowEnd = p; nextRowStart = p
                break
            }
            let c = b[p]
            if c == separator { p += 1; continue }
            rowEnd = p
            if c == CSVRowReader.lf {
                nextRowStart = p + 1
            } else {
                if p + 1 >= e && !atEOF { return try needMore(rowStart) }
                nextRowStart = (p + 1 < e && b[p + 1] == CSVRowReader.lf) ? p + 2 : p + 1
            }
            breaks += 1
            break
        }
        nextLine += breaks
        return .row
    }

    /// Asks for more input, unless the row or cell is already past the limits.
    private func needMore(_ cellStart: Int) throws -> Outcome {
        if filled - cellStart > limits.maxFieldBytes { try fieldTooLong(cellStart) }
        if filled - rowStart > limits.maxRowBytes {
            throw TripError.data("\(name):\(nextLine): a row longer than \(limits.maxRowBytes >> 20) MiB")
        }
        return .needMore
    }

    private func fieldTooLong(_ cellStart: Int) throws -> Never {
        let at = position(of: cellStart)
        throw TripError.data("\(name):\(at.line):\(at.column): a field longer than \(limits.maxFieldBytes >> 20) MiB")
    }

    private func growCells(at cellStart: Int) throws {
        if cellCount >= limits.maxColumns {
            let at = position(of: cellStart)
            throw TripError.data("\(name):\(at.line):\(at.column): more than \(limits.maxColumns) columns in a row")
        }
        let bigger = min(cellCapacity * 2, limits.maxColumns)
        let new = UnsafeMutablePointer<Cell>.allocate(capacity: bigger)
        new.moveInitialize(from: cells, count: cellCount)
        cells.deallocate()
        cells = new
        cellCapacity = bigger
    }

    /// Decodes a TSV cell's escapes into `scratch`; an unknown escape is kept as it is.
    private func unescape(from start: Int, to end: Int) {
        reserveScratch(end - start)
        func put(_ c: UInt8) { scratch[scratchCount] = c; scratchCount += 1 }
        var i = start
        while i < end {
            let c = buffer[i]
            if c == CSVRowReader.backslash, i + 1 < end {
                switch buffer[i + 1] {
                case UInt8(ascii: "t"): put(9); i += 2; continue
                case UInt8(ascii: "n"): put(10); i += 2; continue
                case UInt8(ascii: "r"): put(13); i += 2; continue
                case UInt8(ascii: "\\"): put(92); i += 2; continue
                default: break
                }
            }
            put(c)
            i += 1
        }
    }

    private func reserveScratch(_ more: Int) {
        guard scratchCount + more > scratchCapacity else { return }
        var bigger = scratchCapacity * 2
        while bigger < scratchCount + more { bigger *= 2 }
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
        new.update(from: scratch, count: scratchCount)
        scratch.deallocate()
        scratch = new
        scratchCapacity = bigger
    }

    // MARK: - The window

    /// Moves the current row to the front and reads until the window is full or the input ends,
    /// doubling the window when the row already fills it.
    private func fill() throws {
        if atEOF { return }
        if rowStart > 0 {
            let keep = filled - rowStart
            if keep > 0 { memmove(buffer, buffer + rowStart, keep) }
            nextRowStart -= rowStart
            filled = keep
            rowStart = 0
        }
        if filled == capacity {
            let bigger = capacity * 2
            let new = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
            new.update(from: buffer, count: filled)
            buffer.deallocate()
            buffer = new
            capacity = bigger
        }
        while filled < capacity {
            let n = try source(UnsafeMutableRawBufferPointer(start: buffer + filled, count: capacity - filled))
            if n <= 0 { atEOF = true; break }
            filled += n
        }
    }

    // MARK: - Cells

    /// The bytes of a cell, valid until the next `nextRow()`.
    @inline(__always)
    func bytes(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        let c = cells[i]
        return UnsafeBufferPointer(start: (c.isDecoded ? scratch : buffer) + c.start, count: c.end - c.start)
    }

    /// Whether a cell was quoted in the input.
    @inline(__always)
    func isQuoted(_ i: Int) -> Bool { cells[i].isQuoted }

    /// Whether a cell has no bytes.
    @inline(__always)
    func isEmpty(_ i: Int) -> Bool { cells[i].start == cells[i].end }

    /// Whether an unquoted `NA` is a missing value, as R's `write.csv` writes one. Set for an input
    /// whose header is quoted throughout (R quotes every name and every string; so do Python's
    /// QUOTE_ALL and QUOTE_NONNUMERIC, which write no unquoted text), so an unquoted `NA` cannot be
    /// a text there; elsewhere `NA` is the text "NA".
    var readsNAAsMissing = false

    /// Whether a cell holds no value: no bytes, or R's unquoted `NA` where `readsNAAsMissing`.
    @inline(__always)
    func isBlank(_ i: Int) -> Bool {
        let c = cells[i]
        if c.start == c.end { return true }
        return readsNAAsMissing && !c.isQuoted && c.end - c.start == 2 && cellEquals(i, "NA")
    }

    /// Whether every cell of the current row was quoted (a header R, QUOTE_ALL or QUOTE_NONNUMERIC wrote).
    var allQuoted: Bool {
        cellCount > 0 && (0..<cellCount).allSatisfy { cells[$0].isQuoted }
    }

    /// A cell's text.
    func string(_ i: Int) -> String {
        text(bytes(i))
    }

    /// Whether a cell's bytes are exactly `literal`'s.
    func cellEquals(_ i: Int, _ literal: StaticString) -> Bool {
        let b = bytes(i)
        guard b.count == literal.utf8CodeUnitCount else { return false }
        return b.count == 0 || memcmp(b.baseAddress!, literal.utf8Start, b.count) == 0
    }

    /// A cell as the builder takes it. An empty cell, quoted or not (RFC 4180, Python's csv, Miller
    /// and csvkit tell no difference), or a blank one (`isBlank`), is the empty string, or no value where `emptyIsNull` (a
    /// column whose type is not text, or a trip's required text: a name or a destination must not be
    /// empty). `isBool`: `true` and `false` are told without a String. `safeFormulas`: a cell that
    /// `'` guards (`'=`, `'+`, `'-`, `'@`, `''`) is read without its `'`.
    @inline(__always)
    func token(_ i: Int, emptyIsNull: Bool, isBool: Bool = false, safeFormulas: Bool = false) -> ScalarToken {
        if isBlank(i) { return emptyIsNull ? .null : .text("") }
        if isBool {
            // What the writer writes; other spellings go to the builder as text.
            if cellEquals(i, "true") { return .bool(true) }
            if cellEquals(i, "false") { return .bool(false) }
        }
        if safeFormulas {
            let b = bytes(i)
            if b.count >= 2, b[0] == UInt8(ascii: "'"), CSVDialect.isGuardedByQuote(b[1]) {
                return .text(text(UnsafeBufferPointer(rebasing: b[1...])))
            }
        }
        return .text(string(i))
    }

    /// The cells of the current row as strings (for tests and headers).
    var strings: [String] { (0..<cellCount).map(string) }

    /// The current row's own text, without its line break, for the rejects file.
    var rawText: String { text(UnsafeBufferPointer(start: buffer + rowStart, count: rowEnd - rowStart)) }

    /// The line and column (1-based, in characters) where cell `i` begins.
    func position(ofCell i: Int) -> (line: Int, column: Int) { position(of: cells[i].rawStart) }

    private func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Places and encoding

    /// The line and column (1-based, in characters) of a window offset inside the current row.
    func position(of offset: Int) -> (line: Int, column: Int) {
        var line = rowLine, lineStart = rowStart
        var p = rowStart
        while p < offset && p < filled {
            let c = buffer[p]
            if c == CSVRowReader.lf || (c == CSVRowReader.cr && !(p + 1 < filled && buffer[p + 1] == CSVRowReader.lf)) {
                line += 1; lineStart = p + 1
            }
            p += 1
        }
        var column = 1
        p = lineStart
        while p < offset && p < filled {
            if buffer[p] & 0xC0 != 0x80 { column += 1 }
            p += 1
        }
        return (line, column)
    }

    private func describe(_ offset: Int) -> String {
        let c = buffer[offset]
        if c < 0x80 { return String(UnicodeScalar(c)).quotedForMessage }
        return "byte 0x" + String(c, radix: 16, uppercase: true)
    }

    /// Checks the current row is UTF-8: eight bytes at a time while they are ASCII.
    private func validateUTF8() throws {
        var p = rowStart
        let end = nextRowStart
        let raw = UnsafeRawPointer(buffer)
        while p + 8 <= end {
            if raw.loadUnaligned(fromByteOffset: p, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            p += 8
        }
        while p < end {
            let c = buffer[p]
            if c < 0x80 { p += 1; continue }
            let length: Int, minimum: UInt32
            var scalar: UInt32
            switch c {
            case 0xC2...0xDF: length = 2; scalar = UInt32(c & 0x1F); minimum = 0x80
            case 0xE0...0xEF: length = 3; scalar = UInt32(c & 0x0F); minimum = 0x800
            case 0xF0...0xF4: length = 4; scalar = UInt32(c & 0x07); minimum = 0x10000
            default: try invalidUTF8(at: p)
            }
            guard p + length <= end else { try invalidUTF8(at: p) }
            for k in 1..<length {
                let d = buffer[p + k]
                guard d & 0xC0 == 0x80 else { try invalidUTF8(at: p) }
                scalar = scalar << 6 | UInt32(d & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { try invalidUTF8(at: p) }
            p += length
        }
    }

    private func invalidUTF8(at offset: Int) throws -> Never {
        let at = position(of: offset)
        var shown: [String] = []
        var p = offset
        while p < filled && shown.count < 4 && (p == offset || buffer[p] & 0xC0 == 0x80) {
            shown.append(String(buffer[p], radix: 16, uppercase: true)); p += 1
        }
        throw TripError.data("\(name):\(at.line):\(at.column): invalid UTF-8 bytes " + shown.map { "0x" + $0 }.joined(separator: " "),
                             notes: ["if the input is in another encoding, name it: --input-encoding latin1, windows-1252, utf-16le or utf-16be"])
    }
}
