internal import CSQLite
import TripKit

/// A copy of a store taken through SQLite's online backup API (`sqlite3_backup_init`, `_step`,
/// `_finish`): page by page through a connection, so it holds what a reader sees — the WAL's
/// committed pages included — and never a torn file, whatever other connections are doing.
///
/// The copy is written to a temporary file beside the target, flushed to the disk and renamed over
/// the target, so a backup file is either complete or absent.
enum SQLiteBackup {
    /// Copies the store at `source` to `target`. `name` is the store's path for messages.
    static func copy(_ source: String, to target: String, busyTimeout: Int32) throws {
        let from = try SQLiteConnection(path: source, access: .reading, busyTimeout: busyTimeout)
        let temporary = try TemporaryPaths.makeStoreFile(beside: target)
        do {
            try copyPages(from, into: temporary, target: target, busyTimeout: busyTimeout)
            try FileSystem.sync(temporary, name: target)
            try FileSystem.rename(temporary, to: target, doing: "cannot create the backup")
        } catch {
            FileSystem.remove(temporary)
            FileSystem.remove(temporary + "-journal")
            throw error.renamingPath(temporary, to: target)
        }
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
