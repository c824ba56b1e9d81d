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

    /// The window: the input from `rowStart` (or before) to its `count`.
    let window: ByteStorage
    var rowStart = 0
    var atEOF = false
    private var started = false

    var cells: UnsafeMutablePointer<Cell>
    var cellCapacity = 64
    /// The number of cells of the current row.
    var cellCount = 0
    /// The current row's cells whose text differs from their bytes, decoded.
    let scratch = ByteStorage(capacity: 1024)
    /// Where the current row ends (before its line break) and the next begins.
    var rowEnd = 0
    var nextRowStart = 0

    /// The physical line (1-based) where the current row starts.
    var rowLine = 0
    /// The line where the next row starts.
    var nextLine = 1
    /// Bytes 0x80 and up, one per byte; `stop` bytes for an unquoted cell.
    let stops: UnsafeMutablePointer<UInt8>
    /// Whether an unquoted `NA` is a missing value, as R's `write.csv` writes one. Set for an input
    /// whose header is quoted throughout (R quotes every name and every string; so do Python's
    /// QUOTE_ALL and QUOTE_NONNUMERIC, which write no unquoted text), so an unquoted `NA` cannot be
    /// a text there; elsewhere `NA` is the text "NA".
    var readsNAAsMissing = false

    static let quote = UInt8(ascii: "\"")
    static let lf = UInt8(ascii: "\n")
    static let cr = UInt8(ascii: "\r")
    static let backslash = UInt8(ascii: "\\")

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
        window = ByteStorage(capacity: max(chunkSize, 16))
        cellCapacity = max(1, min(64, limits.maxColumns))
        cells = .allocate(capacity: cellCapacity)
        stops = .allocate(capacity: 256)
        stops.initialize(repeating: 0, count: 256)
        stops[Int(dialect.separator)] = 1
        stops[Int(CSVRowReader.lf)] = 1
        stops[Int(CSVRowReader.cr)] = 1
        if dialect.usesEscapes { stops[Int(CSVRowReader.backslash)] = 2 }
    }

    deinit {
        cells.deallocate()
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

    enum Outcome { case row, blank(Int), needMore, end }

    /// Whether the first row is still to decide the separator (`SeparatorChoice.detect`).
    private var detecting = false

    /// The start of the input: a UTF-8 byte order mark is dropped and, in CSV, a `sep=X` first line
    /// is read and skipped (Excel's declaration of the separator).
    private func begin() throws {
        try fill()
        while window.count < 8 && !atEOF { try fill() }
        let buffer = window.pointer, filled = window.count
        if filled >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { rowStart = 3; nextRowStart = 3 }
        guard !dialect.usesEscapes else { return }
        let p = rowStart, left = filled - p
        let isLineEnd = { (i: Int) in i >= filled || buffer[i] == CSVRowReader.lf || buffer[i] == CSVRowReader.cr }
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
        if rowStart >= window.count || window.pointer[rowStart] == CSVRowReader.lf || window.pointer[rowStart] == CSVRowReader.cr {
            return try parseRow()
        }
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
                guard window.count - rowStart < limit, !atEOF else { return false }
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

    // MARK: - The window

    /// Moves the current row to the front and reads until the window is full or the input ends,
    /// doubling the window when the row already fills it.
    private func fill() throws {
        if atEOF { return }
        if rowStart > 0 {
            window.removeFirst(rowStart)
            nextRowStart -= rowStart
            rowStart = 0
        }
        if window.freeCapacity == 0 { window.grow(toAtLeast: window.capacity * 2, keeping: window.count) }
        while window.freeCapacity > 0 {
            if try window.fill(source) == 0 { atEOF = true; break }
        }
    }
}
