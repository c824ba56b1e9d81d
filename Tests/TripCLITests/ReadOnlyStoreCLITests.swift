import Foundation
import Testing
import TripTestSupport

/// Looking at a tripconv SQLite store (`detect`, `migrate --dry-run`, `migrate` of a store already
/// at the target) changes none of its files: not the store, not its `-wal`, not its `-shm`, and
/// creates none (issue 25: reading must never change the user's files).
@Suite("a tripconv store looked at, not changed", .needsPython3)
struct ReadOnlyStoreCLITests {
    /// A 1.0.0 store in WAL mode with a change pending in its `-wal` (trip 2, one of two 'Ski Week's, goes to 'wal' only there),
    /// copied while the writing process had it open: `withIndex` keeps the copy's `-shm`, else it has none.
    private static func walStore(in dir: URL, withIndex: Bool, target: String = "1.0.0") throws -> String {
        let work = dir.appendingPathComponent("work.sqlite").path, store = dir.appendingPathComponent("s.sqlite").path
        let made = try CLI.tripconv(CLI.root.appendingPathComponent("samples/trips-v1.json").path, "-q", "-o", work, "--target-version", target)
        #expect(made.status == 0, "\(made.stderr)")
        let copied = try CLI.python("""
            import shutil, sqlite3, sys
            work, copy, keep = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
            db = sqlite3.connect(work)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.execute("UPDATE trips SET destination = 'wal' WHERE rowid = 2")
            db.commit()
            for suffix in ["", "-wal"] + (["-shm"] if keep else []):
                shutil.copy(work + suffix, copy + suffix)
            print("ok")
            """, [work, store, withIndex ? "1" : "0"])
        #expect(copied.out == "ok\n", "\(copied.stderr)")
        return store
    }

    private static func files(_ store: String) -> [Data?] {
        ["", "-wal", "-shm", "-journal"].map { FileManager.default.contents(atPath: store + $0) }
    }

    @Test("detect and migrate --dry-run of a WAL store with a pending -wal leave the store, -wal and -shm as they were",
          arguments: [true, false])
    func lookingChangesNothing(withIndex: Bool) throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Self.walStore(in: dir, withIndex: withIndex)
        let before = Self.files(store)
        #expect(before[0] != nil && before[1] != nil && (before[2] != nil) == withIndex && before[3] == nil)

        let detect = try CLI.tripconv("detect", store)
        #expect(detect.status == 0, "\(detect.stderr)")
        #expect(detect.out.contains("sqlite 1.0.0"), "\(detect.out)")
        #expect(Self.files(store) == before, "detect changed the store, its -wal or its -shm (or made one)")

        let dryRun = try CLI.tripconv("migrate", store, "--dry-run")
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        // The -wal's change is seen: the preview reads the store as SQLite does.
        #expect(dryRun.out.contains("would migrate 1.0.0 -> 3.0.0") && dryRun.out.contains("'wal'"), "\(dryRun.out)")
        #expect(Self.files(store) == before, "migrate --dry-run changed the store, its -wal or its -shm (or made one)")
        #expect(!FileManager.default.fileExists(atPath: store + ".1.0.0.bak"))
    }

    @Test("migrate of a WAL store already at the target changes none of its files", arguments: [true, false])
    func alreadyCurrentChangesNothing(withIndex: Bool) throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Self.walStore(in: dir, withIndex: withIndex, target: "3.0.0")
        let before = Self.files(store)
        let run = try CLI.tripconv("migrate", store)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("already at 3.0.0; nothing to do"), "\(run.stderr)")
        #expect(Self.files(store) == before, "migrate changed the store, its -wal or its -shm (or made one)")
    }
}
