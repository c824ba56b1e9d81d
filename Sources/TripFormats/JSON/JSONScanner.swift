import TripKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bounds that keep hostile JSON from exhausting the stack, memory or time.
struct JSONLimits: Sendable {
    /// Arrays and objects nested deeper than this are an error (the JSONTestSuite's depth bombs).
    var maxDepth = 512
    /// One string (a key or a value), decoded, in bytes.
    var maxStringBytes = 16 << 20
    /// One number's text, in bytes.
    var maxNumberBytes = 1 << 20
    /// One JSON Lines line, in bytes.
    var maxLineBytes = 64 << 20
    /// A record's text is kept for the rejects file while it is no longer than this.
    var maxRecordTextBytes = 1 << 20

    static let standard = JSONLimits()

    /// `16 MiB`, `512 KiB`, `100 bytes`, for messages.
    static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

/// A JSON syntax error at a line and column (both 1-based; columns count bytes).
///
/// Readers turn it into `TripError.data("FILE:LINE:COLUMN: message")` for a document, or into a
/// rejected record (`LINE:COLUMN: message`) for a JSON Lines line.
struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var message: String
    var description: String { "\(line):\(column): \(message)" }
}

/// A tokenizer over a buffered window of an input's bytes.
///
/// The window holds the bytes from the token being read (or the record being kept for its text) to
/// the end of the last chunk read; `refill` reads the next chunk, first making room by dropping what
/// is no longer needed, so tokens may straddle chunks and memory stays bounded by the limits, never
/// by the input's size.
/// Hot loops work on `base` and `pos` directly; `peek()` skips whitespace and counts lines (JSON
/// allows a raw newline only between tokens, so no token spans lines).
///
/// Copying a scanner shares its buffers: keep one copy.
struct JSONScanner {
    /// Reads up to `buffer.count` bytes into the buffer; 0 at the end of input.
    typealias Source = (UnsafeMutableRawBufferPointer) throws -> Int

    let limits: JSONLimits
    let chunkSize: Int
    /// Bytes ≥ 0x80 in strings are ISO 8859-1 characters (`--input-encoding latin1`), not UTF-8.
    let isLatin1: Bool
    private let source: Source
    private let window: ByteStorage
    /// Decoded strings that are not the window's bytes as they are (escapes, Latin-1).
    let scratch: ByteStorage

    /// The window's bytes; valid from 0 to `dataEnd`.
    private(set) var base: UnsafeMutablePointer<UInt8>
    /// The next byte to read.
    var pos = 0
    /// Where reading stops: `dataEnd`, or a line's end while a JSON Lines line is parsed.
    var end = 0
    /// The end of the bytes read so far.
    private(set) var dataEnd = 0
    /// Reading is confined to `[pos, end)`: a JSON Lines line, parsed as a whole document.
    private(set) var isBounded = false
    private(set) var isAtEndOfInput = false
    /// The input offset of `base[0]`.
    private(set) var windowOffset = 0
    /// The current line (1-based) and the input offset where it starts.
    var line = 1
    var lineStart = 0
    /// The window index of the start of a record whose text is kept, or -1.
    private(set) var pin = -1
    /// The open containers while skipping a value: 1 object, 0 array.
    var containers: [UInt8] = []

    init(limits: JSONLimits = .standard, chunkSize: Int = 1 << 16, isLatin1: Bool = false, source: @escaping Source) {
        self.limits = limits
        self.chunkSize = max(1, chunkSize)
        self.isLatin1 = isLatin1
        self.source = source
        window = ByteStorage(capacity: 2 * self.chunkSize)
        scratch = ByteStorage(capacity: 256)
        base = window.pointer
        containers.reserveCapacity(64)
    }

    // MARK: - The window

