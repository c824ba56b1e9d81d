import TripKit

/// The character encodings of text inputs that carry none of their own (CSV, TSV, JSON), and the one
/// parser of `--input-encoding` / `ReadOptions.inputEncoding`.
///
/// A byte order mark overrides the option for CSV, TSV, JSON and JSON Lines: UTF-8's switches the
/// input to UTF-8 and is dropped, UTF-16's (LE or BE) switches it to UTF-16, as a spreadsheet's
/// "Unicode text" export needs.
public enum TextEncoding: String, Sendable, CaseIterable {
    case utf8 = "utf-8"
    case latin1
    case windows1252 = "windows-1252"
    case utf16le = "utf-16le"
    case utf16be = "utf-16be"
    /// UTF-16 whose byte order its byte order mark tells (big-endian without one, as RFC 2781 says).
    case utf16 = "utf-16"

    /// Reads an encoding's name, in any case: `utf-8`/`utf8`, `latin1`/`iso-8859-1`/`l1`,
    /// `windows-1252`/`cp1252`, `utf-16`, `utf-16le`, `utf-16be`.
    public init?(name: String) {
        switch name.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "latin1", "latin-1", "iso-8859-1", "iso8859-1", "l1": self = .latin1
        case "windows-1252", "windows1252", "cp1252", "cp-1252": self = .windows1252
        case "utf-16", "utf16": self = .utf16
        case "utf-16le", "utf16le", "utf-16-le": self = .utf16le
        case "utf-16be", "utf16be", "utf-16-be": self = .utf16be
        default: return nil
        }
    }

    /// The encoding `ReadOptions.inputEncoding` names, or a usage error listing the ones there are.
    static func of(_ options: ReadOptions) throws -> TextEncoding {
        guard let e = TextEncoding(name: options.inputEncoding) else {
            throw TripError.usage("unsupported input encoding \(options.inputEncoding.quotedForMessage)",
                                  notes: ["the input encodings are " + TextEncoding.allCases.map(\.rawValue).joined(separator: ", ")])
        }
        return e
    }
}

/// A byte source that hands out UTF-8: UTF-8 input passes through untouched (its BOM is left for the
/// reader), other encodings are transcoded a block at a time.
///
/// It holds one block of input (64 KiB) and its UTF-8 (at most three times that), for as long as the
/// reader reads; nothing grows with the input. A UTF-16 code unit or surrogate pair split across two
/// blocks is carried over. An unpaired surrogate, or an odd byte at the end of UTF-16, is a data
/// error naming the input and the byte offset.
final class TranscodingSource {
    typealias Source = (UnsafeMutableRawBufferPointer) throws -> Int

    private let name: String
    private let source: Source
    private var encoding: TextEncoding
    /// Whether the first bytes were looked at (for a byte order mark).
    private var started = false
    private let detectsBOM: Bool
    /// Input bytes read but not yet transcoded (a BOM look-ahead, a split code unit); while a block
    /// is transcoded, that block after them.
    private let pending = ByteStorage(capacity: 16)
    /// Transcoded bytes, handed out from `outStart` on.
    private let out = ByteStorage(capacity: 16)
    private var outStart = 0
    /// Input bytes consumed before `pending`, for error offsets.
    private var consumed = 0
    private var atEnd = false
    private var block: UnsafeMutableRawBufferPointer

    /// `detectsBOM`: a byte order mark at the start switches to UTF-16 or UTF-8 whatever `encoding` says.
    init(name: String, encoding: TextEncoding, detectsBOM: Bool, source: @escaping Source) {
        self.name = name; self.encoding = encoding; self.detectsBOM = detectsBOM; self.source = source
        block = .allocate(byteCount: 1 << 16, alignment: 8)
    }

    deinit { block.deallocate() }

    /// The encoding read: the option's, or the one a byte order mark told (known after the first read).
    var effectiveEncoding: TextEncoding { encoding }

