#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// The one layer between tripconv and the file system's calls: what a path names and its size,
/// files opened by path, directories made, listed and removed, renames, and unique names made.
/// A failure becomes a `TripError` in one place (`failure`), as `NAME: what was being done: the
/// system's reason`, e.g. `trips.csv: cannot open: No such file or directory`.
///
/// ```swift
/// switch try FileSystem.kind(of: "exports", failing: .noInput) {
/// case .directory: for name in try FileSystem.entries(of: "exports") { print(name) }
/// case .file, .other: print("one input")
/// }
/// ```
///
/// Reading and writing a descriptor stay with `ByteInput` and `ByteOutput`; the temporary paths
/// beside an output (their names, registry and cleanup on a signal) with `TemporaryPaths`, which
/// makes them here. Nothing here asks whether a path is readable or writable first: that answer
/// can be stale by the time of the open, which says it anyway.
package enum FileSystem {
    /// What a path names.
    package enum Kind: Sendable, Equatable {
        /// A regular file.
        case file
        case directory
        /// Anything else: a device, a pipe, a socket (or, not following links, a symbolic link).
        case other
    }

    /// The one place a failed system call becomes a `TripError`: `NAME: DOING: reason`, the reason
    /// being what the system says of `code` (`errno` when the call just failed).
    package static func failure(_ kind: TripError.Kind, _ name: String, _ doing: String, code: Int32 = errno) -> TripError {
        TripError(kind, "\(name): \(doing): \(String(cString: strerror(code)))")
    }

    // MARK: - Looking

    /// What a path names, following symbolic links unless `followingLinks` is false (then a link is
    /// `.other`); nil when nothing is there or it cannot be looked at.
    package static func kind(_ path: String, followingLinks: Bool = true) -> Kind? {
        var st = stat()
        guard (followingLinks ? stat(path, &st) : lstat(path, &st)) == 0 else { return nil }
        return kind(mode: st.st_mode)
    }

    /// What a path names; fails `kind` as `PATH: cannot open: reason` when nothing is there or it
    /// cannot be looked at (a directory on the way that may not be searched).
    package static func kind(of path: String, failing kind: TripError.Kind) throws -> Kind {
        var st = stat()
        guard stat(path, &st) == 0 else { throw failure(kind, path, "cannot open") }
        return self.kind(mode: st.st_mode)
    }

    /// Whether anything is at a path (following symbolic links).
    package static func exists(_ path: String) -> Bool {
        kind(path) != nil
    }

    /// A file's size in bytes, or nil when nothing is there.
    package static func size(_ path: String) -> Int? {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : nil
    }

    /// Whether two paths name the same file (a path that does not exist names none).
    package static func isSameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// What an open descriptor is; nil if it cannot be looked at.
    package static func kind(ofDescriptor fd: Int32) -> Kind? {
        var st = stat()
        return fstat(fd, &st) == 0 ? kind(mode: st.st_mode) : nil
    }

    /// The size of what an open descriptor reads; nil if it cannot be looked at.
    package static func size(ofDescriptor fd: Int32) -> Int? {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int(st.st_size) : nil
    }

    private static func kind(mode: mode_t) -> Kind {
        switch mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    // MARK: - Opening by path

    /// Opens a file to read; fails `.noInput` when it cannot be opened or is a directory.
    package static func openForReading(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(.noInput, path, "cannot open") }
        if kind(ofDescriptor: fd) == .directory {
            close(fd)
            throw TripError(.noInput, "\(path): is a directory")
        }
        return fd
    }

    /// Opens an existing file to write in place (a device or a pipe); fails `.cantCreate`.
    package static func openForWriting(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(.cantCreate, path, "cannot open") }
        return fd
    }

    /// A file's first `count` bytes, fewer if it is shorter or cannot be read that far (enough to
    /// tell a format by its header); fails `kind` as `PATH: cannot open: reason`.
    package static func head(of path: String, count: Int, failing kind: TripError.Kind) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(kind, path, "cannot open") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, count - filled, off_t(filled)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            filled += n
        }
        return Array(bytes[..<filled])
    }

    /// Flushes what was written to a descriptor to the disk, so a rename never publishes a file whose
    /// bytes are not there; fails `.io` as `NAME: write error: reason`. A descriptor that cannot be
    /// synced (a pipe, a device: `EINVAL`) needs nothing.
    package static func sync(descriptor fd: Int32, name: String) throws {
        if fsync(fd) != 0, errno != EINVAL { throw failure(.io, name, "write error") }
    }

    /// Flushes a file to the disk by its path (one that SQLite wrote); fails as `sync(descriptor:)`.
    package static func sync(_ path: String, name: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(.io, name, "write error") }
        defer { close(fd) }
        try sync(descriptor: fd, name: name)
    }

    // MARK: - Directories

    /// Makes a directory with `mode` (less the umask), unless one is there; fails `.cantCreate` when
    /// it cannot be made or something else is there.
    package static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
        switch kind(path) {
        case .directory?: return
        case nil:
            guard mkdir(path, mode) == 0 else { throw failure(.cantCreate, path, "cannot create") }
        case .file?, .other?:
            throw TripError(.cantCreate, "\(path): exists and is not a directory")
        }
    }

    /// The names in a directory, hidden ones included, but not `.` and `..`, in the order the
    /// directory gives them; fails `.noInput` as `DIR: cannot read directory: reason`.
    package static func entries(of directory: String) throws -> [String] {
        guard let d = opendir(directory) else { throw failure(.noInput, directory, "cannot read directory") }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = String(cString: direntNamePointer(e))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Fails `.cantCreate` unless an output can be made at `path`, looking only: nothing is made.
    /// Its directory must be there, a directory, and writable; `path` must not be a directory (for
    /// an output that is one, `isDirectory`, a tables layout's: not a file); a device or a pipe
    /// must be writable. The reason is the system's, as making it would give (`NAME: cannot create:
    /// No such file or directory`).
    package static func checkCanCreate(_ path: String, isDirectory: Bool = false) throws {
        switch kind(path) {
        case .directory? where !isDirectory:
            throw failure(.cantCreate, path, "cannot create", code: EISDIR)
        case .file? where isDirectory:
            throw TripError(.cantCreate, "\(path): exists and is not a directory")
        case .other?:
            guard access(path, W_OK) == 0 else { throw failure(.cantCreate, path, "cannot create") }
            return
        default:
            break
        }
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let parent = split(String(trimmed)).directory
        switch kind(parent) {
        case nil: throw failure(.cantCreate, path, "cannot create", code: ENOENT)
        case .directory?: guard access(parent, W_OK | X_OK) == 0 else { throw failure(.cantCreate, path, "cannot create") }
        case .file?, .other?: throw failure(.cantCreate, path, "cannot create", code: ENOTDIR)
        }
    }

    /// Fails `.cantCreate` unless files can be made in `directory`, looking only: a directory that
    /// is there and writable, or one that `makeDirectory` can make.
    package static func checkCanWrite(in directory: String) throws {
        switch kind(directory) {
        case .directory?: guard access(directory, W_OK | X_OK) == 0 else { throw failure(.cantCreate, directory, "cannot write in") }
        case nil: try checkCanCreate(directory, isDirectory: true)
        case .file?, .other?: throw TripError(.cantCreate, "\(directory): exists and is not a directory")
        }
    }

    /// Removes an empty directory, if it can; failure is not an error (used on the way out).
    package static func removeDirectory(_ path: String) {
        rmdir(path)
    }

    /// Removes a directory and the files in it (one level: what a temporary directory holds), as
    /// far as it can.
    package static func removeDirectoryAndFiles(_ path: String) {
        for name in (try? entries(of: path)) ?? [] { unlink(path + "/" + name) }
        rmdir(path)
    }

    // MARK: - Files

    /// Removes a file, if it can; failure is not an error (used on the way out).
    package static func remove(_ path: String) {
        unlink(path)
    }

    /// Renames `from` to `to`, replacing what `to` names; fails `.cantCreate` as `NAME: DOING:
    /// reason`, NAME being `to` unless given.
    package static func rename(_ from: String, to: String, name: String? = nil, doing: String = "cannot create") throws {
        guard renameFile(from, to) == 0 else { throw failure(.cantCreate, name ?? to, doing) }
    }

    /// Gives the file `from` names the name `to` as well, never replacing a file: false when `to`
    /// names one already (the test and the naming are one step, `link(2)`, so no other process can
    /// slip a file in between). Where the file system has no hard links, the name is claimed by an
    /// exclusive create and `from` renamed onto it. Fails `.cantCreate` as `TO: DOING: reason`.
    package static func linkWithoutReplacing(_ from: String, to: String, doing: String) throws -> Bool {
        if link(from, to) == 0 { return true }
        if errno == EEXIST { return false }
        guard errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS || errno == EMLINK else { throw failure(.cantCreate, to, doing) }
        let fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == EEXIST { return false }
            throw failure(.cantCreate, to, doing)
        }
        close(fd)
        try rename(from, to: to, doing: doing)
        return true
    }

    /// Sets a path's permission bits, if it can.
    package static func setMode(_ path: String, _ mode: mode_t) {
        chmod(path, mode)
    }

    /// Splits a path at its last `/` into directory and name: `a/b` → (`a`, `b`), `/b` → (`/`, `b`),
    /// `b` → (`.`, `b`).
    package static func split(_ path: String) -> (directory: String, name: String) {
        if let slash = path.lastIndex(of: "/") {
            let dir = String(path[..<slash])
            return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
        }
        return (".", path)
    }

    /// Makes a new file from a `mkstemp` template (its path ending in `XXXXXX`) with `mode`; returns
    /// its descriptor and path. Fails `.cantCreate` as `NAME: cannot create: reason`.
    package static func makeUniqueFile(template: String, mode: mode_t, name: String) throws -> (fd: Int32, path: String) {
        var bytes = Array(template.utf8CString)
        let fd = bytes.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure(.cantCreate, name, "cannot create") }
        fchmod(fd, mode)
        return (fd, String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Opens a new file in `directory` that no other process can find or open, for reading and
    /// writing: one with no name at all (Linux's `O_TMPFILE`), or, where the file system cannot,
    /// one made under an unpredictable name (`mkstemp`, mode 0600) and removed at once. Either way
    /// the file is gone when its descriptor is closed, however the process ends. Fails `.cantCreate`
    /// as `DIRECTORY: cannot create a temporary file: reason`.
    package static func makeAnonymousFile(in directory: String) throws -> Int32 {
        // O_TMPFILE is (__O_TMPFILE | O_DIRECTORY), a macro Swift does not import: 0o20200000 on Linux.
        let tmpfile: Int32 = 0o20_200_000
        let fd = open(directory, tmpfile | O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { return fd }
        guard errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL else {
            throw failure(.cantCreate, directory, "cannot create a temporary file")
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        let (named, path) = try makeUniqueFile(template: base + ".tripconv-spill-XXXXXX", mode: 0o600, name: directory)
        unlink(path)
        return named
    }

    /// Makes a new directory from a `mkdtemp` template with `mode`; returns its path. Fails
    /// `.cantCreate` as `NAME: cannot create: reason`.
    package static func makeUniqueDirectory(template: String, mode: mode_t, name: String) throws -> String {
        var bytes = Array(template.utf8CString)
        guard bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw failure(.cantCreate, name, "cannot create")
        }
        let path = String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(path, mode)
        return path
    }
}

/// rename(2), which `FileSystem.rename` hides inside the type.
private func renameFile(_ from: String, _ to: String) -> Int32 {
    rename(from, to)
}

/// Where a directory entry's name is, read in place. `d_name` is declared as a fixed array of 256
/// bytes, but readdir's buffer packs entries at their real length (`d_reclen`), so the last entry can
/// end less than 256 bytes before the buffer does: copying the whole field, as `e.pointee.d_name` or
/// `withUnsafeBytes(of: e.pointee.d_name)` does, reads past the allocation (AddressSanitizer's
/// heap-buffer-overflow in `swift test --sanitize=address`).
func direntNamePointer(_ entry: UnsafeMutablePointer<dirent>) -> UnsafePointer<CChar> {
    UnsafeRawPointer(entry).advanced(by: MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self)
}
