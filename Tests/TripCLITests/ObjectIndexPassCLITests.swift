import Foundation
import Testing
import TripTestSupport

/// A JSON Lines file of 8 MiB or more has its index's pass made on two threads, one reading from a
/// line near the middle (`ObjectGraphPasses.indexPass`); the same bytes gzipped are read on one (a
/// compressed input cannot be cut). Both give the same output, rejects and summary, whatever the
/// second half holds: lines that do not parse, an object others refer to that is refused, a `@key`
/// given in both halves, members in another order than `"@entity"` first, objects out of the
/// model's order, CRLF line ends; and under a `--memory-limit` small enough that the second thread
/// stops part way and the first reads on from there.
@Suite("convert --model: the index's pass on two threads gives what one gives")
struct ObjectIndexPassCLITests {
    /// 40,000 recipes at 1.0.0 (make-recipes-v1.py: 80,400 objects, about 10 MB), damaged by Python in
    /// both halves; its gzipped copy beside it.
    static func damaged(_ dir: URL, lineEnd: String) throws -> (plain: String, gzipped: String) {
        let made = try CLI.python(String(contentsOfFile: "samples/swift-model-recipes/make-recipes-v1.py", encoding: .utf8),
                                  [dir.path, "--recipes", "40000"])
        try #require(made.status == 0, "\(made.stderr)")
        let source = made.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let plain = dir.appendingPathComponent("damaged.jsonl").path
        let damage = try CLI.python("""
            import json, random, sys, gzip
            lines = open(sys.argv[1]).read().splitlines()
            n = len(lines); mid = n // 2
            objs = [json.loads(l) for l in lines]
            at = {}
            for i, o in enumerate(objs):
                at.setdefault(o['@entity'], []).append(i)
            # a @key given in both halves (an ingredient of each): both are refused
            ing = [i for i in at['Ingredient'] if i > mid]
            objs[ing[-7]]['@key'] = objs[at['Ingredient'][3]]['@key']
            # an ingredient others refer to, refused for a wrong kind, in the second half
            bad = ing[len(ing) // 2]
            objs[bad]['name'] = 12345
            random.seed(7)
            out = []
            for i, o in enumerate(objs):
                items = list(o.items())
                if i % 13 == 0:
                    random.shuffle(items)
                out.append(json.dumps(dict(items)))
            # lines that do not parse, in both halves
            out[mid + 101] = out[mid + 101][:-4]
            out[mid - 99] = '{"@entity": "Recipe",'
            out[n - 3] = 'not json'
            # ten chefs after every other object: the input is out of the model's order
            chefs = at['Chef'][:10]
            out = [l for i, l in enumerate(out) if i not in chefs] + [out[i] for i in chefs]
            data = (sys.argv[3].join(out) + sys.argv[3]).encode()
            open(sys.argv[2], 'wb').write(data)
            with gzip.open(sys.argv[2] + '.gz', 'wb') as g:
                g.write(data)
            print(len(data))
            """, [source, plain, lineEnd])
        try #require(damage.status == 0, "\(damage.stderr)")
        try #require((Int(damage.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 8 << 20, "the file is under 8 MiB")
        return (plain, plain + ".gz")
    }

    /// The runs: 1.0.0 as it is, and the plan's run to 3.0.0 (which reads the input twice more).
    static let asIs = ["--target-version", "1.0.0"], plan = ["--dedupe", "merge"]

