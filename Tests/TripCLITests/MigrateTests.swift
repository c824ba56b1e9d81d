import Foundation
import Testing
import TripTestSupport

/// Helpers of the migrate suites: the sqlite3 tool as the independent checker, python3 for the
/// other process that holds a lock or writes a WAL, scratch copies of the samples.
enum MigrateSupport {
    static let sqlite3 = CLI.tool("sqlite3")
    static let python3 = CLI.tool("python3")
    static let absent: Comment = "needs the sqlite3 tool (apt-get install sqlite3)"

    /// What the sqlite3 tool prints for SQL on a database (opened read-write, as a hot journal needs).
    static func sqlite(_ db: String, _ sql: String) throws -> String {
        let r = try CLI.run(sqlite3!, ["-batch", db, sql])
        if r.status != 0 || !r.stderr.isEmpty { Issue.record("sqlite3 \(db): \(r.stderr)") }
        return r.out
    }

    /// After every command that writes a store: `integrity_check` says ok, `foreign_key_check` finds nothing.
    static func expectSound(_ db: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try sqlite(db, "PRAGMA integrity_check;") == "ok\n", "integrity_check of \(db)", sourceLocation: sourceLocation)
        #expect(try sqlite(db, "PRAGMA foreign_key_check;") == "", "foreign_key_check of \(db)", sourceLocation: sourceLocation)
    }

    /// A copy of a sample in a fresh directory.
    static func copy(_ sample: String, as name: String? = nil) throws -> (directory: URL, path: String) {
        let tmp = try CLI.temporaryDirectory()
        let path = tmp.appendingPathComponent(name ?? sample).path
        try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("samples/\(sample)").path, toPath: path)
        return (tmp, path)
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// The summary line without its elapsed time (`…; 0.012 s`).
    static func withoutTime(_ line: String) -> String {
        guard let semicolon = line.range(of: "; ", options: .backwards) else { return line }
        return String(line[..<semicolon.lowerBound])
    }
}

@Suite("tripconv migrate", .enabled(if: MigrateSupport.sqlite3 != nil, MigrateSupport.absent))
struct MigrateTests {
    typealias S = MigrateSupport

