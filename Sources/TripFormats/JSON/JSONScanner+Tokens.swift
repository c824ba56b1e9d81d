// The scanner's tokens: strings (decoded ones in `scratch`), numbers, literals, and
// the iterative skipper that checks a whole value without building it.

extension JSONScanner {
    /// `00E9`, `1F600`: a code point in hex, at least four digits.
    static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    // MARK: - Strings

    /// A word of eight bytes with a bit set in each byte that ends a string's plain run: `"`, `\`,
    /// a control character or a non-ASCII byte. The lowest set bit is always a real hit.
    @inline(__always)
    static func specialMask(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let q = w ^ (ones &* 0x22)
        let s = w ^ (ones &* 0x5C)
        let quote = (q &- ones) & ~q
        let backslash = (s &- ones) & ~s
        let control = w &- (ones &* 0x20)
        return ((quote | backslash | control) & ~w & highs) | (w & highs)
    }

    @inline(__always)
    private static func isPlain(_ b: UInt8) -> Bool {
        b >= 0x20 && b != 0x22 && b != 0x5C && b < 0x80
    }

    /// `readString()`, inlined for the common string: plain ASCII with nothing escaped, its closing
    /// quote among the bytes read. Any other string is left to `readString()`, from its start.
    @inline(__always)
    mutating func readPlainString() throws -> UnsafeRawBufferPointer {
        let start = pos &+ 1
        var p = start
        while p &+ 8 <= end {
            let m = JSONScanner.specialMask(UInt64(littleEndian: UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self)))
            if m != 0 {
                p &+= m.trailingZeroBitCount &>> 3
                if base[p] == 0x22, p &- start <= limits.maxStringBytes {
                    pos = p &+ 1
                    return UnsafeRawBufferPointer(start: base + start, count: p &- start)
                }
                break
            }
            p &+= 8
        }
        return try readString()
    }

    /// Reads a string whose opening quote is at `pos` and returns its decoded UTF-8 bytes, valid
    /// until the scanner moves on. With `collect` false the string is only checked (the bytes
    /// returned are then meaningless).
    mutating func readString(collect: Bool = true) throws -> UnsafeRawBufferPointer {
        let quoteOffset = windowOffset + pos
        pos &+= 1
        var segmentStart = pos
        var usesScratch = false
        scratch.removeAll()
        var p = pos
        while true {
            // The plain run: eight bytes at a time, then one at a time.
            scan: while true {
                if p &+ 8 <= end {
                    let m = JSONScanner.specialMask(UInt64(littleEndian: UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self)))
                    if m != 0 { p &+= m.trailingZeroBitCount &>> 3; break scan }
                    p &+= 8
                } else {
                    while p < end && JSONScanner.isPlain(base[p]) { p &+= 1 }
                    break scan
                }
            }
            if p == end {
                // The string goes on past the window: keep it, read more.
                pos = p
                try checkStringLength(p - segmentStart, quoteOffset: quoteOffset)
                let before = segmentStart
                guard try refill(keeping: &segmentStart) else {
                    throw JSONSyntaxError(line: line, column: quoteOffset - lineStart + 1, message: "unterminated string")
                }
                p -= before - segmentStart
                continue
            }
            let b = base[p]
            if b == 0x22 {
                pos = p &+ 1
                if !usesScratch {
                    try checkStringLength(p - segmentStart, quoteOffset: quoteOffset)
                    return UnsafeRawBufferPointer(start: base + segmentStart, count: p - segmentStart)
                }
                if collect { scratch.append(base + segmentStart, count: p - segmentStart) }
                try checkStringLength(0, quoteOffset: quoteOffset)
                return scratch.bytes
            }
            if b == 0x5C {
                if collect { scratch.append(base + segmentStart, count: p - segmentStart) }
                usesScratch = true
                pos = p
                try readEscape(collect: collect, quoteOffset: quoteOffset)
                p = pos
                segmentStart = p
                continue
            }
            if b < 0x20 {
                throw error("the control character U+\(JSONScanner.hex4(UInt32(b))) must be escaped in a string", at: p)
            }
            // Non-ASCII.
            if isLatin1 {
                if collect {
                    scratch.append(base + segmentStart, count: p - segmentStart)
                    scratch.appendUTF8(UInt32(b))
                }
                usesScratch = true
                p &+= 1
                segmentStart = p
                continue
            }
            pos = p
            let length = try utf8SequenceLength(at: &p, keeping: &segmentStart, quoteOffset: quoteOffset)
            p &+= length
        }
    }

    @inline(__always)
    private func checkStringLength(_ pending: Int, quoteOffset: Int) throws {
        if pending + scratch.count > limits.maxStringBytes {
            throw JSONSyntaxError(line: line, column: quoteOffset - lineStart + 1,
                                  message: "a string longer than \(JSONLimits.describe(bytes: limits.maxStringBytes))")
        }
    }

    /// Checks the UTF-8 sequence at `p` and returns its length; `p` and `segmentStart` move with the window.
    private mutating func utf8SequenceLength(at p: inout Int, keeping segmentStart: inout Int, quoteOffset: Int) throws -> Int {
        let b = base[p]
        var need = 0
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch b {
        case 0xC2...0xDF: need = 2
        case 0xE0: need = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: need = 3
        case 0xED: need = 3; high = 0x9F
        case 0xF0: need = 4; low = 0x90
        case 0xF1...0xF3: need = 4
        case 0xF4: need = 4; high = 0x8F
        default:
            throw error("invalid UTF-8 in a string (the byte 0x\(String(b, radix: 16, uppercase: true)))", at: p)
        }
        while end - p < need {
            pos = p
            let before = segmentStart
            let more = try refill(keeping: &segmentStart)
            p -= before - segmentStart
            if !more { break }
        }
        var valid = end - p >= need
        if valid {
            let b1 = base[p + 1]
            valid = b1 >= low && b1 <= high
            var k = 2
            while valid && k < need {
                valid = base[p + k] & 0xC0 == 0x80
                k += 1
            }
        }
        guard valid else {
            if end - p < need && (isAtEndOfInput || isBounded) && !containsQuote(from: p) {
                throw JSONSyntaxError(line: line, column: quoteOffset - lineStart + 1, message: "unterminated string")
            }
            throw error("invalid UTF-8 in a string (a malformed sequence starting with the byte 0x\(String(b, radix: 16, uppercase: true)))", at: p)
        }
        return need
    }

    private func containsQuote(from p: Int) -> Bool {
        var i = p
        while i < end { if base[i] == 0x22 { return true }; i += 1 }
        return false
    }

    /// Decodes the escape at `pos` (a backslash) and moves past it.
    private mutating func readEscape(collect: Bool, quoteOffset: Int) throws {
        var p = pos
        guard try ensure(2, from: &p) else {
            pos = p
            throw JSONSyntaxError(line: line, column: quoteOffset - lineStart + 1, message: "unterminated string")
        }
        let c = base[p + 1]
        var byte: UInt8 = 0
        switch c {
        case 0x22, 0x5C, 0x2F: byte = c
        case 0x62: byte = 0x08
        case 0x66: byte = 0x0C
        case 0x6E: byte = 0x0A
        case 0x72: byte = 0x0D
        case 0x74: byte = 0x09
        case 0x75:
            pos = p
            try readUnicodeEscape(collect: collect)
            return
        default:
            pos = p
            if c >= 0x21 && c <= 0x7E {
                throw error("invalid escape '\\\(String(UnicodeScalar(c)))' in a string", at: p)
            }
            let column = self.column(at: p)
            let what = found(at: p + 1)
            throw JSONSyntaxError(line: line, column: column, message: "invalid escape: a backslash before \(what) in a string")
        }
        if collect { scratch.append(byte) }
        pos = p + 2
    }

    /// Decodes `\uXXXX` (and a following low surrogate) at `pos`; a lone surrogate becomes U+FFFD.
    private mutating func readUnicodeEscape(collect: Bool) throws {
        var p = pos
        _ = try ensure(6, from: &p)
        pos = p
        guard end - p >= 6, let unit = hexValue(at: p + 2) else {
            var stop = p + 2
            while stop < min(end, p + 6), hexDigit(base[stop]) != nil { stop += 1 }
            let column = self.column(at: p)
            let what = found(at: stop)
            throw JSONSyntaxError(line: line, column: column, message: "invalid \\u escape: expected four hex digits, found \(what)")
        }
        var scalar = UInt32(unit)
        var length = 6
        if (0xD800...0xDBFF).contains(unit) {
            _ = try ensure(12, from: &p)
            pos = p
            if end - p >= 12, base[p + 6] == 0x5C, base[p + 7] == 0x75, let low = hexValue(at: p + 8),
               (0xDC00...0xDFFF).contains(low) {
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                length = 12
            } else {
                scalar = 0xFFFD
            }
        } else if (0xDC00...0xDFFF).contains(unit) {
            scalar = 0xFFFD
        }
        if collect { scratch.appendUTF8(scalar) }
        pos = p + length
    }

    private func hexValue(at p: Int) -> UInt16? {
        var v: UInt16 = 0
        for k in 0..<4 {
            guard let d = hexDigit(base[p + k]) else { return nil }
            v = v << 4 | UInt16(d)
        }
        return v
    }

    @inline(__always)
    private func hexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    @inline(__always)
    private static func isNumberByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2B || b == 0x2E || b == 0x45 || b == 0x65
    }

    /// Reads a number at `pos` and returns its text, valid until the scanner moves on.
    /// A whole number at `pos` as JSON writes one (an optional `-`, then `0` or digits not starting
    /// with `0`), followed within the bytes read by a byte no number has: its text, as `readNumber`
    /// gives it, without its syntax check. Nil, `pos` unmoved, for anything else (`readNumber` then
    /// reads it, and says what is wrong with it).
    @inline(__always)
    mutating func readPlainInteger() -> UnsafeRawBufferPointer? {
        var p = pos
        if p < end && base[p] == 0x2D { p &+= 1 }
        let first = p
        while p < end && base[p] &- 0x30 < 10 { p &+= 1 }
        guard p > first, p < end, !JSONScanner.isNumberByte(base[p]), p &- first == 1 || base[first] != 0x30,
              p &- pos <= limits.maxNumberBytes else { return nil }
        let text = UnsafeRawBufferPointer(start: base + pos, count: p &- pos)
        pos = p
        return text
    }

    mutating func readNumber() throws -> UnsafeRawBufferPointer {
        var start = pos
        var p = pos
        while true {
            while p < end && JSONScanner.isNumberByte(base[p]) { p &+= 1 }
            if p < end { break }
            if p - start > limits.maxNumberBytes { break }
            pos = p
            let before = start
            let more = try refill(keeping: &start)
            p -= before - start
            if !more { break }
        }
        pos = p
        let count = p - start
        if count > limits.maxNumberBytes {
            throw error("a number longer than \(JSONLimits.describe(bytes: limits.maxNumberBytes))", at: start)
        }
        let text = UnsafeRawBufferPointer(start: base + start, count: count)
        if let bad = JSONScanner.numberSyntaxError(text) {
            let shown = String(decoding: text.prefix(40), as: UTF8.self) + (count > 40 ? "..." : "")
            throw error("invalid number '\(shown)': \(bad)", at: start)
        }
        return text
    }

    /// Why a number's text is not JSON's `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, or nil.
    static func numberSyntaxError(_ s: UnsafeRawBufferPointer) -> String? {
        let n = s.count
        var i = 0
        func isDigit(_ k: Int) -> Bool { k < n && s[k] >= 0x30 && s[k] <= 0x39 }
        if i < n && s[i] == 0x2D { i += 1 }
        guard isDigit(i) else { return "expected a digit" + (i < n ? " at '\(UnicodeScalar(s[i]))'" : " after '-'") }
        if s[i] == 0x30 {
            i += 1
            if isDigit(i) { return "a leading zero" }
        } else {
            while isDigit(i) { i += 1 }
        }
        if i < n && s[i] == 0x2E {
            i += 1
            guard isDigit(i) else { return "expected a digit after '.'" }
            while isDigit(i) { i += 1 }
        }
        if i < n && (s[i] == 0x65 || s[i] == 0x45) {
            i += 1
            if i < n && (s[i] == 0x2B || s[i] == 0x2D) { i += 1 }
            guard isDigit(i) else { return "expected a digit in the exponent" }
            while isDigit(i) { i += 1 }
        }
        return i == n ? nil : "unexpected '\(UnicodeScalar(s[i]))'"
    }

    /// Reads `true`, `false` or `null` at `pos`.
    mutating func readLiteral() throws -> JSONLiteral {
        var p = pos
        // The literal's first four bytes, little-endian, and its length.
        let literal: JSONLiteral, word: UInt32, count: Int
        switch base[p] {
        case 0x74: literal = .true; word = 0x6575_7274; count = 4
        case 0x66: literal = .false; word = 0x736C_6166; count = 5
        default: literal = .null; word = 0x6C6C_756E; count = 4
        }
        if end - p < count {
            _ = try ensure(count, from: &p)
            pos = p
            guard end - p >= count else { throw unexpected("a JSON value") }
        }
        guard UnsafeRawPointer(base + p).loadUnaligned(as: UInt32.self) == UInt32(littleEndian: word),
              count == 4 || base[p + 4] == 0x65 else {
            throw unexpected("a JSON value")
        }
        pos = p + count
        return literal
    }

    /// Skips (and checks) one whole value at `pos`, nested in `depth` containers already; iterative,
    /// so the input cannot make it overflow the stack.
    mutating func skipValue(depth: Int) throws {
        containers.removeAll(keepingCapacity: true)
        value: while true {
            guard let b = try peek() else { throw unexpected("a JSON value") }
            switch b {
            case 0x7B, 0x5B:
                if depth + containers.count + 1 > limits.maxDepth {
                    throw error("nesting deeper than \(limits.maxDepth)", at: pos)
                }
                pos += 1
                let isObject = b == 0x7B
                guard let c = try peek() else { throw unexpected(isObject ? "an object key or '}'" : "a JSON value or ']'") }
                if c == (isObject ? 0x7D : 0x5D) {
                    pos += 1
                    break
                }
                containers.append(isObject ? 1 : 0)
                if isObject { try skipKeyAndColon(first: c) }
                continue value
            case 0x22:
                _ = try readString(collect: false)
            case 0x2D, 0x30...0x39:
                _ = try readNumber()
            case 0x74, 0x66, 0x6E:
                _ = try readLiteral()
            default:
                throw unexpected("a JSON value")
            }
            // After a value: close containers, or go on to the next element or member.
            while let top = containers.last {
                let c = try peek()
                if top == 1 {
                    if c == 0x2C {
                        pos += 1
                        try skipKeyAndColon(first: try peek())
                        continue value
                    }
                    if c == 0x7D { pos += 1; containers.removeLast(); continue }
                    throw unexpected("',' or '}' after an object member")
                } else {
                    if c == 0x2C { pos += 1; continue value }
                    if c == 0x5D { pos += 1; containers.removeLast(); continue }
                    throw unexpected("',' or ']' after an array element")
                }
            }
            return
        }
    }

    private mutating func skipKeyAndColon(first: UInt8?) throws {
        guard first == 0x22 else { throw unexpected("an object key (a string)") }
        _ = try readString(collect: false)
        guard try peek() == 0x3A else { throw unexpected("':' after an object key") }
        pos += 1
    }

    /// What a value starting with `b` is, for shape messages: `a number`, `an object`.
    static func kindOfValue(startingWith b: UInt8) -> String {
        switch b {
        case 0x7B: return "an object"
        case 0x5B: return "an array"
        case 0x22: return "a string"
        case 0x2D, 0x30...0x39: return "a number"
        case 0x74, 0x66: return "a boolean"
        case 0x6E: return "null"
        default: return "something else"
        }
    }
}

/// `true`, `false`, `null`.
enum JSONLiteral {
    case `true`, `false`, null
}