    /// Reads the next chunk, keeping the bytes from `keep` on (and a pinned record); false at the end
    /// of input, or of the line when bounded. Window indices may move: `pos`, `keep` and the pin are
    /// adjusted here, and callers adjust their own indices by the change in `keep`.
    mutating func refill(keeping keep: inout Int) throws -> Bool {
        if isBounded || isAtEndOfInput { return false }
        if window.capacity - dataEnd < chunkSize { makeRoom(keeping: &keep) }
        let n = try source(UnsafeMutableRawBufferPointer(start: base + dataEnd, count: chunkSize))
        guard n > 0 else {
            isAtEndOfInput = true
            end = dataEnd
            return false
        }
        dataEnd += n
        end = dataEnd
        return true
    }

    /// Frees room for a chunk by dropping the bytes before `keep`, `pos` and a pinned record. What is
    /// kept moves to the front when it fills at most half the window, else into a window twice the
    /// size: each byte moves a bounded number of times, however long the token.
    private mutating func makeRoom(keeping keep: inout Int) {
        var from = min(keep, pos)
        if pin >= 0 {
            if dataEnd - pin > limits.maxRecordTextBytes { pin = -1 } else { from = min(from, pin) }
        }
        let kept = dataEnd - from
        if kept <= window.capacity / 2 {
            if from > 0 && kept > 0 { memmove(base, base + from, kept) }
        } else {
            window.replace(capacity: max(window.capacity * 2, kept + chunkSize), keeping: from, count: kept)
            base = window.pointer
        }
        windowOffset += from
        pos -= from; dataEnd -= from; keep -= from
        end = dataEnd
        if pin >= 0 { pin -= from }
    }

    /// Makes `n` bytes from `index` available if the input has them; `index` moves with the window.
    @inline(__always)
    mutating func ensure(_ n: Int, from index: inout Int) throws -> Bool {
        while end - index < n {
            if try !refill(keeping: &index) { return false }
        }
        return true
    }

    /// Whether the input (or the bounded line) has no more bytes at `pos`.
    mutating func isAtEnd() throws -> Bool {
        if pos < end { return false }
        var keep = pos
        return try !refill(keeping: &keep)
    }

    /// Skips a UTF-8 byte order mark and refuses UTF-16 input, at the start of the input.
    mutating func skipByteOrderMark() throws {
        var p = pos
        _ = try ensure(4, from: &p)
        let available = end - p
        guard available > 0 else { return }
        let b0 = base[p], b1: UInt8 = available > 1 ? base[p + 1] : 0x20
        if available >= 3, b0 == 0xEF, b1 == 0xBB, base[p + 2] == 0xBF {
            pos = p + 3
            lineStart = windowOffset + pos
            return
        }
        if (b0 == 0xFF && b1 == 0xFE) || (b0 == 0xFE && b1 == 0xFF) {
            throw error("the input is UTF-16 (it starts with a UTF-16 byte order mark); only UTF-8 is read", at: p)
        }
        if b0 == 0 || (available > 1 && b1 == 0) {
            throw error("a NUL byte at the start of the input: UTF-16 or binary data, not UTF-8 JSON", at: p)
        }
    }

    // MARK: - Records kept for their text

    /// Keeps the window's bytes from `index` on, so the record starting there can be quoted.
    mutating func pinRecord(at index: Int) { pin = index }

    /// Stops keeping a record's text.
    mutating func unpin() { pin = -1 }

    /// The pinned record's text up to `pos`, if it was short enough to keep, and unpins it.
    mutating func takePinnedText() -> String? {
        defer { pin = -1 }
        guard pin >= 0, pin <= pos, pos - pin <= limits.maxRecordTextBytes else { return nil }
        return String(decoding: UnsafeBufferPointer(start: base + pin, count: pos - pin), as: UTF8.self)
    }

    // MARK: - Bounded lines (JSON Lines)

    /// Confines reading to `[pos, lineEnd)`.
    mutating func bound(to lineEnd: Int) {
        isBounded = true
        end = lineEnd
    }

    /// Lifts the bound and moves past the line (and its newline, if it has one).
    mutating func unbound(movingTo next: Int) {
        isBounded = false
        end = dataEnd
        pos = next
    }

