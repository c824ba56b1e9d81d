import Foundation
import Testing
import TripTestSupport

/// `--memory-limit` covers what an object run holds besides a plan's deduplication: a graph reader's
/// index of keys (JSON, JSON Lines, YAML), the objects a plan's first pass sets aside, and the writers'
/// names. With 1M (2M for the objects set aside) each goes to temporary files part way through, the output and rejects are the
/// bytes of the run that holds everything in memory, and the summary line and the report (read with
/// Python's json) say what spilled.
@Suite("convert --model: the reader's index, the objects set aside and the writer's names under --memory-limit")
struct ObjectSpillCLITests {
    struct Run {
        var status: Int32
        var files: [String: Data]
        var report: [String: String]
        var stderr: String
    }

    /// `input` through `extra` (`--model …`) to `out` in memory and with `--memory-limit 1M`: the output's
    /// files (one, or a directory's), the rejects, what the report says of the spill (read by Python) and stderr.
    static func runs(_ input: String, _ extra: [String], out name: String, in dir: URL, limit small: String = "1M") throws -> [Run] {
        let spillDir = dir.appendingPathComponent("spill")
        try FileManager.default.createDirectory(at: spillDir, withIntermediateDirectories: true)
        return try [nil, small].map { limit in
            let out = dir.appendingPathComponent(name).path, rejects = dir.appendingPathComponent("rejects.jsonl").path
            let report = dir.appendingPathComponent("report.json").path
            defer { for f in [out, rejects, report] { try? FileManager.default.removeItem(atPath: f) } }
            let r = try CLI.run(CLI.binary, [input] + extra + ["-o", out, "--rejects", rejects, "--report", report, "--temp-dir", spillDir.path]
                                + (limit.map { ["--memory-limit", $0] } ?? []))
            var files: [String: Data] = [:]
            if let names = try? FileManager.default.contentsOfDirectory(atPath: out) {
                for n in names { files[n] = FileManager.default.contents(atPath: out + "/" + n) }
            } else {
                files["out"] = FileManager.default.contents(atPath: out)
            }
            files["rejects"] = FileManager.default.contents(atPath: rejects)
            let read = try CLI.python("""
                import json, sys
                r = json.load(open(sys.argv[1]))
                print(json.dumps({'entries': str(r.get('spilledEntries', 'none')), 'bytes': str(r.get('spilledBytes', 'none')),
                                  'spilled': '|'.join(r.get('spilled', [])), 'written': str(r['written']), 'read': str(r['read'])}))
                """, [report])
            let fields = try JSONSerialization.jsonObject(with: Data(read.out.utf8)) as? [String: String] ?? [:]
            // The spill's files have no names left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: spillDir.path).isEmpty)
            return Run(status: r.status, files: files, report: fields, stderr: r.stderr)
        }
    }

    /// 20,000 recipes at 1.0.0 (make-recipes-v1.py: 40,200 objects, an index past 512 KiB) as JSON Lines,
    /// or as one JSON or YAML document made of those lines by Python.
    static func recipes(_ dir: URL, as format: String) throws -> String {
        let made = try CLI.python(String(contentsOfFile: "samples/swift-model-recipes/make-recipes-v1.py", encoding: .utf8),
                                  [dir.path, "--recipes", "20000"])
        try #require(made.status == 0, "\(made.stderr)")
        let lines = made.out.trimmingCharacters(in: .whitespacesAndNewlines)
        guard format != "jsonl" else { return lines }
        let path = dir.appendingPathComponent("recipes.\(format)").path
        let document = try CLI.python("""
            import json, sys
            graph = {}
            for line in open(sys.argv[1]):
                o = json.loads(line)
                graph.setdefault(o.pop('@entity'), []).append(o)
            with open(sys.argv[2], 'w') as f:
                if sys.argv[3] == 'json':
                    json.dump(graph, f, indent=1)
                else:
                    import yaml
                    yaml.safe_dump(graph, f, sort_keys=False)
            """, [lines, path, format])
        try #require(document.status == 0, "\(document.stderr)")
        return path
    }

