// ISO 8601 text to and from bytes, without allocating: the date path of every reader and writer.
// Machinery (see Machinery/README.md): byte buffers are reached by pointer here; what is public
// takes and gives values only (`iso8601`, `init?(iso8601:)`, `appendISO8601(to:)`).

extension Timestamp {
    /// ISO 8601 in UTC, `2024-05-01T09:30:00Z`, with three fractional digits only when they are not zero.
    public var iso8601: String {
        String(unsafeUninitializedCapacity: Timestamp.iso8601MaximumLength) { buffer in
            formatISO8601(into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// The longest `iso8601` text, in bytes: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static let iso8601MaximumLength = 24

    /// Appends the `iso8601` text to a byte buffer, without making a `String`.
    ///
    /// ```swift
    /// var out: [UInt8] = []
    /// Timestamp(milliseconds: 0).appendISO8601(to: &out)   // "1970-01-01T00:00:00Z"
    /// ```
    @inlinable
    public func appendISO8601(to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(byteCount: Timestamp.iso8601MaximumLength, alignment: 8) { buffer in
            let count = formatISO8601(into: buffer)
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Writes the `iso8601` text into `buffer`, which must hold at least `iso8601MaximumLength`
    /// bytes, and returns its length (20, or 24 with milliseconds).
    @usableFromInline package func formatISO8601(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(buffer.count >= Timestamp.iso8601MaximumLength)
        let out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let ms = milliseconds
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let inDay = Int(ms - days * 86_400_000)
        let (y, m, d) = Timestamp.civil(fromDays: days)
        @inline(__always) func put(_ value: Int, _ width: Int, at i: Int) {
            var v = value
            var k = width - 1
            while k >= 0 { out[i + k] = UInt8(truncatingIfNeeded: 48 + v % 10); v /= 10; k -= 1 }
        }
        let seconds = inDay / 1000, fraction = inDay % 1000
        put(y, 4, at: 0); out[4] = 45; put(m, 2, at: 5); out[7] = 45; put(d, 2, at: 8); out[10] = 84
        put(seconds / 3600, 2, at: 11); out[13] = 58; put(seconds / 60 % 60, 2, at: 14); out[16] = 58
        put(seconds % 60, 2, at: 17)
        if fraction == 0 {
            out[19] = 90
            return 20
        }
        out[19] = 46; put(fraction, 3, at: 20); out[23] = 90
        return 24
    }

    /// Reads ISO 8601: a date, or a date and time with `Z`, an offset or none (UTC), with or without a
    /// fraction of a second; also YAML's timestamp forms (a space before the time or the zone, `-5`).
    public init?(iso8601 text: some StringProtocol) {
        let parsed = text.utf8.withContiguousStorageIfAvailable { Timestamp.parseISO8601($0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { Timestamp.parseISO8601($0) }
        guard let ms = parsed else { return nil }
        self.init(milliseconds: ms)
    }

    /// What `init?(iso8601:)` reads, from UTF-8 bytes and without allocating: milliseconds since
    /// 1970, or nil. The writers' form is tried first, then every other shape.
    package static func parseISO8601(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        if let ms = parseWriterForm(b) { return ms }
        var n = b.count
        while n > 0, b[n - 1] == 32 || b[n - 1] == 9 { n -= 1 }
        var i = 0
        guard let year = digits(b, n, &i, 4), eat(b, n, &i, 45), let month = digits(b, n, &i, 2), eat(b, n, &i, 45),
              let day = digits(b, n, &i, 2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Timestamp.daysIn(month: month, year: year), year >= 1 else { return nil }
        var ms: Int64 = 0
        var offsetMinutes = 0
        if i < n {
            guard b[i] == 84 || b[i] == 116 || b[i] == 32 else { return nil }
            i += 1
            // YAML allows a one-digit hour (`2001-12-14 1:59:43`).
            let hourWidth = i + 1 < n && b[i + 1] == 58 ? 1 : 2
            guard let hour = digits(b, n, &i, hourWidth), eat(b, n, &i, 58), let minute = digits(b, n, &i, 2) else { return nil }
            var second = 0
            if eat(b, n, &i, 58) { guard let s = digits(b, n, &i, 2) else { return nil }; second = s }
            guard hour < 24 || (hour == 24 && minute == 0 && second == 0), minute < 60, second < 61 else { return nil }
            ms = Int64(hour * 3600 + minute * 60 + min(second, 59)) * 1000
            if eat(b, n, &i, 46) || eat(b, n, &i, 44) {
                let first = i
                var scaled = 0.0, scale = 100.0
                while i < n, b[i] >= 48, b[i] <= 57 {
                    scaled += Double(b[i] - 48) * scale
                    scale /= 10
                    i += 1
                }
                guard i > first else { return nil }
                ms += Int64(scaled.rounded(.toNearestOrAwayFromZero))
            }
            while i < n, b[i] == 32 { i += 1 }
            if i < n {
                if b[i] == 90 || b[i] == 122 {
                    i += 1
                } else if b[i] == 43 || b[i] == 45 {
                    let sign = b[i] == 45 ? -1 : 1
                    i += 1
                    let width = (i + 1 < n && b[i + 1] >= 48 && b[i + 1] <= 57) ? 2 : 1
                    guard let oh = digits(b, n, &i, width), oh <= 23 else { return nil }
                    var om = 0
                    if eat(b, n, &i, 58) { guard let m = digits(b, n, &i, 2) else { return nil }; om = m }
                    else if i < n { guard let m = digits(b, n, &i, 2) else { return nil }; om = m }
                    guard om < 60 else { return nil }
                    offsetMinutes = sign * (oh * 60 + om)
                } else {
                    return nil
                }
            }
        }
        guard i == n else { return nil }
        return Timestamp.days(fromCivil: year, month, day) * 86_400_000 + ms - Int64(offsetMinutes) * 60_000
    }

    /// `count` decimal digits at `i` (before `n`), moving past them; nil, not moving, otherwise.
    @inline(__always)
    private static func digits(_ b: UnsafeBufferPointer<UInt8>, _ n: Int, _ i: inout Int, _ count: Int) -> Int? {
        guard i + count <= n else { return nil }
        var v = 0
        for k in i..<(i + count) {
            let c = b[k] &- 48
            guard c < 10 else { return nil }
            v = v * 10 + Int(c)
        }
        i += count
        return v
    }

    /// Moves past the byte `c` at `i`, if it is there.
    @inline(__always)
    private static func eat(_ b: UnsafeBufferPointer<UInt8>, _ n: Int, _ i: inout Int, _ c: UInt8) -> Bool {
        if i < n, b[i] == c { i += 1; return true }
        return false
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff]Z`, the writers' form, without allocating; nil for anything else.
    static func parseWriterForm(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        let n = b.count
        guard n == 20 || n == 24, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58, b[n - 1] == 90 else { return nil }
        @inline(__always) func d(_ i: Int, _ count: Int) -> Int? {
            var v = 0
            for k in i..<(i + count) { let c = b[k] &- 48; guard c < 10 else { return nil }; v = v * 10 + Int(c) }
            return v
        }
        guard let year = d(0, 4), let month = d(5, 2), let day = d(8, 2), let hour = d(11, 2), let minute = d(14, 2),
              let second = d(17, 2), year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60 else { return nil }
        var ms = Int64(hour * 3600 + minute * 60 + second) * 1000
        if n == 24 { guard b[19] == 46, let f = d(20, 3) else { return nil }; ms += Int64(f) }
        return days(fromCivil: year, month, day) * 86_400_000 + ms
    }
}
