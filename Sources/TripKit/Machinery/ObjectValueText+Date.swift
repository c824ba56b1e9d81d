extension ObjectValueText {
    /// The most bytes `formatDate` writes.
    package static let dateMaximumLength = 32

    /// Writes the ISO 8601 text `appendDate` appends into `out` (at least `dateMaximumLength` bytes)
    /// and returns its length; nil, writing nothing, where the date is written as its number.
    package static func formatDate(_ seconds: Double, into out: UnsafeMutableRawBufferPointer) -> Int? {
        guard let (wholeSeconds, digits, n) = dateParts(seconds) else { return nil }
        // Whole seconds: "YYYY-MM-DDTHH:MM:SSZ", its "Z" written over.
        var count = Timestamp(milliseconds: wholeSeconds * 1000).formatISO8601(into: out) - 1
        let p = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if n > 0 {
            p[count] = UInt8(ascii: ".")
            var rest = digits
            for i in stride(from: count + 3 * n, to: count, by: -1) {
                p[i] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
            }
            count += 3 * n + 1
        }
        p[count] = UInt8(ascii: "Z")
        return count + 1
    }
}
