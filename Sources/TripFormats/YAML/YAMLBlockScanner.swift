#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

// tripconv's own scanner for the block subset of YAML that trip exports are written in, giving the
// very events libyaml gives (kinds, styles, texts, lines and columns, mapping offsets) at a fraction
// of libyaml's cost: libyaml decodes every character into a buffer of its own and allocates for
// every token, and it was the whole critical path of reading YAML.
//
// The subset: UTF-8 without a byte order mark; lines ending in LF or CR LF; indentation by spaces; block
// mappings with plain keys of one line; block sequences (nested, or at their key's indentation);
// `key: value` on a sequence entry's line; plain, single-quoted and double-quoted scalars of one
// line; `[]` and `{}`; comments; one document, with or without `---` first. Anything else (tabs,
// a CR alone, anchors, aliases, tags, block and multi-line scalars, flow collections with content,
// directives, several documents, `? ` keys, characters libyaml refuses, a line over the limits)
// is outside it.
//
// Whether an input fits is only known at its end, and no event may reach the reader before it is
// known which parser makes them. So `YAMLEventParser` first runs this scanner over the whole input
// without keeping its events (`fits`), then reads the input again: with this scanner when it fits,
// with libyaml when it does not. That needs an input that can be read twice: a file (standard input
// from a pipe goes to libyaml). The check costs one more scan, a small part of a read.

/// The block-subset scanner: see the comment above.
final class YAMLBlockScanner {
    /// The input is outside the subset.
    struct OutsideSubset: Error {}

    enum Source {
        case input(ByteInput)
        case bytes([UInt8])
    }

    /// Bytes read at a time; a chunk holds whole lines only (a longer line grows it).
    static let chunkSize = 1 << 18
    /// More nesting than this is left to libyaml (and refused by the reader, deeper than its limit).
    static let maxBlocks = 1024
    /// libyaml wants an implicit key's `:` within 1024 characters of the key's start.
    static let maxKeyBytes = 1000

    private let source: Source
    @exclusivity(unchecked) private var bytesRead = 0
    private let maxScalarBytes: Int
    private let maxLineBytes: Int

    // MARK: Input

    /// The chunk being scanned: whole lines (only the input's last may lack its LF).
    @exclusivity(unchecked) private var chunk = InputBytes(capacity: 1)
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var count = 0
    /// The input offset of the chunk's first byte.
    @exclusivity(unchecked) private var chunkStart = 0
    /// The bytes after the chunk's last LF, which start the next chunk.
    @exclusivity(unchecked) private var tail: [UInt8] = []
    @exclusivity(unchecked) private var atEOF = false
    @exclusivity(unchecked) private var unsealed: [InputSegment] = []
    @exclusivity(unchecked) private(set) var unsealedInputBytes = 0

    // MARK: Position

    /// The chunk index of the next line's start, and that line's number (0-based).
    @exclusivity(unchecked) private var pos = 0
    @exclusivity(unchecked) private var nextLine: Int32 = 0
    /// The line being processed: its number, start and end (the LF's index, or `count`).
    @exclusivity(unchecked) private var line: Int32 = 0
    @exclusivity(unchecked) private var ls = 0
    @exclusivity(unchecked) private var le = 0
    @exclusivity(unchecked) private var lineIsASCII = true
    /// Whether the line ends in CR LF (its end, `le`, is then the CR's index).
    @exclusivity(unchecked) private var lineEndsInCRLF = false
    /// The index of the line's first byte that is not a space.
    @exclusivity(unchecked) private var firstToken = 0
    /// The last line and its length in characters, when it lacks its LF: libyaml ends the blocks
    /// indented deeper than that length there, before it ends the line.
    @exclusivity(unchecked) private var unfinishedLine: (line: Int32, column: Int32)?

    // MARK: State

