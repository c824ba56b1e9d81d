// The block-subset scanner's scalars (plain, single- and double-quoted, with their escapes) and the
// events it makes of them and of collections.

extension YAMLBlockScanner {
    // MARK: - Scalars

    /// Where a plain scalar starting at `from` ends (trailing spaces left out), where scanning
    /// stopped (the line's end, the space before ` #`, or the `:` of `: `), and whether it is a key.
    @inline(__always)
    func plainEnd(from: Int) -> (end: Int, stop: Int, isKey: Bool) {
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
    func trimmed(_ from: Int, _ end: Int) -> Int {
        var e = end
        while e > from && base[e - 1] == 0x20 { e -= 1 }
        return e
    }

    /// Whether the byte at `p` may start a plain scalar in block context.
    @inline(__always)
    func canStartPlain(_ p: Int) -> Bool {
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
    func doubleQuoted(at q: Int, _ batch: inout YAMLEventBatch) throws -> Int {
        let textStart = batch.bytes.count
        var p = q + 1, run = p
        while true {
            guard p < le else { throw OutsideSubset() }
            let b = base[p]
            if b != 0x22 && b != 0x5C { p += 1; continue }
            if p > run { batch.bytes.append(base + run, count: p - run) }
            if b == 0x22 { break }
            guard p + 1 < le else { throw OutsideSubset() }
            p = try escape(at: p + 1, batch.bytes)
            run = p
        }
        try finishQuoted(at: q, .doubleQuoted, textStart: textStart, &batch)
        return p + 1
    }

    /// The escape whose letter is at `p`, appended as UTF-8; the index after it.
    private func escape(at p: Int, _ out: ByteStorage) throws -> Int {
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
        case 0x4E: out.appendUTF8(0x85); return p + 1  // N
        case 0x5F: out.appendUTF8(0xA0); return p + 1  // _
        case 0x4C: out.appendUTF8(0x2028); return p + 1  // L
        case 0x50: out.appendUTF8(0x2029); return p + 1  // P
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
            out.appendUTF8(value)
            return p + digits + 1
        default:
            throw OutsideSubset()
        }
        out.append(simple)
        return p + 1
    }

    /// A `'...'` scalar closed on its line; the index after its closing quote.
    func singleQuoted(at q: Int, _ batch: inout YAMLEventBatch) throws -> Int {
        let textStart = batch.bytes.count
        var p = q + 1, run = p
        while true {
            guard p < le else { throw OutsideSubset() }
            if base[p] != 0x27 { p += 1; continue }
            batch.bytes.append(base + run, count: p - run)
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
            batch.bytes.removeAll()
        }
    }

    @inline(__always)
    func checkScalarLength(_ n: Int) throws {
        if n > maxScalarBytes { throw OutsideSubset() }
    }

    // MARK: - Events

    @inline(__always)
    func emit(_ kind: YAMLEvent.Kind, _ line: Int32, _ column: Int32, _ batch: inout YAMLEventBatch, textStart: Int = 0) {
        eventsSeen += 1
        guard keeps else { return }
        var e = YAMLRawEvent(kind: kind)
        e.line = line
        e.column = column
        e.textStart = textStart
        batch.events.append(e)
    }

    func emitEnd(_ block: Block, _ line: Int32, _ column: Int32, _ batch: inout YAMLEventBatch) {
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
    func emitScalar(_ line: Int32, _ column: Int32, _ style: YAMLEvent.Style, start: Int, count: Int, _ batch: inout YAMLEventBatch) {
        eventsSeen += 1
        guard keeps else { return }
        let textStart = batch.bytes.count
        if count > 0 { batch.bytes.append(base + start, count: count) }
        batch.events.append(rawScalar(line, column, style, textStart, count))
    }
}
