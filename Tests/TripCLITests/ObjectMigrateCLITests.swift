import Foundation
import Testing
import TripKit
import TripTestSupport

/// `migrate --model PLAN STORE`: a tripconv SQLite store of the recipe book (samples/swift-model-recipes)
/// written at 1.0.0 by `convert --model recipes-plan.json --target-version 1.0.0`, migrated in place by
/// the plan, checked with Python's sqlite3.
@Suite("migrate --model: a store of another app's objects in place")
struct ObjectMigrateCLITests {
    static let plan = PlanRunCLITests.plan

    /// A 1.0.0 store of the recipes (10 objects: 2 chefs, 4 recipes, two of them "Pancakes", 4 ingredients).
    static func v1Store() throws -> (dir: URL, store: String) {
        let dir = try PlanRunCLITests.exports()
        let store = dir.appendingPathComponent("recipes.sqlite").path
        let made = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", plan, "--source-version", "1.0.0", "--target-version", "1.0.0",
                                    "-o", store, "-q")
        #expect(made.status == 0, "\(made.stderr)")
        return (dir, store)
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// A file's bytes with the schema cookie (offsets 40-43) zeroed: SQLite's online backup API, which
    /// takes the backup, writes the copy's own cookie there so that connections reload its schema;
    /// every other byte of a backup is the store's.
    static func bytesButSchemaCookie(_ path: String) -> Data? {
        guard var d = bytes(path), d.count >= 100 else { return nil }
        d.replaceSubrange(40..<44, with: [0, 0, 0, 0])
        return d
    }

