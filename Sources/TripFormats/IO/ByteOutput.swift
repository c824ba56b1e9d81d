#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// Where an output goes.
public enum OutputLocation: Sendable, Equatable {
    case standardOutput
    case file(String)

    public var name: String {
        switch self {
        case .standardOutput: return "<stdout>"
        case .file(let p): return p
        }
    }

    public init(_ argument: String?) {
        if let argument, argument != "-" { self = .file(argument) } else { self = .standardOutput }
    }
}

/// A buffered byte sink that is complete or absent: a file output is written to a temporary file
/// beside the target and renamed over it by `commit()`; `discard()` (or deinit without commit)
/// removes the temporary file, leaving the target as it was.
public final class ByteOutput {
    public let name: String
    private var fd: Int32
    private let target: String?
    private let temporaryPath: String?
    private var buffer: [UInt8] = []
    private var done = false
    private static let capacity = 1 << 16
    /// Bytes written to the file so far, and how many of them have been handed to writeback.
    private var written = 0
    private var kicked = 0
    /// How much a file output writes before its writeback is started (see `flush`).
    private static let writebackStep = 8 << 20

    public init(_ location: OutputLocation) throws {
        buffer.reserveCapacity(ByteOutput.capacity)
        switch location {
        case .standardOutput:
            name = location.name; fd = 1; target = nil; temporaryPath = nil
        case .file(let path):
            name = path
            var st = stat()
            if stat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG, (st.st_mode & S_IFMT) != S_IFDIR {
                // A device or a pipe (/dev/null, /dev/full, a FIFO): written in place, never replaced.
                let d = open(path, O_WRONLY | O_CLOEXEC)
                guard d >= 0 else {
                    throw TripError(.cantCreate, "\(path): cannot open: \(String(cString: strerror(errno)))")
                }
                fd = d; target = nil; temporaryPath = nil
            } else {
                target = path
                let (d, temporary) = try TemporaryPaths.makeFile(beside: path)
                fd = d
                temporaryPath = temporary
                fchmod(d, 0o644)
            }
        }
    }

    /// The temporary file's path while the output is being written (for writers that need a path).
    public var pathBeingWritten: String? { temporaryPath }

    deinit { if !done { discard() } }

    static func split(_ path: String) -> (String, String) {
        if let slash = path.lastIndex(of: "/") {
            let dir = String(path[..<slash])
            return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
        }
        return (".", path)
    }

    @inline(__always)
    public func write(_ byte: UInt8) throws {
        buffer.append(byte)
        if buffer.count >= ByteOutput.capacity { try flush() }
    }

    public func write(_ bytes: some Collection<UInt8>) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= ByteOutput.capacity { try flush() }
    }

    public func write(_ text: String) throws {
        var t = text
        t.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= ByteOutput.capacity { try flush() }
    }

    /// Writes the buffer out.
    public func flush() throws {
        var offset = 0
        try buffer.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw TripError(.io, "\(name): write error: \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
        // A file output is fsync'ed before it is renamed into place. Starting the writeback of each
        // 8 MiB as it is written (POSIX_FADV_DONTNEED starts it and does not wait; Linux's
        // sync_file_range is not in Swift's Glibc) lets the disk work while the trips are
        // formatted, so the final fsync waits for the last few MiB instead of the whole file.
        if temporaryPath != nil, written - kicked >= ByteOutput.writebackStep {
            _ = posix_fadvise(fd, off_t(kicked), off_t(written - kicked), POSIX_FADV_DONTNEED)
            kicked = written
        }
    }

    /// Flushes, and for a file makes it visible under its name.
    public func commit() throws {
        try flush()
        guard let target, let temporaryPath else {
            if fd > 2 { close(fd); fd = -1 }
            done = true
            return
        }
        if fsync(fd) != 0, errno != EINVAL {
            throw TripError(.io, "\(target): write error: \(String(cString: strerror(errno)))")
        }
        close(fd); fd = -1
        guard rename(temporaryPath, target) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporaryPath)
            TemporaryPaths.unregister(temporaryPath)
            done = true
            throw TripError(.cantCreate, "\(target): cannot create: \(message)")
        }
        TemporaryPaths.unregister(temporaryPath)
        done = true
    }

    /// Throws away what was written; the target is left as it was.
    public func discard() {
        done = true
        buffer.removeAll()
        if let temporaryPath {
            if fd >= 0 { close(fd); fd = -1 }
            unlink(temporaryPath)
            TemporaryPaths.unregister(temporaryPath)
        } else if fd > 2 {
            close(fd); fd = -1
        }
    }
}
