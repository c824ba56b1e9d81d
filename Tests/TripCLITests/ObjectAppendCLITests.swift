import Foundation
import Testing
import TripKit
import TripTestSupport

/// `convert --model PLAN … -o STORE.sqlite` where STORE is an existing tripconv store of the recipe
/// book (samples/swift-model-recipes): the objects appended under --dedupe against the stored ones,
/// an older store refused without --migrate and migrated in place with it, a store of another model
/// refused; each store checked with the sqlite3 tool.
@Suite("convert --model into an existing store of objects: append, --dedupe, --migrate", .needsPython3, .needsSQLite3)
struct ObjectAppendCLITests {
    static let plan = PlanRunCLITests.plan

    /// The recipes at 3.0.0 in a store (Pancakes 1, Soup 2, Salad 4; flour, milk, leek, egg), and
    /// `more.json`, a 1.0.0 export of a Soup of 5 servings noted "hot" (a duplicate of the stored one)
    /// with a leek, and a new Toast with bread.
    static func storeAndMore(at version: String = "3.0.0") throws -> (dir: URL, store: String, more: String) {
        let dir = try PlanRunCLITests.exports()
        let store = dir.appendingPathComponent("recipes.sqlite").path
        let made = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", plan, "--source-version", "1.0.0", "--target-version", version,
                                    "-o", store, "-q")
        #expect(made.status == 0, "\(made.stderr)")
        let more = dir.appendingPathComponent("more.json").path
        try Data("""
            {"Chef": [],
             "Recipe": [{"@key": 1, "title": "Soup", "servings": 5, "notes": "hot", "chef": null, "ingredients": [1]},
                        {"@key": 2, "title": "Toast", "servings": 1, "notes": null, "chef": null, "ingredients": [2]}],
             "Ingredient": [{"@key": 1, "name": "leek", "quantity": 1, "recipe": 1}, {"@key": 2, "name": "bread", "quantity": 2, "recipe": 2}]}
            """.utf8).write(to: URL(fileURLWithPath: more))
        return (dir, store, more)
    }

    static func sqlite(_ store: String, _ sql: String) throws -> String {
        let r = try CLI.run(try #require(CLI.tool("sqlite3")), [store, sql])
        #expect(r.status == 0, "\(r.stderr)")
        return String(decoding: r.stdout, as: UTF8.self)
    }

    static let rows = """
        SELECT 'R', _pk, title, servings, summary, cuisine FROM Recipe ORDER BY _pk;
        SELECT 'I', i._pk, i.name, i.quantity, r.title FROM Ingredient i LEFT JOIN Recipe r ON r._pk = i.recipe ORDER BY i._pk;
        """

    /// The store after `more.json` is merged in: Soup with the incoming servings and summary, the
    /// incoming leek pointing at the stored Soup, Toast and its bread after the store's largest key (4).
    static let merged = """
        R|1|Pancakes|6|fluffy|unknown
        R|2|Soup|5|hot|unknown
        R|4|Salad|1|quick|unknown
        R|6|Toast|1||unknown
        I|1|flour|200|Pancakes
        I|2|milk|300|Pancakes
        I|3|leek|2|Soup
        I|4|egg|3|Pancakes
        I|5|leek|1|Soup
        I|6|bread|2|Toast

        """

    @Test("--dedupe merge (the default): the stored Soup takes the incoming values, its leek points at it, Toast and bread are added")
    func appendMerge() throws {
        let (_, store, more) = try Self.storeAndMore()
        let r = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", store, "--rejects", store + ".rejects.jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: read 4 objects; wrote 3 (Recipe 1, Ingredient 2); merged 1; dropped 0 "), "\(r.stderr)")
        #expect(try Self.sqlite(store, Self.rows) == Self.merged)
        let rejects = try String(contentsOfFile: store + ".rejects.jsonl", encoding: .utf8)
        #expect(rejects.contains("\"kind\":\"merged\"") || rejects.contains("\"kind\": \"merged\""), "\(rejects)")
        #expect(try Self.sqlite(store, "PRAGMA integrity_check; PRAGMA foreign_key_check;") == "ok\n")
        // No history row for an append that migrated nothing.
        #expect(try Self.sqlite(store, "SELECT count(*) FROM sqlite_master WHERE name = 'tripconv_migrations'") == "0\n")
    }

    @Test("--dedupe first keeps the stored Soup, last puts the incoming one in its place (counted), fail is 65 with the store unchanged")
    func appendPolicies() throws {
        let (_, first, more) = try Self.storeAndMore()
        let kept = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", first, "--dedupe", "first")
        #expect(kept.status == 0 && kept.stderr.contains("wrote 3 (Recipe 1, Ingredient 2); merged 0; dropped 1 "), "\(kept.stderr)")
        #expect(try Self.sqlite(first, "SELECT _pk, servings, summary FROM Recipe WHERE title = 'Soup'") == "2|2|\n")

        let (_, last, _) = try Self.storeAndMore()
        let replaced = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", last, "--dedupe", "last")
        #expect(replaced.status == 0 && replaced.stderr.contains("wrote 4 (Recipe 2, Ingredient 2), 1 replacing stored object; merged 0; dropped 0 "),
                "\(replaced.stderr)")
        // The stored leek now points at the incoming Soup (key 1 moved past the store's largest, 4).
        #expect(try Self.sqlite(last, "SELECT r._pk, r.servings, group_concat(i._pk) FROM Recipe r JOIN Ingredient i ON i.recipe = r._pk "
                                + "WHERE r.title = 'Soup' GROUP BY r._pk") == "5|5|3,5\n")

        let (dir, failing, _) = try Self.storeAndMore()
        let before = try Data(contentsOf: URL(fileURLWithPath: failing)), files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let refused = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", failing, "--dedupe", "fail")
        #expect(refused.status == 65 && refused.stderr.contains("Recipe with title \"Soup\""), "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: failing)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == files)
    }

    @Test("a 1.0.0 store: refused without --migrate (64, saying to add it); with it migrated in place, appended to, history and backup")
    func migrateThenAppend() throws {
        let (dir, store, more) = try Self.storeAndMore(at: "1.0.0")
        let original = try #require(ObjectMigrateCLITests.bytesButSchemaCookie(store))
        let refused = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", store)
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("\(store): store is at 1.0.0, target is 3.0.0; pass --migrate to migrate it in place"), "\(refused.stderr)")
        #expect(ObjectMigrateCLITests.bytesButSchemaCookie(store) == original)

        let r = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", store, "--migrate", "-v")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(store): migrated 1.0.0 -> 3.0.0 in place; stages 1.0.0 -> 2.0.0 (custom), 2.0.0 -> 3.0.0 (lightweight); "
                                  + "read 10 objects; merged 1; dropped 2; rejected 0; 7 objects at 3.0.0 (Recipe 3, Ingredient 4); "
                                  + "backup \(store).1.0.0.bak"), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(store): stage 1.0.0 -> 2.0.0 (custom): 10 objects -> 9; "), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: read 4 objects; wrote 3 (Recipe 1, Ingredient 2); merged 1; "), "\(r.stderr)")
        #expect(try Self.sqlite(store, Self.rows) == Self.merged)
        #expect(try Self.sqlite(store, "SELECT from_version, to_version, stages, trips_before, trips_after FROM tripconv_migrations ORDER BY id;"
                                + "SELECT json_extract(value, '$.versionIdentifiers[0]') FROM tripconv_model WHERE name = 'model';"
                                + "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") == """
            1.0.0|2.0.0|1.0.0 -> 2.0.0 (custom)|10|9
            2.0.0|3.0.0|2.0.0 -> 3.0.0 (lightweight)|9|7
            3.0.0
            Ingredient
            Recipe
            tripconv_migrations
            tripconv_model

            """)
        #expect(ObjectMigrateCLITests.bytesButSchemaCookie(store + ".1.0.0.bak") == original)
        let left = try ObjectMigrateCLITests.files(dir)
        #expect(left.filter { $0.hasPrefix(".") || $0.contains("-journal") }.isEmpty, "\(left)")
    }

    /// `--report`'s `storeMigration` object, read with Python's json: its keys and values, one per line.
    static func storeMigration(_ report: String) throws -> String {
        try CLI.python("""
            import json, sys
            r = json.load(open(sys.argv[1]))
            m = r.get('storeMigration')
            print(r['status'], r['read'], r['written'])
            if m is not None:
                for k, v in m.items():
                    print(k, json.dumps(v, sort_keys=True))
            """, [report]).out
    }

    /// What `storeMigration` prints for the recipe store at 1.0.0 migrated to 3.0.0 and appended to
    /// (`backup`: its line, none for a PostgreSQL store).
    static func migratedToThree(store: String, backup: String?) -> String {
        """
            ok 4 3
            store "\(store)"
            from "1.0.0"
            to "3.0.0"
            stages [{"objectsAfter": 9, "objectsBefore": 10, "stage": "1.0.0 -> 2.0.0 (custom)"}, \
            {"objectsAfter": 7, "objectsBefore": 9, "stage": "2.0.0 -> 3.0.0 (lightweight)"}]
            read 10
            merged 1
            dropped 2
            rejected 0
            objectsAfter 7
            entities [{"entity": "Recipe", "objects": 3}, {"entity": "Ingredient", "objects": 4}]
            """ + "\n" + (backup.map { "backup \"\($0)\"\n" } ?? "")
    }

    @Test("--report with --migrate: a storeMigration object with the migration's figures and backup, as a trip run's; none without a migration")
    func reportStoreMigration() throws {
        let (dir, store, more) = try Self.storeAndMore(at: "1.0.0")
        let report = dir.appendingPathComponent("report.json").path
        let r = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", store, "--migrate", "--report", report)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.storeMigration(report) == Self.migratedToThree(store: store, backup: store + ".1.0.0.bak"))
        // At the target now: appended to, nothing migrated, no storeMigration.
        let again = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", store, "--migrate", "--report", report)
        #expect(again.status == 0, "\(again.stderr)")
        let plain = try Self.storeMigration(report)
        #expect(plain.hasPrefix("ok 4 ") && plain.split(separator: "\n").count == 1, "\(plain)")
    }

    /// `--report`'s totals of an append, read with Python's json: status, read, written, merged, dropped and
    /// replacedInStore (a KeyError, and so no line, where one is missing).
    static func replacedInStore(_ report: String) throws -> String {
        try CLI.python("""
            import json, sys
            r = json.load(open(sys.argv[1]))
            print(r['status'], r['read'], r['written'], r['merged'], r['dropped'], r['replacedInStore'])
            """, [report]).out
    }

    @Test("--report of an append has replacedInStore, as the summary line and a trip run's report: 1 under --dedupe last, 0 under first (was: missing)")
    func reportReplacedInStore() throws {
        let (dir, last, more) = try Self.storeAndMore()
        let report = dir.appendingPathComponent("report.json").path
        let replaced = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", last, "--dedupe", "last", "--report", report)
        #expect(replaced.status == 0 && replaced.stderr.contains(", 1 replacing stored object; "), "\(replaced.stderr)")
        #expect(try Self.replacedInStore(report) == "ok 4 4 0 0 1\n")

        let (_, first, _) = try Self.storeAndMore()
        let kept = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", first, "--dedupe", "first", "--report", report)
        #expect(kept.status == 0 && !kept.stderr.contains("replacing"), "\(kept.stderr)")
        #expect(try Self.replacedInStore(report) == "ok 4 3 0 1 0\n")
    }

    @Test("--migrate that fails (--dedupe fail meeting the stored Soup): 65, the store as it was, no backup; --no-backup takes none")
    func migrateFailsOrNoBackup() throws {
        let (dir, store, more) = try Self.storeAndMore(at: "1.0.0")
        let before = try Data(contentsOf: URL(fileURLWithPath: store)), files = try ObjectMigrateCLITests.files(dir)
        // --dedupe fail meets the store's own two Pancakes at its 2.0.0 stage.
        let failed = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", store, "--migrate", "--dedupe", "fail")
        #expect(failed.status == 65 && failed.stderr.contains("Recipe with title \"Pancakes\""), "\(failed.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before && ObjectMigrateCLITests.files(dir) == files)

        let none = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", store, "--migrate", "--no-backup")
        #expect(none.status == 0 && none.stderr.contains("; no backup"), "\(none.stderr)")
        #expect(try ObjectMigrateCLITests.files(dir) == files)
        #expect(try Self.sqlite(store, "SELECT count(*) FROM Recipe; SELECT count(*) FROM Ingredient") == "4\n6\n")
    }

    @Test("a store of another model (the shelves of ObjectStoreCLITests) is refused, 65, naming both; the store as its own input, 64")
    func otherModel() throws {
        let dir = try ObjectSQLiteStoreCLITests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let shelves = try ObjectSQLiteStoreCLITests.shelves(in: dir, rows: 2)
        let objects = dir + "/objects.sqlite"
        #expect(try CLI.tripconv(shelves, "-q", "-o", objects, "--rejects", dir + "/rejects.jsonl").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: objects))
        let (_, recipes, more) = try Self.storeAndMore()
        for migrate in [[], ["--migrate"]] {
            let r = try CLI.run(CLI.binary, [more, "--model", Self.plan, "--source-version", "1.0.0", "-o", objects] + migrate)
            #expect(r.status == 65, "\(r.stderr)")
            #expect(r.stderr.contains("\(objects): the store is at") || r.stderr.contains("\(objects): a store of another model"), "\(r.stderr)")
            #expect(r.stderr.contains("Recipe") || r.stderr.contains(Self.plan), "\(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: objects)) == before)
        let recipesBefore = try Data(contentsOf: URL(fileURLWithPath: recipes))
        let r = try CLI.tripconv(shelves, "-o", recipes)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("\(recipes): a store of another model than the objects written: it holds entities Recipe, Ingredient at 3.0.0"),
                "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: recipes)) == recipesBefore)
        // The store as its own input would be appended to itself: refused.
        let same = try CLI.tripconv(recipes, "-o", recipes)
        #expect(same.status == 64 && same.stderr.contains("\(recipes): the input and -o name the same store"), "\(same.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: recipes)) == recipesBefore)
    }

    @Test("a model without a plan at another version of the store's app: 64 as migrate --model gives it, the store unchanged (was: 65, \"a store of another model\")")
    func modelWithoutPlanAtAnotherVersion() throws {
        let (dir, store, more) = try Self.storeAndMore(at: "1.0.0")
        let one = dir.appendingPathComponent("model-3.0.0.json").path, objects = dir.appendingPathComponent("more-3.0.0.jsonl").path
        let current = try CLI.python("""
            import json, sys
            json.dump(json.load(open(sys.argv[1]))['versions'][-1], open(sys.argv[2], 'w'))
            """, [Self.plan, one])
        #expect(current.status == 0, "\(current.stderr)")
        let made = try CLI.tripconv(more, "--model", Self.plan, "--source-version", "1.0.0", "-o", objects, "-q")
        #expect(made.status == 0, "\(made.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let appended = try CLI.tripconv(objects, "--model", one, "-o", store)
        #expect(appended.status == 64, "\(appended.stderr)")
        #expect(appended.stderr.hasPrefix("tripconv: \(store): store is at 1.0.0, the objects are at 3.0.0 of a model without a plan "
                                          + "(--model \(one)), which cannot migrate it\n"), "\(appended.stderr)")
        let migrated = try CLI.tripconv("migrate", "--model", one, store)
        #expect(migrated.status == appended.status, "\(migrated.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }
}
