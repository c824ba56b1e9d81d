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

    let source: Source
    @exclusivity(unchecked) var bytesRead = 0
    let maxScalarBytes: Int
    let maxLineBytes: Int

    // MARK: Input

    /// The chunk being scanned: whole lines (only the input's last may lack its LF).
    @exclusivity(unchecked) var chunk = ByteStorage(capacity: 1)
    @exclusivity(unchecked) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) var count = 0
    /// The input offset of the chunk's first byte.
    @exclusivity(unchecked) var chunkStart = 0
    /// The bytes after the chunk's last LF, which start the next chunk.
    let tail = ByteStorage(capacity: 256)
    @exclusivity(unchecked) var atEOF = false
    @exclusivity(unchecked) var unsealed: [InputSegment] = []
    @exclusivity(unchecked) var unsealedInputBytes = 0

    // MARK: Position

    /// The chunk index of the next line's start, and that line's number (0-based).
    @exclusivity(unchecked) var pos = 0
    @exclusivity(unchecked) var nextLine: Int32 = 0
    /// The line being processed: its number, start and end (the LF's index, or `count`).
    @exclusivity(unchecked) var line: Int32 = 0
    @exclusivity(unchecked) var ls = 0
    @exclusivity(unchecked) var le = 0
    @exclusivity(unchecked) var lineIsASCII = true
    /// Whether the line ends in CR LF (its end, `le`, is then the CR's index).
    @exclusivity(unchecked) var lineEndsInCRLF = false
    /// The index of the line's first byte that is not a space.
    @exclusivity(unchecked) var firstToken = 0
    /// The last line and its length in characters, when it lacks its LF: libyaml ends the blocks
    /// indented deeper than that length there, before it ends the line.
    @exclusivity(unchecked) var unfinishedLine: (line: Int32, column: Int32)?

    // MARK: State

    private enum Phase { case streamStart, beforeDocument, afterMarker, inDocument, ended }
    @exclusivity(unchecked) private var phase = Phase.streamStart
    struct Block {
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
    @exclusivity(unchecked) var lastContentEnd = 0
    /// The input offset of the last line holding a token: no offset given later is below it.
    @exclusivity(unchecked) private(set) var lowMark = 0

    /// False while checking (`fits`): events are counted, not made.
    @exclusivity(unchecked) var keeps = true
    @exclusivity(unchecked) var eventsSeen = 0

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
    func column(_ p: Int) -> Int32 {
        if lineIsASCII { return Int32(p - ls) }
        var n: Int32 = 0
        for i in ls..<p where base[i] & 0xC0 != 0x80 { n += 1 }
        return n
    }
}
