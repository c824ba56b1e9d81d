/// JSON syntax on its own, whatever the value's shape: the conformance tests' entry point to the
/// tokenizer the trip readers share.
enum JSONSyntax {
    /// Checks that `bytes` are one JSON value (RFC 8259, after an optional UTF-8 byte order mark)
    /// and nothing else; throws a `JSONSyntaxError` with the line and column of the first fault.
    ///
    /// ```swift
    /// try JSONSyntax.validate(Array(#"{"a": [1, 2.5e3, "x"]}"#.utf8))
    /// ```
    static func validate(_ bytes: [UInt8], limits: JSONLimits = .standard, chunkSize: Int = 1 << 16) throws {
        let source = JSONMemorySource(bytes)
        var scanner = JSONScanner(limits: limits, chunkSize: chunkSize, source: source.read)
        try scanner.skipByteOrderMark()
        guard try scanner.peek() != nil else { throw scanner.unexpected("a JSON value") }
        try scanner.skipValue(depth: 0)
        if try scanner.peek() != nil { throw scanner.unexpected("the end of input after the JSON value") }
    }
}

/// Bytes in memory as a scanner's source, handed out in chunks no larger than the scanner asks for.
final class JSONMemorySource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { raw in
            buffer.baseAddress!.copyMemory(from: raw.baseAddress! + offset, byteCount: n)
        }
        offset += n
        return n
    }
}