    /// Loads a whole line starting at `pos` into the window: the index of its newline, or of the end
    /// of input; nil (with `pos` unchanged) for a line longer than `limits.maxLineBytes`.
    mutating func loadLine() throws -> Int? {
        var start = pos
        var searched = start
        while true {
            if searched < end, let hit = memchr(base + searched, 0x0A, end - searched) {
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }
            searched = end
            if searched - start > limits.maxLineBytes { return nil }
            let before = start
            if try !refill(keeping: &start) { return end }
            searched -= before - start
        }
    }

    /// Skips past the next newline (or to the end of input) without keeping what it skips.
    mutating func skipLine() throws {
        while true {
            if pos < end, let hit = memchr(base + pos, 0x0A, end - pos) {
                pos = base.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
                line += 1
                lineStart = windowOffset + pos
                return
            }
            pos = end
            var keep = pos
            if try !refill(keeping: &keep) { return }
        }
    }

    /// Counts the newline at `pos - 1` that ends a JSON Lines line.
    mutating func noteNewline() {
        line += 1
        lineStart = windowOffset + pos
    }

    /// The window's bytes in `[from, to)` as text (invalid UTF-8 repaired).
    func text(from: Int, to: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + from, count: max(0, to - from)), as: UTF8.self)
    }

    // MARK: - Whitespace

    /// Skips whitespace and returns the next byte without consuming it; nil at the end of input.
    @inline(__always)
    mutating func peek() throws -> UInt8? {
        while true {
            while pos < end {
                let b = base[pos]
                if b > 0x20 { return b }
                if b == 0x20 || b == 0x09 || b == 0x0D {
                    pos &+= 1
                } else if b == 0x0A {
                    pos &+= 1
                    line &+= 1
                    lineStart = windowOffset &+ pos
                } else {
                    return b
                }
            }
            var keep = pos
            if try !refill(keeping: &keep) { return nil }
        }
    }

    // MARK: - Errors

    /// The column (1-based, in bytes) of a window index on the current line.
    func column(at index: Int) -> Int { windowOffset + index - lineStart + 1 }

    /// The line and column of `pos`, as a record builder's mark.
    @inline(__always)
    var mark: Int { RecordBuilder.mark(line: line, column: windowOffset &+ pos &- lineStart &+ 1) }

    func error(_ message: String, at index: Int) -> JSONSyntaxError {
        JSONSyntaxError(line: line, column: column(at: index), message: message)
    }

    /// `expected X, found Y` at `pos`.
    mutating func unexpected(_ expectation: String) -> JSONSyntaxError {
        let what = found(at: pos)
        return error("expected \(expectation), found \(what)", at: pos)
    }

    /// What is at a window index, for messages: `'}'`, `'True'`, `end of input`, `byte 0xFF`.
    /// Reads ahead a little to show a whole word; `index` must not be needed afterwards, as the
    /// window may move (`pos` moves with it).
    mutating func found(at index: Int) -> String {
        var index = index
        // An I/O error here leaves the description short; the read fails with the syntax error.
        _ = try? ensure(26, from: &index)
        guard index < end else { return isBounded ? "end of line" : "end of input" }
        let b = base[index]
        if isWordByte(b) {
            var stop = index
            while stop < end, stop - index < 24, isWordByte(base[stop]) { stop += 1 }
            let word = text(from: index, to: stop)
            return "'" + word + (stop < end && isWordByte(base[stop]) ? "...'" : "'")
        }
        if b >= 0x21 && b <= 0x7E { return "'" + String(UnicodeScalar(b)) + "'" }
        if b < 0x20 || b == 0x7F { return "the control character U+\(JSONScanner.hex4(UInt32(b)))" }
        if b == 0x20 { return "a space" }
        // A non-ASCII character, if it is valid UTF-8.
        let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
        if length > 1, index + length <= end {
            let bytes = UnsafeBufferPointer(start: base + index, count: length)
            if let s = String(validating: bytes, as: UTF8.self), let scalar = s.unicodeScalars.first {
                return "U+\(JSONScanner.hex4(scalar.value)) '\(s)'"
            }
        }
        return "the byte 0x\(String(b, radix: 16, uppercase: true)) (not UTF-8)"
    }

    private func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == 0x2B || b == 0x2D || b == 0x2E || b == 0x5F
    }
}
