#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import TripKit

/// The temporary files and directories that outputs are written to before they are renamed into
/// place, so that nothing half-written is ever left behind:
///
/// - each is named `.TARGET.tripconv-PID-XXXXXX` beside its target;
/// - while it exists it is registered here, and a SIGINT, SIGTERM or SIGHUP removes every registered
///   path before the process dies of the signal (`installSignalCleanup()`);
/// - a run that was killed outright (SIGKILL) leaves its file behind, and the next run that writes
///   beside the same target removes it, since its PID no longer runs.
public enum TemporaryPaths {
    private static let capacity = 64
    /// Registered paths as C strings, and whether each is a directory; read by the signal handler.
    nonisolated(unsafe) private static let paths = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
    nonisolated(unsafe) private static let isDirectory = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
    nonisolated(unsafe) private static var initialized = false

    private static func setUp() {
        if initialized { return }
        paths.initialize(repeating: nil, count: capacity)
        isDirectory.initialize(repeating: false, count: capacity)
        initialized = true
    }

    /// The prefix of a target's temporary names, and the directory they live in.
    static func prefix(for target: String) -> (directory: String, prefix: String) {
        var trimmed = target
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let (dir, base) = FileSystem.split(trimmed)
        return (dir, ".\(base).tripconv-")
    }

    /// Makes a temporary file beside `target` (mode 0644), registered for cleanup; returns its
    /// descriptor and path.
    public static func makeFile(beside target: String) throws -> (fd: Int32, path: String) {
        let (dir, prefix) = self.prefix(for: target)
        removeStale(in: dir, prefix: prefix)
        // No signal between creating the file and registering it, or it would outlive the run.
        let saved = blockCleanupSignals()
        defer { restoreSignals(saved) }
        let made = try FileSystem.makeUniqueFile(template: "\(dir)/\(prefix)\(getpid())-XXXXXX", mode: 0o644, name: target)
        register(made.path, directory: false)
        return made
    }

    /// Makes a temporary directory beside `target` (mode 0755), registered for cleanup (with what it
    /// holds).
    public static func makeDirectory(beside target: String) throws -> String {
        let (dir, prefix) = self.prefix(for: target)
        removeStale(in: dir, prefix: prefix)
        let saved = blockCleanupSignals()
        defer { restoreSignals(saved) }
        let path = try FileSystem.makeUniqueDirectory(template: "\(dir)/\(prefix)\(getpid())-XXXXXX", mode: 0o755, name: target)
        register(path, directory: true)
        return path
    }

    /// Makes an empty file beside a store's target for SQLite to open by path:
    /// `.NAME.tripconv-XXXXXX`, mode 0644. Unlike the others it is not registered, and its name
    /// carries no PID: the store writer and the backup remove it (and its journal) themselves.
    static func makeStoreFile(beside target: String) throws -> String {
        let (dir, base) = FileSystem.split(target)
        let made = try FileSystem.makeUniqueFile(template: "\(dir)/.\(base).tripconv-XXXXXX", mode: 0o644, name: target)
        close(made.fd)
        return made.path
    }

    /// Blocks SIGINT, SIGTERM and SIGHUP; returns the mask to restore.
    package static func blockCleanupSignals() -> sigset_t {
        var block = sigset_t(), saved = sigset_t()
        sigemptyset(&block)
        for sig in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&block, sig) }
        pthread_sigmask(SIG_BLOCK, &block, &saved)
        return saved
    }

    package static func restoreSignals(_ saved: sigset_t) {
        var mask = saved
        pthread_sigmask(SIG_SETMASK, &mask, nil)
    }

    /// Serializes `register`, `unregister` and `setUp`: outputs are opened and committed on several
    /// threads at once (`--jobs`, parallel tests), and without it two threads could claim one slot,
    /// or one could compare a path another has just freed (AddressSanitizer: heap-use-after-free in
    /// `unregister`). The signal handler's `removeAll` reads the table without it.
    private static let lock = Mutex(())

    private static func locked(_ body: () -> Void) {
        lock.withLock { _ in body() }
    }

    /// Registers a path for removal on a signal.
    public static func register(_ path: String, directory: Bool) {
        locked {
            setUp()
            for i in 0..<capacity where paths[i] == nil {
                isDirectory[i] = directory
                paths[i] = strdup(path)
                return
            }
        }
    }

    /// Forgets a path: it was renamed into place, or removed.
    public static func unregister(_ path: String) {
        locked {
            guard initialized else { return }
            for i in 0..<capacity {
                if let p = paths[i], strcmp(p, path) == 0 {
                    paths[i] = nil
                    free(p)
                    return
                }
            }
        }
    }

    /// Removes every registered path now (files first, then directories with what they hold).
    /// It runs in the signal handler, so it calls the system directly on the registered C strings
    /// instead of going through `FileSystem`, whose calls take Swift strings.
    static func removeAll() {
        guard initialized else { return }
        for i in 0..<capacity { if let p = paths[i], !isDirectory[i] { unlink(p) } }
        for i in 0..<capacity {
            guard let p = paths[i], isDirectory[i] else { continue }
            if let d = opendir(p) {
                while let e = readdir(d) {
                    let name = direntNamePointer(e)
                    if strcmp(name, ".") != 0 && strcmp(name, "..") != 0 {
                        var full = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                        if strlen(p) + strlen(name) + 2 < full.count {
                            strcpy(&full, p)
                            strcat(&full, "/")
                            strcat(&full, name)
                            unlink(full)
                        }
                    }
                }
                closedir(d)
            }
            rmdir(p)
        }
    }

    /// Removes temporary paths of processes that no longer run (killed with SIGKILL, say).
    static func removeStale(in directory: String, prefix: String) {
        guard let names = try? FileSystem.entries(of: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0 else { continue }
            guard kill(pid, 0) != 0 && errno == ESRCH else { continue }
            let path = directory + "/" + name
            switch FileSystem.kind(path, followingLinks: false) {
            case .directory?: FileSystem.removeDirectoryAndFiles(path)
            case .file?, .other?: FileSystem.remove(path)
            case nil: continue
            }
        }
    }

    /// On SIGINT, SIGTERM and SIGHUP: remove the registered paths, then die of the signal as usual.
    /// A signal ignored when the process started (`nohup`, a shell's background job) stays ignored;
    /// the others are unblocked, since a parent may have left them blocked.
    public static func installSignalCleanup() {
        locked { setUp() }
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            var current = sigaction()
            sigaction(sig, nil, &current)
            if unsafeBitCast(current.__sigaction_handler, to: Int.self) == 1 { continue }  // SIG_IGN
            signal(sig) { sig in
                TemporaryPaths.removeAll()
                signal(sig, SIG_DFL)
                raise(sig)
            }
            sigaddset(&unblock, sig)
        }
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
    }
}