    private enum Phase { case streamStart, beforeDocument, afterMarker, inDocument, ended }
    @exclusivity(unchecked) private var phase = Phase.streamStart
    private struct Block {
        var isMapping: Bool
        var indent: Int
        var indentless: Bool
    }
    @exclusivity(unchecked) private var stack: [Block] = []
    /// A key whose value was not on its line: where libyaml puts the empty value, should it be one.
    @exclusivity(unchecked) private var pendingValue = false
    @exclusivity(unchecked) private var pendingLine: Int32 = 0
    @exclusivity(unchecked) private var pendingColumn: Int32 = 0
    @exclusivity(unchecked) private var pendingIndent = 0
    /// The input offset where the last line holding a token ends, trailing spaces left out: where
    /// a block mapping's text ends.
    @exclusivity(unchecked) private var lastContentEnd = 0
    /// The input offset of the last line holding a token: no offset given later is below it.
    @exclusivity(unchecked) private(set) var lowMark = 0

    /// False while checking (`fits`): events are counted, not made.
    @exclusivity(unchecked) private var keeps = true
    @exclusivity(unchecked) private var eventsSeen = 0

    init(source: Source, limits: YAMLLimits) {
        self.source = source
        maxScalarBytes = limits.maxScalarBytes
        maxLineBytes = limits.maxBytesWithoutEvent
        base = chunk.pointer
        stack.reserveCapacity(16)
    }

    /// Whether the whole input is inside the subset; reads it to its end (or to the first thing
    /// outside). Read errors count as outside: libyaml then meets them and reports them.
    func fits() -> Bool {
        keeps = false
        defer { keeps = true }
        var batch = YAMLEventBatch()
        do {
            while phase != .ended { try step(&batch) }
            return true
        } catch {
            return false
        }
    }

    /// Parses the events of the next line holding a token (at least one event) into a batch; the
    /// kind of the last. After the stream's end, the stream's end again.
    func parse(into batch: inout YAMLEventBatch) throws -> YAMLEvent.Kind {
        let before = eventsSeen
        repeat { try step(&batch) } while eventsSeen == before
        return batch.events[batch.events.count - 1].kind
    }

    /// Hands over the input read since the last seal.
    func seal(into input: inout YAMLBatchInput) {
        guard !unsealed.isEmpty else { return }
        input.segments.append(contentsOf: unsealed)
        unsealed.removeAll(keepingCapacity: true)
        unsealedInputBytes = 0
    }

    // MARK: - Steps

    private func step(_ batch: inout YAMLEventBatch) throws {
        switch phase {
        case .streamStart:
            emit(.streamStart, 0, 0, &batch)
            phase = .beforeDocument
        case .ended:
            emit(.streamEnd, endLine, 0, &batch)
        case .beforeDocument, .afterMarker, .inDocument:
            guard try nextContentLine() else { return try finish(&batch) }
            try processLine(&batch)
            lastContentEnd = chunkStart + trimmed(ls, le)
            lowMark = chunkStart + ls
        }
    }

    /// The line of the stream's end: libyaml ends an unfinished last line first.
    private var endLine: Int32 { nextLine }

    private func finish(_ batch: inout YAMLEventBatch) throws {
        switch phase {
        case .inDocument:
            if pendingValue {
                pendingValue = false
                emitScalar(pendingLine, pendingColumn, .plain, start: 0, count: 0, &batch)
            }
            if let last = unfinishedLine {
                while let top = stack.last, top.indent > Int(last.column) {
                    emitEnd(top, last.line, last.column, &batch)
                    stack.removeLast()
                }
            }
            while let top = stack.popLast() { emitEnd(top, endLine, 0, &batch) }
            emit(.documentEnd, endLine, 0, &batch)
        case .afterMarker:
            // `---` and nothing after it: left to libyaml.
            throw OutsideSubset()
        default:
            break
        }
        emit(.streamEnd, endLine, 0, &batch)
        phase = .ended
    }

