internal import CSQLite
import TripKit

/// Where a migration in place (`tripconv migrate`, `convert --migrate`) copies the store before it
/// changes it. A backup never replaces a file: when its name is taken (by an earlier backup, say),
/// `.2`, `.3`, … is added to it until a name is free, and the report says which name it got.
///
/// ```swift
/// let store = try SQLiteStore.open(path: "trips.sqlite", readOnly: false)
/// let report = try store.migrate(to: TripSchemaV3.self, backup: .besideStore)
/// print(report?.backup ?? "")   // trips.sqlite.1.0.0.bak, or trips.sqlite.1.0.0.bak.2 when that was taken
/// ```
public enum StoreBackup: Sendable, Equatable {
    /// No backup.
    case none
    /// Beside the store, named by the version it holds: `trips.sqlite.1.0.0.bak`.
    case besideStore
    /// The file at this path.
    case file(String)

    /// The name a backup of the store at `path`, at `version`, gets when no file has it yet.
    public func name(store path: String, version: SchemaVersion) -> String? {
        switch self {
        case .none: return nil
        case .besideStore: return "\(path).\(version).bak"
        case .file(let file): return file
        }
    }
}

/// A copy of a store taken through SQLite's online backup API (`sqlite3_backup_init`, `_step`,
/// `_finish`): page by page through a connection, so it holds what a reader sees — the WAL's
/// committed pages included — and never a torn file, whatever other connections are doing.
///
/// The copy is written to a temporary file beside the target and flushed to the disk; then it is
/// given the target's name without replacing a file (`FileSystem.linkWithoutReplacing`), or, when a
/// file has that name, the first of `NAME.2`, `NAME.3`, … that none has. So a backup file is either
/// complete or absent, and never takes the place of an earlier one.
enum SQLiteBackup {
    /// Copies the store at `source` to `target`, or to `target.N` when `target` is taken; returns
    /// the name it got.
    static func copy(_ source: String, to target: String, busyTimeout: Int32) throws -> String {
        let from = try SQLiteConnection(path: source, access: .reading, busyTimeout: busyTimeout)
        let temporary = try TemporaryPaths.makeStoreFile(beside: target)
        defer {
            FileSystem.remove(temporary)
            FileSystem.remove(temporary + "-journal")
        }
        do {
            try copyPages(from, into: temporary, target: target, busyTimeout: busyTimeout)
            try FileSystem.sync(temporary, name: target)
        } catch {
            throw error.renamingPath(temporary, to: target)
        }
        var name = target, n = 1
        while try !FileSystem.linkWithoutReplacing(temporary, to: name, doing: "cannot create the backup") {
            n += 1
            name = "\(target).\(n)"
        }
        return name
    }

    private static func copyPages(_ from: SQLiteConnection, into temporary: String, target: String, busyTimeout: Int32) throws {
        let to = try SQLiteConnection(path: temporary, access: .writing, create: true, busyTimeout: busyTimeout)
        guard let backup = sqlite3_backup_init(to.handle, "main", from.handle, "main") else {
            throw to.failure(sqlite3_extended_errcode(to.handle), doing: "cannot back up the store")
        }
        // All pages in one step; a lock held elsewhere is waited for a bounded time, as a statement would.
        var rc = sqlite3_backup_step(backup, -1)
        var waited: Int32 = 0
        while (rc == SQLITE_BUSY || rc == SQLITE_LOCKED), waited < busyTimeout {
            sqlite3_sleep(20)
            waited += 20
            rc = sqlite3_backup_step(backup, -1)
        }
        let finished = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else {
            throw TripError(sqliteCode: rc, message: String(cString: sqlite3_errstr(rc)), path: from.path,
                            access: .reading, doing: "cannot back up the store to \(target)")
        }
        guard finished == SQLITE_OK else { throw to.failure(finished, doing: "cannot back up the store to \(target)") }
    }
}