    /// The files of a folder, sorted (temporary files left behind would show here).
    static func files(_ dir: URL) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() }

    static let tables = """
        import json, sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        print(names)
        print([r[1] for r in db.execute("PRAGMA table_info('Recipe')")])
        print(db.execute("SELECT title, servings, summary, cuisine FROM Recipe ORDER BY _pk").fetchall())
        print(db.execute("SELECT i.name, i.quantity, r.title FROM Ingredient i JOIN Recipe r ON r._pk = i.recipe ORDER BY i._pk").fetchall())
        print(json.loads(db.execute("SELECT value FROM tripconv_model WHERE name = 'model'").fetchone()[0])['versionIdentifiers'])
        print(db.execute("SELECT id, from_version, to_version, tool_version, stages, trips_before, trips_after FROM tripconv_migrations ORDER BY id").fetchall())
        print(db.execute("PRAGMA integrity_check").fetchone()[0], db.execute("PRAGMA foreign_key_check").fetchall())
        """

    @Test("1.0.0 -> 3.0.0 in place: notes renamed to summary, Chef removed, Pancakes merged, history recorded, backup equals the original",
          .needsPython3)
    func inPlace() throws {
        let (dir, store) = try Self.v1Store()
        let original = try #require(Self.bytesButSchemaCookie(store))
        let r = try CLI.tripconv("migrate", "--model", Self.plan, store, "-v")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(store): stage 1.0.0 -> 2.0.0 (custom): 10 objects -> 9; custom stage 1.0.0 -> 2.0.0: "
                                  + "its willMigrate code is not run; rename Recipe.notes to summary; deduplicating Recipe on title"), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(store): migrated 1.0.0 -> 3.0.0 in place; stages 1.0.0 -> 2.0.0 (custom), 2.0.0 -> 3.0.0 (lightweight); "
                                  + "read 10 objects; merged 1; dropped 2; rejected 0; 7 objects at 3.0.0 (Recipe 3, Ingredient 4); "
                                  + "backup \(store).1.0.0.bak; "), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: merged: "), "\(r.stderr)")
        let checked = try CLI.python(Self.tables, [store])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            ['Ingredient', 'Recipe', 'tripconv_migrations', 'tripconv_model']
            ['_pk', 'title', 'servings', 'summary', 'cuisine']
            [('Pancakes', 6, 'fluffy', 'unknown'), ('Soup', 2, '', 'unknown'), ('Salad', 1, 'quick', 'unknown')]
            [('flour', '200', 'Pancakes'), ('milk', '300', 'Pancakes'), ('leek', '2', 'Soup'), ('egg', '3', 'Pancakes')]
            ['3.0.0']
            [(1, '1.0.0', '2.0.0', '0.1.0', '1.0.0 -> 2.0.0 (custom)', 10, 9), (2, '2.0.0', '3.0.0', '0.1.0', '2.0.0 -> 3.0.0 (lightweight)', 9, 7)]
            ok []

            """, "\(checked.stderr)")
        #expect(Self.bytesButSchemaCookie(store + ".1.0.0.bak") == original)
        let left = try Self.files(dir)
        #expect(left.filter { $0.hasPrefix(".") || $0.contains("-journal") }.isEmpty, "\(left)")
        // At the target now: nothing to do, not a byte changed, no second backup.
        let migrated = Self.bytes(store)
        let again = try CLI.tripconv("migrate", "--model", Self.plan, store)
        #expect(again.status == 0 && again.stderr == "tripconv: \(store): already at 3.0.0; nothing to do\n", "\(again.stderr)")
        #expect(Self.bytes(store) == migrated && !FileManager.default.fileExists(atPath: store + ".3.0.0.bak"))
    }

    @Test("in two steps (--target-version 2.0.0, then 3.0.0): the history keeps the first row, each backup holds its version",
          .needsPython3)
    func twoStepsKeepHistory() throws {
        let (_, store) = try Self.v1Store()
        let first = try CLI.tripconv("migrate", "--model", Self.plan, store, "--target-version", "2.0.0", "--dedupe", "first", "-q")
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first.stderr)")
        let atTwo = try #require(Self.bytes(store))
        let second = try CLI.tripconv("migrate", "--model", Self.plan, store, "--no-backup")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("read 8 objects; merged 0; dropped 2; rejected 0; 6 objects at 3.0.0") && second.stderr.contains("; no backup; "),
                "\(second.stderr)")
        #expect(Self.bytes(store + ".2.0.0.bak") == nil && Self.bytes(store + ".1.0.0.bak") != nil && atTwo != Self.bytes(store))
        let history = try CLI.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("SELECT id, from_version, to_version, trips_before, trips_after FROM tripconv_migrations ORDER BY id").fetchall())
            print(db.execute("SELECT title, servings FROM Recipe ORDER BY _pk").fetchall())
            """, [store])
        // --dedupe first keeps the first Pancakes (servings 4); the second's egg goes with it.
        #expect(String(decoding: history.stdout, as: UTF8.self) == """
            [(1, '1.0.0', '2.0.0', 10, 8), (2, '2.0.0', '3.0.0', 8, 6)]
            [('Pancakes', 4), ('Soup', 2), ('Salad', 1)]

            """, "\(history.stderr)")
    }

    @Test("a process that has the store open sees the migrated store, and its write after the migration lands in the file", .needsPython3)
    func openElsewhere() throws {
        let (_, store) = try Self.v1Store()
        let r = try CLI.python("""
            import sqlite3, subprocess, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("SELECT count(*) FROM Recipe").fetchone()[0], [c[1] for c in db.execute("PRAGMA table_info('Recipe')")])
            ran = subprocess.run([sys.argv[2], 'migrate', '--model', sys.argv[3], sys.argv[1], '-q', '--no-backup'])
            print(ran.returncode, [c[1] for c in db.execute("PRAGMA table_info('Recipe')")])
            db.execute("INSERT INTO Recipe (_pk, title, servings, summary, cuisine) VALUES (99, 'Toast', 1, '', 'unknown')")
            db.commit()
            print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*), max(title) FROM Recipe").fetchone())
            """, [store, CLI.binary, Self.plan])
        #expect(String(decoding: r.stdout, as: UTF8.self) == """
            4 ['_pk', 'title', 'servings', 'notes', 'chef']
            0 ['_pk', 'title', 'servings', 'summary', 'cuisine']
            (4, 'Toast')

            """, "\(r.stderr)")
    }

    @Test("--dry-run changes nothing (bytes, no -journal, -wal or -shm, no backup) and says what each stage would do, per object with -v",
          .needsPython3)
    func dryRun() throws {
        let (dir, store) = try Self.v1Store()
        let before = try Self.files(dir), original = Self.bytes(store)
        let r = try CLI.tripconv("migrate", "--model", Self.plan, store, "--dry-run", "-v", "--rejects", dir.path + "/rejects.jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.hasPrefix("""
            \(store): tripconv object store at 1.0.0 (its tripconv_model), 10 objects (Chef 2, Recipe 4, Ingredient 4)
            would migrate 1.0.0 -> 3.0.0 in place under --dedupe merge:
              custom stage 1.0.0 -> 2.0.0: its willMigrate code is not run; rename Recipe.notes to summary; deduplicating Recipe on title
            """), "\(out)")
        #expect(out.contains("\n  lightweight stage 2.0.0 -> 3.0.0: make Recipe.summary required (nil becomes \"\"); add Recipe.cuisine = unknown; "
                             + "remove relationship Recipe.chef; remove entity Chef (its objects are dropped and counted)\n"), "\(out)")
        #expect(out.components(separatedBy: "\n  would be dropped: ").count == 3 && out.components(separatedBy: "\n  would be merged: ").count == 2, "\(out)")
        #expect(out.hasSuffix("would merge 1, drop 2 and reject 0: 10 objects -> 7 at 3.0.0\n(a dry run writes no rejects file and takes no backup)\n"),
                "\(out)")
        #expect(r.stderr.hasPrefix("tripconv: \(store): dry run; nothing was changed ("), "\(r.stderr)")
        let after = try Self.files(dir)
        #expect(Self.bytes(store) == original && after == before, "\(after)")
    }

    @Test("--dedupe fail meeting the two Pancakes: exit 65, the store byte-identical, no backup, no temporary file left", .needsPython3)
    func failingLeavesStore() throws {
        let (dir, store) = try Self.v1Store()
        let before = try Self.files(dir), original = Self.bytes(store)
        let r = try CLI.tripconv("migrate", "--model", Self.plan, store, "--dedupe", "fail", "--rejects", dir.path + "/rejects.jsonl")
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("a second Recipe with title \"Pancakes\" (unique from 2.0.0)"), "\(r.stderr)")
        let after = try Self.files(dir)
        #expect(Self.bytes(store) == original && after == before, "\(after)")
        let dry = try CLI.tripconv("migrate", "--model", Self.plan, store, "--dedupe", "fail", "--dry-run")
        #expect(dry.status == 65 && String(decoding: dry.stdout, as: UTF8.self).hasSuffix("would fail; the store would be left as it is\n"),
                "\(dry.stderr)")
        let afterDry = try Self.files(dir)
        #expect(Self.bytes(store) == original && afterDry == before, "\(afterDry)")
    }

    @Test("a store at a version the plan does not list (65, naming both), a target before the store's (64), an unknown target (64)",
          .needsPython3)
    func versions() throws {
        let (_, store) = try Self.v1Store()
        let original = Self.bytes(store)
        let down = try CLI.tripconv("migrate", "--model", Self.plan, store, "--target-version", "4.0.0")
        #expect(down.status == 64 && down.stderr.contains("--target-version 4.0.0: the plan's versions are 1.0.0, 2.0.0, 3.0.0"), "\(down.stderr)")
        let relabel = try CLI.python("""
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            m = json.loads(db.execute("SELECT value FROM tripconv_model WHERE name = 'model'").fetchone()[0])
            m['versionIdentifiers'] = [sys.argv[2]]
            db.execute("UPDATE tripconv_model SET value = ? WHERE name = 'model'", (json.dumps(m),)); db.commit()
            """, [store, "0.9.0"])
        #expect(relabel.status == 0, "\(relabel.stderr)")
        let foreign = try #require(Self.bytes(store))
        let r = try CLI.tripconv("migrate", "--model", Self.plan, store)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("\(store): the store is at 0.9.0 (its tripconv_model), which is not a version of the plan \(Self.plan) "
                                  + "(1.0.0, 2.0.0, 3.0.0)"), "\(r.stderr)")
        #expect(Self.bytes(store) == foreign && original != foreign)
        let later = try CLI.python("""
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            m = json.loads(db.execute("SELECT value FROM tripconv_model WHERE name = 'model'").fetchone()[0])
            m['versionIdentifiers'] = ['2.0.0']
            db.execute("UPDATE tripconv_model SET value = ? WHERE name = 'model'", (json.dumps(m),)); db.commit()
            """, [store])
        #expect(later.status == 0)
        let refused = try CLI.tripconv("migrate", "--model", Self.plan, store, "--target-version", "1.0.0")
        #expect(refused.status == 64 && refused.stderr.contains("\(store): store is at 2.0.0, target is 1.0.0; a store is never migrated down"),
                "\(refused.stderr)")
    }

    @Test("a store not there is no input, 66 with --model as without, dry run or not; so is a --model not there (was: 64 for migrate and detect, 0 for a store's convert)")
    func notThere() throws {
        let dir = try CLI.temporaryDirectory().path
        let missing = dir + "/nothing.sqlite"
        for model in [["--model", Self.plan], []] {
            for dry in [[], ["--dry-run"]] {
                let r = try CLI.run(CLI.binary, ["migrate"] + model + [missing] + dry)
                #expect(r.status == 66 && r.stderr == "tripconv: \(missing): cannot open: No such file or directory\n", "\(model) \(dry): \(r.stderr)")
            }
        }
        let (_, store) = try Self.v1Store()
        let original = Self.bytes(store)
        // migrate, detect and convert (of a store of objects, which carries its own model) as schema says it.
        for command in [["migrate"], ["detect"], ["schema"], []] {
            let r = try CLI.run(CLI.binary, command + ["--model", dir + "/plan.json"] + (command == ["schema"] ? [] : [store]))
            #expect(r.status == 66 && r.stderr == "tripconv: \(dir)/plan.json: cannot open: No such file or directory\n" && r.out.isEmpty,
                    "\(command): \(r.stderr)")
        }
        #expect(Self.bytes(store) == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test("refused: a Core Data store with --model (64, why, what instead), an object store without --model, a SampleTrips store with --model",
          .needsPython3)
    func refusals() throws {
        let dir = try CLI.temporaryDirectory().path
        let coreData = dir + "/recipes.store"
        try #require(try ModelStoreWriter.write(PlanRunCLITests.v1, to: coreData, rows: 2).status == 0)
        let original = Self.bytes(coreData)
        let r = try CLI.tripconv("migrate", "--model", Self.plan, coreData)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("\(coreData): a Core Data (SwiftData) store is not migrated in place: tripconv would have to write Core Data's "
                                  + "metadata and the entity version hashes the app checks"), "\(r.stderr)")
        #expect(r.stderr.contains("`tripconv \(coreData) --model \(Self.plan) -o new.sqlite`"), "\(r.stderr)")
        #expect(Self.bytes(coreData) == original)

        let (_, store) = try Self.v1Store()
        let bare = try CLI.tripconv("migrate", store)
        #expect(bare.status == 64 && bare.stderr.contains("migrate it with --model naming that app's plan (its Swift source or plan JSON)"),
                "\(bare.stderr)")

        let trips = dir + "/trips.sqlite"
        try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("samples/trips-v1.sqlite").path, toPath: trips)
        let sample = try CLI.tripconv("migrate", "--model", Self.plan, trips)
        #expect(sample.status == 64 && sample.stderr.contains("a SampleTrips store is migrated without --model"), "\(sample.stderr)")

        // A PostgreSQL store is migrated (ObjectPGMigrateCLITests); one that cannot be reached is 69, its password in no message.
        let pg = try CLI.tripconv("migrate", "--model", Self.plan, "postgresql://tripconv:secret@127.0.0.1:1/objects?connect_timeout=2")
        #expect(pg.status == 69 && !pg.stderr.contains("secret"), "\(pg.stderr)")
    }

    @Test("a file that is not a database (Python's JSON export) is the SampleTrips path's error, the file named first, with --model as without (65; was: \"it has no readable tripconv_model table\")",
          .needsPython3)
    func notADatabase() throws {
        let dir = try PlanRunCLITests.exports()
        for name in ["recipes-v1.json", "recipes-v1.sqlite"] {
            let path = dir.appendingPathComponent(name).path
            if name.hasSuffix(".sqlite") { try FileManager.default.copyItem(atPath: dir.path + "/recipes-v1.json", toPath: path) }
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let trips = try CLI.tripconv("migrate", path)
            let objects = try CLI.tripconv("migrate", "--model", Self.plan, path)
            #expect(trips.status == 65 && trips.stderr == "tripconv: \(path): not a SQLite store (file is not a database)\n", "\(trips.stderr)")
            #expect(objects.status == trips.status && objects.stderr == trips.stderr, "\(objects.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".bak") }.isEmpty)
        }
    }
}
