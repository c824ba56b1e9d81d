import Foundation
import Testing
import TripTestSupport

/// A reference to an object the run does not write (it is refused, or no object has its key) is
/// removed from the object that makes it, which is written and counted: no output names an object it
/// does not hold. Was: the referring object was refused, but an object referring to *it*, already
/// given, was written naming it (a JSON Lines output that did not read back, a SQLite store failing
/// `PRAGMA foreign_key_check`), and a plan's run stopped at its writer with exit 65, writing nothing.
@Suite("a reference to an object not written is removed, and counted")
struct RemovedReferenceCLITests {
    /// The recipe book at 1.0.0 written by Python's json: Chef 1 has recipes 1, 2 and 3 (3 is no
    /// object), Recipe 2 has a servings the model refuses, Ingredient 2 belongs to Recipe 2.
    static let writer = """
        import json, sys
        rows = [
            {"@entity": "Chef", "@key": 1, "name": "Ann", "recipes": [1, 2, 3]},
            {"@entity": "Recipe", "@key": 1, "title": "Pancakes", "servings": 4, "notes": "fluffy", "ingredients": [1], "chef": 1},
            {"@entity": "Recipe", "@key": 2, "title": "Soup", "servings": "many", "notes": None, "ingredients": [2], "chef": 1},
            {"@entity": "Ingredient", "@key": 1, "name": "flour", "quantity": 200, "recipe": 1},
            {"@entity": "Ingredient", "@key": 2, "name": "leek", "quantity": 2, "recipe": 2},
        ]
        with open(sys.argv[1], "w") as f:
            for r in rows: f.write(json.dumps(r) + "\\n")
        """

    /// Every reference in a JSON Lines output names an object it holds; prints the objects and their references.
    static let check = """
        import json, sys
        rows = [json.loads(line) for line in open(sys.argv[1])]
        held = {(r['@entity'], r.get('@key'), r.get('title')) for r in rows}
        keys = {(r['@entity'], r['@key']) for r in rows if '@key' in r}
        titles = {r['title'] for r in rows if r['@entity'] == 'Recipe'}
        dest = {'recipes': 'Recipe', 'ingredients': 'Ingredient', 'chef': 'Chef', 'recipe': 'Recipe'}
        for r in rows:
            for member, entity in dest.items():
                if member not in r or r[member] is None: continue
                for ref in (r[member] if isinstance(r[member], list) else [r[member]]):
                    assert (entity, ref) in keys or (entity == 'Recipe' and ref in titles), (r, member, ref)
            print(r['@entity'], r.get('name', r.get('title')), {m: r[m] for m in dest if m in r})
        """

    static func input(_ dir: URL) throws -> String {
        let input = dir.appendingPathComponent("recipes.jsonl").path
        let made = try CLI.python(Self.writer, [input])
        #expect(made.status == 0, "\(made.stderr)")
        return input
    }