    private func processLine(_ batch: inout YAMLEventBatch) throws {
        let first = firstToken
        let n = first - ls
        if n == 0 && isDocumentMarker(first) {
            // `---` alone, once, before the document: an explicit start.
            guard phase == .beforeDocument, base[first] == 0x2D, restIsBlank(from: first + 3) else { throw OutsideSubset() }
            emit(.documentStart, line, 0, &batch)
            phase = .afterMarker
            return
        }
        if phase != .inDocument {
            if phase == .beforeDocument { emit(.documentStart, line, Int32(n), &batch) }
            phase = .inDocument
            try openBlock(at: first, n, indentless: false, &batch)
            return
        }
        if pendingValue {
            pendingValue = false
            if n > pendingIndent {
                return try openBlock(at: first, n, indentless: false, &batch)
            }
            if n == pendingIndent && isEntry(first) {
                return try openBlock(at: first, n, indentless: true, &batch)
            }
            emitScalar(pendingLine, pendingColumn, .plain, start: 0, count: 0, &batch)
        }
        while let top = stack.last, n < top.indent || (top.indentless && n == top.indent && !isEntry(first)) {
            emitEnd(top, line, Int32(n), &batch)
            stack.removeLast()
        }
        guard let top = stack.last, top.indent == n else { throw OutsideSubset() }
        if top.isMapping {
            try mappingEntry(at: first, &batch)
        } else {
            try sequenceEntry(at: first, &batch)
        }
    }

    /// Starts a block collection at the line's first token (at column `n`) and reads its first entry.
    private func openBlock(at first: Int, _ n: Int, indentless: Bool, _ batch: inout YAMLEventBatch) throws {
        guard stack.count < YAMLBlockScanner.maxBlocks else { throw OutsideSubset() }
        if isEntry(first) {
            emit(.sequenceStart, line, Int32(n), &batch)
            stack.append(Block(isMapping: false, indent: n, indentless: indentless))
            try sequenceEntry(at: first, &batch)
        } else {
            guard !indentless else { throw OutsideSubset() }
            try openMapping(at: first, n, &batch)
        }
    }

    private func openMapping(at key: Int, _ n: Int, _ batch: inout YAMLEventBatch) throws {
        guard canStartPlain(key) else { throw OutsideSubset() }
        emit(.mappingStart, line, Int32(n), &batch, textStart: chunkStart + key)
        stack.append(Block(isMapping: true, indent: n, indentless: false))
        try mappingEntry(at: key, &batch)
    }

    /// `- ` and what follows it on the line.
    private func sequenceEntry(at dash: Int, _ batch: inout YAMLEventBatch) throws {
        guard isEntry(dash) else { throw OutsideSubset() }
        var v = dash + 1
        while v < le && base[v] == 0x20 { v += 1 }
        guard v < le, base[v] != 0x23, !isEntry(v) else { throw OutsideSubset() }
        if canStartPlain(v) && plainEnd(from: v).isKey {
            // Everything before `v` is ASCII: its column is its byte count.
            guard stack.count < YAMLBlockScanner.maxBlocks else { throw OutsideSubset() }
            try openMapping(at: v, v - ls, &batch)
        } else {
            try value(at: v, &batch)
        }
    }

    /// `key:` and its value, if on the line.
    private func mappingEntry(at key: Int, _ batch: inout YAMLEventBatch) throws {
        guard canStartPlain(key) else { throw OutsideSubset() }
        let scan = plainEnd(from: key)
        guard scan.isKey, scan.stop - key <= YAMLBlockScanner.maxKeyBytes else { throw OutsideSubset() }
        emitScalar(line, column(key), .plain, start: key, count: scan.end - key, &batch)
        var v = scan.stop + 1
        while v < le && base[v] == 0x20 { v += 1 }
        if v == le || base[v] == 0x23 {
            pendingValue = true
            pendingLine = line
            pendingColumn = column(scan.stop + 1)
            pendingIndent = key - ls
            return
        }
        try value(at: v, &batch)
    }

    /// A value on its key's (or its entry's) line: a scalar, `[]` or `{}`, then nothing but a comment.
    private func value(at v: Int, _ batch: inout YAMLEventBatch) throws {
        let b = base[v]
        var end: Int
        switch b {
        case 0x22:
            end = try doubleQuoted(at: v, &batch)
        case 0x27:
            end = try singleQuoted(at: v, &batch)
        case 0x5B, 0x7B:
            guard v + 1 < le, base[v + 1] == b + 2 else { throw OutsideSubset() }
            let column = self.column(v)
            if b == 0x5B {
                emit(.sequenceStart, line, column, &batch)
                emit(.sequenceEnd, line, column + 1, &batch)
            } else {
                emit(.mappingStart, line, column, &batch, textStart: chunkStart + v)
                emit(.mappingEnd, line, column + 1, &batch, textStart: chunkStart + v + 2)
            }
            end = v + 2
        default:
            guard canStartPlain(v) else { throw OutsideSubset() }
            let scan = plainEnd(from: v)
            guard !scan.isKey else { throw OutsideSubset() }
            try checkScalarLength(scan.end - v)
            emitScalar(line, column(v), .plain, start: v, count: scan.end - v, &batch)
            end = scan.stop
        }
        guard restIsBlank(from: end) else { throw OutsideSubset() }
    }

