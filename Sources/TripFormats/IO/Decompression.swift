#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CZlib
internal import CLibArchive
import TripKit

/// The compressions an input may come in, told by its first bytes (issue 17).
public enum Compression: String, CaseIterable, Sendable {
    case gzip, bzip2, xz, zstd

    /// The extensions that name it (`trips.jsonl.gz`).
    public var extensions: [String] {
        switch self {
        case .gzip: return ["gz"]
        case .bzip2: return ["bz2"]
        case .xz: return ["xz"]
        case .zstd: return ["zst"]
        }
    }

    /// The compression whose magic bytes begin `head`, if any: gzip `1F 8B 08`, bzip2 `BZh1`-`BZh9`,
    /// xz `FD 37 7A 58 5A 00`, zstd `28 B5 2F FD`.
    public static func told(by head: some Collection<UInt8>) -> Compression? {
        let b = Array(head.prefix(6))
        if b.starts(with: [0x1F, 0x8B, 0x08]) { return .gzip }
        if b.count >= 4, b.starts(with: [0x42, 0x5A, 0x68]), (0x31...0x39).contains(b[3]) { return .bzip2 }
        if b.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        if b.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        return nil
    }

    /// The compression a path's last extension names, and the path without it (`a.jsonl.gz` →
    /// `(.gzip, "a.jsonl")`); nil when it names none.
    public static func named(by path: String) -> (compression: Compression, inner: String)? {
        let base = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return nil }
        let ext = base[base.index(after: dot)...].lowercased()
        guard let c = allCases.first(where: { $0.extensions.contains(ext) }) else { return nil }
        return (c, String(path.dropLast(ext.count + 1)))
    }
}

/// Where a decoder takes compressed bytes from: fills the buffer, 0 at the end.
typealias CompressedSource = (UnsafeMutableRawBufferPointer) throws -> Int

/// Decompressed bytes, read in chunks: no decoder holds more than its buffers and its window.
protocol ByteDecoder: AnyObject {
    /// Fills `buffer` with decompressed bytes; 0 at the end. Corrupt or truncated data is a
    /// `.data` error naming the compressed byte offset.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A compressed input's decoder: gzip through zlib (which checks every member's CRC and length,
/// where libarchive 3.6 does not), the others through libarchive's filters (one filter enabled
/// each, never `support_filter_all`, which runs external programs for some formats).
func makeDecoder(_ compression: Compression, name: String, source: @escaping CompressedSource) throws -> any ByteDecoder {
    switch compression {
    case .gzip: return try GzipDecoder(name: name, source: source)
    case .bzip2, .xz, .zstd: return try ArchiveFilterDecoder(compression, name: name, source: source)
    }
}

/// gzip, every member of a multi-member file in turn (as `gzip -d` reads them), each checked
/// against its CRC-32 and length. Trailing zero bytes are let be (tape padding); anything else
/// after the last member is an error.
///
/// Memory: 256 KiB of compressed bytes and zlib's 32 KiB window.
final class GzipDecoder: ByteDecoder {
    private let name: String
    private let source: CompressedSource
    // zlib keeps a pointer to the stream in its state: it must not move.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    private var sourceEnded = false
    private var ended = false
    /// Compressed bytes consumed by the members before this one.
    private var consumedBefore = 0