    @Test("without a stage: JSON Lines that reads back, a SQLite store whose foreign keys hold, the removals counted and shown with -v",
          .needsPython3, .needsSQLite3)
    func withoutAStage() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.input(dir)
        let out = dir.appendingPathComponent("out.jsonl").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
        let r = try CLI.tripconv(input, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "1.0.0",
                                 "--target-version", "1.0.0", "-o", out, "--rejects", rejects, "-v")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("wrote 4 (Chef 1, Recipe 1, Ingredient 2); removed 3 references to objects not written; rejected 1;"), "\(r.stderr)")
        #expect(r.stderr.contains("recipes.jsonl:1:62: 'recipes': no Recipe has \"@key\" 2; the reference is removed, the object kept"),
                "\(r.stderr)")
        #expect(r.stderr.contains("recipes.jsonl:1:65: 'recipes': no Recipe has \"@key\" 3")
                && r.stderr.contains("recipes.jsonl:5:79: 'recipe': no Recipe has \"@key\" 2"), "\(r.stderr)")
        let checked = try CLI.python(Self.check, [out])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            Chef Ann {'recipes': [1]}
            Recipe Pancakes {'ingredients': [1], 'chef': 1}
            Ingredient flour {'recipe': 1}
            Ingredient leek {'recipe': None}

            """, "\(checked.stderr)")
        let rejected = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(rejected.split(separator: "\n").count == 1 && rejected.contains("expected Int64 for 'servings', found a string 'many'"), "\(rejected)")

        let store = dir.appendingPathComponent("out.sqlite").path, report = dir.appendingPathComponent("report.json").path
        let s = try CLI.tripconv(input, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "1.0.0",
                                 "--target-version", "1.0.0", "-o", store, "--report", report, "--rejects", rejects)
        #expect(s.status == 0, "\(s.stderr)")
        let fk = try CLI.run(CLI.tool("sqlite3")!, [store, "PRAGMA foreign_key_check;", "SELECT count(*) FROM Recipe;"])
        #expect(String(decoding: fk.stdout, as: UTF8.self) == "1\n", "\(fk.stderr)")
        let counts = try CLI.python("import json, sys; r = json.load(open(sys.argv[1])); print(r['referencesRemoved'], r['written'], r['rejected'])", [report])
        #expect(String(decoding: counts.stdout, as: UTF8.self) == "3 4 1\n", "\(counts.stderr)")
    }

    @Test("through the plan's stages (--dedupe merge): the run ends (was: exit 65), and its output names only objects it holds", .needsPython3)
    func throughThePlan() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.input(dir)
        let out = dir.appendingPathComponent("out.jsonl").path
        let r = try CLI.tripconv(input, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "1.0.0",
                                 "--dedupe", "merge", "-o", out, "--rejects", dir.appendingPathComponent("rejects.jsonl").path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("removed 3 references to objects not written; rejected 1;"), "\(r.stderr)")
        let checked = try CLI.python(Self.check, [out])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            Recipe Pancakes {'ingredients': [1]}
            Ingredient flour {'recipe': 'Pancakes'}
            Ingredient leek {'recipe': None}

            """, "\(checked.stderr)")
    }

    /// Python's start of a document of objects written by ElementTree: `add(entity, key, values,
    /// refs)` adds an object, its attributes' text and each relationship's `<ref>` elements.
    static let elementTree = """
        import csv, os, sys
        import xml.etree.ElementTree as ET
        root = ET.Element('objects')
        def add(entity, key, values, refs):
            e = ET.SubElement(root, entity, key=str(key))
            for k, v in values.items(): ET.SubElement(e, k).text = str(v)
            for k, targets in refs.items():
                r = ET.SubElement(e, k)
                for t in targets: ET.SubElement(r, 'ref').text = str(t)

        """

    /// The same book written by Python as XML (ElementTree) and as a tables directory (csv).
    static let otherWriters = elementTree + """
        add('Chef', 1, {'name': 'Ann'}, {'recipes': [1, 2]})
        add('Recipe', 1, {'title': 'Pancakes', 'servings': 4}, {'ingredients': [1], 'chef': [1]})
        add('Recipe', 2, {'title': 'Soup', 'servings': 'many'}, {'ingredients': [2], 'chef': [1]})
        add('Ingredient', 1, {'name': 'flour', 'quantity': 200}, {'recipe': [1]})
        add('Ingredient', 2, {'name': 'leek', 'quantity': 2}, {'recipe': [2]})
        ET.ElementTree(root).write(sys.argv[1], encoding='utf-8', xml_declaration=True)
        d = sys.argv[2]
        os.makedirs(d)
        for name, rows in [('Chef', [['@key', 'name'], [1, 'Ann']]),
                           ('Recipe', [['@key', 'title', 'servings', 'notes', 'chef'], [1, 'Pancakes', 4, '', 1], [2, 'Soup', 'many', '', 1]]),
                           ('Ingredient', [['@key', 'name', 'quantity', 'recipe'], [1, 'flour', 200, 1], [2, 'leek', 2, 2], [3, 'salt', 1, 9]])]:
            with open(os.path.join(d, name + '.csv'), 'w', newline='') as f: csv.writer(f).writerows(rows)
        """

    @Test("XML and a tables directory other tools wrote: a store whose foreign keys hold, the removals counted", .needsPython3, .needsSQLite3)
    func xmlAndTables() throws {
        let dir = try CLI.temporaryDirectory()
        let xml = dir.appendingPathComponent("recipes.xml").path, tables = dir.appendingPathComponent("tables").path
        let made = try CLI.python(Self.otherWriters, [xml, tables])
        #expect(made.status == 0, "\(made.stderr)")
        // XML: Chef 1's recipe 2 and Ingredient 2's recipe; tables: Ingredient 2's recipe and Ingredient 3's (no Recipe 9).
        for (input, removed, written) in [(xml, 2, "wrote 4 (Chef 1, Recipe 1, Ingredient 2)"), (tables, 2, "wrote 5 (Chef 1, Recipe 1, Ingredient 3)")] {
            let store = dir.appendingPathComponent(UUID().uuidString + ".sqlite").path
            let r = try CLI.tripconv(input, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "1.0.0",
                                     "--target-version", "1.0.0", "-o", store, "--rejects", store + ".rejects")
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("\(written); removed \(removed) references to objects not written; rejected 1;"), "\(r.stderr)")
            let fk = try CLI.run(CLI.tool("sqlite3")!, [store, "PRAGMA foreign_key_check;", "SELECT count(*) FROM Ingredient WHERE recipe IS NULL;"])
            #expect(String(decoding: fk.stdout, as: UTF8.self) == "\(removed == 2 && input == xml ? 1 : 2)\n", "\(input): \(fk.stderr)")
        }
    }

    /// As a run of trips: without `--rejects` the first object rejected stops the run with its place
    /// and the note, nothing written (was: exit 0, the object counted as rejected and listed nowhere).
    @Test("without --rejects a rejected object stops the run, 65, nothing written", .needsPython3)
    func stopsWithoutRejects() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.input(dir)
        let out = dir.appendingPathComponent("out.jsonl").path
        for options in [["--target-version", "1.0.0"], ["--dedupe", "merge"]] {
            let r = try CLI.run(CLI.binary, [input, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "1.0.0", "-o", out]
                                + options)
            #expect(r.status == 65, "\(r.stderr)")
            #expect(r.stderr.contains("recipes.jsonl:3:63: expected Int64 for 'servings', found a string 'many'\nnote: pass --rejects FILE"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    /// The same book written by PyYAML (entities sorted by name, so not in the model's order): the
    /// YAML reader removes the same references.
    @Test("YAML PyYAML wrote: the same objects written, the same references removed", .enabled(if: SniffCLITests.hasYAML, "needs python3 with PyYAML"))
    func yaml() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.input(dir), yaml = dir.appendingPathComponent("recipes.yaml").path
        let made = try CLI.python("""
            import json, sys, yaml
            doc = {}
            for line in open(sys.argv[1]):
                o = json.loads(line)
                doc.setdefault(o.pop('@entity'), []).append(o)
            yaml.safe_dump(doc, open(sys.argv[2], 'w'), sort_keys=True)
            """, [input, yaml])
        #expect(made.status == 0, "\(made.stderr)")
        let out = dir.appendingPathComponent("out.jsonl").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
        let r = try CLI.tripconv(yaml, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "1.0.0",
                                 "--target-version", "1.0.0", "-o", out, "--rejects", rejects)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("wrote 4 (Chef 1, Recipe 1, Ingredient 2); removed 3 references to objects not written; rejected 1;"), "\(r.stderr)")
        let checked = try CLI.python(Self.check, [out])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            Chef Ann {'recipes': [1]}
            Recipe Pancakes {'ingredients': [1], 'chef': 1}
            Ingredient flour {'recipe': 1}
            Ingredient leek {'recipe': None}

            """, "\(checked.stderr)")
    }
}