    // MARK: - Scalars

    /// Where a plain scalar starting at `from` ends (trailing spaces left out), where scanning
    /// stopped (the line's end, the space before ` #`, or the `:` of `: `), and whether it is a key.
    @inline(__always)
    private func plainEnd(from: Int) -> (end: Int, stop: Int, isKey: Bool) {
        var p = from
        while true {
            // The next `:` or `#`, eight bytes at a time (the chunk's bytes after the line are
            // read, not used): the lowest byte that is either. Borrows only run upwards, so the
            // lowest flagged byte is a true one.
            while p + 8 <= count {
                let w = UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self)
                let colon = w ^ 0x3A3A_3A3A_3A3A_3A3A, hash = w ^ 0x2323_2323_2323_2323
                let found = ((colon &- 0x0101_0101_0101_0101) & ~colon | (hash &- 0x0101_0101_0101_0101) & ~hash)
                    & 0x8080_8080_8080_8080
                if found != 0 { p += found.trailingZeroBitCount >> 3; break }
                p += 8
                if p >= le { break }
            }
            if p + 8 > count {
                while p < le && base[p] != 0x3A && base[p] != 0x23 { p += 1 }
            }
            if p >= le { return (trimmed(from, le), le, false) }
            if base[p] == 0x3A {
                if p + 1 == le || base[p + 1] == 0x20 { return (trimmed(from, p), p, true) }
            } else if p > from && base[p - 1] == 0x20 {
                return (trimmed(from, p), p - 1, false)
            }
            p += 1
        }
    }

    /// `end`, less the spaces before it (not before `from`).
    @inline(__always)
    private func trimmed(_ from: Int, _ end: Int) -> Int {
        var e = end
        while e > from && base[e - 1] == 0x20 { e -= 1 }
        return e
    }

    /// Whether the byte at `p` may start a plain scalar in block context.
    @inline(__always)
    private func canStartPlain(_ p: Int) -> Bool {
        switch base[p] {
        case 0x2D, 0x3F, 0x3A:  // `-`, `?`, `:` only with a character after
            return p + 1 < le && base[p + 1] != 0x20
        case 0x2C, 0x5B, 0x5D, 0x7B, 0x7D, 0x23, 0x26, 0x2A, 0x21, 0x7C, 0x3E, 0x27, 0x22, 0x25, 0x40, 0x60:
            return false
        default:
            return true
        }
    }

    /// A `"..."` scalar closed on its line; the index after its closing quote.
    private func doubleQuoted(at q: Int, _ batch: inout YAMLEventBatch) throws -> Int {
        let textStart = batch.bytes.count
        var p = q + 1, run = p
        while true {
            guard p < le else { throw OutsideSubset() }
            let b = base[p]
            if b != 0x22 && b != 0x5C { p += 1; continue }
            if p > run { batch.bytes.append(contentsOf: UnsafeBufferPointer(start: base + run, count: p - run)) }
            if b == 0x22 { break }
            guard p + 1 < le else { throw OutsideSubset() }
            p = try escape(at: p + 1, &batch.bytes)
            run = p
        }
        try finishQuoted(at: q, .doubleQuoted, textStart: textStart, &batch)
        return p + 1
    }

    /// The escape whose letter is at `p`, appended as UTF-8; the index after it.
    private func escape(at p: Int, _ out: inout [UInt8]) throws -> Int {
        let simple: UInt8
        switch base[p] {
        case 0x30: simple = 0x00  // 0
        case 0x61: simple = 0x07  // a
        case 0x62: simple = 0x08  // b
        case 0x74: simple = 0x09  // t
        case 0x6E: simple = 0x0A  // n
        case 0x76: simple = 0x0B  // v
        case 0x66: simple = 0x0C  // f
        case 0x72: simple = 0x0D  // r
        case 0x65: simple = 0x1B  // e
        case 0x20, 0x22, 0x2F, 0x5C: simple = base[p]
        case 0x4E: appendUTF8(0x85, &out); return p + 1  // N
        case 0x5F: appendUTF8(0xA0, &out); return p + 1  // _
        case 0x4C: appendUTF8(0x2028, &out); return p + 1  // L
        case 0x50: appendUTF8(0x2029, &out); return p + 1  // P
        case 0x78, 0x75, 0x55:  // x, u, U
            let digits = base[p] == 0x78 ? 2 : base[p] == 0x75 ? 4 : 8
            guard p + digits < le else { throw OutsideSubset() }
            var value: UInt32 = 0
            for i in 1...digits {
                let d = base[p + i]
                let v: UInt8
                switch d {
                case 0x30...0x39: v = d - 0x30
                case 0x41...0x46: v = d - 0x41 + 10
                case 0x61...0x66: v = d - 0x61 + 10
                default: throw OutsideSubset()
                }
                value = value << 4 | UInt32(v)
            }
            guard value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { throw OutsideSubset() }
            appendUTF8(value, &out)
            return p + digits + 1
        default:
            throw OutsideSubset()
        }
        out.append(simple)
        return p + 1
    }

    @inline(__always)
    private func appendUTF8(_ v: UInt32, _ out: inout [UInt8]) {
        switch v {
        case 0..<0x80:
            out.append(UInt8(v))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | v >> 6)); out.append(UInt8(0x80 | v & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | v >> 12)); out.append(UInt8(0x80 | v >> 6 & 0x3F)); out.append(UInt8(0x80 | v & 0x3F))
        default:
            out.append(UInt8(0xF0 | v >> 18)); out.append(UInt8(0x80 | v >> 12 & 0x3F))
            out.append(UInt8(0x80 | v >> 6 & 0x3F)); out.append(UInt8(0x80 | v & 0x3F))
        }
    }

    /// A `'...'` scalar closed on its line; the index after its closing quote.
    private func singleQuoted(at q: Int, _ batch: inout YAMLEventBatch) throws -> Int {
        let textStart = batch.bytes.count
        var p = q + 1, run = p
        while true {
            guard p < le else { throw OutsideSubset() }
            if base[p] != 0x27 { p += 1; continue }
            batch.bytes.append(contentsOf: UnsafeBufferPointer(start: base + run, count: p - run))
            if p + 1 < le && base[p + 1] == 0x27 {
                batch.bytes.append(0x27)
                p += 2
                run = p
                continue
            }
            break
        }
        try finishQuoted(at: q, .singleQuoted, textStart: textStart, &batch)
        return p + 1
    }

    /// The event of a quoted scalar whose text was appended from `textStart` on (taken back while
    /// checking).
    private func finishQuoted(at q: Int, _ style: YAMLEvent.Style, textStart: Int, _ batch: inout YAMLEventBatch) throws {
        let count = batch.bytes.count - textStart
        try checkScalarLength(count)
        eventsSeen += 1
        if keeps {
            batch.events.append(rawScalar(line, column(q), style, textStart, count))
        } else {
            batch.bytes.removeAll(keepingCapacity: true)
        }
    }

    @inline(__always)
    private func checkScalarLength(_ n: Int) throws {
        if n > maxScalarBytes { throw OutsideSubset() }
    }

    // MARK: - Line shapes

    /// `-` followed by a space or the line's end.
    @inline(__always)
    private func isEntry(_ p: Int) -> Bool {
        base[p] == 0x2D && (p + 1 == le || base[p + 1] == 0x20)
    }

    /// `---` or `...` at a line's start, followed by a space or the line's end.
    private func isDocumentMarker(_ p: Int) -> Bool {
        guard p + 3 <= le, base[p] == 0x2D || base[p] == 0x2E,
              base[p + 1] == base[p], base[p + 2] == base[p] else { return false }
        return p + 3 == le || base[p + 3] == 0x20
    }

    /// Whether only spaces, then nothing or a comment, follow `p` (a comment needs a space before).
    private func restIsBlank(from p: Int) -> Bool {
        var q = p
        while q < le && base[q] == 0x20 { q += 1 }
        return q == le || (base[q] == 0x23 && q > p)
    }

    /// The column (in characters, as libyaml counts) of index `p` of the current line.
    @inline(__always)
    private func column(_ p: Int) -> Int32 {
        if lineIsASCII { return Int32(p - ls) }
        var n: Int32 = 0
        for i in ls..<p where base[i] & 0xC0 != 0x80 { n += 1 }
        return n
    }

    // MARK: - Events

    @inline(__always)
    private func emit(_ kind: YAMLEvent.Kind, _ line: Int32, _ column: Int32, _ batch: inout YAMLEventBatch, textStart: Int = 0) {
        eventsSeen += 1
        guard keeps else { return }
        var e = YAMLRawEvent(kind: kind)
        e.line = line
        e.column = column
        e.textStart = textStart
        batch.events.append(e)
    }

    private func emitEnd(_ block: Block, _ line: Int32, _ column: Int32, _ batch: inout YAMLEventBatch) {
        if block.isMapping {
            emit(.mappingEnd, line, column, &batch, textStart: lastContentEnd)
        } else {
            emit(.sequenceEnd, line, column, &batch)
        }
    }

    @inline(__always)
    private func rawScalar(_ line: Int32, _ column: Int32, _ style: YAMLEvent.Style, _ textStart: Int, _ count: Int) -> YAMLRawEvent {
        var e = YAMLRawEvent(kind: .scalar)
        e.style = style
        e.line = line
        e.column = column
        e.textStart = textStart
        e.textCount = Int32(count)
        return e
    }

    /// A scalar whose text is `count` bytes of the chunk at `start`.
    @inline(__always)
    private func emitScalar(_ line: Int32, _ column: Int32, _ style: YAMLEvent.Style, start: Int, count: Int, _ batch: inout YAMLEventBatch) {
        eventsSeen += 1
        guard keeps else { return }
        let textStart = batch.bytes.count
        if count > 0 { batch.bytes.append(contentsOf: UnsafeBufferPointer(start: base + start, count: count)) }
        batch.events.append(rawScalar(line, column, style, textStart, count))
    }

    // MARK: - Lines

    /// Moves to the next line holding a token, skipping blank and comment lines; false at the end.
    private func nextContentLine() throws -> Bool {
        while true {
            if pos >= count {
                guard try loadChunk() else { return false }
            }
            let start = pos
            let end = try lineEnd(from: start)
            line = nextLine
            nextLine += 1
            ls = start
            le = end
            pos = end + (lineEndsInCRLF ? 2 : 1)
            if end == count { unfinishedLine = (line, column(end)) }
            var p = start
            while p + 8 <= end {
                let spaces = (UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self) ^ 0x2020_2020_2020_2020).trailingZeroBitCount >> 3
                p += spaces
                if spaces < 8 { break }
            }
            while p < end && base[p] == 0x20 { p += 1 }
            firstToken = p
            if p < end && base[p] != 0x23 { return true }
        }
    }

    /// The index of the LF ending the line at `from` (or the chunk's end), checking every character
    /// on the way: what libyaml refuses, or reads as a line break or a tab, is outside the subset.
    @inline(__always)
    private func lineEnd(from: Int) throws -> Int {
        var p = from
        lineIsASCII = true
        lineEndsInCRLF = false
        while true {
            // The next byte below 0x20 or above 0x7E, eight at a time: the lowest flagged byte
            // is a true one (borrows and carries only run upwards, from a flagged byte).
            while p + 8 <= count {
                let w = UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self)
                let special = (((w &- 0x2020_2020_2020_2020) & ~w) | w | (w &+ 0x0101_0101_0101_0101)) & 0x8080_8080_8080_8080
                if special != 0 { p += special.trailingZeroBitCount >> 3; break }
                p += 8
            }
            if p + 8 > count {
                while p < count && base[p] >= 0x20 && base[p] < 0x7F { p += 1 }
                if p == count { return count }
            }
            let b = base[p]
            if b == 0x0A { return p }
            if b == 0x0D {
                // CR LF is one line break to libyaml; a CR alone is one too, and is left to it.
                guard p + 1 < count, base[p + 1] == 0x0A else { throw OutsideSubset() }
                lineEndsInCRLF = true
                return p
            }
            guard b >= 0x80 else { throw OutsideSubset() }
            p = try checkUTF8(at: p)
            lineIsASCII = false
        }
    }

    /// Checks the character of more than one byte at `p`: well-formed UTF-8, and one libyaml takes
    /// as text (not NEL, a line or paragraph separator, a C1 control, a BOM or a noncharacter).
    private func checkUTF8(at p: Int) throws -> Int {
        let b0 = UInt32(base[p])
        func cont(_ i: Int) throws -> UInt32 {
            guard p + i < count, base[p + i] & 0xC0 == 0x80 else { throw OutsideSubset() }
            return UInt32(base[p + i] & 0x3F)
        }
        let value: UInt32, length: Int
        switch b0 {
        case 0xC2...0xDF: value = (b0 & 0x1F) << 6 | (try cont(1)); length = 2
        case 0xE0...0xEF: value = (b0 & 0x0F) << 12 | (try cont(1)) << 6 | (try cont(2)); length = 3
        case 0xF0...0xF4: value = (b0 & 0x07) << 18 | (try cont(1)) << 12 | (try cont(2)) << 6 | (try cont(3)); length = 4
        default: throw OutsideSubset()
        }
        let fits: Bool
        switch length {
        case 2: fits = value >= 0xA0
        case 3: fits = value >= 0x800 && !(0xD800...0xDFFF).contains(value) && value != 0x2028 && value != 0x2029
            && value != 0xFEFF && value <= 0xFFFD
        default: fits = value >= 0x10000 && value <= 0x10FFFF
        }
        guard fits else { throw OutsideSubset() }
        return p + length
    }

    /// Reads the next chunk: the previous one's tail, then bytes up to and including the last LF
    /// (or to the input's end). False when nothing is left.
    private func loadChunk() throws -> Bool {
        guard !atEOF || !tail.isEmpty else { return false }
        let start = chunkStart + count
        let next = InputBytes(capacity: max(YAMLBlockScanner.chunkSize, tail.count * 2))
        tail.withUnsafeBufferPointer { next.append($0) }
        tail.removeAll(keepingCapacity: true)
        var searched = 0
        while true {
            if !atEOF {
                let n = try read(into: next)
                if n == 0 { atEOF = true }
            }
            if let lf = lastLF(next, from: searched) {
                let after = lf + 1
                if after < next.count {
                    tail.append(contentsOf: UnsafeBufferPointer(start: next.pointer + after, count: next.count - after))
                    next.truncate(to: after)
                }
                break
            }
            if atEOF { break }
            searched = next.count
            guard next.count <= maxLineBytes else { throw OutsideSubset() }
        }
        guard next.count > 0 else { return false }
        chunk = next
        base = next.pointer
        count = next.count
        chunkStart = start
        pos = 0
        if keeps {
            unsealed.append(InputSegment(start: start, bytes: next))
            unsealedInputBytes += count
        }
        return true
    }

    private func lastLF(_ bytes: InputBytes, from: Int) -> Int? {
        var i = bytes.count
        while i > from {
            i -= 1
            if bytes.pointer[i] == 0x0A { return i }
        }
        return nil
    }

    /// Fills the free room of `bytes` (growing it when full) from the source; 0 at the end.
    private func read(into bytes: InputBytes) throws -> Int {
        if bytes.freeCapacity == 0 { bytes.reserve(bytes.count) }
        switch source {
        case .input(let input):
            return try bytes.fill { try input.read(into: $0) }
        case .bytes(let array):
            let n = min(bytes.freeCapacity, array.count - bytesRead)
            guard n > 0 else { return 0 }
            array.withUnsafeBufferPointer { src in
                bytes.append(UnsafeBufferPointer(start: src.baseAddress! + bytesRead, count: n))
            }
            bytesRead += n
            return n
        }
    }
}
