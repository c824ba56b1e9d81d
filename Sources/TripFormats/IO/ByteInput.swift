#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit
import Synchronization
import TripThreads

/// Bytes read by every ByteInput of the process so far, for progress reports.
public let totalBytesRead = Atomic<Int>(0)

/// Where an input comes from.
public enum InputLocation: Sendable, Equatable {
    case standardInput
    case file(String)
    /// A member of an archive read as a directory (issue 17), while its archive is at it.
    case member(ArchiveMember)

    /// The name used in messages: the path, `<stdin>`, a PostgreSQL address without its password,
    /// or `archive!member`.
    public var name: String {
        switch self {
        case .standardInput: return "<stdin>"
        case .file(let p): return Format.isPostgreSQLAddress(p) ? Format.redactedPostgreSQLAddress(p) : p
        case .member(let m): return m.name
        }
    }

    /// The input a command-line argument names: `-` is standard input, anything else a path.
    public init(_ argument: String) {
        self = argument == "-" ? .standardInput : .file(argument)
    }
}

/// An input's bytes, read in chunks with read(2): no reader ever holds a whole input.
///
/// A compressed input is read through its decoder; with `ReadOptions.parsesAhead` (and a file or
/// standard input, not an archive's member, whose bytes come from its archive) the decoder runs on
/// a thread of its own, up to 3 chunks of 256 KiB ahead, as `gzip -dc |` would on its own core.
public final class ByteInput {
    public let name: String
    /// The input's own bytes (compressed ones, for a compressed input).
    private let raw: RawInput
    /// The limits on how far a compressed input may expand (`ReadOptions.maxExpansionRatio`).
    private let limits: ExpansionLimits
    /// The compression its first bytes tell (issue 17), nil for plain bytes. A compressed input is
    /// read through its decoder, and progress counts the compressed bytes.
    public private(set) var compression: Compression?
    private var decoder: (any ByteDecoder)?
    /// Bytes the decoder gave on this thread (without a thread of its own).
    private var decodedBytes = 0
    /// The decoder's thread, and the chunk being read from it.
    private var ahead: Handoff<DecodedChunk>?
    private var chunk: DecodedChunk?
    private var chunkPosition = 0
    /// Bytes looked at ahead of the reader (`peek`), given to the next reads first.
    private var peeked: [UInt8] = []
    private var peekedPosition = 0
    /// Whether the input's own bytes are none (told by its first bytes, read to tell its compression).
    private var hasNoRawBytes = false

    /// The input's own bytes read so far: compressed ones, for a compressed input.
    public var rawBytesRead: Int { raw.bytesRead.load(ordering: .relaxed) }
    /// What this input has counted toward `totalBytesRead`, over all passes.
    public var bytesCounted: Int { raw.bytesCounted }

    /// Opens a file for reading; a missing or unreadable file is a `.noInput` error. Its first
    /// bytes tell whether it is compressed (gzip, bzip2, xz, zstd); a compressed input that expands
    /// past `options`' limits is refused as a decompression bomb.
    public init(_ location: InputLocation, options: ReadOptions = ReadOptions()) throws {
        limits = ExpansionLimits(options)
        switch location {
        case .standardInput:
            name = location.name
            raw = RawInput(name: name, fd: 0, ownsDescriptor: false, member: nil)
            raw.head = ByteInput.standardInputAhead.withLock { ahead in
                defer { ahead = [] }
                return ahead
            }
        case .file(let path):
            name = path
            raw = RawInput(name: name, fd: try FileSystem.openForReading(path), ownsDescriptor: true, member: nil)
        case .member(let m):
            name = m.name
            try m.claim()
            raw = RawInput(name: name, fd: -1, ownsDescriptor: false, member: m)
        }
        let first = try raw.firstBytes(6)
        hasNoRawBytes = first.isEmpty
        guard let c = Compression.told(by: first) else { return }
        compression = c
        let raw = self.raw
        let decoder = try makeDecoder(c, name: name) { buffer in try raw.read(buffer) }
        self.decoder = decoder
        if options.parsesAhead && raw.member == nil {
            ahead = ByteInput.decodeAhead(decoder, raw: raw, limits: limits, name: name, compression: c)
        }
    }

    deinit {
        // The thread stops at its next chunk; it is not waited for (it may be reading a pipe).
        ahead?.cancel()
    }

