import Foundation
import Testing
import TripKit
import TripTestSupport

/// `convert --model` of an app's plan (Swift source or plan JSON) on its data: the recipe book of
/// samples/swift-model-recipes, exported at 1.0.0 by Python (make-recipes-v1.py), written at 3.0.0
/// with every record written, merged, dropped or rejected, and checked with Python's json.
@Suite("convert runs an app's plan on its objects")
struct PlanRunCLITests {
    static let plan = "samples/swift-model-recipes/recipes-plan.json"

    /// The 1.0.0 exports, written afresh by Python into a temporary directory.
    static func exports() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        let made = try CLI.python(String(contentsOfFile: "samples/swift-model-recipes/make-recipes-v1.py", encoding: .utf8), [dir.path])
        #expect(made.status == 0, "\(made.stderr)")
        return dir
    }

    static let summary = """
        import json, sys
        rows = [json.loads(line) for line in open(sys.argv[1])]
        for r in rows:
            if r['@entity'] == 'Recipe':
                print('Recipe', r['title'], r['servings'], repr(r['summary']), r['cuisine'], r['ingredients'], sorted(r))
            else:
                print('Ingredient', r['@key'], r['name'], repr(r['quantity']), r['recipe'])
        """

    @Test("1.0.0 JSON to JSON Lines at 3.0.0 under merge (plan JSON): duplicates merged, references at the survivor, Chef dropped, counts",
          .needsPython3)
    func mergeFromPlanJSON() throws {
        let dir = try Self.exports()
        let out = dir.appendingPathComponent("recipes.jsonl").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
        let report = dir.appendingPathComponent("report.json").path
        let r = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", Self.plan, "--source-version", "1.0.0", "-o", out,
                                 "--rejects", rejects, "--report", report)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: read at 1.0.0 (--source-version), written at 3.0.0\n"), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: custom stage 1.0.0 -> 2.0.0: its willMigrate code is not run; rename Recipe.notes to summary; "
                                  + "deduplicating Recipe on title, as 2.0.0 makes it unique (--dedupe merge); convert Ingredient.quantity"), "\(r.stderr)")
        #expect(r.stderr.contains("read 10 objects; wrote 7 (Recipe 3, Ingredient 4); merged 1; dropped 2 (0 by --dedupe, 2 of removed entities); "
                                  + "migrated 1.0.0 -> 3.0.0: converted 4 values, filled 4, set aside 0; rejected 0;"), "\(r.stderr)")
        let checked = try CLI.python(Self.summary, [out])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            Recipe Pancakes 6 'fluffy' unknown [1, 2, 4] ['@entity', 'cuisine', 'ingredients', 'servings', 'summary', 'title']
            Recipe Soup 2 '' unknown [3] ['@entity', 'cuisine', 'ingredients', 'servings', 'summary', 'title']
            Recipe Salad 1 'quick' unknown [] ['@entity', 'cuisine', 'ingredients', 'servings', 'summary', 'title']
            Ingredient 1 flour '200' Pancakes
            Ingredient 2 milk '300' Pancakes
            Ingredient 3 leek '2' Soup
            Ingredient 4 egg '3' Pancakes

            """, "\(checked.stderr)")
        let set = try CLI.python("""
            import json, sys
            for line in open(sys.argv[1]):
                r = json.loads(line); print(r['kind'], r['line'], r['reason'])
            rep = json.load(open(sys.argv[2]))
            print(rep['read'], rep['written'], rep['merged'], rep['dropped'], rep['rejected'], rep['model'])
            m = rep['migration']; print(m['versions'], m['converted'], m['filled'], m['droppedWithRemovedEntities'], len(m['stages']))
            """, [rejects, report])
        #expect(String(decoding: set.stdout, as: UTF8.self) == """
            dropped 3 lightweight stage 2.0.0 -> 3.0.0 removes entity Chef: the object is dropped by the plan
            dropped 10 lightweight stage 2.0.0 -> 3.0.0 removes entity Chef: the object is dropped by the plan
            merged 41 another Recipe with title "Pancakes" (unique from 2.0.0): merged into the one at \(dir.path)/recipes-v1.json:20:5
            10 7 1 2 0 version 1.0.0 of a plan JSON file
            1.0.0 -> 3.0.0 4 4 2 2

            """, "\(set.stderr)")
    }

    @Test("CSV tables through the app's Swift source under --dedupe last: the last duplicate kept whole, the first one's ingredients dropped with it (was: written naming the kept one, which did not list them)",
          .needsPython3)
    func lastFromSwiftSource() throws {
        let dir = try Self.exports()
        let out = dir.appendingPathComponent("recipes.jsonl").path
        let r = try CLI.tripconv(dir.path + "/recipes-v1-tables", "--from", "csv", "--model", "samples/swift-model-recipes",
                                 "--source-version", "1.0.0", "--dedupe", "last", "-o", out)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("merged 0; dropped 5 (3 by --dedupe, 2 of removed entities)"), "\(r.stderr)")
        let checked = try CLI.python(Self.summary, [out])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            Recipe Soup 2 '' unknown [3] ['@entity', 'cuisine', 'ingredients', 'servings', 'summary', 'title']
            Recipe Pancakes 6 '' unknown [4] ['@entity', 'cuisine', 'ingredients', 'servings', 'summary', 'title']
            Recipe Salad 1 'quick' unknown [] ['@entity', 'cuisine', 'ingredients', 'servings', 'summary', 'title']
            Ingredient 3 leek '2' Soup
            Ingredient 4 egg '3' Pancakes

            """, "\(checked.stderr)")
    }

    @Test("--dedupe fail is exit 65 naming both duplicates' places, and nothing is written")
    func failWritesNothing() throws {
        let dir = try Self.exports()
        let out = dir.appendingPathComponent("recipes.jsonl").path
        let r = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", Self.plan, "--source-version", "1.0.0", "--dedupe", "fail", "-o", out)
        #expect(r.status == 65)
        #expect(r.stderr.contains("tripconv: \(dir.path)/recipes-v1.json:41:5: a second Recipe with title \"Pancakes\" (unique from 2.0.0); "
                                  + "the first is at \(dir.path)/recipes-v1.json:20:5 (--dedupe fail: nothing is written)"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("--target-version names an earlier version of the plan; a store tripconv wrote is read at its own version", .needsPython3)
    func targetVersionAndStoreVersion() throws {
        let dir = try Self.exports()
        let store = dir.appendingPathComponent("v1.sqlite").path
        let v1 = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", Self.plan, "--source-version", "1.0.0", "--target-version", "1.0.0",
                                  "-o", store, "-q")
        #expect(v1.status == 0, "\(v1.stderr)")
        let out = dir.appendingPathComponent("v2.jsonl").path
        let r = try CLI.tripconv(store, "--model", Self.plan, "--target-version", "2.0.0", "--dedupe", "first", "-o", out)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read at 1.0.0 (the store's version identifier), written at 2.0.0"), "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            for line in open(sys.argv[1]):
                r = json.loads(line); print(r['@entity'], r.get('title', r.get('name')), r.get('quantity', r.get('recipes', r.get('chef'))))
            """, [out])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            Chef Ana ['Pancakes']
            Chef Ben ['Soup']
            Recipe Pancakes 1
            Recipe Soup 2
            Recipe Salad None
            Ingredient flour 200
            Ingredient milk 300
            Ingredient leek 2

            """, "\(checked.stderr)")
        let down = try CLI.tripconv(store, "--model", Self.plan, "--source-version", "2.0.0", "-o", out)
        #expect(down.status == 64)
        #expect(down.stderr.contains("the store says it is at 1.0.0, and --source-version says 2.0.0"), "\(down.stderr)")
        let unknown = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", Self.plan, "--source-version", "4.0.0", "-o", out)
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--source-version 4.0.0: the plan's versions are 1.0.0, 2.0.0, 3.0.0"), "\(unknown.stderr)")
    }

    @Test("A model without a plan has one version: --target-version is refused (64)")
    func noPlanNoVersions() throws {
        let dir = try Self.exports()
        let r = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", "samples/swift-model-recipes/recipes-plan.json", "--dedupe", "first",
                                 "--source-version", "1.0.0", "-q")
        #expect(r.status == 0, "\(r.stderr)")
        let model = dir.appendingPathComponent("model.json").path
        let current = try CLI.python("""
            import json, sys
            json.dump(json.load(open(sys.argv[1]))['versions'][-1], open(sys.argv[2], 'w'))
            """, [Self.plan, model])
        #expect(current.status == 0, "\(current.stderr)")
        let refused = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", model, "--dedupe", "first", "--target-version", "3.0.0")
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--source-version and --target-version are SampleTrips' and"), "\(refused.stderr)")
    }

    /// The recipes' 1.0.0 model, as a Core Data store of the app would hold it.
    static let v1 = ObjectModel(entities: [
        EntityDescription("Chef", attributes: [AttributeDescription("name", .string, isOptional: false)],
                          relationships: [RelationshipDescription("recipes", to: "Recipe", inverse: "chef", toMany: true)]),
        EntityDescription("Recipe", attributes: [
            AttributeDescription("title", .string, isOptional: false), AttributeDescription("servings", .int64, isOptional: false),
            AttributeDescription("notes", .string),
        ], relationships: [
            RelationshipDescription("ingredients", to: "Ingredient", inverse: "recipe", toMany: true, deleteRule: .cascade),
            RelationshipDescription("chef", to: "Chef", inverse: "recipes"),
        ]),
        EntityDescription("Ingredient", attributes: [
            AttributeDescription("name", .string, isOptional: false), AttributeDescription("quantity", .int64, isOptional: false),
        ], relationships: [RelationshipDescription("recipe", to: "Recipe", inverse: "ingredients")]),
    ], versionIdentifiers: ["1.0.0"])

    @Test("A Core Data store of the app (written by Python) is read at the version its metadata names and migrated to 3.0.0",
          .needsPython3)
    func coreDataStoreAtItsVersion() throws {
        let dir = try CLI.temporaryDirectory().path
        let store = dir + "/recipes.store"
        try #require(try ModelStoreWriter.write(Self.v1, to: store, rows: 2).status == 0)
        // Both recipes are "Pancakes"; both ingredients belong to the second.
        let filled = try CLI.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("UPDATE ZCHEF SET ZNAME = 'Ana'")
            db.execute("UPDATE ZRECIPE SET ZTITLE = 'Pancakes', ZSERVINGS = Z_PK")
            db.execute("UPDATE ZINGREDIENT SET ZNAME = 'egg' || Z_PK, ZQUANTITY = Z_PK, ZRECIPE = (SELECT MAX(Z_PK) FROM ZRECIPE)")
            db.commit()
            """, [store])
        #expect(filled.status == 0, "\(filled.stderr)")
        let out = dir + "/recipes.jsonl"
        let r = try CLI.tripconv(store, "--model", Self.plan, "-o", out)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read at 1.0.0 (the store's version identifier), written at 3.0.0"), "\(r.stderr)")
        #expect(r.stderr.contains("read 6 objects; wrote 3 (Recipe 1, Ingredient 2); merged 1; dropped 2"), "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            for line in open(sys.argv[1]):
                r = json.loads(line); print(r['@entity'], r.get('title', r.get('name')), repr(r.get('ingredients', r.get('quantity'))), r.get('recipe'))
            """, [out])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            Recipe Pancakes [3, 4] None
            Ingredient egg3 '3' Pancakes
            Ingredient egg4 '4' Pancakes

            """, "\(checked.stderr)")
    }

    @Test("--output-dir: each input through the plan, the report's totals count merged and dropped", .needsPython3)
    func outputDirTotals() throws {
        let dir = try Self.exports()
        let report = dir.path + "/report.json"
        try FileManager.default.copyItem(atPath: dir.path + "/recipes-v1.json", toPath: dir.path + "/again.json")
        let r = try CLI.tripconv(dir.path + "/recipes-v1.json", dir.path + "/again.json", "--model", Self.plan,
                                 "--source-version", "1.0.0", "--output-dir", dir.path + "/out", "--report", report, "-q")
        #expect(r.status == 0, "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            r = json.load(open(sys.argv[1]))
            print(r['read'], r['written'], r['merged'], r['dropped'], r['rejected'], [(i['merged'], i['dropped']) for i in r['inputs']])
            """, [report])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == "20 14 2 4 0 [(1, 2), (1, 2)]\n", "\(checked.stderr)")
    }

    @Test("without --source-version, the 1.0.0 exports (JSON and CSV tables) are told 1.0.0 by their names and kinds, and give what --source-version 1.0.0 gives",
          .needsPython3)
    func versionToldByTheData() throws {
        let dir = try Self.exports()
        for (input, from) in [("recipes-v1.json", "json"), ("recipes-v1-tables", "csv")] {
            let told = dir.appendingPathComponent("told-\(input).jsonl").path, given = dir.appendingPathComponent("given-\(input).jsonl").path
            let r = try CLI.tripconv(dir.path + "/" + input, "--from", from, "--model", Self.plan, "-o", told)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("tripconv: read at 1.0.0 (") && r.stderr.contains("which only 1.0.0 declares"), "\(r.stderr)")
            let g = try CLI.tripconv(dir.path + "/" + input, "--from", from, "--model", Self.plan, "--source-version", "1.0.0", "-o", given)
            #expect(g.status == 0, "\(g.stderr)")
            #expect(FileManager.default.contents(atPath: told) == FileManager.default.contents(atPath: given) && FileManager.default.fileExists(atPath: told))
        }
    }

    /// Prints, for a JSON Lines output at 2.0.0 (Chef, Recipe by title, Ingredient), every pair one side
    /// of Recipe.ingredients/Ingredient.recipe or Chef.recipes/Recipe.chef names and the other does
    /// not, then the objects written; for a SQLite store, its broken foreign keys and each ingredient
    /// with its recipe's title.
    static let bothSides = """
        import json, sqlite3, sys
        path = sys.argv[1]
        if path.endswith('.sqlite'):
            db = sqlite3.connect(path)
            print(list(db.execute('pragma foreign_key_check')))
            print(list(db.execute('select i.name, r.title from Ingredient i left join Recipe r on i.recipe = r._pk order by i._pk')))
            sys.exit(0)
        objs = {}
        for line in open(path):
            o = json.loads(line); objs.setdefault(o['@entity'], []).append(o)
        ident = lambda o: o['@key'] if '@key' in o else o['title']
        for many, lst, one, ref in [('Recipe', 'ingredients', 'Ingredient', 'recipe'), ('Chef', 'recipes', 'Recipe', 'chef')]:
            listed = {(ident(m), c) for m in objs.get(many, []) for c in m[lst]}
            named = {(o[ref], ident(o)) for o in objs.get(one, []) if o[ref] is not None}
            for pair in sorted(listed - named, key=str): print('only', many + '.' + lst, pair)
            for pair in sorted(named - listed, key=str): print('only', one + '.' + ref, pair)
        print(sorted((e, str(ident(o))) for e in objs for o in objs[e]))
        """

    @Test("Both sides of every relationship agree under --dedupe first, last and merge: a dropped Recipe's ingredients go with it, a chef lists only the Recipe that names it (was: they named the kept Recipe, which did not list them)",
          .needsPython3, .needsSQLite3, arguments: ["first", "last", "merge"])
    func bothSidesAgree(policy: String) throws {
        let dir = try Self.exports()
        // Pancakes (key 1: flour, milk; chef Ana) and Pancakes (key 3: egg; chef Ben), as Python's json wrote them.
        let expected: [String: (String, String, String)] = [
            "first": ("wrote 8 (Chef 2, Recipe 3, Ingredient 3); merged 0; dropped 2 (2 by --dedupe",
                      "[('Chef', '1'), ('Chef', '2'), ('Ingredient', '1'), ('Ingredient', '2'), ('Ingredient', '3'), ('Recipe', 'Pancakes'), ('Recipe', 'Salad'), ('Recipe', 'Soup')]",
                      "[('flour', 'Pancakes'), ('milk', 'Pancakes'), ('leek', 'Soup')]"),
            "last": ("wrote 7 (Chef 2, Recipe 3, Ingredient 2); merged 0; dropped 3 (3 by --dedupe",
                     "[('Chef', '1'), ('Chef', '2'), ('Ingredient', '3'), ('Ingredient', '4'), ('Recipe', 'Pancakes'), ('Recipe', 'Salad'), ('Recipe', 'Soup')]",
                     "[('leek', 'Soup'), ('egg', 'Pancakes')]"),
            "merge": ("wrote 9 (Chef 2, Recipe 3, Ingredient 4); merged 1; dropped 0 (0 by --dedupe",
                      "[('Chef', '1'), ('Chef', '2'), ('Ingredient', '1'), ('Ingredient', '2'), ('Ingredient', '3'), ('Ingredient', '4'), "
                        + "('Recipe', 'Pancakes'), ('Recipe', 'Salad'), ('Recipe', 'Soup')]",
                      "[('flour', 'Pancakes'), ('milk', 'Pancakes'), ('leek', 'Soup'), ('egg', 'Pancakes')]"),
        ]
        let (counts, objects, pairs) = try #require(expected[policy])
        for ext in ["jsonl", "sqlite"] {
            let out = dir.appendingPathComponent("recipes-\(policy).\(ext)").path
            let r = try CLI.tripconv(dir.path + "/recipes-v1.json", "--model", Self.plan, "--source-version", "1.0.0", "--target-version", "2.0.0",
                                     "--dedupe", policy, "-o", out)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains(counts), "\(policy) \(ext): \(r.stderr)")
            let checked = try CLI.python(Self.bothSides, [out])
            #expect(String(decoding: checked.stdout, as: UTF8.self) == (ext == "jsonl" ? objects : "[]\n" + pairs) + "\n",
                    "\(policy) \(ext): \(checked.stderr)")
        }
    }
}