    @Test("the reader's index of keys spills: the same output, the summary and report say so", .needsPython3,
          arguments: ["jsonl", "json", "yaml"])
    func readerIndex(format: String) throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.recipes(dir, as: format)
        let r = try Self.runs(input, ["--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "--target-version", "1.0.0"],
                              out: "out.jsonl", in: dir)
        #expect(r[0].status == 0 && r[1].status == 0, "\(r[0].stderr) \(r[1].stderr)")
        #expect(r[0].files["out"] != nil && r[0].files == r[1].files, "outputs differ")
        #expect(!r[0].stderr.contains("spilled") && r[0].report["entries"] == "none" && r[0].report["spilled"] == "")
        #expect(r[1].stderr.contains("; spilled the reader's index of keys ("), "\(r[1].stderr)")
        #expect(r[1].report["spilled"]?.contains("the reader's index of keys") == true, "\(r[1].report)")
        #expect(Int(r[1].report["entries"] ?? "") ?? 0 > 0 && Int(r[1].report["bytes"] ?? "") ?? 0 > 0, "\(r[1].report)")
        #expect(r[1].report["written"] == "40200" && r[0].report["written"] == "40200", "\(r[1].report)")
        #expect(SpillCLITests.steadyLine(r[0].stderr) == SpillCLITests.steadyLine(r[1].stderr))
    }

    /// 20,000 recipes at 2.0.0 (distinct titles, Recipe unique by title: its objects named by value,
    /// the others by `@key`; every fifth ingredient names a recipe that is not there, every 97th
    /// recipe repeats an earlier title, the 50th title in NFD where the first is in NFC), written by
    /// Python: as a document by ElementTree, and as a tables directory by csv.
    static func recipesV2(_ dir: URL, as format: String) throws -> String {
        let path = dir.appendingPathComponent(format == "xml" ? "recipes.xml" : "tables").path
        let made = try CLI.python(RemovedReferenceCLITests.elementTree + """
            import unicodedata
            n = 20000
            def title(r):
                if r % 97 == 0: return title(r - 1)
                t = 'Recette %011d caf\\u00e9' % r
                return unicodedata.normalize('NFD', title(1)) if r == 50 else t
            chefs = list(range(1, n // 100 + 1))
            recipes = [(r, title(r), r % 8 + 1, (r - 1) % len(chefs) + 1) for r in range(1, n + 1)]
            ingredients = [(i, 'ingredient %d' % i, str(i % 500), title(i) if i % 5 else 'no such recipe %d' % i) for i in range(1, n + 1)]
            if sys.argv[1] == 'xml':
                for c in chefs: add('Chef', c, {'name': 'chef %d' % c}, {'recipes': [t for r, t, s, ch in recipes if ch == c and r % 97]})
                for r, t, s, ch in recipes:
                    e = ET.SubElement(root, 'Recipe')
                    ET.SubElement(e, 'title').text = t
                    ET.SubElement(e, 'servings').text = str(s)
                    ET.SubElement(ET.SubElement(e, 'ingredients'), 'ref').text = str(r)
                    ET.SubElement(ET.SubElement(e, 'chef'), 'ref').text = str(ch)
                for i, name, q, rt in ingredients: add('Ingredient', i, {'name': name, 'quantity': q}, {'recipe': [rt]})
                ET.ElementTree(root).write(sys.argv[2], encoding='utf-8', xml_declaration=True)
            else:
                os.makedirs(sys.argv[2])
                for name, rows in [('Chef', [['@key', 'name']] + [[c, 'chef %d' % c] for c in chefs]),
                                   ('Recipe', [['title', 'servings', 'summary', 'chef']] + [[t, s, '', ch] for r, t, s, ch in recipes]),
                                   ('Ingredient', [['@key', 'name', 'quantity', 'recipe']] + [list(i) for i in ingredients])]:
                    with open(os.path.join(sys.argv[2], name + '.csv'), 'w', newline='') as f: csv.writer(f).writerows(rows)
            """, [format, path])
        try #require(made.status == 0, "\(made.stderr)")
        return path
    }