    /// Starts the decoder on a thread of its own; nil when no thread could be started.
    private static func decodeAhead(_ decoder: any ByteDecoder, raw: RawInput, limits: ExpansionLimits, name: String,
                                    compression: Compression) -> Handoff<DecodedChunk>? {
        nonisolated(unsafe) let decoder = decoder
        return Handoff<DecodedChunk>.start(window: 3, stackSize: nil) { handoff in
            var spare: [DecodedChunk] = []
            var decoded = 0
            while true {
                let chunk = spare.popLast() ?? DecodedChunk()
                let n = try decoder.read(into: chunk.bytes)
                if n == 0 { return }
                decoded += n
                try limits.check(name: name, expanded: decoded, from: raw.bytesRead.load(ordering: .relaxed),
                                 what: "its \(compression.rawValue) data")
                chunk.count = n
                guard let back = handoff.put(chunk) else { return }
                spare += back
            }
        }
    }

    /// Bytes read from standard input before its reader was made (`peekStandardInput`), given to
    /// the next reader of standard input first.
    private static let standardInputAhead = Mutex<[UInt8]>([])

    /// The first `count` bytes of standard input, decompressed if it is compressed (fewer at its
    /// end, or where its data is corrupt: the reader says so), to tell whether it is an archive.
    /// Every byte read is kept for standard input's reader. Reads at most 1 MiB ahead.
    public static func peekStandardInput(_ count: Int) throws -> [UInt8] {
        var raw: [UInt8] = standardInputAhead.withLock { $0 }
        // A regular file (`< file`) is looked at where it stands, without moving: its reader reads
        // it from there, and may read it twice. A pipe's bytes are kept for its reader.
        let start = FileSystem.kind(ofDescriptor: 0) == .file && raw.isEmpty ? lseek(0, 0, SEEK_CUR) : -1
        func readMore() throws -> Bool {
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let n = chunk.withUnsafeMutableBytes { buffer in
                    start >= 0 ? Glibc.pread(0, buffer.baseAddress, buffer.count, start + off_t(raw.count))
                               : Glibc.read(0, buffer.baseAddress, buffer.count)
                }
                if n >= 0 {
                    raw += chunk[..<n]
                    return n > 0
                }
                if errno != EINTR { throw FileSystem.failure(.io, "<stdin>", "read error") }
            }
        }
        defer { if start < 0 { standardInputAhead.withLock { $0 = raw } } }
        while raw.count < 6, try readMore() {}
        guard let compression = Compression.told(by: raw) else {
            while raw.count < count, try readMore() {}
            return Array(raw.prefix(count))
        }
        var given = 0
        let decoder = try makeDecoder(compression, name: "<stdin>") { buffer in
            if given == raw.count, try raw.count > 1 << 20 || !readMore() { return 0 }
            let n = min(buffer.count, raw.count - given)
            raw.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + given, byteCount: n) }
            given += n
            return n
        }
        var decoded = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            guard let n = try? decoded.withUnsafeMutableBytes({ try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[got...])) }),
                  n > 0 else { break }
            got += n
        }
        return Array(decoded[..<got])
    }

    /// Whether the input can be read again from where its reading started: a regular file, not
    /// compressed.
    public var canRewind: Bool { compression == nil && raw.canRewind }

    /// Starts a first pass over a file that will be read again (`rewindForSecondPass`): progress
    /// then moves evenly through both passes, the check counting half the file's bytes and the
    /// read the rest, however far the check got.
    public func beginCheckPass() { raw.beginCheckPass() }

    /// Rewinds after a check pass (see `beginCheckPass`); false if that is not possible.
    public func rewindForSecondPass() -> Bool { raw.rewindForSecondPass() }

    /// The bytes a second pass over a file of `size` bytes has to count once it has read `read`,
    /// when the check pass counted `checked`: the rest in proportion, so the two passes together
    /// count the file once. The file's size may have changed since it was measured: what lies past
    /// it counts in full. `rest * read` is taken at full width: for a file over 4 GiB it passes
    /// `Int.max`.
    static func dueAfterCheck(read: Int, checked: Int, size: Int) -> Int {
        let rest = max(size - checked, 0)
        guard read <= size, size > 0 else { return rest + (read - size) }
        return size.dividingFullWidth(rest.multipliedFullWidth(by: read)).quotient
    }

    /// The first `count` bytes (decompressed, for a compressed input; fewer at the end of input),
    /// looked at before reading: the next reads give them first. For a reader that decides how to
    /// read by its first bytes (a UTF-16 byte order mark).
    public func peek(_ count: Int) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: max(1, min(count, 1 << 16)))
        while peeked.count - peekedPosition < count {
            let want = min(chunk.count, count - (peeked.count - peekedPosition))
            let n = try chunk.withUnsafeMutableBytes { try readSource(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want])) }
            if n == 0 { break }
            peeked += chunk[..<n]
        }
        return Array(peeked[peekedPosition...].prefix(count))
    }

    /// The first `count` bytes of an input, decompressed (fewer at its end), and its compression, read by an input of
    /// their own that does not count toward progress: to tell an archive or a format by its bytes
    /// before its reader is made. A file that cannot be opened is a `.noInput` error; corrupt
    /// compressed data a `.data` error.
    public static func head(of location: InputLocation, count: Int) throws -> (bytes: [UInt8], compression: Compression?) {
        // A few KiB: not worth a decoder's thread.
        var options = ReadOptions()
        options.parsesAhead = false
        let input = try ByteInput(location, options: options)
        defer { totalBytesRead.subtract(input.bytesCounted, ordering: .relaxed) }
        return (try input.peek(count), input.compression)
    }

    /// Whether the input holds no bytes at all (none once decompressed, for a compressed input):
    /// an input with no trips, whatever its format. A compressed input's first byte is decoded
    /// ahead for it (`peek`), and given first by `read`.
    public func holdsNoBytes() throws -> Bool {
        guard compression != nil else { return hasNoRawBytes }
        return try peek(1).isEmpty
    }

    /// Reads up to `buffer.count` bytes (decompressed, for a compressed input); 0 at the end of
    /// input. An I/O error is an `.io` error; corrupt compressed data a `.data` error.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if peekedPosition < peeked.count, let base = buffer.baseAddress {
            let n = min(buffer.count, peeked.count - peekedPosition)
            peeked.withUnsafeBytes { base.copyMemory(from: $0.baseAddress! + peekedPosition, byteCount: n) }
            peekedPosition += n
            if peekedPosition == peeked.count { peeked = []; peekedPosition = 0 }
            return n
        }
        return try readSource(into: buffer)
    }

    /// Reads from the input itself, through its decoder if it has one.
    private func readSource(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let decoder else { return try raw.read(buffer) }
        guard let ahead else {
            let n = try decoder.read(into: buffer)
            decodedBytes += n
            try limits.check(name: name, expanded: decodedBytes, from: rawBytesRead, what: "its \(compression!.rawValue) data")
            return n
        }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while chunk == nil || chunkPosition == chunk!.count {
            if let done = chunk {
                ahead.giveBack(done)
                chunk = nil
            }
            do {
                guard let next = try ahead.take() else { return 0 }
                chunk = next
                chunkPosition = 0
            } catch {
                ahead.cancel()
                throw error
            }
        }
        let n = min(buffer.count, chunk!.count - chunkPosition)
        base.copyMemory(from: chunk!.bytes.baseAddress! + chunkPosition, byteCount: n)
        chunkPosition += n
        return n
    }

    /// Reads `bytes.count` bytes of a plain regular file at `offset` without moving its reading;
    /// the bytes read, or nil for anything but a plain regular file.
    func read(_ bytes: inout [UInt8], at offset: Int) -> Int? {
        compression == nil ? raw.read(&bytes, at: offset) : nil
    }

    /// The size of a regular file; nil for a pipe or an archive's member.
    var fileSize: Int? { raw.fileSize }

    /// Moves a plain regular file's reading to `offset` as lseek(2) does (`whence` SEEK_SET,
    /// SEEK_CUR or SEEK_END), for an archive's reader that looks at its end first (zip); nil for a
    /// pipe, a compressed input or an archive's member.
    func seek(_ offset: Int64, whence: Int32) -> Int64? {
        compression == nil ? raw.seek(offset, whence: whence) : nil
    }
}

