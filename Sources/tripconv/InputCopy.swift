#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

/// Standard input or an archive's member copied to a temporary file, for the readers that must open a
/// file by path: a store (SQLite reads pages, not a stream) and an export of another app's objects
/// (read twice: once to learn the keys, once to write). The copy is `--temp-dir`'s (else `$TMPDIR`'s)
/// `tripconv-input.XXXXXX`, mode 0600, registered so that a SIGINT, SIGTERM or SIGHUP removes it, and
/// removed by `remove()` (callers `defer` it, so an error removes it too). It holds the input's bytes
/// decompressed (a gzip export reads as its text), within the expansion limits.
final class InputCopy {
    /// The copy's path, and the input's name for messages (`<stdin>`, `archive!member`).
    let path: String
    let name: String
    private var removed = false

    init(_ location: InputLocation, temporaryDirectory: String?, options: ReadOptions) throws {
        name = location.name
        let directory = temporaryDirectory ?? SpillBudget.temporaryDirectory
        let saved = TemporaryPaths.blockCleanupSignals()
        let made: (fd: Int32, path: String)
        do {
            made = try FileSystem.makeUniqueFile(template: directory + "/tripconv-input.XXXXXX", mode: 0o600, name: directory)
            TemporaryPaths.register(made.path, directory: false)
            TemporaryPaths.restoreSignals(saved)
        } catch {
            TemporaryPaths.restoreSignals(saved)
            throw error
        }
        path = made.path
        defer { close(made.fd) }
        do {
            let input = try ByteInput(location, options: options)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let n = try input.read(into: buffer)
                if n == 0 { break }
                var done = 0
                while done < n {
                    let w = write(made.fd, buffer.baseAddress! + done, n - done)
                    if w < 0 && errno == EINTR { continue }
                    guard w > 0 else { throw TripError(.io, "\(path): cannot write a copy of \(name): \(String(cString: strerror(errno)))") }
                    done += w
                }
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Removes the copy (and any `-wal` or `-shm` SQLite left beside it); again does nothing.
    func remove() {
        guard !removed else { return }
        removed = true
        for p in [path, path + "-wal", path + "-shm", path + "-journal"] { unlink(p) }
        TemporaryPaths.unregister(path)
    }

    /// Runs `body`, naming the input instead of its copy in any error it throws.
    func naming<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as TripError {
            var e = error
            e.message = e.message.replacing(path, with: name)
            throw e
        }
    }
}
