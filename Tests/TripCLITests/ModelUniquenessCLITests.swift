import Foundation
import Testing
import TripTestSupport

/// An export's objects deduplicated on what the model written makes unique, under `--dedupe`, with
/// no stage to bring the uniqueness (a model of one version, or a plan's run at its target), as
/// SwiftData's insert of a second object with a unique value updates the first. Before: a JSON or
/// YAML output held both objects, a SQLite store failed on its UNIQUE index (65) after the summary
/// said they were written, XML and tables directories refused the repeat, and `--dedupe` without a
/// plan was refused (64).
@Suite("--dedupe on the model's own uniqueness")
struct ModelUniquenessCLITests {
    /// A folder holding Model.swift (UnversionedModelCLITests' notes app) and notes.jsonl, written by
    /// Python's json module: the folder "Work" twice, each with a note, the second with a colour.
    static func app() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        try UnversionedModelCLITests.source.replacingOccurrences(of: "var title: String", with: "var title: String\n    var colour: String?")
            .write(to: dir.appendingPathComponent("Model.swift"), atomically: true, encoding: .utf8)
        let written = try CLI.python("""
            import json, sys
            with open(sys.argv[1], 'w') as f:
                for o in [{'@entity': 'Folder', 'title': 'Work', 'notes': [1]},
                          {'@entity': 'Folder', 'title': 'Home', 'notes': [3]},
                          {'@entity': 'Folder', 'title': 'Work', 'colour': 'red', 'notes': [2]},
                          {'@entity': 'Note', '@key': 1, 'text': 'call Ann', 'folder': 'Work'},
                          {'@entity': 'Note', '@key': 2, 'text': 'mail Bo', 'folder': 'Work'},
                          {'@entity': 'Note', '@key': 3, 'text': 'milk', 'folder': 'Home'}]:
                    f.write(json.dumps(o) + '\\n')
            """, [dir.path + "/notes.jsonl"])
        #expect(written.status == 0, "\(written.stderr)")
        return dir
    }

    /// The folders and notes of a JSON document, as Python's json module reads them.
    static func objects(_ path: String) throws -> String {
        let r = try CLI.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            print([(f['title'], f.get('colour'), f['notes']) for f in d['Folder']])
            print([(n['@key'], n['folder']) for n in d['Note']])
            """, [path])
        return String(decoding: r.stdout, as: UTF8.self) + r.stderr
    }

    @Test("Each policy on a JSON Lines export: merge unites the two folders, first and last keep one with its notes, fail writes nothing (65)",
          .needsPython3)
    func policies() throws {
        let dir = try Self.app()
        let model = dir.path + "/Model.swift", input = dir.path + "/notes.jsonl"
        // Under first and last the dropped Work's note goes with it (Folder.notes cascades; was: written
        // naming the kept Work, which did not list it).
        let expected = [
            "merge": ("[('Work', 'red', [1, 2]), ('Home', None, [3])]", "[(1, 'Work'), (2, 'Work'), (3, 'Home')]", "wrote 5 (Folder 2, Note 3); merged 1; dropped 0"),
            "first": ("[('Work', None, [1]), ('Home', None, [3])]", "[(1, 'Work'), (3, 'Home')]", "wrote 4 (Folder 2, Note 2); merged 0; dropped 2"),
            "last": ("[('Home', None, [3]), ('Work', 'red', [2])]", "[(2, 'Work'), (3, 'Home')]", "wrote 4 (Folder 2, Note 2); merged 0; dropped 2"),
        ]
        for (policy, (folders, notes, counts)) in expected {
            let out = dir.path + "/\(policy).json"
            let r = try CLI.tripconv(input, "--model", model, "-o", out, "--dedupe", policy, "-v")
            #expect(r.status == 0, "\(policy): \(r.stderr)")
            #expect(r.stderr.contains("deduplicating Folder on title, as the model makes it unique (--dedupe \(policy))"), "\(r.stderr)")
            #expect(r.stderr.contains("\(counts); rejected 0"), "\(policy): \(r.stderr)")
            // Every note written names the one Work folder written, which lists it.
            #expect(try Self.objects(out) == folders + "\n" + notes + "\n", "\(policy)")
        }
        let failed = try CLI.tripconv(input, "--model", model, "-o", dir.path + "/fail.json", "--dedupe", "fail")
        #expect(failed.status == 65)
        #expect(failed.stderr.contains("\(input):3:1: a second Folder with title \"Work\" (unique from the model); the first is at \(input):1:1"),
                "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/fail.json"))
    }

    @Test("To a SQLite store: one Work folder, every note in it, no foreign key broken (was: UNIQUE constraint failed, 65)",
          .needsPython3, .needsSQLite3)
    func sqliteStore() throws {
        let dir = try Self.app()
        let store = dir.path + "/notes.sqlite", report = dir.path + "/report.json"
        let r = try CLI.tripconv(dir.path + "/notes.jsonl", "--model", dir.path + "/Model.swift", "-o", store, "--report", report)
        #expect(r.status == 0, "\(r.stderr)")
        let sqlite3 = try #require(CLI.tool("sqlite3"))
        let rows = try CLI.run(sqlite3, [store, "PRAGMA foreign_key_check; SELECT f.title, f.colour, count(*) FROM Note n JOIN Folder f ON n.folder = f._pk GROUP BY f.title ORDER BY f.title"])
        #expect(rows.out == "Home||1\nWork|red|2\n", "\(rows.stderr)")
        let counts = try CLI.python("""
            import json, sys
            r = json.load(open(sys.argv[1]))
            print(r['read'], r['written'], r['merged'], r['dropped'], r['rejected'])
            """, [report])
        #expect(counts.out == "6 5 1 0 0\n", "\(counts.stderr)")
    }

    @Test("An XML document (ElementTree), a tables directory (Python's csv) and YAML (PyYAML) with the repeat are merged too (were refused)",
          .needsPython3)
    func xmlAndTables() throws {
        let dir = try Self.app()
        let model = dir.path + "/Model.swift"
        let made = try CLI.python("""
            import csv, os, sys
            import xml.etree.ElementTree as ET
            root = ET.Element('objects')
            for title, colour, notes in [('Work', None, ['1']), ('Work', 'red', ['2'])]:
                f = ET.SubElement(root, 'Folder')
                ET.SubElement(f, 'title').text = title
                if colour: ET.SubElement(f, 'colour').text = colour
                n = ET.SubElement(f, 'notes')
                for k in notes: ET.SubElement(n, 'ref').text = k
            for key, text in [('1', 'call Ann'), ('2', 'mail Bo')]:
                e = ET.SubElement(root, 'Note', key=key)
                ET.SubElement(e, 'text').text = text
                ET.SubElement(ET.SubElement(e, 'folder'), 'ref').text = 'Work'
            ET.ElementTree(root).write(sys.argv[1], encoding='UTF-8', xml_declaration=True)
            os.mkdir(sys.argv[2])
            with open(sys.argv[2] + '/Folder.csv', 'w', newline='') as f:
                w = csv.writer(f); w.writerows([['title', 'colour'], ['Work', ''], ['Work', 'red']])
            with open(sys.argv[2] + '/Note.csv', 'w', newline='') as f:
                w = csv.writer(f); w.writerows([['@key', 'text', 'folder'], ['1', 'call Ann', 'Work'], ['2', 'mail Bo', 'Work']])
            import yaml
            yaml.safe_dump({'Folder': [{'title': 'Work', 'notes': [1]}, {'title': 'Work', 'colour': 'red', 'notes': [2]}],
                            'Note': [{'@key': 1, 'text': 'call Ann', 'folder': 'Work'}, {'@key': 2, 'text': 'mail Bo', 'folder': 'Work'}]},
                           open(sys.argv[3], 'w'))
            """, [dir.path + "/notes.xml", dir.path + "/tables", dir.path + "/notes.yaml"])
        #expect(made.status == 0, "\(made.stderr)")
        for input in ["notes.xml", "tables", "notes.yaml"] {
            let out = dir.path + "/\(input).json"
            let r = try CLI.tripconv(dir.path + "/" + input, "--model", model, "-o", out)
            #expect(r.status == 0, "\(input): \(r.stderr)")
            #expect(r.stderr.contains("wrote 3 (Folder 1, Note 2); merged 1; dropped 0; rejected 0"), "\(input): \(r.stderr)")
            let objects = try Self.objects(out)
            #expect(objects.hasPrefix("[('Work', 'red', [1, 2"), "\(input): \(objects)")
            #expect(objects.hasSuffix("[(1, 'Work'), (2, 'Work')]\n"), "\(input): \(objects)")
        }
    }

    @Test("A plan's run at its target version merges a repeated unique value (was: 'a second Recipe whose title…' refused)",
          .needsPython3)
    func planAtTarget() throws {
        let dir = try CLI.temporaryDirectory()
        let input = dir.path + "/recipes-v3.jsonl"
        _ = try CLI.python("""
            import json, sys
            with open(sys.argv[1], 'w') as f:
                f.write(json.dumps({'@entity': 'Recipe', 'title': 'Soup', 'servings': 2, 'summary': 'hot', 'cuisine': 'fr', 'ingredients': [1]}) + '\\n')
                f.write(json.dumps({'@entity': 'Recipe', 'title': 'Soup', 'servings': 4, 'summary': 'hotter', 'cuisine': 'fr', 'ingredients': [2]}) + '\\n')
                f.write(json.dumps({'@entity': 'Ingredient', '@key': 1, 'name': 'leek', 'quantity': '2', 'recipe': 'Soup'}) + '\\n')
                f.write(json.dumps({'@entity': 'Ingredient', '@key': 2, 'name': 'salt', 'quantity': '1', 'recipe': 'Soup'}) + '\\n')
            """, [input])
        let out = dir.path + "/out.json"
        let r = try CLI.tripconv(input, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "3.0.0", "-o", out)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("deduplicating Recipe on title, as 3.0.0 makes it unique (--dedupe merge)"), "\(r.stderr)")
        #expect(r.stderr.contains("wrote 3 (Recipe 1, Ingredient 2); merged 1; dropped 0; rejected 0"), "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            print([(x['title'], x['servings'], x['summary'], x['ingredients']) for x in d['Recipe']], [i['recipe'] for i in d['Ingredient']])
            """, [out])
        #expect(checked.out == "[('Soup', 4, 'hotter', [1, 2])] ['Soup', 'Soup']\n", "\(checked.stderr)")
    }

    @Test("--dedupe without a plan on an append to a store of objects is taken (was refused, 64)", .needsPython3, .needsSQLite3)
    func appendWithPolicy() throws {
        let dir = try Self.app()
        let model = dir.path + "/Model.swift", store = dir.path + "/notes.sqlite"
        #expect(try CLI.tripconv(dir.path + "/notes.jsonl", "--model", model, "-o", store).status == 0)
        let more = dir.path + "/more.jsonl"
        _ = try CLI.python("""
            import json, sys
            with open(sys.argv[1], 'w') as f:
                f.write(json.dumps({'@entity': 'Folder', 'title': 'Work', 'colour': 'blue', 'notes': []}) + '\\n')
                f.write(json.dumps({'@entity': 'Folder', 'title': 'Shop', 'notes': []}) + '\\n')
            """, [more])
        let r = try CLI.tripconv(more, "--model", model, "-o", store, "--dedupe", "first")
        #expect(r.status == 0, "\(r.stderr)")
        let sqlite3 = try #require(CLI.tool("sqlite3"))
        let rows = try CLI.run(sqlite3, [store, "SELECT title, coalesce(colour, '-') FROM Folder ORDER BY title"])
        #expect(rows.out == "Home|-\nShop|-\nWork|red\n", "\(rows.stderr)")
    }
}
