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

    /// The name used in messages: the path, or `<stdin>`.
    public var name: String {
        switch self {
        case .standardInput: return "<stdin>"
        case .file(let p): return p
        }
    }

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
    /// Whether reads count toward `totalBytesRead` (not while an input is read a first time only
    /// to be checked).
    public var countsProgress = true

    /// Opens a file for reading; a missing or unreadable file is a `.noInput` error.
    public init(_ location: InputLocation) throws {
        switch location {
        case .standardInput:
            name = location.name; fd = 0; ownsDescriptor = false
        case .file(let path):
            name = path
            let d = open(path, O_RDONLY | O_CLOEXEC)
            guard d >= 0 else {
                throw TripError(.noInput, "\(path): cannot open: \(String(cString: strerror(errno)))")
            }
            var st = stat()
            if fstat(d, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
                close(d)
                throw TripError(.noInput, "\(path): is a directory")
            }
            fd = d; ownsDescriptor = true
        }
    }

    /// Whether the input can be read again from where its reading started: a regular file.
    public var canRewind: Bool {
        if startOffset < 0 {
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
            let at = lseek(fd, 0, SEEK_CUR)
            guard at >= 0 else { return false }
            startOffset = at
        }
        return true
    }

    /// Goes back to where reading started (see `canRewind`, which must be asked first); false if
    /// that is not possible.
    public func rewind() -> Bool {
        startOffset >= 0 && lseek(fd, startOffset, SEEK_SET) == startOffset
    }

    deinit { if ownsDescriptor && fd >= 0 { close(fd) } }

    /// Reads up to `buffer.count` bytes; 0 at the end of input. An I/O error is an `.io` error.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = Glibc.read(fd, base, buffer.count)
            if n >= 0 {
                if countsProgress { totalBytesRead.add(n, ordering: .relaxed) }
                return n
            }
            if errno == EINTR { continue }
            throw TripError(.io, "\(name): read error: \(String(cString: strerror(errno)))")
        }
    }
}
