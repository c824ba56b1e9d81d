import Foundation
import Testing

/// A backup never replaces an earlier one, and a migration that changes nothing leaves none behind
/// (issue 25, item 2). Checked with the sqlite3 tool.
@Suite("migrate's backups", .enabled(if: MigrateSupport.sqlite3 != nil, MigrateSupport.absent))
struct MigrateBackupTests {
    typealias S = MigrateSupport

    /// The version a store holds, and its trips, as the sqlite3 tool reads them.
    static func held(_ db: String) throws -> String {
        try S.sqlite(db, "SELECT value FROM tripconv_metadata WHERE key = 'schemaVersion'; SELECT count(*) FROM trips;")
    }

    @Test("a second migrate keeps the first backup: each is named by the version it holds, and the summary says which")
    func secondMigrate() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "m.sqlite")
        let original = try S.sqlite(db, ".dump")
        let first = try CLI.tripconv("migrate", db, "--target-version", "2.0.0")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(S.withoutTime(first.stderr).hasSuffix("; 4 trips at 2.0.0; backup \(db).1.0.0.bak"), "\(first.stderr)")
        let second = try CLI.tripconv("migrate", db)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(S.withoutTime(second.stderr).hasSuffix("; 4 trips at 3.0.0; backup \(db).2.0.0.bak"), "\(second.stderr)")
        // The 1.0.0 store, the only copy of the 2 trips the first stage merged away, is still there.
        #expect(try S.sqlite(db + ".1.0.0.bak", ".dump") == original)
        #expect(try Self.held(db + ".1.0.0.bak") == "1.0.0\n6\n")
        #expect(try Self.held(db + ".2.0.0.bak") == "2.0.0\n4\n")
        try S.expectSound(db + ".2.0.0.bak")

        // Another 1.0.0 store under the same name: its backup's name is taken, so it is numbered.
        try FileManager.default.removeItem(atPath: db)
        try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("samples/trips-v1.sqlite").path, toPath: db)
        for n in 2...3 {
            _ = try S.sqlite(db, "UPDATE trips SET destination = 'round \(n)' WHERE id = 1;")
            let again = try CLI.tripconv("migrate", db, "--target-version", "2.0.0")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(S.withoutTime(again.stderr).hasSuffix("; backup \(db).1.0.0.bak.\(n)"), "\(again.stderr)")
            #expect(try S.sqlite(db + ".1.0.0.bak.\(n)", "SELECT destination FROM trips WHERE id = 1;") == "round \(n)\n")
            try FileManager.default.removeItem(atPath: db)
            try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("samples/trips-v1.sqlite").path, toPath: db)
        }
        #expect(try S.sqlite(db + ".1.0.0.bak", ".dump") == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).sorted()
                == ["m.sqlite", "m.sqlite.1.0.0.bak", "m.sqlite.1.0.0.bak.2", "m.sqlite.1.0.0.bak.3", "m.sqlite.2.0.0.bak"])
    }

    @Test("a rejects file that cannot be made is refused before the store is touched: exit 73, no stage, no backup")
    func rejectsCheckedFirst() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "m.sqlite")
        let before = try S.sqlite(db, ".dump")
        let run = try CLI.tripconv("migrate", db, "--rejects", tmp.path + "/no/such/dir/r.jsonl")
        #expect(run.status == 73, "\(run.stderr)")
        #expect(run.stderr.contains("no/such/dir"), "\(run.stderr)")
        #expect(try S.sqlite(db, ".dump") == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["m.sqlite"])
    }

    @Test("--backup FILE never replaces a file there: the backup goes to FILE.2")
    func givenNameTaken() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "m.sqlite")
        let taken = tmp.appendingPathComponent("keep.sqlite").path
        try "not a backup\n".write(toFile: taken, atomically: true, encoding: .utf8)
        let r = try CLI.tripconv("migrate", db, "--backup", taken)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(S.withoutTime(r.stderr).hasSuffix("; backup \(taken).2"), "\(r.stderr)")
        #expect(try String(contentsOfFile: taken, encoding: .utf8) == "not a backup\n")
        #expect(try Self.held(taken + ".2") == "1.0.0\n6\n")
    }

    @Test("a migrate that fails or changes nothing leaves no backup behind", arguments: [
        ["--dedupe", "fail"], ["--dry-run"], ["--target-version", "1.0.0"],
    ])
    func nothingChanged(_ arguments: [String]) throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "m.sqlite")
        let before = S.bytes(db)
        let r = try CLI.run(CLI.binary, ["migrate", db] + arguments)
        #expect(r.status == (arguments == ["--dedupe", "fail"] ? 65 : 0), "\(r.stderr)")
        #expect(S.bytes(db) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["m.sqlite"])
    }

    @Test("--dry-run with --backup FILE says the dry run takes no backup, and makes no FILE")
    func dryRunNamesNoBackup() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "m.sqlite")
        let before = S.bytes(db)
        let wanted = tmp.appendingPathComponent("kept.bak").path
        let r = try CLI.tripconv("migrate", db, "--dry-run", "--backup", wanted)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.hasSuffix("(a dry run writes no rejects file and takes no backup)\n"), "\(r.out)")
        #expect(S.bytes(db) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["m.sqlite"])
    }
}
