#if canImport(Glibc)
import Glibc
#endif
import TripKit

/// The index's pass on two threads (`ObjectGraphPasses.indexPass`): a JSON Lines file cut at a
/// line's start near its middle, and read from there by a second parser.
extension JSONGraphParser {
    /// The smallest input an index's pass is made on two threads for.
    static let smallestCut = 8 << 20

    /// JSON Lines in a plain file of `smallestCut` bytes or more, not yet read: the start of the first
    /// line that begins at or after its middle (looked for in the 4 MiB after it).
    func indexCut() throws -> Int? {
        guard isLines, reopen != nil, start == 0, case .start = phase, let size = input.fileSize, size >= Self.smallestCut else { return nil }
        var probe = [UInt8](repeating: 0, count: 64 << 10)
        var at = size / 2
        while at < min(size, size / 2 + (4 << 20)) {
            guard let n = input.read(&probe, at: at), n > 0 else { return nil }
            if let i = probe[..<n].firstIndex(of: 0x0A) { return at + i + 1 < size ? at + i + 1 : nil }
            at += n
        }
        return nil
    }

    /// A parser of this input from `offset`, a line's start (the index's pass's second thread).
    func reopened(at offset: Int) throws -> JSONGraphParser? {
        guard let reopen else { return nil }
        let input = try reopen()
        guard input.seek(Int64(offset), whence: SEEK_SET) == Int64(offset) else { return nil }
        var parser = JSONGraphParser(input, isLines: isLines, model: model, reopen: reopen)
        parser.start = offset
        return parser
    }

    /// Stops this parser (not yet read) at the input offset `end`.
    mutating func stop(at end: Int) {
        let input = self.input
        var left = end - start
        scanner = JSONScanner(source: { buffer in
            guard left > 0, let base = buffer.baseAddress else { return 0 }
            let n = try input.read(into: UnsafeMutableRawBufferPointer(start: base, count: min(buffer.count, left)))
            left -= n
            return n
        })
    }

    /// The input offset of the next byte this parser reads.
    var offset: Int { start + scanner.windowOffset + scanner.pos }

    var inputName: String { name }
}
