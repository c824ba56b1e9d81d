import Foundation
import Testing
import TripKit
import TripTestSupport

/// `convert --model PLAN … -o ADDRESS --pg-schema S` where S holds a tripconv PostgreSQL store of the
/// recipe book (samples/swift-model-recipes): appended to as a SQLite store of objects is (ObjectAppendCLITests,
/// the oracle: the same runs on a SQLite store of the same objects), under --dedupe against the stored
/// objects, migrated in the same transaction with --migrate; each store read back with psql.
@Suite("convert --model into an existing PostgreSQL store of objects: append, --dedupe, --migrate", .needsPython3, .needsSQLite3, .needsPostgres)
struct ObjectPGAppendCLITests {
    static let plan = PlanRunCLITests.plan

    /// The recipes at `version` in a PostgreSQL store in a schema of its own, the same objects in a
    /// SQLite store, and `more.json` (ObjectAppendCLITests.storeAndMore: Soup again, and a Toast).
    static func stores(at version: String = "3.0.0") throws -> (dir: URL, sqlite: String, more: String, pg: PGCLIStore) {
        let (dir, sqlite, more) = try ObjectAppendCLITests.storeAndMore(at: version)
        let pg = try #require(PGCLIStore())
        let made = try pg.tripconv([dir.path + "/recipes-v1.json", "--model", plan, "--source-version", "1.0.0", "--target-version", version, "-q"])
        #expect(made.status == 0, "\(made.stderr)")
        return (dir, sqlite, more, pg)
    }

    /// `more.json` (1.0.0) appended to the PostgreSQL store with `arguments`.
    static func append(_ pg: PGCLIStore, _ more: String, _ arguments: String...) throws -> CLI.Result {
        try pg.tripconv([more, "--model", plan, "--source-version", "1.0.0"] + arguments)
    }

    /// ObjectAppendCLITests.rows, as psql reads them.
    static let rows = """
        SELECT 'R', _pk, title, servings, summary, cuisine FROM "Recipe" ORDER BY _pk;
        SELECT 'I', i._pk, i.name, i.quantity, r.title FROM "Ingredient" i LEFT JOIN "Recipe" r ON r._pk = i.recipe ORDER BY i._pk;
        """

    /// Whether the schema has a history table, and how many scratch schemas are left anywhere.
    static let leftovers = """
        SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'tripconv_migrations';
        SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'tripconv\\_migrating\\_%';
        """

    @Test("--dedupe merge: the stored Soup takes the incoming values, Toast and bread appended past the largest key; the SQLite store's objects")
    func appendMerge() throws {
        let s = try Self.stores()
        let rejects = s.dir.appendingPathComponent("pg.rejects.jsonl").path
        let r = try Self.append(s.pg, s.more, "--rejects", rejects)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: read 4 objects; wrote 3 (Recipe 1, Ingredient 2); merged 1; dropped 0 "), "\(r.stderr)")
        #expect(try s.pg.psql(Self.rows) == ObjectAppendCLITests.merged)
        #expect(try s.pg.psql(Self.leftovers) == "0\n0\n")
        let rejected = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n").map { line in
            (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["kind"] as? String ?? "?"
        }
        #expect(rejected == ["merged"], "\(rejected)")
        #expect(try s.pg.psql("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = '\"Ingredient\"'::regclass AND contype = 'f'")
                == "FOREIGN KEY (recipe) REFERENCES \"Recipe\"(_pk) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED\n")