    /// The XML and tables readers' index (was: dictionaries outside the budget) spills with 1M: the
    /// same output and rejects as in memory, the summary and report say so; through a plan's two reads
    /// (the second taking the first's index) and without one.
    @Test("the XML and tables readers' index of names spills: the same output and rejects, the summary and report say so", .needsPython3,
          arguments: ["xml", "csv"], ["2.0.0", "3.0.0"])
    func xmlAndTablesIndex(format: String, target: String) throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.recipesV2(dir, as: format)
        let r = try Self.runs(input, ["--model", PlanRunCLITests.plan, "--source-version", "2.0.0", "--target-version", target],
                              out: "out.jsonl", in: dir)
        #expect(r[0].status == 0 && r[1].status == 0, "\(r[0].stderr) \(r[1].stderr)")
        #expect(r[0].files["out"] != nil && r[0].files["rejects"] != nil && r[0].files == r[1].files, "outputs or rejects differ")
        // 207 recipes repeat a title (the 97th's and the one in NFD): merged at 2.0.0 (as the run deduplicates on
        // title), refused through the stage to 3.0.0 (2.0.0, the source, already makes titles unique); 4,000
        // ingredients name no recipe.
        let counts = target == "2.0.0" ? "merged 207; dropped 0; removed 4000 references to objects not written; rejected 0;"
            : "removed 4000 references to objects not written; rejected 207;"
        #expect(r[0].stderr.contains(counts), "\(r[0].stderr)")
        #expect(!r[0].stderr.contains("spilled") && r[0].report["spilled"] == "")
        #expect(r[1].stderr.contains("; spilled the reader's index of keys"), "\(r[1].stderr)")
        #expect(r[1].report["spilled"]?.contains("the reader's index of keys") == true, "\(r[1].report)")
        #expect(SpillCLITests.steadyLine(r[0].stderr) == SpillCLITests.steadyLine(r[1].stderr))
    }

    @Test("the writer's names spill in every object text format: the same output, the summary and report say so", .needsPython3,
          arguments: [("json", "out.json"), ("yaml", "out.yaml"), ("xml", "out.xml"), ("csv", "tables")])
    func writerNames(format: String, out: String) throws {
        let dir = try CLI.temporaryDirectory()
        let input = try PlanDedupeSpillCLITests.recipes(dir)
        let r = try Self.runs(input, ["--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "--to", format], out: out, in: dir)
        #expect(r[0].status == 0 && r[1].status == 0, "\(r[0].stderr) \(r[1].stderr)")
        #expect(r[0].files.count >= 2 && r[0].files == r[1].files, "outputs differ")
        #expect(!r[0].stderr.contains("spilled"))
        #expect(r[1].stderr.contains("the writer's holdings ("), "\(r[1].stderr)")
        #expect(r[1].report["spilled"]?.contains("the writer's holdings") == true, "\(r[1].report)")
        #expect(SpillCLITests.steadyLine(r[0].stderr) == SpillCLITests.steadyLine(r[1].stderr))
    }

    /// The recipes' plan with Ingredient.quantity a String at 1.0.0 and an Int64 after, and the lines
    /// `lines` with every other ingredient's quantity "x" (which does not convert: set aside in pass 1),
    /// written by Python into `dir`: the plan's and the input's paths.
    static func quantityPlan(_ dir: URL, _ lines: String) throws -> (plan: String, input: String) {
        let plan = dir.appendingPathComponent("plan.json").path, input = dir.appendingPathComponent("q.jsonl").path
        let made = try CLI.python("""
            import json, sys
            p = json.load(open(sys.argv[1]))
            for i, v in enumerate(p['versions']):
                for e in v['entities']:
                    for a in e['attributes']:
                        if e['name'] == 'Ingredient' and a['name'] == 'quantity': a['type'] = 'String' if i == 0 else 'Int64'
            json.dump(p, open(sys.argv[2], 'w'))
            with open(sys.argv[4], 'w') as out:
                for line in open(sys.argv[3]):
                    o = json.loads(line)
                    if o['@entity'] == 'Ingredient': o['quantity'] = 'x' if o['@key'] % 2 else str(o['quantity'])
                    out.write(json.dumps(o) + '\\n')
            """, [PlanRunCLITests.plan, plan, lines, input])
        try #require(made.status == 0, "\(made.stderr)")
        return (plan, input)
    }

    /// An append into an older store (`--migrate`) whose stage sets objects aside: the store's objects
    /// set aside are held under the budget as a conversion's are (was: a `Set` in memory, outside it).
    @Test("an append with --migrate: the store's objects set aside spill, the store the same as in memory", .needsPython3, .needsSQLite3)
    func appendSetAside() throws {
        let dir = try CLI.temporaryDirectory()
        // 100,000 recipes: the 50,000 ingredients set aside are past what 1M holds beside the deduplication.
        let generated = try CLI.python(String(contentsOfFile: "samples/swift-model-recipes/make-recipes-v1.py", encoding: .utf8),
                                       [dir.path, "--recipes", "100000"])
        try #require(generated.status == 0, "\(generated.stderr)")
        let lines = generated.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let (plan, input) = try Self.quantityPlan(dir, lines)
        let more = dir.appendingPathComponent("more.jsonl")
        try Data((#"{"@entity": "Recipe", "@key": 1, "title": "Toast", "servings": 1, "notes": null, "chef": null, "ingredients": [1]}"# + "\n"
                  + #"{"@entity": "Ingredient", "@key": 1, "name": "bread", "quantity": "2", "recipe": 1}"# + "\n").utf8).write(to: more)
        let spillDir = dir.appendingPathComponent("spill").path
        try FileManager.default.createDirectory(atPath: spillDir, withIntermediateDirectories: true)
        var dumps: [String] = []
        for limit in [nil, "1M"] {
            let store = dir.appendingPathComponent("store-\(limit ?? "all").sqlite").path
            let stored = try CLI.tripconv(input, "--model", plan, "--source-version", "1.0.0", "--target-version", "1.0.0", "-o", store, "-q")
            try #require(stored.status == 0, "\(stored.stderr)")
            let r = try CLI.run(CLI.binary, [more.path, "--model", plan, "--source-version", "1.0.0",
                                             "-o", store, "--migrate", "--no-backup", "--rejects", store + ".rejects", "--temp-dir", spillDir]
                                + (limit.map { ["--memory-limit", $0] } ?? []))
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("spilled the objects set aside") == (limit != nil), "\(r.stderr)")
            let dump = try CLI.run(try #require(CLI.tool("sqlite3")), [store, """
                SELECT 'R', _pk, title, servings, summary, cuisine FROM Recipe ORDER BY _pk;
                SELECT 'I', _pk, name, quantity, recipe FROM Ingredient ORDER BY _pk;
                """])
            dumps.append(String(decoding: dump.stdout, as: UTF8.self))
            #expect(try FileManager.default.contentsOfDirectory(atPath: spillDir).isEmpty)
        }
        #expect(dumps[0].split(separator: "\n").count > 100_000 && dumps[0] == dumps[1])
    }

    @Test("the objects a plan sets aside spill: the same output and rejects, no reference to one written", .needsPython3)
    func setAside() throws {
        let dir = try CLI.temporaryDirectory()
        let lines = try Self.recipes(dir, as: "jsonl")
        // The recipes' plan with Ingredient.quantity a String at 1.0.0 and an Int64 after: every other
        // ingredient's quantity ("x…") does not convert, so 10,000 ingredients are set aside in pass 1 and
        // the recipes' references to them removed in pass 2.
        let (plan, input) = try Self.quantityPlan(dir, lines)
        // 2M: what spills first is the objects set aside, not the reader's index (which keeps keys 1, 2, … in arrays).
        let r = try Self.runs(input, ["--model", plan, "--source-version", "1.0.0"], out: "out.jsonl", in: dir, limit: "2M")
        #expect(r[0].status == 0 && r[1].status == 0, "\(r[0].stderr) \(r[1].stderr)")
        #expect(r[0].files["out"] != nil && r[0].files["rejects"] != nil && r[0].files == r[1].files, "outputs or rejects differ")
        #expect(r[0].stderr.contains("set aside 10000, removed 10000 references to objects not written; rejected 10000"), "\(r[0].stderr)")
        #expect(!r[0].stderr.contains("spilled") && r[1].stderr.contains("; spilled the objects set aside, "), "\(r[1].stderr)")
        #expect(r[1].report["spilled"]?.contains("the objects set aside") == true, "\(r[1].report)")
        #expect(SpillCLITests.steadyLine(r[0].stderr) == SpillCLITests.steadyLine(r[1].stderr))
        let out = dir.appendingPathComponent("check.jsonl")
        try r[1].files["out"]?.write(to: out)
        let check = try CLI.python("""
            import json, sys
            rows = [json.loads(l) for l in open(sys.argv[1])]
            keys = {o['@key'] for o in rows if o['@entity'] == 'Ingredient'}
            listed = [k for o in rows if o['@entity'] == 'Recipe' for k in o['ingredients']]
            print(len(keys), len(listed), all(k in keys for k in listed))
            """, [out.path])
        #expect(check.out.trimmingCharacters(in: .whitespacesAndNewlines) == "10000 10000 True", "\(check.out) \(check.stderr)")
    }
}