/// 256 KiB a decoder gave on its own thread.
final class DecodedChunk: @unchecked Sendable {
    let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    var count = 0
    deinit { bytes.deallocate() }
}

/// An input's own bytes, from a descriptor (a file, standard input) or from an archive's member,
/// with what was read ahead to tell its compression given back first, and progress counted. A
/// compressed input's decoder reads it, on the decoder's thread when it has one: its counts are
/// atomic or read once that thread has ended.
final class RawInput: @unchecked Sendable {
    let name: String
    private let fd: Int32
    private let ownsDescriptor: Bool
    /// An archive's member, read through its archive instead of a descriptor.
    let member: ArchiveMember?
    /// The first bytes of a pipe, read to tell its compression, given back before any more.
    var head: [UInt8] = []
    /// Bytes read so far (not counting those given back from `head` twice).
    let bytesRead = Atomic<Int>(0)
    /// Where a regular file's reading started, to read it again; -1 for a pipe or a terminal.
    private var startOffset: off_t = -1
    /// How reads count toward `totalBytesRead`: in full, or over two passes (see `beginCheckPass`).
    private enum Counting {
        case full
        /// A first pass, which only checks the input: half its bytes count.
        case check
        /// The read after a check that counted `checked` of `size` bytes: the rest, spread evenly.
        case afterCheck(checked: Int, size: Int)
    }
    private var counting = Counting.full
    /// Bytes read in this pass, and what this pass has counted toward `totalBytesRead`.
    private var passRead = 0
    private var passCounted = 0
    /// What this input has counted toward `totalBytesRead`, over all passes.
    private(set) var bytesCounted = 0

