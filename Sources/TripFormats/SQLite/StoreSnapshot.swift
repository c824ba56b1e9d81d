#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// A store opened to be read as SQLite reads it, `-wal` and all, without writing a byte of the user's
/// files, not even the `-shm` (docs/DESIGN-NOTES.md, "Reading a store without changing it").
///
/// A read-only open (`SQLITE_OPEN_READONLY`) of a WAL store still writes its `-shm`: it rebuilds the
/// wal-index there and marks its reads in it, and creates the file when it is missing. So:
/// - no `-wal` beside a WAL-mode file: opened `immutable=1` (nothing is pending, no file is made);
/// - a `-wal` and a `-shm`: opened with `readonly_shm=1`: SQLite maps the `-shm` read-only, takes its
///   locks (which change no bytes) and, where it cannot trust that index, builds a private one in
///   memory from the `-wal`, so a writer in another process is neither disturbed nor half-seen;
/// - a `-wal` without a `-shm`: no process has the store open (each keeps a `-shm` while it does),
///   so the store and its `-wal` are copied into a private temporary folder and read there; the copy
///   is removed when the snapshot is released;
/// - a store in rollback-journal mode: an ordinary read-only open, which writes nothing.
final class StoreSnapshot {
    /// How the store was opened.
    enum Route: Equatable {
        case immutable, readOnlyIndex, privateCopy, ordinary
    }

    let route: Route
    /// The connection, in one read transaction from `init` until `end()`.
    private(set) var connection: SQLiteConnection!
    private let copyDirectory: String?

    /// Opens `path` to read and begins the read transaction; a private copy is made in `temporaryDirectory`
    /// (nil: `$TMPDIR`, else `/tmp`). A missing file is `.noInput`.
    init(path: String, busyTimeout: Int32, temporaryDirectory: String? = nil) throws {
        try SQLiteStore.requireFile(path)
        let wal = path + "-wal"
        var uri: String?
        var directory: String?
        if !SQLiteConnection.isWALModeFile(path) {
            route = .ordinary
        } else if !FileSystem.exists(wal) {
            route = .immutable
        } else if FileSystem.exists(path + "-shm") {
            route = .readOnlyIndex
            uri = "file:" + SQLiteConnection.uriPath(path) + "?mode=ro&readonly_shm=1"
        } else {
            route = .privateCopy
            let folder = try FileSystem.makeUniqueDirectory(template: (temporaryDirectory ?? SpillBudget.temporaryDirectory) + "/tripconv-store.XXXXXX",
                                                            mode: 0o700, name: "a private copy of \(path)")
            directory = folder
            do {
                try StoreSnapshot.copy(path, to: folder + "/store")
                try StoreSnapshot.copy(wal, to: folder + "/store-wal")
            } catch {
                FileSystem.removeDirectoryAndFiles(folder)
                throw error
            }
            uri = "file:" + SQLiteConnection.uriPath(folder + "/store") + "?mode=ro"
        }
        copyDirectory = directory
        do {
            connection = try SQLiteConnection(path: path, access: .reading, busyTimeout: busyTimeout, uri: uri)
            try connection.execute("BEGIN", doing: "cannot read the store")
        } catch {
            connection = nil
            if let directory { FileSystem.removeDirectoryAndFiles(directory) }
            throw error
        }
    }

    /// Ends the read transaction and closes the store (a private copy is removed).
    func end() {
        connection?.rollbackQuietly()
        connection = nil
        if let copyDirectory { FileSystem.removeDirectoryAndFiles(copyDirectory) }
    }

    deinit { end() }

    /// Copies a file's bytes to a new file `target`.
    private static func copy(_ source: String, to target: String) throws {
        let input = try FileSystem.openForReading(source)
        defer { close(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw FileSystem.failure(.cantCreate, target, "cannot create") }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystem.failure(.io, source, "read error")
            }
            if n == 0 { return }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { write(output, $0.baseAddress! + done, n - done) }
                if w < 0 {
                    if errno == EINTR { continue }
                    throw FileSystem.failure(.io, target, "write error")
                }
                done += w
            }
        }
    }
}