    @Test("plain and gzipped: the same output, rejects and summary", .needsPython3,
          arguments: [("\n", [], [asIs, plan]), ("\r\n", [], [asIs]), ("\n", ["--memory-limit", "4M"], [asIs, plan])]
            as [(String, [String], [[String]])])
    func sameAsOneThread(lineEnd: String, limit: [String], runs: [[String]]) throws {
        let dir = try CLI.temporaryDirectory()
        let (plain, gzipped) = try Self.damaged(dir, lineEnd: lineEnd)
        for run in runs {
            var results: [(out: Data?, rejects: Data?, summary: String, status: Int32)] = []
            for input in [plain, gzipped] {
                let out = dir.appendingPathComponent("out.jsonl").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
                defer { for f in [out, rejects] { try? FileManager.default.removeItem(atPath: f) } }
                let r = try CLI.run(CLI.binary, [input, "--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "--to", "jsonl",
                                                 "-o", out, "--rejects", rejects, "-v"] + run + limit)
                // The rejects name their input: the plain file's name in both.
                let named = (FileManager.default.contents(atPath: rejects).map { String(decoding: $0, as: UTF8.self) } ?? "")
                    .replacingOccurrences(of: gzipped, with: plain)
                results.append((FileManager.default.contents(atPath: out), Data(named.utf8),
                                SpillCLITests.steadyLine(r.stderr.replacingOccurrences(of: gzipped, with: plain)), r.status))
            }
            #expect(results[0].status == 0 && results[1].status == 0, "\(run): \(results.map(\.summary))")
            #expect(results[0].out != nil && results[0].out == results[1].out, "\(run): the outputs differ")
            #expect(results[0].rejects == results[1].rejects, "\(run): the rejects differ")
            #expect(results[0].summary == results[1].summary, "\(run)")
            guard run == Self.asIs else { continue }
            // What the damage must give: three lines that do not parse and the two objects with one
            // @key rejected, the refused ingredient too, and the references to those six objects removed (eight).
            let rejected = String(decoding: results[0].rejects ?? Data(), as: UTF8.self).split(separator: "\n")
            #expect(rejected.count == 6, "\(rejected.count) rejected")
            #expect(results[0].summary.contains("removed 8 references to objects not written"), "\(results[0].summary)")
        }
    }

    /// A plan's second pass runs on three threads (objects made on one, migrated and resolved on
    /// another, written on the calling one); `--jobs 1` runs every pass on one. Both give the same
    /// output, rejects and summary, under each policy, at another target, and past a `--memory-limit`.
    @Test("a plan's run on three threads and on one (--jobs 1): the same output, rejects and summary", .needsPython3,
          arguments: [["--dedupe", "merge"], ["--dedupe", "first"], ["--dedupe", "last"],
                      ["--dedupe", "merge", "--memory-limit", "2M"], ["--dedupe", "first", "--target-version", "2.0.0"]])
    func planOnThreads(run: [String]) throws {
        let dir = try CLI.temporaryDirectory()
        let (plain, _) = try Self.damaged(dir, lineEnd: "\n")
        var results: [(out: Data?, rejects: Data?, summary: String, status: Int32)] = []
        for jobs in [[], ["--jobs", "1"]] {
            let out = dir.appendingPathComponent("out.jsonl").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
            defer { for f in [out, rejects] { try? FileManager.default.removeItem(atPath: f) } }
            let r = try CLI.run(CLI.binary, [plain, "--model", PlanRunCLITests.plan, "--source-version", "1.0.0", "--to", "jsonl",
                                             "-o", out, "--rejects", rejects, "-v"] + run + jobs)
            results.append((FileManager.default.contents(atPath: out), FileManager.default.contents(atPath: rejects),
                            SpillCLITests.steadyLine(r.stderr), r.status))
            // What was written is what the summary says (read back by Python's json).
            let count = try CLI.python("import json, sys\nprint(sum(1 for l in open(sys.argv[1]) if json.loads(l)))", [out])
            #expect(r.stderr.contains("wrote \(count.out.trimmingCharacters(in: .whitespacesAndNewlines)) ("), "\(run) \(jobs): \(r.stderr)")
        }
        #expect(results[0].status == 0 && results[1].status == 0, "\(run): \(results.map(\.summary))")
        #expect(results[0].out != nil && results[0].out == results[1].out, "\(run): the outputs differ")
        #expect(results[0].rejects != nil && results[0].rejects == results[1].rejects, "\(run): the rejects differ")
        #expect(results[0].summary == results[1].summary, "\(run)")
        #expect(results[0].summary.contains("merged") && results[0].summary.contains("rejected 6"), "\(results[0].summary)")
    }
}
