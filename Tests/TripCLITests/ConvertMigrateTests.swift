import Foundation
import Testing
import TripTestSupport

/// `convert --migrate` accounts for its migration in place as `migrate` does (issue 25, item 1):
/// the stored trips it merges or drops are in the summary, `-v`, `--rejects` and `--report`, and a
/// SQLite store is backed up first. Checked with the sqlite3 tool, psql and Python's json module.
@Suite("convert --migrate accounts as migrate", .enabled(if: MigrateSupport.sqlite3 != nil && MigrateSupport.python3 != nil,
                                                          "needs the sqlite3 tool and python3"))
struct ConvertMigrateTests {
    typealias S = MigrateSupport

    /// One new 1.0.0 trip, whose name no stored trip has.
    static let newTrip = #"{"name": "Rome in Spring", "destination": "Rome", "start_date": "2025-04-01T08:00:00Z", "end_date": "2025-04-06T20:00:00Z"}"#

    /// A directory holding `s.sqlite`, a 1.0.0 store of samples/trips-v1.json (5 trips, 2 names
    /// repeated), and `p.jsonl`, one new trip.
    static func storeAndInput() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        let made = try CLI.run(CLI.binary, [CLI.root.appendingPathComponent("samples/trips-v1.json").path, "-o", "s.sqlite",
                                            "--target-version", "1.0.0", "-q"], directory: dir)
        #expect(made.status == 0, "\(made.stderr)")
        try (newTrip + "\n").write(to: dir.appendingPathComponent("p.jsonl"), atomically: true, encoding: .utf8)
        return dir
    }

    /// A JSON Lines file as Python's json module reads it, one sorted object per line.
    static func jsonLines(_ path: String) throws -> String {
        try CLI.python("import json,sys\nfor l in open(sys.argv[1]): print(json.dumps(json.loads(l), sort_keys=True))", [path]).out
    }

    @Test("the summary, -v, --rejects and --report say what the migration merged, as migrate does, and the backup comes first")
    func sqliteStore() throws {
        let (viaConvert, viaMigrate) = (try Self.storeAndInput(), try Self.storeAndInput())
        let db = viaConvert.appendingPathComponent("s.sqlite").path
        let before = try S.sqlite(db, ".dump")
        let converted = try CLI.run(CLI.binary, ["p.jsonl", "-o", "s.sqlite", "--migrate", "--rejects", "r.jsonl", "--report", "report.json", "-v"],
                                    directory: viaConvert)
        let migrated = try CLI.run(CLI.binary, ["migrate", "s.sqlite", "--rejects", "r.jsonl", "-v"], directory: viaMigrate)
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(migrated.status == 0, "\(migrated.stderr)")

        // migrate's lines (a line per trip merged, per stage, and its summary), then convert's own.
        let migrateLines = migrated.stderr.split(separator: "\n").map(String.init)
        let convertLines = converted.stderr.split(separator: "\n").map(String.init)
        try #require(migrateLines.count == 5 && convertLines.count == 7, "\(converted.stderr)")
        #expect(Array(convertLines.prefix(4)) == Array(migrateLines.prefix(4)))
        #expect(convertLines[4] == S.withoutTime(migrateLines[4]))
        #expect(convertLines[4] == "tripconv: s.sqlite: migrated 1.0.0 -> 3.0.0 in place; stages 1.0.0 -> 2.0.0 (custom), 2.0.0 -> 3.0.0 (lightweight); "
                + "read 5 trips; merged 2; dropped 0; 3 trips at 3.0.0; backup s.sqlite.1.0.0.bak")
        #expect(convertLines[0].hasPrefix("tripconv: s.sqlite: record 3: merged: duplicate name 'Family Visit'"))
        #expect(convertLines[3] == "tripconv: s.sqlite: stage 2.0.0 -> 3.0.0 (lightweight): 3 trips -> 3")
        #expect(S.withoutTime(convertLines[6]).hasSuffix("merged 0; dropped 0; rejected 0; wrote 1 at 3.0.0"), "the input's own trips")

        // The store: 5 stored trips, 2 merged away, and the new one.
        #expect(try S.sqlite(db, "SELECT count(*) FROM trips; PRAGMA user_version;") == "4\n3\n")
        // The backup is the store as it was, named by its version.
        try S.expectSound(db + ".1.0.0.bak")
        #expect(try S.sqlite(db + ".1.0.0.bak", ".dump") == before)

        // The rejects file lists the stored trips merged, as migrate's does.
        let rejects = try Self.jsonLines(viaConvert.appendingPathComponent("r.jsonl").path)
        #expect(rejects == (try Self.jsonLines(viaMigrate.appendingPathComponent("r.jsonl").path)))
        #expect(rejects.split(separator: "\n").count == 2 && rejects.contains(#""kind": "merged""#) && rejects.contains(#""source": "s.sqlite""#))

        // The report keeps the migration's figures beside the inputs' accounting.
        let report = try CLI.python("""
            import json, sys
            r = json.load(open(sys.argv[1]))
            m = r["storeMigration"]
            print(r["read"], r["written"], r["merged"], m["store"], m["from"], m["to"], m["read"], m["merged"], m["dropped"], m["tripsAfter"], m["backup"])
            for s in m["stages"]: print(s["stage"], s["tripsBefore"], s["tripsAfter"])
            """, [viaConvert.appendingPathComponent("report.json").path])
        #expect(report.out == """
            1 1 0 s.sqlite 1.0.0 3.0.0 5 2 0 3 s.sqlite.1.0.0.bak
            1.0.0 -> 2.0.0 (custom) 5 3
            2.0.0 -> 3.0.0 (lightweight) 3 3

            """, "\(report.stderr)")
    }

    @Test("a store already at the target takes no backup and its run's lines and report are as before")
    func currentStore() throws {
        let dir = try Self.storeAndInput()
        #expect(try CLI.run(CLI.binary, ["migrate", "s.sqlite", "--no-backup", "-q"], directory: dir).status == 0)
        let r = try CLI.run(CLI.binary, ["p.jsonl", "-o", "s.sqlite", "--migrate", "--report", "report.json"], directory: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("tripconv: read 1 trip from 1 input;") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(try CLI.python("import json,sys; print('storeMigration' in json.load(open(sys.argv[1])))",
                               [dir.appendingPathComponent("report.json").path]).out == "False\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["p.jsonl", "report.json", "s.sqlite"])
    }

    @Test("a run that fails after the migration, or in it, leaves the store as it was and no backup", arguments: [
        ["samples/bad-records.jsonl"], ["p.jsonl", "--dedupe", "fail", "--rejects", "r.jsonl"],
    ])
    func failedRun(_ arguments: [String]) throws {
        let dir = try Self.storeAndInput()
        let db = dir.appendingPathComponent("s.sqlite").path
        let before = S.bytes(db)
        let input = arguments[0].hasPrefix("samples/") ? CLI.root.appendingPathComponent(arguments[0]).path : arguments[0]
        let r = try CLI.run(CLI.binary, [input] + arguments.dropFirst() + ["-o", "s.sqlite", "--migrate"], directory: dir)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(S.bytes(db) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["p.jsonl", "s.sqlite"])
    }

    @Test("--backup and --no-backup go with --migrate: the backup where it says, or none, and the summary says which")
    func backupOptions() throws {
        let dir = try Self.storeAndInput()
        let given = try CLI.run(CLI.binary, ["p.jsonl", "-o", "s.sqlite", "--migrate", "--backup", "before.sqlite"], directory: dir)
        #expect(given.status == 0, "\(given.stderr)")
        #expect(given.stderr.hasPrefix("tripconv: s.sqlite: migrated 1.0.0 -> 3.0.0 in place;") && given.stderr.contains("; backup before.sqlite\n"))
        #expect(try S.sqlite(dir.appendingPathComponent("before.sqlite").path, "PRAGMA user_version; SELECT count(*) FROM trips;") == "1\n5\n")

        let other = try Self.storeAndInput()
        let none = try CLI.run(CLI.binary, ["p.jsonl", "-o", "s.sqlite", "--migrate", "--no-backup"], directory: other)
        #expect(none.status == 0, "\(none.stderr)")
        #expect(none.stderr.contains("; 3 trips at 3.0.0; no backup\n"), "\(none.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.path).sorted() == ["p.jsonl", "s.sqlite"])

        let alone = try CLI.run(CLI.binary, ["p.jsonl", "-o", "t.sqlite", "--no-backup"], directory: other)
        #expect(alone.status == 64)
        #expect(alone.stderr.contains("--backup and --no-backup go with --migrate"), "\(alone.stderr)")
    }

    @Test("a PostgreSQL store: the same lines, rejects and report as migrate's, no backup", .needsPostgres)
    func postgreSQLStore() throws {
        let server = try TestPostgres.requiredAddress()
        let schemas = (0..<2).map { _ in "t_convert_migrate_\(UInt32.random(in: 0...UInt32.max))" }
        defer { for s in schemas { _ = try? PGMigrateCLITests.psql(server, "DROP SCHEMA IF EXISTS \(s) CASCADE") } }
        let dir = try Self.storeAndInput()
        for s in schemas {
            let loaded = try CLI.run(CLI.binary, [CLI.root.appendingPathComponent("samples/trips-v1.json").path, "--target-version", "1.0.0",
                                                  "-o", server, "--pg-schema", s, "-q"], directory: dir)
            #expect(loaded.status == 0, "\(loaded.stderr)")
        }
        let converted = try CLI.run(CLI.binary, ["p.jsonl", "-o", server, "--pg-schema", schemas[0], "--migrate", "-v",
                                                 "--rejects", "convert.jsonl", "--report", "report.json"], directory: dir)
        let migrated = try CLI.run(CLI.binary, ["migrate", server, "--pg-schema", schemas[1], "-v", "--rejects", "migrate.jsonl"], directory: dir)
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(migrated.status == 0, "\(migrated.stderr)")
        // The same lines, but for the schema in the trips' places.
        let migrateLines = migrated.stderr.replacingOccurrences(of: schemas[1], with: schemas[0]).split(separator: "\n").map(String.init)
        let convertLines = converted.stderr.split(separator: "\n").map(String.init)
        try #require(migrateLines.count == 5 && convertLines.count == 7, "\(converted.stderr)")
        #expect(Array(convertLines.prefix(4)) == Array(migrateLines.prefix(4)))
        #expect(convertLines[4] == S.withoutTime(migrateLines[4]))
        #expect(convertLines[4].hasSuffix(": migrated 1.0.0 -> 3.0.0 in place; stages 1.0.0 -> 2.0.0 (custom), 2.0.0 -> 3.0.0 (lightweight); "
                                          + "read 5 trips; merged 2; dropped 0; 3 trips at 3.0.0"), "\(convertLines[4])")
        #expect(try PGMigrateCLITests.psql(server, "SELECT count(*) FROM \(schemas[0]).trips") == "4")

        let rejects = try Self.jsonLines(dir.appendingPathComponent("convert.jsonl").path)
        #expect(rejects == (try Self.jsonLines(dir.appendingPathComponent("migrate.jsonl").path)).replacingOccurrences(of: schemas[1], with: schemas[0]))
        #expect(rejects.split(separator: "\n").count == 2 && rejects.contains(#""kind": "merged""#))
        let report = try CLI.python("""
            import json, sys
            m = json.load(open(sys.argv[1]))["storeMigration"]
            print(m["from"], m["to"], m["read"], m["merged"], m["dropped"], m["tripsAfter"], "backup" in m, [s["stage"] for s in m["stages"]])
            """, [dir.appendingPathComponent("report.json").path])
        #expect(report.out == "1.0.0 3.0.0 5 2 0 3 False ['1.0.0 -> 2.0.0 (custom)', '2.0.0 -> 3.0.0 (lightweight)']\n", "\(report.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
                == ["convert.jsonl", "migrate.jsonl", "p.jsonl", "report.json", "s.sqlite"], "no backup of a PostgreSQL store")
    }
}