    @Test("a 1.0.0 store is migrated to 3.0.0 in place, backed up first, and the summary says what happened")
    func migrates() throws {
        let (_, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        let before = try S.sqlite(db, ".dump")
        let r = try CLI.tripconv("migrate", db)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == "")
        #expect(S.withoutTime(r.stderr) == "tripconv: \(db): migrated 1.0.0 -> 3.0.0 in place; stages 1.0.0 -> 2.0.0 (custom), 2.0.0 -> 3.0.0 (lightweight); read 6 trips; merged 2; dropped 0; 4 trips at 3.0.0; backup \(db).1.0.0.bak")
        try S.expectSound(db)
        try S.expectSound(db + ".1.0.0.bak")
        #expect(try S.sqlite(db + ".1.0.0.bak", ".dump") == before)
        #expect(try S.sqlite(db, "PRAGMA user_version; SELECT value FROM tripconv_metadata WHERE key = 'schemaVersion';") == "3\n3.0.0\n")
        #expect(try S.sqlite(db, "SELECT from_version, to_version, stages, trips_before, trips_after FROM tripconv_migrations ORDER BY id;")
                == "1.0.0|2.0.0|1.0.0 -> 2.0.0 (custom)|6|4\n2.0.0|3.0.0|2.0.0 -> 3.0.0 (lightweight)|4|4\n")
        #expect(try S.sqlite(db, "SELECT id, name FROM trips ORDER BY id;") == "1|Paris Getaway\n2|Tokyo Food Tour\n4|Hiking the Dolomites\n6|Weekend in Lisbon\n")
        // The stages one at a time give the same store.
        let (_, stepwise) = try S.copy("trips-v1.sqlite", as: "stepwise.sqlite")
        #expect(try CLI.tripconv("migrate", stepwise, "--target-version", "2.0.0", "-q").status == 0)
        #expect(try CLI.tripconv("migrate", stepwise, "-q").status == 0)
        try S.expectSound(stepwise)
        for table in ["trips", "bucket_list_items", "living_accommodations"] {
            #expect(try S.sqlite(stepwise, "SELECT * FROM \(table) ORDER BY id;") == S.sqlite(db, "SELECT * FROM \(table) ORDER BY id;"))
        }
    }

    @Test("--rejects lists what was merged or dropped, line for line as convert's rejects file", .needsPython3, arguments: ["merge", "last", "first"])
    func rejects(policy: String) throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        let converted = tmp.appendingPathComponent("convert.jsonl").path
        let migrated = tmp.appendingPathComponent("migrate.jsonl").path
        #expect(try CLI.tripconv(db, "--to", "jsonl", "--dedupe", policy, "--rejects", converted, "-q").status == 0)
        let r = try CLI.tripconv("migrate", db, "--dedupe", policy, "--rejects", migrated, "--no-backup", "-v")
        #expect(r.status == 0, "\(r.stderr)")
        try S.expectSound(db)
        let lines = try String(contentsOfFile: migrated, encoding: .utf8)
        #expect(lines == (try String(contentsOfFile: converted, encoding: .utf8)))
        #expect(lines.split(separator: "\n").count == 2)
        let first = ["merge": "record 3: merged", "last": "record 1: dropped", "first": "record 3: dropped"][policy]!
        #expect(r.stderr.contains("tripconv: \(db): \(first): duplicate name 'Paris Getaway'"))
        // And an independent reader takes each line as JSON with the fields convert writes.
        if let python = S.python3 {
            let keys = try CLI.run(python, ["-c", "import json,sys\nfor l in open(sys.argv[1]): print(sorted(json.loads(l)))", migrated]).out
            #expect(keys == String(repeating: "['column', 'kind', 'line', 'reason', 'record', 'source']\n", count: 2))
        }
    }

    @Test("--dry-run changes nothing and prints the stages, the shared names, how many trips hold each and what differs")
    func dryRun() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        let before = S.bytes(db)
        let r = try CLI.tripconv("migrate", db, "--dry-run", "--rejects", tmp.appendingPathComponent("r.jsonl").path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == """
            \(db): sqlite 1.0.0 (marker metadata schemaVersion 1.0.0), 6 trips
            would migrate 1.0.0 -> 3.0.0 in place under --dedupe merge:
              1.0.0 -> 2.0.0 (custom): run willMigrate: 6 trips -> 4; create unique index trips_name_unique on trips
              2.0.0 -> 3.0.0 (lightweight): rebuild trips (start_date renamed startDate, end_date renamed endDate); \
            rebuild bucket_list_items (trip_id on delete SET NULL -> CASCADE); rebuild living_accommodations (trip_id on delete SET NULL -> CASCADE)
            2 names are shared by several trips:
              'Paris Getaway': 2 trips (row ids 1, 3); end_date differs: '2024-05-08T18:00:00Z' / '2024-05-09T12:00:00Z'; \
            bucketList differs: '3 items: Eiffel Tower at sunset, Louv...' / '3 items: Eiffel Tower at sunset, Musé...'; \
            livingAccommodation differs: '12 Rue de Rivoli, 75004 Paris, Hôtel ...' / 'none'
              'Tokyo Food Tour': 2 trips (row ids 2, 5); end_date differs: '2024-09-22T12:30:00Z' / '2024-09-23T09:15:00Z'; \
            bucketList differs: '2 items: Tsukiji outer market, Ramen ...' / '2 items: Ramen in Shinjuku, Depachika...'; \
            livingAccommodation differs: '1-1-1 Shibuya, Tokyo, Shibuya Stream ...' / '3-7-1-2 Nishi-Shinjuku, Tokyo, Park H...'
            would merge 2 and drop 0: 6 trips -> 4 at 3.0.0
            (a dry run writes no rejects file and takes no backup)

            """)
        #expect(r.stderr.hasPrefix("tripconv: \(db): dry run; nothing was changed ("))
        #expect(S.bytes(db) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["trips.sqlite"])
    }

    @Test("--dry-run under --dedupe fail reports, then fails as the migration would, changing nothing")
    func dryRunFail() throws {
        let (_, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        let before = S.bytes(db)
        let r = try CLI.tripconv("migrate", db, "--dry-run", "--dedupe", "fail")
        #expect(r.status == 65)
        #expect(r.out.hasSuffix("would fail; the store would be left as it is\n"))
        #expect(r.out.contains("  1.0.0 -> 2.0.0 (custom): run willMigrate: would fail; create unique index trips_name_unique on trips\n"))
        #expect(r.stderr == """
            tripconv: \(db): cannot migrate the store: 2 names occur more than once ('Paris Getaway', 'Tokyo Food Tour'); --dedupe fail writes nothing
            note: 2 duplicate records; use --dedupe merge, last or first to keep one per name

            """)
        #expect(S.bytes(db) == before)
        let real = try CLI.tripconv("migrate", db, "--dedupe", "fail", "--no-backup")
        #expect(real.status == 65)
        #expect(S.bytes(db) == before)
    }

    @Test("a store already at the target is left untouched, and the command says so")
    func alreadyThere() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        #expect(try CLI.tripconv("migrate", db, "--target-version", "2.0.0", "--no-backup", "-q").status == 0)
        try S.expectSound(db)
        let before = S.bytes(db)
        let r = try CLI.tripconv("migrate", db, "--target-version", "2.0.0")
        #expect(r.status == 0)
        #expect(r.stderr == "tripconv: \(db): already at 2.0.0; nothing to do\n")
        #expect(S.bytes(db) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["trips.sqlite"])
        #expect(try CLI.tripconv("migrate", db, "--target-version", "2.0.0", "-q").stderr == "")
    }

    @Test("a target older than the store is refused with exit 64")
    func downgrade() throws {
        let (_, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        #expect(try CLI.tripconv("migrate", db, "--no-backup", "-q").status == 0)
        let before = S.bytes(db)
        let r = try CLI.tripconv("migrate", db, "--target-version", "1.0.0")
        #expect(r.status == 64)
        #expect(r.stderr == """
            tripconv: \(db): store is at 3.0.0, target is 1.0.0; a store is never migrated down
            note: convert the store into a new file to get a 1.0.0 copy: `tripconv \(db) --target-version 1.0.0 -o FILE`

            """)
        #expect(S.bytes(db) == before)
    }

    @Test("--backup puts the backup where it says, --no-backup takes none, and both together are a usage error")
    func backupOptions() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        let both = try CLI.tripconv("migrate", db, "--backup", tmp.appendingPathComponent("b").path, "--no-backup")
        #expect(both.status == 64)
        #expect(both.stderr.contains("--backup and --no-backup exclude each other"))
        let elsewhere = tmp.appendingPathComponent("saved/before.sqlite").path
        try FileManager.default.createDirectory(atPath: tmp.appendingPathComponent("saved").path, withIntermediateDirectories: true)
        #expect(try CLI.tripconv("migrate", db, "--backup", elsewhere, "-q", "--target-version", "2.0.0").status == 0)
        try S.expectSound(elsewhere)
        #expect(try S.sqlite(elsewhere, "PRAGMA user_version;") == "1\n")
        #expect(try CLI.tripconv("migrate", db, "--no-backup", "-q").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).sorted() == ["saved", "trips.sqlite"])
        let unwritable = try CLI.tripconv("migrate", db, "--backup", tmp.appendingPathComponent("no/such/dir/b.sqlite").path)
        #expect(unwritable.status == 0, "the store is at 3.0.0 already: nothing to back up")
    }

    @Test("a store another process is writing is busy: exit 75 after the timeout, and the store is unchanged",
          .enabled(if: MigrateSupport.python3 != nil, "needs python3"))
    func busy() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        let before = S.bytes(db)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: S.python3!)
        holder.arguments = ["-c", """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            sys.stdin.read()
            c.execute("ROLLBACK")
            """, db]
        let input = Pipe(), output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        defer { try? input.fileHandleForWriting.close(); holder.waitUntilExit() }
        #expect(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("locked"))
        let started = Date()
        let r = try CLI.tripconv("migrate", db, "--busy-timeout", "0.3")
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(r.status == 75)
        #expect(r.stderr == """
            tripconv: \(db): store is busy: another process holds its lock (database is locked)
            note: try again when the other process is done

            """)
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(S.bytes(db) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["trips.sqlite"], "the lock comes before the backup")
        #expect(try CLI.tripconv("migrate", db, "-q").status == 0)
        try S.expectSound(db)
    }

    @Test("a missing store is no input (66); a file that is not a trip store is bad data (65)")
    func missing() throws {
        let tmp = try CLI.temporaryDirectory()
        let missing = try CLI.tripconv("migrate", tmp.appendingPathComponent("nothing.sqlite").path)
        #expect(missing.status == 66)
        let other = tmp.appendingPathComponent("other.sqlite").path
        _ = try S.sqlite(other, "CREATE TABLE t (x);")
        let r = try CLI.tripconv("migrate", other)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: \(other): not a trip store: it has no trips table\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["other.sqlite"])
    }

    @Test("a store in WAL mode is migrated with the trips its -wal file holds", .enabled(if: MigrateSupport.python3 != nil, "needs python3"))
    func wal() throws {
        let (tmp, db) = try S.copy("trips-v1.sqlite", as: "live.sqlite")
        let copy = tmp.appendingPathComponent("copy.sqlite").path
        // Another program adds a trip and keeps its connection open: the trip is only in the -wal file
        // when both files are copied.
        let made = try CLI.run(S.python3!, ["-c", """
            import os, shutil, sqlite3, sys
            src, dst = sys.argv[1], sys.argv[2]
            c = sqlite3.connect(src, isolation_level=None)
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA wal_autocheckpoint=0")
            c.execute("BEGIN")
            c.execute("INSERT INTO trips (id, name, destination, start_date, end_date) VALUES (20, 'Kyoto', 'Japan', '2025-04-02T00:00:00Z', '2025-04-12T00:00:00Z')")
            c.execute("INSERT INTO bucket_list_items (trip_id, position, title) VALUES (20, 0, 'Fushimi Inari')")
            c.execute("INSERT INTO trips (id, name, destination, start_date, end_date) VALUES (21, 'Weekend in Lisbon', 'Lisbon', '2024-10-04T17:45:00Z', '2024-10-07T21:10:00Z')")
            c.execute("COMMIT")
            shutil.copyfile(src, dst)
            shutil.copyfile(src + "-wal", dst + "-wal")
            print(os.path.getsize(dst + "-wal") > 0)
            """, db, copy])
        #expect(made.out == "True\n", "\(made.stderr)")
        let r = try CLI.tripconv("migrate", copy, "--no-backup")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read 8 trips; merged 3; dropped 0; 5 trips at 3.0.0"))
        try S.expectSound(copy)
        #expect(try S.sqlite(copy, "SELECT id, name, endDate FROM trips ORDER BY id;")
                == "1|Paris Getaway|2024-05-09T12:00:00Z\n2|Tokyo Food Tour|2024-09-23T09:15:00Z\n4|Hiking the Dolomites|2024-07-13T16:00:00Z\n6|Weekend in Lisbon|2024-10-07T21:10:00Z\n20|Kyoto|2025-04-12T00:00:00Z\n")
        #expect(try S.sqlite(copy, "SELECT title FROM bucket_list_items WHERE trip_id = 20;") == "Fushimi Inari\n")
    }

    @Test("convert --migrate runs the same stages and records each of them")
    func convertMigrate() throws {
        let (_, db) = try S.copy("trips-v1.sqlite", as: "trips.sqlite")
        let r = try CLI.tripconv("samples/trips-v3.json", "-o", db, "--migrate", "-q")
        #expect(r.status == 0, "\(r.stderr)")
        try S.expectSound(db)
        #expect(try S.sqlite(db, "SELECT stages, trips_before, trips_after FROM tripconv_migrations ORDER BY id;")
                == "1.0.0 -> 2.0.0 (custom)|6|4\n2.0.0 -> 3.0.0 (lightweight)|4|4\n")
        #expect(try S.sqlite(db, "SELECT count(*) FROM trips;") == "6\n")
    }

    @Test("names with quotes, semicolons and SQL keywords go through the migration as values")
    func hostileNames() throws {
        let tmp = try CLI.temporaryDirectory()
        let names = ["Robert'); DROP TABLE trips; --", "\"quoted\"", "semi;colon", "SELECT * FROM trips", "?1 :name @x $y", "日本; 'x'"]
        var lines = ""
        let rows: [(Int, String)] = names.enumerated().map { ($0.offset, $0.element) }
            + names.prefix(3).enumerated().map { ($0.offset + 10, $0.element) }
        for (i, name) in rows {
            let quoted = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            lines += "{\"name\": \"\(quoted)\", \"destination\": \"D\(i)\", \"start_date\": \"2024-05-01T09:30:00Z\", \"end_date\": \"2024-05-0\(i % 9 + 1)T18:00:00Z\", \"bucketList\": [{\"title\": \"t\(i)\"}], \"livingAccommodation\": null}\n"
        }
        let input = tmp.appendingPathComponent("hostile.jsonl").path
        try lines.write(toFile: input, atomically: true, encoding: .utf8)
        let db = tmp.appendingPathComponent("hostile.sqlite").path
        #expect(try CLI.tripconv(input, "--target-version", "1.0.0", "-o", db, "-q").status == 0)
        let r = try CLI.tripconv("migrate", db, "--no-backup")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read 9 trips; merged 3; dropped 0; 6 trips at 3.0.0"))
        try S.expectSound(db)
        #expect(try S.sqlite(db, "SELECT name FROM trips ORDER BY id;") == names.map { $0 + "\n" }.joined())
        #expect(try S.sqlite(db, "SELECT count(*) FROM bucket_list_items;") == "9\n")
    }
}
