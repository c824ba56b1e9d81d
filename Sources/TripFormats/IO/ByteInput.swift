#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit
import Synchronization

/// Bytes read by every ByteInput of the process so far, for progress reports.
public let totalBytesRead = Atomic<Int>(0)

/// Where an input comes from.
public enum InputLocation: Sendable, Equatable {
    case standardInput
    case file(String)

    /// The name used in messages: the path, `<stdin>`, or a PostgreSQL address without its password.
    public var name: String {
        switch self {
        case .standardInput: return "<stdin>"
        case .file(let p): return Format.isPostgreSQLAddress(p) ? Format.redactedPostgreSQLAddress(p) : p
        }
    }

    /// The input a command-line argument names: `-` is standard input, anything else a path.
    public init(_ argument: String) {
        self = argument == "-" ? .standardInput : .file(argument)
    }
}

/// An input's bytes, read in chunks with read(2): no reader ever holds a whole input.
public final class ByteInput {
    public let name: String
    private var fd: Int32
    private let ownsDescriptor: Bool
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
    public private(set) var bytesCounted = 0
    /// The compression its first bytes tell (issue 17), nil for plain bytes. A compressed input is
    /// read through its decoder, and progress counts the compressed bytes.
    public private(set) var compression: Compression?
    private var decoder: (any ByteDecoder)?
    /// The first bytes of a pipe, read to tell its compression, given back before any more.
    private var head: [UInt8] = []

    /// Opens a file for reading; a missing or unreadable file is a `.noInput` error. Its first
    /// bytes tell whether it is compressed (gzip, bzip2, xz, zstd).
    public init(_ location: InputLocation) throws {
        switch location {
        case .standardInput:
            name = location.name; fd = 0; ownsDescriptor = false
        case .file(let path):
            name = path
            fd = try FileSystem.openForReading(path); ownsDescriptor = true
        }
        try tellCompression()
    }

    /// Looks at the first 6 bytes: a regular file's without moving (pread), a pipe's by reading
    /// them and keeping them for the first read.
    private func tellCompression() throws {
        var first = [UInt8](repeating: 0, count: 6)
        var got = 0
        if FileSystem.kind(ofDescriptor: fd) == .file, case let at = lseek(fd, 0, SEEK_CUR), at >= 0 {
            got = try first.withUnsafeMutableBytes { b in
                while true {
                    let n = pread(fd, b.baseAddress, b.count, at)
                    if n >= 0 { return n }
                    if errno != EINTR { throw FileSystem.failure(.io, name, "read error") }
                }
            }
        } else {
            while got < first.count {
                let n = try first.withUnsafeMutableBytes { b in try rawRead(UnsafeMutableRawBufferPointer(rebasing: b[got...])) }
                if n == 0 { break }
                got += n
            }
            head = Array(first[..<got])
        }
        guard let c = Compression.told(by: first[..<got]) else { return }
        compression = c
        decoder = try makeDecoder(c, name: name) { [unowned self] buffer in try self.rawRead(buffer) }
    }

    /// Whether the input can be read again from where its reading started: a regular file, not
    /// compressed.
    public var canRewind: Bool {
        if compression != nil { return false }
        if startOffset < 0 {
            guard FileSystem.kind(ofDescriptor: fd) == .file else { return false }
            let at = lseek(fd, 0, SEEK_CUR)
            guard at >= 0 else { return false }
            startOffset = at
        }
        return true
    }

    /// Goes back to where reading started (see `canRewind`, which must be asked first); false if
    /// that is not possible.
    private func rewind() -> Bool {
        startOffset >= 0 && lseek(fd, startOffset, SEEK_SET) == startOffset
    }

    /// Starts a first pass over a file that will be read again (`rewindForSecondPass`): progress
    /// then moves evenly through both passes, the check counting half the file's bytes and the
    /// read the rest, however far the check got.
    public func beginCheckPass() {
        counting = .check
        passRead = 0
        passCounted = 0
    }

    /// Rewinds after a check pass (see `beginCheckPass`); false if that is not possible.
    public func rewindForSecondPass() -> Bool {
        guard rewind() else { return false }
        let size = FileSystem.size(ofDescriptor: fd).map { max($0 - Int(startOffset), 0) } ?? 0
        counting = .afterCheck(checked: passCounted, size: size)
        passRead = 0
        passCounted = 0
        return true
    }

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

    deinit { if ownsDescriptor && fd >= 0 { close(fd) } }

    /// Reads up to `buffer.count` bytes (decompressed, for a compressed input); 0 at the end of
    /// input. An I/O error is an `.io` error; corrupt compressed data a `.data` error.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let decoder { return try decoder.read(into: buffer) }
        return try rawRead(buffer)
    }

    /// Reads the input's own bytes: the kept head first, then read(2).
    private func rawRead(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if !head.isEmpty {
            let n = min(head.count, buffer.count)
            head.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: n) }
            head.removeFirst(n)
            count(n)
            return n
        }
        while true {
            let n = Glibc.read(fd, base, buffer.count)
            if n >= 0 {
                if n > 0 { count(n) }
                return n
            }
            if errno == EINTR { continue }
            throw FileSystem.failure(.io, name, "read error")
        }
    }
}
