#if canImport(Glibc)
import Glibc
#endif
import TripKit

/// A scratch SQLite database in `--temp-dir` for what a run holds past its `--memory-limit` (the plan's
/// deduplication, a graph reader's index of keys, the objects a plan sets aside): a file made with
/// `mkstemp` (mode 0600) and removed as soon as SQLite has opened it and `schema` has made its
/// tables, so it is gone when the run ends however it ends; no journal, no sync, exclusive locking,
/// one transaction never committed, its page cache `cacheBytes`.
enum TemporaryDatabase {
    /// Opens a new database in `directory` with `schema`'s tables, its file named after `prefix`.
    static func open(directory: String, prefix: String, cacheBytes: Int, schema: String) throws -> SQLiteConnection {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        let (fd, path) = try FileSystem.makeUniqueFile(template: base + ".tripconv-\(prefix)-XXXXXX", mode: 0o600, name: directory)
        close(fd)
        defer { unlink(path) }
        do {
            let c = try SQLiteConnection(path: path, access: .writing)
            try c.execute("""
                PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;
                PRAGMA temp_store = MEMORY; PRAGMA cache_size = -\(max(cacheBytes >> 10, 64));
                \(schema)
                BEGIN;
                """)
            return c
        } catch let error as TripError {
            throw failure(error, directory: directory)
        }
    }

    /// The page cache a run's scratch database is given: the plan's deduplication (`share` 8) an eighth
    /// of the limit, 256 KiB to 64 MiB; a table of keys (`share` 16) a sixteenth, 64 KiB to 32 MiB, so
    /// that the databases of a run together stay well under the half of the limit its holdings share.
    static func cacheBytes(_ budget: SpillBudget, share: Int = 8) -> Int {
        share <= 8 ? min(max(budget.limit / 8, 256 << 10), 64 << 20) : min(max(budget.limit / share, 64 << 10), 32 << 20)
    }

    /// A failure of a scratch database: a write that did not happen (a full disk), exit 74 as the trips' spill.
    static func failure(_ error: TripError, directory: String) -> TripError {
        TripError(.io, "\(directory): cannot write temporary data: \(error.message)",
                  notes: ["the run spills what it cannot hold in --memory-limit to --temp-dir (or $TMPDIR); "
                          + "give a directory with more room, or a larger --memory-limit"])
    }

    /// The bytes of a database: its pages.
    static func bytes(_ connection: SQLiteConnection) throws -> Int {
        Int(try connection.integer("PRAGMA page_count") ?? 0) * Int(try connection.integer("PRAGMA page_size") ?? 0)
    }
}
