import Foundation
import Testing
import TripTestSupport

/// Reading a SampleTrips Core Data store changes none of its files, not even the `-shm`, and reads
/// what its `-wal` holds (issue 26: a store is read as SQLite reads it, without changing it).
@Suite("a store read as it is", .needsPython3)
struct StoreSnapshotCLITests {
    @Test("a SwiftData store left with a -wal and a -shm: the -wal's change is read, no byte of the three files changes")
    func walAndIndexUnchanged() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-snapshot-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/copy", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // An app's process with the store open: a change committed to the -wal, the files copied meanwhile.
        let made = try ExternalTool.python("""
            import shutil, sqlite3, sys
            src, work, copy = sys.argv[1], sys.argv[2] + "/app.store", sys.argv[2] + "/copy/app.store"
            shutil.copy(src, work)
            db = sqlite3.connect(work)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.execute("UPDATE ZTRIP SET ZDESTINATION = 'only in the wal' WHERE ZNAME = 'Reykjavík'")
            db.commit()
            for suffix in ["", "-wal", "-shm"]:
                shutil.copy(work + suffix, copy + suffix)
            print("ok")
            """, [CLI.root.appendingPathComponent("samples/coredata-v3.store").path, dir])
        #expect(made.out == "ok\n", "\(made.stderr)")
        let store = dir + "/copy/app.store"
        func files() throws -> [Data?] { ["", "-wal", "-shm"].map { FileManager.default.contents(atPath: store + $0) } }
        let before = try files()
        #expect(before.allSatisfy { $0 != nil })
        let run = try CLI.tripconv(store, "-q", "--to", "jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.out.contains(#""destination": "only in the wal""#), "\(run.out)")
        let detect = try CLI.tripconv("detect", store)
        #expect(detect.status == 0, "\(detect.stderr)")
        #expect(try files() == before, "the store, its -wal or its -shm changed")
    }
}