        // The same run into the SQLite store: both read back to the same JSON Lines.
        let sqlite = try CLI.tripconv(s.more, "--model", Self.plan, "--source-version", "1.0.0", "-o", s.sqlite)
        #expect(sqlite.status == 0 && sqlite.stderr.contains("tripconv: read 4 objects; wrote 3 (Recipe 1, Ingredient 2); merged 1; dropped 0 "),
                "\(sqlite.stderr)")
        let fromSQLite = s.dir.appendingPathComponent("sqlite.jsonl").path, fromPG = s.dir.appendingPathComponent("pg.jsonl").path
        #expect(try CLI.tripconv(s.sqlite, "-q", "-o", fromSQLite).status == 0)
        let back = try CLI.tripconv(s.pg.server, "--pg-schema", s.pg.schema, "-q", "-o", fromPG)
        #expect(back.status == 0, "\(back.stderr)")
        let expected = try String(contentsOfFile: fromSQLite, encoding: .utf8), got = try String(contentsOfFile: fromPG, encoding: .utf8)
        #expect(expected.components(separatedBy: "\n").count == 11 && got == expected, "\(got)")
    }

    @Test("--dedupe first keeps the stored Soup, last puts the incoming one in its place (counted), fail is 65 with the store unchanged")
    func appendPolicies() throws {
        let first = try Self.stores()
        let kept = try Self.append(first.pg, first.more, "--dedupe", "first")
        #expect(kept.status == 0 && kept.stderr.contains("wrote 3 (Recipe 1, Ingredient 2); merged 0; dropped 1 "), "\(kept.stderr)")
        #expect(try first.pg.psql("SELECT _pk, servings, summary FROM \"Recipe\" WHERE title = 'Soup'") == "2|2|\n")
        #expect(try first.pg.psql("SELECT count(*) FROM \"Recipe\"; SELECT count(*) FROM \"Ingredient\"") == "4\n6\n")

        let last = try Self.stores()
        let replaced = try Self.append(last.pg, last.more, "--dedupe", "last")
        #expect(replaced.status == 0 && replaced.stderr.contains("wrote 4 (Recipe 2, Ingredient 2), 1 replacing stored object; merged 0; dropped 0 "),
                "\(replaced.stderr)")
        // The stored leek now points at the incoming Soup (key 1 moved past the store's largest, 4).
        #expect(try last.pg.psql("SELECT r._pk, r.servings, string_agg(i._pk::text, ',' ORDER BY i._pk) FROM \"Recipe\" r "
                                 + "JOIN \"Ingredient\" i ON i.recipe = r._pk WHERE r.title = 'Soup' GROUP BY r._pk") == "5|5|3,5\n")

        let failing = try Self.stores()
        let before = try ObjectPGMigrateCLITests.dump(failing.pg)
        let refused = try Self.append(failing.pg, failing.more, "--dedupe", "fail")
        #expect(refused.status == 65 && refused.stderr.contains("Recipe with title \"Soup\""), "\(refused.stderr)")
        #expect(try ObjectPGMigrateCLITests.dump(failing.pg) == before)
    }

    @Test("a 1.0.0 store: 64 without --migrate, naming the schema; with it migrated and appended to in one transaction, history recorded, no backup")
    func migrateThenAppend() throws {
        let s = try Self.stores(at: "1.0.0")
        let before = try ObjectPGMigrateCLITests.dump(s.pg)
        let refused = try Self.append(s.pg, s.more)
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("/postgres/\(s.pg.schema): store is at 1.0.0, target is 3.0.0; pass --migrate to migrate it in place"),
                "\(refused.stderr)")
        #expect(refused.stderr.contains("`tripconv migrate --model \(Self.plan) \(s.pg.server) --pg-schema \(s.pg.schema)`"), "\(refused.stderr)")
        let backup = try Self.append(s.pg, s.more, "--migrate", "--backup", s.dir.appendingPathComponent("b").path)
        #expect(backup.status == 64 && backup.stderr.contains("--backup: a PostgreSQL store is migrated in one transaction and not backed up"),
                "\(backup.stderr)")
        #expect(try ObjectPGMigrateCLITests.dump(s.pg) == before)

        let r = try Self.append(s.pg, s.more, "--migrate", "-v")
        #expect(r.status == 0, "\(r.stderr)")
        // The SQLite store's lines (ObjectAppendCLITests), with no backup part.
        #expect(r.stderr.contains("tripconv: \(s.pg.server): migrated 1.0.0 -> 3.0.0 in place; stages 1.0.0 -> 2.0.0 (custom), "
                                  + "2.0.0 -> 3.0.0 (lightweight); read 10 objects; merged 1; dropped 2; rejected 0; 7 objects at 3.0.0 "
                                  + "(Recipe 3, Ingredient 4)\n"), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(s.pg.server): stage 1.0.0 -> 2.0.0 (custom): 10 objects -> 9; "), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: read 4 objects; wrote 3 (Recipe 1, Ingredient 2); merged 1; "), "\(r.stderr)")
        #expect(!r.stderr.contains("backup"), "\(r.stderr)")
        #expect(try s.pg.psql(Self.rows) == ObjectAppendCLITests.merged)
        #expect(try s.pg.psql("""
            SELECT from_version, to_version, stages, trips_before, trips_after FROM tripconv_migrations ORDER BY id;
            SELECT value::json -> 'versionIdentifiers' FROM tripconv_model WHERE name = 'model';
            SELECT string_agg(tablename, ', ' ORDER BY tablename) FROM pg_tables WHERE schemaname = current_schema();
            SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'tripconv\\_migrating\\_%';
            """) == """
            1.0.0|2.0.0|1.0.0 -> 2.0.0 (custom)|10|9
            2.0.0|3.0.0|2.0.0 -> 3.0.0 (lightweight)|9|7
            ["3.0.0"]
            Ingredient, Recipe, tripconv_migrations, tripconv_model
            0

            """)
        // One transaction wrote every row: the migrated objects, the appended ones, the model and the history.
        #expect(try s.pg.psql("""
            SELECT count(DISTINCT x) FROM (SELECT xmin::text x FROM "Recipe" UNION ALL SELECT xmin::text FROM "Ingredient"
              UNION ALL SELECT xmin::text FROM tripconv_model UNION ALL SELECT xmin::text FROM tripconv_migrations) t
            """) == "1\n")
    }

    @Test("--report with --migrate: storeMigration has the migration's figures and no backup (a PostgreSQL store is not backed up)")
    func reportStoreMigration() throws {
        let s = try Self.stores(at: "1.0.0")
        let report = s.dir.appendingPathComponent("report.json").path
        let r = try Self.append(s.pg, s.more, "--migrate", "--report", report)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try ObjectAppendCLITests.storeMigration(report) == ObjectAppendCLITests.migratedToThree(store: s.pg.server, backup: nil))
    }

    @Test("--report of an append has replacedInStore (python3's json), as the SQLite store's: 1 under --dedupe last, 0 under first (was: missing)")
    func reportReplacedInStore() throws {
        let last = try Self.stores()
        let report = last.dir.appendingPathComponent("report.json").path
        let replaced = try Self.append(last.pg, last.more, "--dedupe", "last", "--report", report)
        #expect(replaced.status == 0 && replaced.stderr.contains(", 1 replacing stored object; "), "\(replaced.stderr)")
        #expect(try ObjectAppendCLITests.replacedInStore(report) == "ok 4 4 0 0 1\n")

        let first = try Self.stores()
        let kept = try Self.append(first.pg, first.more, "--dedupe", "first", "--report", report)
        #expect(kept.status == 0 && !kept.stderr.contains("replacing"), "\(kept.stderr)")
        #expect(try ObjectAppendCLITests.replacedInStore(report) == "ok 4 3 0 1 0\n")
    }

    @Test("failing mid-way leaves the store as it was: --migrate meeting --dedupe fail, a bad incoming record after the store's objects, a reader holding a table")
    func failureMidWay() throws {
        let s = try Self.stores(at: "1.0.0")
        let before = try ObjectPGMigrateCLITests.dump(s.pg)
        let failed = try Self.append(s.pg, s.more, "--migrate", "--dedupe", "fail")
        #expect(failed.status == 65 && failed.stderr.contains("Recipe with title \"Pancakes\""), "\(failed.stderr)")
        #expect(try ObjectPGMigrateCLITests.dump(s.pg) == before)

        // The store's objects are migrated and written before the writer meets the input's title, which PostgreSQL text cannot hold.
        let bad = s.dir.appendingPathComponent("bad.json").path
        try Data("""
            {"Chef": [], "Recipe": [{"@key": 1, "title": "To\\u0000ast", "servings": 1, "notes": null, "chef": null, "ingredients": []}], "Ingredient": []}
            """.utf8).write(to: URL(fileURLWithPath: bad))
        let rejected = try Self.append(s.pg, bad, "--migrate")
        #expect(rejected.status == 65 && rejected.stderr.contains("Recipe.title: PostgreSQL text cannot hold a NUL character"), "\(rejected.stderr)")
        #expect(try ObjectPGMigrateCLITests.dump(s.pg) == before)

        // psql holds a read lock on Recipe: the append reads and writes its scratch schema, then cannot
        // drop Recipe within its 5 s wait: 75, everything rolled back.
        let held = try CLI.python("""
            import subprocess, sys, time
            server, schema, tripconv, plan, more = sys.argv[1:6]
            reader = subprocess.Popen(['psql', '-X', '-q', '-d', server, '-c',
                                       'BEGIN; SET search_path TO %s; SELECT count(*) FROM "Recipe"; SELECT pg_sleep(12); COMMIT;' % schema],
                                      stdout=subprocess.DEVNULL)
            look = ("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                    "WHERE c.relname = 'Recipe' AND c.relnamespace = '%s'::regnamespace AND l.granted" % schema)
            while subprocess.run(['psql', '-X', '-A', '-t', '-d', server, '-c', look], capture_output=True, text=True).stdout.strip() == '0':
                time.sleep(0.05)
            run = subprocess.run([tripconv, more, '--model', plan, '--source-version', '1.0.0', '--migrate', '-o', server, '--pg-schema', schema],
                                 capture_output=True, text=True)
            print(run.returncode)
            print(run.stderr, end='')
            reader.kill()
            reader.wait()
            """, [s.pg.server, s.pg.schema, CLI.binary, Self.plan, s.more])
        #expect(held.out.hasPrefix("75\n"), "\(held.out)\(held.stderr)")
        #expect(held.out.contains("cannot replace the store: the store is busy"), "\(held.out)")
        #expect(try ObjectPGMigrateCLITests.dump(s.pg) == before)
    }

    @Test("refused, the store unchanged: a store of another model (65, both ways, with or without --migrate), a stranger's table in the schema (73)")
    func refusals() throws {
        let dir = try ObjectSQLiteStoreCLITests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let shelvesStore = try ObjectSQLiteStoreCLITests.shelves(in: dir, rows: 2)
        let shelves = try #require(PGCLIStore())
        #expect(try shelves.tripconv([shelvesStore, "-q", "--rejects", dir + "/rejects.jsonl"]).status == 0)
        let shelvesBefore = try ObjectPGMigrateCLITests.dump(shelves)
        let s = try Self.stores()
        for migrate in [[], ["--migrate"]] {
            let r = try shelves.tripconv([s.more, "--model", Self.plan, "--source-version", "1.0.0"] + migrate)
            #expect(r.status == 65, "\(r.stderr)")
            #expect(r.stderr.contains("/postgres/\(shelves.schema): the store is at 2.1.0 (its tripconv_model), which is not a version of the plan"),
                    "\(r.stderr)")
        }
        #expect(try ObjectPGMigrateCLITests.dump(shelves) == shelvesBefore)

        let before = try ObjectPGMigrateCLITests.dump(s.pg)
        let other = try s.pg.tripconv([shelvesStore])
        #expect(other.status == 65, "\(other.stderr)")
        #expect(other.stderr.contains("/postgres/\(s.pg.schema): a store of another model than the objects written: it holds entities Recipe, "
                                      + "Ingredient at 3.0.0"), "\(other.stderr)")
        #expect(try ObjectPGMigrateCLITests.dump(s.pg) == before)

        try s.pg.psql("CREATE TABLE notes (id int)")
        let withNotes = try ObjectPGMigrateCLITests.dump(s.pg)
        let stranger = try Self.append(s.pg, s.more)
        #expect(stranger.status == 73, "\(stranger.stderr)")
        #expect(stranger.stderr.contains("holds tables that are not of the store (notes); nothing was written"), "\(stranger.stderr)")
        #expect(try ObjectPGMigrateCLITests.dump(s.pg) == withNotes)
    }
}
