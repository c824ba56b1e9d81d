#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

// The current row's cells: bytes, text, and the value each gives the builder.

extension CSVRowReader {
    // MARK: - Cells

    /// The bytes of a cell, valid until the next `nextRow()`.
    @inline(__always)
    func bytes(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        let c = cells[i]
        return UnsafeBufferPointer(start: (c.isDecoded ? scratch.pointer : window.pointer) + c.start, count: c.end - c.start)
    }

    /// Whether a cell was quoted in the input.
    @inline(__always)
    func isQuoted(_ i: Int) -> Bool { cells[i].isQuoted }

    /// Whether a cell has no bytes.
    @inline(__always)
    func isEmpty(_ i: Int) -> Bool { cells[i].start == cells[i].end }


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
    var rawText: String { text(UnsafeBufferPointer(start: window.pointer + rowStart, count: rowEnd - rowStart)) }

    /// The line and column (1-based, in characters) where cell `i` begins.
    func position(ofCell i: Int) -> (line: Int, column: Int) { position(of: cells[i].rawStart) }

    func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
