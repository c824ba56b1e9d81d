import Foundation
import Testing
import TripTestSupport

/// `--memory-limit` covers an app's plan's deduplication: with 1M its state (the groups, the
/// duplicates, the survivors that merge) goes to a temporary database part way through the first
/// pass, and the output, the rejects, the report and the summary (but for the spill's part) are the
/// bytes of the run that holds it in memory.
@Suite("convert --model: the plan's deduplication under --memory-limit")
struct PlanDedupeSpillCLITests {
    /// 6,000 recipes at 1.0.0 in JSON Lines (a quarter repeating a title), written by make-recipes-v1.py.
    static func recipes(_ dir: URL, distinct: String = "0.75") throws -> String {
        let made = try CLI.python(String(contentsOfFile: "samples/swift-model-recipes/make-recipes-v1.py", encoding: .utf8),
                                  [dir.path, "--recipes", "6000", "--distinct", distinct])
        try #require(made.status == 0, "\(made.stderr)")
        return made.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func runs(_ input: String, _ policy: String, in dir: URL, spillDir: URL) throws -> [(status: Int32, out: Data?, rejects: Data?,
                                                                                                  report: String, stderr: String)] {
        try [nil, "1M"].map { limit in
            let out = dir.appendingPathComponent("out.jsonl").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
            let report = dir.appendingPathComponent("report.json").path
            var args = [input, "--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "--dedupe", policy, "-o", out,
                        "--rejects", rejects, "--report", report, "--temp-dir", spillDir.path]
            if let limit { args += ["--memory-limit", limit] }
            let r = try CLI.run(CLI.binary, args)
            defer { for f in [out, rejects, report] { try? FileManager.default.removeItem(atPath: f) } }
            let steady = FileManager.default.fileExists(atPath: report) ? try SpillCLITests.steady(report) : ""
            return (r.status, FileManager.default.contents(atPath: out), FileManager.default.contents(atPath: rejects), steady, r.stderr)
        }
    }

    @Test("merge, first, last: the same output, rejects, report and counts spilled as in memory; references at the survivors",
          .needsPython3, arguments: ["merge", "first", "last"])
    func sameBytes(policy: String) throws {
        let dir = try CLI.temporaryDirectory()
        let spillDir = dir.appendingPathComponent("spill")
        try FileManager.default.createDirectory(at: spillDir, withIntermediateDirectories: true)
        let input = try Self.recipes(dir)
        let (memory, spilled) = try { let r = try Self.runs(input, policy, in: dir, spillDir: spillDir); return (r[0], r[1]) }()
        #expect(memory.status == 0 && spilled.status == 0, "\(memory.stderr) \(spilled.stderr)")
        // What else spilled beside it (the writer's names) is named in the same phrase.
        let phrase = spilled.stderr.components(separatedBy: "; spilled ").dropFirst().first ?? ""
        #expect(!memory.stderr.contains("spilled") && phrase.contains("the plan's deduplication") && phrase.contains(" to temporary files"),
                "\(spilled.stderr)")
        #expect(memory.out != nil && memory.out == spilled.out, "outputs differ")
        #expect(memory.rejects != nil && memory.rejects == spilled.rejects, "rejects differ")
        #expect(memory.report == spilled.report && memory.report.contains("\"merged\""), "\(memory.report) / \(spilled.report)")
        #expect(SpillCLITests.steadyLine(memory.stderr) == SpillCLITests.steadyLine(spilled.stderr))
        // The spill's database has no name left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: spillDir.path).isEmpty)
        // Read back with Python: 4,500 titles once each; every ingredient's recipe is a written title (its
        // reference to a duplicate redirected to the survivor), no ingredient is listed twice, and each is
        // listed by the recipe it names: under merge the duplicates' lists united in the survivor's, under
        // first and last the dropped duplicates' ingredients dropped with them (was: written naming the
        // survivor, which did not list them). Which ingredients stay is told from the input.
        let out = dir.appendingPathComponent("check.jsonl")
        try spilled.out?.write(to: out)
        let check = try CLI.python("""
            import json, sys, collections
            rows = [json.loads(l) for l in open(sys.argv[1])]
            recipes = {r['title']: r for r in rows if r['@entity'] == 'Recipe'}
            ingredients = [r for r in rows if r['@entity'] == 'Ingredient']
            owners = collections.Counter()
            for t, r in recipes.items():
                for k in r['ingredients']: owners[k] += 1
            named = all(i['recipe'] in recipes for i in ingredients)
            listed = all(i['@key'] in recipes[i['recipe']]['ingredients'] for i in ingredients)
            given = [json.loads(l) for l in open(sys.argv[2])]
            kept = {}
            for r in given:
                if r['@entity'] == 'Recipe' and (sys.argv[3] == 'last' or r['title'] not in kept): kept[r['title']] = r['@key']
            survivors = set(kept.values())
            expected = sum(1 for r in given if r['@entity'] == 'Ingredient' and (sys.argv[3] == 'merge' or r['recipe'] in survivors))
            print(len(recipes), len(ingredients) == expected, named, listed, max(owners.values()))
            """, [out.path, input, policy])
        #expect(check.out.trimmingCharacters(in: .whitespacesAndNewlines) == "4500 True True True 1", "\(check.out) \(check.stderr)")
    }

