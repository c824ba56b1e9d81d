// The block-subset scanner's lines: finding the next line that holds a token while checking every
// character on the way, and the chunks of whole lines they are read in.

extension YAMLBlockScanner {
    // MARK: - Lines

    /// Moves to the next line holding a token, skipping blank and comment lines; false at the end.
    func nextContentLine() throws -> Bool {
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
        guard !atEOF || tail.count > 0 else { return false }
        let start = chunkStart + count
        let next = ByteStorage(capacity: max(YAMLBlockScanner.chunkSize, tail.count * 2))
        next.append(tail.pointer, count: tail.count)
        tail.removeAll()
        var searched = 0
        while true {
            if !atEOF {
                let n = try read(into: next)
                if n == 0 { atEOF = true }
            }
            if let lf = lastLF(next, from: searched) {
                let after = lf + 1
                if after < next.count {
                    tail.append(next.pointer + after, count: next.count - after)
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

    private func lastLF(_ bytes: ByteStorage, from: Int) -> Int? {
        var i = bytes.count
        while i > from {
            i -= 1
            if bytes.pointer[i] == 0x0A { return i }
        }
        return nil
    }

    /// Fills the free room of `bytes` (growing it when full) from the source; 0 at the end.
    private func read(into bytes: ByteStorage) throws -> Int {
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
