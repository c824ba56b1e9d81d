#if canImport(Glibc)
import Glibc
#endif
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
    private var buffer: [UInt8] = []
    private let bufferSize: Int
    /// Bytes written so far, buffered ones included.
    private(set) var size = 0

    /// A new file in `directory`; `bufferSize` bytes are buffered before a write (a partition,
    /// one of many written at once, takes a smaller buffer).
    init(directory: String, bufferSize: Int = SpillFile.bufferSize) throws {
        self.directory = directory
        self.bufferSize = bufferSize
        fd = try FileSystem.makeAnonymousFile(in: directory)
        buffer.reserveCapacity(bufferSize)
    }

    deinit { close(fd) }

    /// Appends bytes; they are in the file once `flush` has returned.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        if buffer.count + bytes.count > bufferSize { try flush() }
        if bytes.count > bufferSize {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
        size += bytes.count
    }

    func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBufferPointer { try append($0) }
    }

    /// Writes what the buffer holds.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBufferPointer { try writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private var written = 0

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

    /// A reader from the file's start; flush first.
    func reader() -> SpillReader { SpillReader(fd: fd, size: written, directory: directory) }
}

/// Reads a spill file from its start, through a buffer.
struct SpillReader {
    private let fd: Int32
    private let size: Int
    private let directory: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var offset = 0

    init(fd: Int32, size: Int, directory: String) {
        self.fd = fd; self.size = size; self.directory = directory
    }

    var atEnd: Bool { start == buffer.count && offset == size }

    /// The next `count` bytes, or nil at the end of the file.
    mutating func read(_ count: Int) throws -> ArraySlice<UInt8>? {
        if buffer.count - start < count {
            guard try fill(count) else { return nil }
        }
        defer { start += count }
        return buffer[start..<(start + count)]
    }

    /// Makes at least `count` bytes available; false at the end of the file.
    private mutating func fill(_ count: Int) throws -> Bool {
        buffer.removeSubrange(0..<start)
        start = 0
        let want = max(count - buffer.count, SpillFile.bufferSize)
        let have = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: want))
        var got = 0
        while got < want, offset < size {
            let n = buffer.withUnsafeMutableBufferPointer {
                pread(fd, $0.baseAddress! + have + got, min(want - got, size - offset), off_t(offset))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw TripError(.io, "\(directory): cannot read temporary data back: \(String(cString: strerror(n < 0 ? errno : EIO)))")
            }
            got += n
            offset += n
        }
        buffer.removeLast(want - got)
        return buffer.count >= count
    }
}