    @Test("fail: the first duplicate, met after the state went to disk, is named as in memory; nothing is written", .needsPython3)
    func failAfterSpill() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.recipes(dir, distinct: "1.0")
        // Two duplicates near the end of the recipes: of the 10th recipe, then of the 3rd.
        let edit = try CLI.python("""
            import json, sys
            lines = open(sys.argv[1]).read().splitlines()
            recipes = [i for i, l in enumerate(lines) if json.loads(l)['@entity'] == 'Recipe']
            for at, of in ((recipes[-40], recipes[9]), (recipes[-20], recipes[2])):
                r = json.loads(lines[at]); r['title'] = json.loads(lines[of])['title']; lines[at] = json.dumps(r)
            open(sys.argv[1], 'w').write('\\n'.join(lines) + '\\n')
            print(recipes[-40] + 1, recipes[9] + 1)
            """, [input])
        let places = edit.out.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        try #require(places.count == 2, "\(edit.stderr)")
        let (memory, spilled) = try { let r = try Self.runs(input, "fail", in: dir, spillDir: dir); return (r[0], r[1]) }()
        #expect(memory.status == 65 && spilled.status == 65)
        #expect(memory.out == nil && spilled.out == nil)
        let line = "tripconv: \(input):\(places[0]):1: a second Recipe with title"
        #expect(spilled.stderr.contains(line) && spilled.stderr.contains("the first is at \(input):\(places[1]):1"), "\(spilled.stderr)")
        #expect(memory.stderr == spilled.stderr)
        // The state went to disk before the duplicate was met: where no file can be made, the run ends
        // there (73, as the trips' spill), not at the duplicate.
        let nowhere = try CLI.run(CLI.binary, [input, "--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "--dedupe", "fail",
                                               "-o", dir.appendingPathComponent("out.jsonl").path, "--memory-limit", "1M", "--temp-dir", "/proc"])
        #expect(nowhere.status == 73 && nowhere.stderr.contains("tripconv: /proc: cannot create"), "\(nowhere.status) \(nowhere.stderr)")
    }

    @Test("a full temporary disk while the state spills is exit 74 naming the directory, and the output is absent", .needsPython3)
    func fullDisk() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.recipes(dir)
        let out = dir.appendingPathComponent("out.jsonl").path
        // No file may grow past 256 KiB (the database passes it in the first pass, before the output is
        // made), and SIGXFSZ is ignored, so the write fails with EFBIG as a full disk fails with ENOSPC.
        let r = try CLI.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 256; exec \"$0\" \"$@\"", CLI.binary, input,
                                        "--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "-o", out,
                                        "--memory-limit", "1M", "--temp-dir", dir.path])
        #expect(r.status == 74, "\(r.status): \(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(dir.path): cannot write temporary data"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [URL(fileURLWithPath: input).lastPathComponent])
    }

    @Test("migrate --model: a store's migration under --memory-limit 1M spills and leaves the same store and rejects as in memory",
          .needsPython3)
    func migrateInPlace() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try Self.recipes(dir)
        var stores: [(stderr: String, rows: String, rejects: Data?)] = []
        for limit in [nil, "1M"] {
            // The same name each time: the rejects name the store.
            let store = dir.appendingPathComponent("recipes.sqlite").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
            defer { for f in [store, rejects] { try? FileManager.default.removeItem(atPath: f) } }
            let made = try CLI.tripconv(input, "--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "--target-version", "1.0.0",
                                        "-q", "-o", store)
            try #require(made.status == 0, "\(made.stderr)")
            let r = try CLI.run(CLI.binary, ["migrate", "--model", PlanRunCLITests.plan, store, "--no-backup", "--rejects", rejects]
                                + (limit.map { ["--memory-limit", $0] } ?? []))
            #expect(r.status == 0, "\(r.stderr)")
            let rows = try CLI.python("""
                import hashlib, sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                for t in ('Recipe', 'Ingredient'):
                    rows = repr(list(db.execute('SELECT * FROM "%s" ORDER BY 1' % t))).encode()
                    print(t, db.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0], hashlib.sha256(rows).hexdigest())
                """, [store])
            stores.append((r.stderr, rows.out, FileManager.default.contents(atPath: rejects)))
        }
        #expect(!stores[0].stderr.contains("spilled") && stores[1].stderr.contains("; spilled the plan's deduplication ("),
                "\(stores[1].stderr)")
        #expect(stores[0].rows == stores[1].rows && stores[0].rows.hasPrefix("Recipe 4500 "), "\(stores[0].rows) / \(stores[1].rows)")
        #expect(stores[0].rejects != nil && stores[0].rejects == stores[1].rejects)
    }
}