    /// Fills `buffer` with UTF-8; 0 at the end of input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if !started { try start() }
        if encoding == .utf8 {
            // Straight through, after what the BOM look-ahead kept.
            if pending.count > 0 {
                let n = min(pending.count, buffer.count)
                if n > 0 { buffer.baseAddress!.copyMemory(from: pending.pointer, byteCount: n) }
                pending.removeFirst(n)
                return n
            }
            return try source(buffer)
        }
        while outStart == out.count {
            if atEnd { return 0 }
            out.removeAll(); outStart = 0
            try transcodeBlock()
        }
        let n = min(out.count - outStart, buffer.count)
        buffer.baseAddress!.copyMemory(from: out.pointer + outStart, byteCount: n)
        outStart += n
        return n
    }

    /// Reads up to four bytes and decides the encoding from a byte order mark.
    private func start() throws {
        started = true
        while pending.count < 4 {
            let n = try source(UnsafeMutableRawBufferPointer(rebasing: block[0..<(4 - pending.count)]))
            if n <= 0 { atEnd = encoding != .utf8; break }
            pending.append(block.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)
        }
        let p = pending.pointer, count = pending.count
        let le = count >= 2 && p[0] == 0xFF && p[1] == 0xFE, be = count >= 2 && p[0] == 0xFE && p[1] == 0xFF
        if detectsBOM || encoding == .utf16 || encoding == .utf16le || encoding == .utf16be {
            if le && !(count >= 4 && p[2] == 0 && p[3] == 0) {
                // (FF FE 00 00 would be UTF-32 LE, which no one is asked to read: it stays an error below.)
                encoding = .utf16le; pending.removeFirst(2); consumed = 2
            } else if be {
                encoding = .utf16be; pending.removeFirst(2); consumed = 2
            } else if detectsBOM, count >= 3, p[0] == 0xEF, p[1] == 0xBB, p[2] == 0xBF {
                // UTF-8's mark, as unambiguous: left for the reader to skip.
                encoding = .utf8
            } else if encoding == .utf16 {
                encoding = .utf16be
            }
        }
        if encoding == .utf8 { atEnd = false }
    }

    /// Reads a block (unless the input has ended) and transcodes it with what was pending into `out`;
    /// what cannot be transcoded yet stays pending.
    private func transcodeBlock() throws {
        if !atEnd {
            let n = try source(block)
            if n <= 0 { atEnd = true } else { pending.append(block.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n) }
        }
        let input = UnsafeBufferPointer(start: pending.pointer, count: pending.count)
        out.reserve(input.count * 3)
        switch encoding {
        case .latin1:
            for c in input { out.appendUTF8(UInt32(c)) }
            consumed += input.count
            pending.removeAll()
        case .windows1252:
            for c in input {
                out.appendUTF8(c >= 0x80 && c < 0xA0 ? UInt32(TranscodingSource.cp1252High[Int(c - 0x80)]) : UInt32(c))
            }
            consumed += input.count
            pending.removeAll()
        case .utf16le, .utf16be, .utf16:
            try transcodeUTF16(input, bigEndian: encoding != .utf16le)
        case .utf8:
            break
        }
    }

    /// Transcodes `input` (the pending bytes) and drops from `pending` what it transcoded.
    private func transcodeUTF16(_ input: UnsafeBufferPointer<UInt8>, bigEndian: Bool) throws {
        var i = 0
        let count = input.count
        @inline(__always) func unit(_ at: Int) -> UInt32 {
            bigEndian ? UInt32(input[at]) << 8 | UInt32(input[at + 1]) : UInt32(input[at + 1]) << 8 | UInt32(input[at])
        }
        while i + 1 < count {
            let u = unit(i)
            if u >= 0xD800 && u <= 0xDBFF {
                guard i + 3 < count else { break }   // the pair's second half is in the next block
                let low = unit(i + 2)
                guard low >= 0xDC00 && low <= 0xDFFF else { try unpaired(u, at: consumed + i) }
                out.appendUTF8(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00))
                i += 4
            } else if u >= 0xDC00 && u <= 0xDFFF {
                try unpaired(u, at: consumed + i)
            } else {
                out.appendUTF8(u)
                i += 2
            }
        }
        consumed += i
        if i < count {
            if atEnd {
                if count - i == 1 {
                    throw TripError.data("\(name): byte offset \(consumed): UTF-16 input ends in the middle of a character (an odd number of bytes)")
                }
                try unpaired(unit(i), at: consumed)
            }
        }
        pending.removeFirst(i)
    }

    private func unpaired(_ unit: UInt32, at offset: Int) throws -> Never {
        throw TripError.data("\(name): byte offset \(offset): invalid UTF-16: unpaired surrogate 0x\(String(unit, radix: 16, uppercase: true))",
                             notes: ["the input is read as \(encoding.rawValue); give --input-encoding if it is another encoding"])
    }

    /// Windows-1252's 0x80-0x9F. The five bytes it leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D)
    /// read as the C1 controls of the same value, as Windows and WHATWG's encoding standard read them.
    private static let cp1252High: [UInt16] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
        0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ]
}