    init(name: String, source: @escaping CompressedSource) throws {
        self.name = name
        self.source = source
        stream.initialize(to: z_stream())
        // 15 + 16: the largest window, gzip wrapping only.
        guard tripconv_inflateInit2(stream, 15 + 16) == Z_OK else {
            // deinit frees the buffers (inflateEnd refuses a stream never started).
            throw TripError(.io, "\(name): cannot start a gzip decoder")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        input.deallocate()
    }

    /// The compressed byte the decoder has reached.
    private var offset: Int { consumedBefore + Int(stream.pointee.total_in) }

    private func refill() throws {
        guard stream.pointee.avail_in == 0, !sourceEnded else { return }
        let n = try source(input)
        if n == 0 { sourceEnded = true; return }
        stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(n)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0, !ended else { return 0 }
        while true {
            try refill()
            if stream.pointee.avail_in == 0 && sourceEnded {
                throw TripError.data("\(name): gzip data ends early, at byte \(offset): the file is truncated")
            }
            stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(min(buffer.count, Int(UInt32.max)))
            let rc = inflate(stream, Z_NO_FLUSH)
            let produced = min(buffer.count, Int(UInt32.max)) - Int(stream.pointee.avail_out)
            switch rc {
            case Z_OK, Z_BUF_ERROR:
                if produced > 0 { return produced }
            case Z_STREAM_END:
                try nextMember()
                if produced > 0 || ended { return produced }
            case Z_NEED_DICT, Z_DATA_ERROR:
                let why = stream.pointee.msg.map { String(cString: $0) } ?? "invalid data"
                throw TripError.data("\(name): gzip data is corrupt at byte \(offset): \(why)")
            case Z_MEM_ERROR:
                throw TripError(.io, "\(name): out of memory decompressing gzip data")
            default:
                throw TripError.data("\(name): gzip data is corrupt at byte \(offset) (zlib error \(rc))")
            }
        }
    }

    /// After a member's end: another member, trailing zeros, or the end; anything else is an error.
    private func nextMember() throws {
        consumedBefore += Int(stream.pointee.total_in)
        while true {
            try refill()
            guard stream.pointee.avail_in > 0 else {
                ended = true
                return
            }
            let next = stream.pointee.next_in!
            if next[0] == 0x1F {
                // Another member (its header is checked by zlib).
                guard inflateReset(stream) == Z_OK else { throw TripError(.io, "\(name): cannot restart the gzip decoder") }
                // inflateReset clears total_in: the offset counts on from `consumedBefore`.
                return
            }
            // Zero bytes after the last member (padding to a block) are let be.
            var zeros = 0
            while zeros < Int(stream.pointee.avail_in) && next[zeros] == 0 { zeros += 1 }
            guard zeros == Int(stream.pointee.avail_in) else {
                throw TripError.data("\(name): at byte \(consumedBefore + zeros): bytes after the end of the gzip data that are not another gzip member")
            }
            consumedBefore += zeros
            stream.pointee.next_in = next + zeros
            stream.pointee.avail_in = 0
        }
    }
}

/// bzip2, xz or zstd through libarchive's filter of that name alone, as a "raw" archive of one
/// entry. Concatenated streams are read whole, each checked as the format checks it.
///
/// Memory: 256 KiB of compressed bytes, libarchive's output block, and the format's window (zstd's
/// at most 128 MiB, as libarchive allows; xz's dictionary).
final class ArchiveFilterDecoder: ByteDecoder {
    private let name: String
    private let compression: Compression
    private let reading: LibArchiveInput
    private var archive: OpaquePointer { reading.handle }
    private var la: LibArchive { reading.la }
    private var ended = false

    init(_ compression: Compression, name: String, source: @escaping CompressedSource) throws {
        self.name = name
        self.compression = compression
        reading = try LibArchiveInput(name: name, source: source) { a, la in
            switch compression {
            case .bzip2: _ = la.archive_read_support_filter_bzip2(a)
            case .xz: _ = la.archive_read_support_filter_xz(a)
            case .zstd: _ = la.archive_read_support_filter_zstd(a)
            case .gzip: break
            }
            _ = la.archive_read_support_format_raw(a)
            _ = la.archive_read_support_format_empty(a)
        }
        try check(reading.open())
        var entry: OpaquePointer?
        let header = la.archive_read_next_header(archive, &entry)
        if header == ARCHIVE_EOF { ended = true } else { try check(header) }
        // Where libarchive's bidder does not take the data (bzip2 whose first block is damaged),
        // it would hand the compressed bytes over as they are.
        let expected = [Compression.bzip2: ARCHIVE_FILTER_BZIP2, .xz: ARCHIVE_FILTER_XZ, .zstd: ARCHIVE_FILTER_ZSTD][compression]
        if !ended, la.archive_filter_code(archive, 0) != expected {
            throw TripError.data("\(name): \(compression.rawValue) data is corrupt at its start: its first bytes say \(compression.rawValue), "
                                 + "but what follows is not")
        }
    }