    init(name: String, fd: Int32, ownsDescriptor: Bool, member: ArchiveMember?) {
        self.name = name; self.fd = fd; self.ownsDescriptor = ownsDescriptor; self.member = member
    }

    deinit { if ownsDescriptor && fd >= 0 { close(fd) } }

    /// The first `count` bytes (fewer at the end): a regular file's without moving (pread), a
    /// pipe's or a member's by reading them and keeping them for the first read.
    func firstBytes(_ count: Int) throws -> [UInt8] {
        var first = [UInt8](repeating: 0, count: count)
        var got = 0
        if member == nil, FileSystem.kind(ofDescriptor: fd) == .file, case let at = lseek(fd, 0, SEEK_CUR), at >= 0 {
            got = try first.withUnsafeMutableBytes { b in
                while true {
                    let n = pread(fd, b.baseAddress, b.count, at)
                    if n >= 0 { return n }
                    if errno != EINTR { throw FileSystem.failure(.io, name, "read error") }
                }
            }
        } else {
            while got < first.count {
                let n = try first.withUnsafeMutableBytes { b in try read(UnsafeMutableRawBufferPointer(rebasing: b[got...])) }
                if n == 0 { break }
                got += n
            }
            // Bytes read ahead of the reader stay ahead of these.
            head = Array(first[..<got]) + head
        }
        return Array(first[..<got])
    }

    /// Whether the input can be read again from where its reading started: a regular file.
    var canRewind: Bool {
        if member != nil { return false }
        if startOffset < 0 {
            guard FileSystem.kind(ofDescriptor: fd) == .file else { return false }
            let at = lseek(fd, 0, SEEK_CUR)
            guard at >= 0 else { return false }
            startOffset = at
        }
        return true
    }

    func beginCheckPass() {
        counting = .check
        passRead = 0
        passCounted = 0
    }

    func rewindForSecondPass() -> Bool {
        guard startOffset >= 0 && lseek(fd, startOffset, SEEK_SET) == startOffset else { return false }
        let size = FileSystem.size(ofDescriptor: fd).map { max($0 - Int(startOffset), 0) } ?? 0
        counting = .afterCheck(checked: passCounted, size: size)
        passRead = 0
        passCounted = 0
        return true
    }

    /// Counts `n` more bytes read toward `totalBytesRead`, as this pass counts them.
    private func count(_ n: Int) {
        passRead += n
        let due: Int
        switch counting {
        case .full:
            due = passRead
        case .check:
            due = passRead / 2
        case .afterCheck(let checked, let size):
            due = ByteInput.dueAfterCheck(read: passRead, checked: checked, size: size)
        }
        let add = due - passCounted
        guard add > 0 else { return }
        passCounted = due
        bytesCounted += add
        totalBytesRead.add(add, ordering: .relaxed)
    }

    /// Reads `bytes.count` bytes of a regular file at `offset` without moving its reading; nil
    /// for anything but a regular file.
    func read(_ bytes: inout [UInt8], at offset: Int) -> Int? {
        guard member == nil, FileSystem.kind(ofDescriptor: fd) == .file else { return nil }
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress! + got, $0.count - got, off_t(offset + got)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            got += n
        }
        return got
    }

    /// The size of a regular file; nil for a pipe or an archive's member.
    var fileSize: Int? {
        guard member == nil, FileSystem.kind(ofDescriptor: fd) == .file else { return nil }
        return FileSystem.size(ofDescriptor: fd)
    }

    /// Moves a regular file's reading as lseek(2) does; nil for a pipe, a member, or with bytes
    /// kept ahead.
    func seek(_ offset: Int64, whence: Int32) -> Int64? {
        guard member == nil, head.isEmpty, FileSystem.kind(ofDescriptor: fd) == .file else { return nil }
        let at = lseek(fd, off_t(offset), whence)
        return at < 0 ? nil : Int64(at)
    }

    /// Reads the input's own bytes: the kept head first, then read(2) or the archive.
    func read(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if !head.isEmpty {
            let n = min(head.count, buffer.count)
            head.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: n) }
            head.removeFirst(n)
            // Counted when they were first read.
            return n
        }
        if let member {
            let n = try member.read(into: buffer)
            bytesRead.add(n, ordering: .relaxed)
            return n
        }
        while true {
            let n = Glibc.read(fd, base, buffer.count)
            if n >= 0 {
                if n > 0 { count(n) }
                bytesRead.add(n, ordering: .relaxed)
                return n
            }
            if errno == EINTR { continue }
            throw FileSystem.failure(.io, name, "read error")
        }
    }
}
