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
        case .file(let p): return Format.isPostgreSQLAddress(p) ? Format.redactedPostgreSQLAddress(p) : p
        }
    }

    /// Whether the output is a file whose name says it is compressed (`trips.jsonl.gz`).
    public var compressedByName: Bool {
        if case .file(let path) = self { return Compression.named(by: path) != nil }
        return false
    }

    /// The output a command-line argument names: none or `-` is standard output, anything else
    /// a path.
    public init(_ argument: String?) {
        if let argument, argument != "-" { self = .file(argument) } else { self = .standardOutput }
    }
}

/// A buffered byte sink that is complete or absent: a file output is written to a temporary file
/// beside the target and renamed over it by `commit()`; `discard()` (or deinit without commit)
/// removes the temporary file, leaving the target as it was. A file named with a compression's
/// extension (`trips.jsonl.gz`), or any output given a compression, is written compressed
/// (issue 17): still complete or absent, the compressor's trailer written before the rename.
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
    /// The compressor the buffer goes through, when the output is compressed.
    private var compressor: CompressedOutput?
    /// The compression the output is written in, if any.
    public let compression: Compression?

    /// Opens the output: standard output, a device or a pipe is written in place; a file is
    /// written to a new temporary file beside it. Throws if it cannot be opened or made. It is
    /// written in `compression`, else in the one its file's extension names, if any.
    public init(_ location: OutputLocation, compression: Compression? = nil) throws {
        buffer.reserveCapacity(ByteOutput.capacity)
        switch location {
        case .standardOutput:
            name = location.name; fd = 1; target = nil; temporaryPath = nil
        case .file(let path):
            name = path
            if FileSystem.kind(path) == .other {
                // A device or a pipe (/dev/null, /dev/full, a FIFO): written in place, never replaced.
                fd = try FileSystem.openForWriting(path); target = nil; temporaryPath = nil
            } else {
                target = path
                let made = try TemporaryPaths.makeFile(beside: path)
                fd = made.fd; temporaryPath = made.path
            }
        }
        if case .file(let path) = location {
            self.compression = compression ?? Compression.named(by: path)?.compression
        } else {
            self.compression = compression
        }
        if let c = self.compression {
            compressor = try CompressedOutput(c, name: name) { [unowned self] bytes in try self.writeOut(bytes) }
        }
    }

    /// The temporary file's path while the output is being written (for writers that need a path).
    public var pathBeingWritten: String? { temporaryPath }

    deinit { if !done { discard() } }

    /// Buffers one byte, writing the buffer out when it is full.
    @inline(__always)
    public func write(_ byte: UInt8) throws {
        buffer.append(byte)
        if buffer.count >= ByteOutput.capacity { try flush() }
    }

    /// Buffers bytes, writing the buffer out when it is full.
    public func write(_ bytes: some Collection<UInt8>) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= ByteOutput.capacity { try flush() }
    }

    /// Buffers a string's UTF-8, writing the buffer out when it is full.
    public func write(_ text: String) throws {
        var t = text
        t.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= ByteOutput.capacity { try flush() }
    }

    /// Writes the buffer out (through the compressor, when there is one).
    public func flush() throws {
        if let compressor {
            try buffer.withUnsafeBytes { try compressor.write($0) }
        } else {
            try buffer.withUnsafeBytes { try writeOut($0) }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes bytes to the file or stream, starting the writeback as they add up.
    private func writeOut(_ raw: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystem.failure(.io, name, "write error")
            }
            offset += n
        }
        written += raw.count
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
        try compressor?.finish()
        guard let target, let temporaryPath else {
            if fd > 2 { close(fd); fd = -1 }
            done = true
            return
        }
        try FileSystem.sync(descriptor: fd, name: target)
        close(fd); fd = -1
        do {
            try FileSystem.rename(temporaryPath, to: target)
        } catch {
            FileSystem.remove(temporaryPath)
            TemporaryPaths.unregister(temporaryPath)
            done = true
            throw error
        }
        TemporaryPaths.unregister(temporaryPath)
        done = true
    }

    /// Throws away what was written; the target is left as it was.
    public func discard() {
        done = true
        buffer.removeAll()
        compressor = nil
        if let temporaryPath {
            if fd >= 0 { close(fd); fd = -1 }
            FileSystem.remove(temporaryPath)
            TemporaryPaths.unregister(temporaryPath)
        } else if fd > 2 {
            close(fd); fd = -1
        }
    }
}