    private func check(_ rc: Int32) throws {
        guard rc != ARCHIVE_OK else { return }
        if let failure = reading.takeFailure() { throw failure }
        let why = la.archive_error_string(archive).map { String(cString: $0) } ?? "invalid data"
        // libarchive says where it was only while it can go on: the bytes it had been given.
        throw TripError.data("\(name): \(compression.rawValue) data is corrupt within its first \(reading.given) bytes: \(why)")
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0, !ended else { return 0 }
        let n = la.archive_read_data(archive, base, buffer.count)
        if n < 0 { try check(Int32(n)) }
        if n == 0 {
            ended = true
            try checkEnd()
        }
        return max(n, 0)
    }

    /// At the end of the data: every compressed byte must have been taken by the decoder. A bzip2
    /// stream that libarchive does not take (its start damaged or cut) ends its reading as if it
    /// were trailing bytes: those are an error here, as bytes after the last gzip member are.
    /// (xz's stream padding and zstd's skippable frames are taken by their decoders.)
    private func checkEnd() throws {
        let consumed = Int(la.archive_filter_bytes(archive, -1))
        try reading.readRest()
        if reading.given > consumed {
            throw TripError.data("\(name): at byte \(consumed): \(reading.given - consumed) bytes after the end of the \(compression.rawValue) data "
                                 + "that are not another \(compression.rawValue) stream")
        }
    }
}

/// A libarchive reader fed by a closure: the one place that opens libarchive on bytes of ours (the
/// bzip2, xz and zstd decoders, and the archives' tar and zip readers). It holds the handle, 256 KiB
/// of bytes given to it, and the error the closure threw, for the call that met it to throw.
final class LibArchiveInput {
    let handle: OpaquePointer
    /// libarchive, opened by the first of these of the run (`LibArchive`).
    let la: LibArchive
    private let source: CompressedSource
    private let seek: ((Int64, Int32) -> Int64?)?
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    private var failure: (any Error)?
    /// Bytes given to libarchive so far (it reads ahead of what it has used).
    private(set) var given = 0

    /// A handle that `configure` enables filters and formats on; with `seek` (a plain file's), one
    /// libarchive may move in.
    init(name: String, source: @escaping CompressedSource, seek: ((Int64, Int32) -> Int64?)? = nil,
         configure: (OpaquePointer, LibArchive) -> Void) throws {
        do {
            la = try LibArchive.load()
        } catch {
            buffer.deallocate()
            throw error
        }
        guard let a = la.archive_read_new() else {
            buffer.deallocate()
            throw TripError(.io, "\(name): cannot start libarchive")
        }
        handle = a
        self.source = source
        self.seek = seek
        configure(a, la)
    }

    deinit {
        _ = la.archive_read_free(handle)
        buffer.deallocate()
    }

    /// Opens the handle on the source (the read callback may run already, for the format's bid).
    func open() -> Int32 {
        let client = Unmanaged.passUnretained(self).toOpaque()
        if seek != nil {
            _ = la.archive_read_set_seek_callback(handle) { _, client, offset, whence in
                let reading = Unmanaged<LibArchiveInput>.fromOpaque(client!).takeUnretainedValue()
                return reading.seek?(offset, whence) ?? Int64(ARCHIVE_FATAL)
            }
        }
        return la.archive_read_open2(handle, client, nil, { _, client, out in
            let reading = Unmanaged<LibArchiveInput>.fromOpaque(client!).takeUnretainedValue()
            do {
                let n = try reading.source(reading.buffer)
                reading.given += n
                out?.pointee = UnsafeRawPointer(reading.buffer.baseAddress)
                return n
            } catch {
                reading.failure = error
                return -1
            }
        }, nil, nil)
    }

    /// The error the source threw since it was last asked, if any.
    func takeFailure() -> (any Error)? {
        defer { failure = nil }
        return failure
    }

    /// Reads what the source still holds, counting it as given (to find bytes after the end).
    func readRest() throws {
        while case let n = try source(buffer), n > 0 { given += n }
    }
}
