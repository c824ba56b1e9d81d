#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TripKit

/// A temporary file of records, written once from start to end and then read from the start, as
/// often as needed: where a holding that spills keeps trips and records set aside.
///
/// The file has no name another process could find (`FileSystem.makeAnonymousFile`), so it is
/// gone when the holding is, on success, on an error, and on any signal, SIGKILL included.
/// Writes go through a buffer of `bufferSize` bytes; a full disk is an I/O error (exit 74) that
/// names the temporary directory and says how to choose another.
final class SpillFile {
    static let bufferSize = 1 << 20

    private let fd: Int32
    let directory: String
    private let buffer: ByteStorage
    /// Bytes written so far, buffered ones included.
    private(set) var size = 0
    private var written = 0

    /// A new file in `directory`; `bufferSize` bytes are buffered before a write (a partition,
    /// one of many written at once, takes a smaller buffer).
    init(directory: String, bufferSize: Int = SpillFile.bufferSize) throws {
        self.directory = directory
        fd = try FileSystem.makeAnonymousFile(in: directory)
        buffer = ByteStorage(capacity: bufferSize)
    }

    deinit { close(fd) }

    /// Appends bytes; they are in the file once `flush` has returned.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        if bytes.count > buffer.freeCapacity { try flush() }
        if bytes.count > buffer.capacity {
            try writeAll(bytes)
        } else {
            buffer.append(bytes)
        }
        size += bytes.count
    }

    func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBufferPointer { try append($0) }
    }

    /// Writes what the buffer holds.
    func flush() throws {
        guard buffer.count > 0 else { return }
        try writeAll(UnsafeBufferPointer(start: buffer.pointer, count: buffer.count))
        buffer.removeAll()
    }

    private func writeAll(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(written))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let code = n < 0 ? errno : ENOSPC
                throw TripError(.io, "\(directory): cannot write temporary data: \(String(cString: strerror(code)))",
                                notes: ["the run spills trips it cannot hold in --memory-limit to --temp-dir (or $TMPDIR); "
                                        + "give a directory with more room, or a larger --memory-limit"])
            }
            done += n
            written += n
        }
    }

    /// `count` bytes from `offset`, for a file read in no order (flush first).
    func bytes(at offset: Int, count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw TripError(.io, "\(directory): cannot read temporary data back: \(String(cString: strerror(n < 0 ? errno : EIO)))")
            }
            done += n
        }
        return out
    }

    /// A reader from the file's start, with a buffer of `bufferSize` bytes (smaller where many
    /// files are read at once); flush first.
    func reader(bufferSize: Int = SpillFile.bufferSize) -> SpillReader {
        SpillReader(fd: fd, size: written, directory: directory, bufferSize: bufferSize)
    }
}

/// Reads a spill file from its start, through a buffer of its own.
struct SpillReader {
    private let fd: Int32
    private let size: Int
    private let directory: String
    private let buffer: ByteStorage
    private let bufferSize: Int
    private var start = 0
    private var offset = 0

    init(fd: Int32, size: Int, directory: String, bufferSize: Int) {
        self.fd = fd; self.size = size; self.directory = directory; self.bufferSize = bufferSize
        buffer = ByteStorage(capacity: bufferSize)
    }

    /// The next `count` bytes, or nil at the end of the file. They stay valid until the next read.
    mutating func read(_ count: Int) throws -> UnsafeBufferPointer<UInt8>? {
        if buffer.count - start < count {
            guard try fill(count) else { return nil }
        }
        defer { start += count }
        return UnsafeBufferPointer(start: buffer.pointer + start, count: count)
    }

    /// Makes at least `count` bytes available; false at the end of the file.
    private mutating func fill(_ count: Int) throws -> Bool {
        buffer.removeFirst(start)
        start = 0
        if buffer.capacity < count { buffer.grow(toAtLeast: count, keeping: buffer.count) }
        while buffer.count < count || (buffer.freeCapacity > 0 && offset < size && buffer.count < bufferSize / 2) {
            guard offset < size else { break }
            let fd = self.fd, at = offset, end = size
            let n = buffer.fill { room in pread(fd, room.baseAddress!, min(room.count, end - at), off_t(at)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw TripError(.io, "\(directory): cannot read temporary data back: \(String(cString: strerror(n < 0 ? errno : EIO)))")
            }
            offset += n
        }
        return buffer.count >= count
    }
}
