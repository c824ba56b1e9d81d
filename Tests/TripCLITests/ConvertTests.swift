import Foundation
import Testing
import TripTestSupport

/// End-to-end runs of the built binary on samples/, checked by independent readers
/// (python3's json module, the sqlite3 tool).
@Suite("tripconv convert, end to end")
struct ConvertTests {
    /// Loads JSON with python3 and prints a canonical dump, so comparisons are python's reading of our bytes.
    static func pythonJSON(_ path: String, lines: Bool = false) throws -> String {
        let code = lines
            ? "import json,sys\nprint(json.dumps([json.loads(l) for l in open(sys.argv[1], encoding='utf-8') if l.strip()], sort_keys=True, ensure_ascii=False))"
            : "import json,sys\nprint(json.dumps(json.load(open(sys.argv[1], encoding='utf-8')), sort_keys=True, ensure_ascii=False))"
        let r = try CLI.python(code, [path])
        #expect(r.status == 0, "python3 could not read \(path): \(r.stderr)")
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func canonical(_ json: String) throws -> String {
        let r = try CLI.run(try ExternalTool.program("python3"),
                            ["-c", "import json,sys\nprint(json.dumps(json.loads(sys.stdin.read()), sort_keys=True, ensure_ascii=False))"],
                            stdin: Data(json.utf8))
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("--jobs 1 (XML and YAML parsed on the reader's thread) writes what the default writes, byte for byte")
    func oneThreadSameOutput() throws {
        let tmp = try CLI.temporaryDirectory()
        for sample in ["trips-v1.xml", "trips-v2.xml", "trips-v3.xml", "trips-v1.yaml", "trips-v3.yaml", "stream.yaml"] {
            var outputs: [Data] = []
            for jobs in ["1", "2"] {
                let out = tmp.appendingPathComponent("\(sample)-\(jobs).jsonl").path
                let r = try CLI.tripconv("samples/\(sample)", "--jobs", jobs, "-q", "-o", out)
                #expect(r.status == 0, "\(sample) --jobs \(jobs): \(r.stderr)")
                outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
            }
            #expect(!outputs[0].isEmpty)
            #expect(outputs[0] == outputs[1], "\(sample)")
        }
    }

    @Test("a 1.0.0 export with duplicate names becomes 3.0.0 JSON with one merged trip per name", .needsPython3)
    func mergesV1() throws {
        let tmp = try CLI.temporaryDirectory()
        let out = tmp.appendingPathComponent("out.json").path
        let r = try CLI.tripconv("samples/trips-v1.json", "-o", out)
        #expect(r.status == 0, "\(r.stderr)")
        let expected = try Self.canonical("""
        {"schemaVersion": "3.0.0", "trips": [
          {"name": "Family Visit", "destination": "Cupertino, CA", "startDate": "2024-06-15T08:00:00Z", "endDate": "2024-06-22T18:00:00Z",
           "bucketList": [
             {"title": "Apple Park Visitor Center", "details": "Rooftop terrace at sunset", "hasReservation": false, "isInPlan": true},
             {"title": "Stevens Creek Trail", "details": "Bring bikes", "hasReservation": false, "isInPlan": true},
             {"title": "Farmers market", "details": "Sunday morning", "hasReservation": false, "isInPlan": true}],
           "livingAccommodation": {"address": "10101 N De Anza Blvd", "placeName": "Aunt May's"}},
          {"name": "Ski Week", "destination": "Lake Tahoe", "startDate": "2025-01-18T07:30:00Z", "endDate": "2025-01-26T16:00:00Z",
           "bucketList": [
             {"title": "Heavenly gondola", "details": "Buy passes online", "hasReservation": true, "isInPlan": true},
             {"title": "Snowshoe to Eagle Lake", "details": "Rent snowshoes in town", "hasReservation": false, "isInPlan": false}],
           "livingAccommodation": {"address": "4130 Lake Tahoe Blvd", "placeName": "Cabin 7"}},
          {"name": "Conference", "destination": "San José", "startDate": "2024-06-10T15:00:00.250Z", "endDate": "2024-06-14T12:00:00Z",
           "bucketList": [], "livingAccommodation": {"address": "170 S Market St", "placeName": "Hotel \\"Fairmont\\""}}
        ]}
        """)
        #expect(try Self.pythonJSON(out) == expected)
        #expect(r.stderr.contains("read 5 trips"))
        #expect(r.stderr.contains("merged 2"))
        #expect(r.stderr.contains("wrote 3 at 3.0.0"))
    }

    @Test("every version converts to 3.0.0 with exactly the 3.0.0 keys", .needsPython3,
          arguments: ["samples/trips-v1.json", "samples/trips-v2.jsonl", "samples/trips-v3.json"])
    func toCurrent(sample: String) throws {
        let r = try CLI.tripconv(sample, "-q")
        #expect(r.status == 0, "\(r.stderr)")
        let keys = try CLI.run(try ExternalTool.program("python3"), ["-c", """
            import json,sys
            ks=set()
            for l in sys.stdin:
                t=json.loads(l); ks.add(','.join(sorted(t.keys())))
                for i in t['bucketList']: ks.add('item:'+','.join(sorted(i.keys())))
                if t['livingAccommodation'] is not None: ks.add('acc:'+','.join(sorted(t['livingAccommodation'].keys())))
            print('|'.join(sorted(ks)))
            """], stdin: r.stdout)
        let allowed = ["acc:address,placeName", "bucketList,destination,endDate,livingAccommodation,name,startDate",
                       "item:details,hasReservation,isInPlan,title"]
        for k in keys.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|") {
            #expect(allowed.contains(String(k)), "unexpected key set \(k)")
        }
        #expect(!r.out.contains("tripViews"))
    }

    @Test("3.0.0 written as an older version takes back the snake-case dates", arguments: ["1.0.0", "2.0.0"])
    func downgrade(version: String) throws {
        let r = try CLI.tripconv("samples/trips-v3.json", "--target-version", version, "--to", "json", "-q")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.contains("\"schemaVersion\": \"\(version)\"") || r.out.contains("\"schemaVersion\":\"\(version)\""))
        #expect(r.out.contains("\"start_date\""))
        #expect(!r.out.contains("startDate"))
        // And it reads back to the same 3.0.0 trips.
        let back = try CLI.tripconv("--from", "json", "-q", stdin: r.stdout)
        let direct = try CLI.tripconv("samples/trips-v3.json", "-q")
        #expect(back.out == direct.out)
    }

    @Test("with target 1.0.0 duplicates stay")
    func target1KeepsDuplicates() throws {
        let r = try CLI.tripconv("samples/trips-v1.json", "--target-version", "1.0.0")
        #expect(r.status == 0)
        #expect(r.out.split(separator: "\n").count == 5)
        #expect(r.stderr.contains("merged 0"))
    }

    @Test("malformed JSON fails with its place, and an existing output is left as it was")
    func brokenLeavesOutput() throws {
        let tmp = try CLI.temporaryDirectory()
        let out = tmp.appendingPathComponent("out.json")
        try "previous contents\n".write(to: out, atomically: true, encoding: .utf8)
        let r = try CLI.tripconv("samples/broken.json", "-o", out.path)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: samples/broken.json:3:"))
        #expect(try String(contentsOf: out, encoding: .utf8) == "previous contents\n")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: tmp.path)
        #expect(leftovers == ["out.json"])
    }

    @Test("a bad record fails the run with nothing written, unless --rejects sets it aside", .needsPython3)
    func rejects() throws {
        let tmp = try CLI.temporaryDirectory()
        let out = tmp.appendingPathComponent("out.jsonl").path
        let failed = try CLI.tripconv("samples/bad-records.jsonl", "-o", out)
        #expect(failed.status == 65)
        #expect(failed.stderr.hasPrefix("tripconv: samples/bad-records.jsonl:2:1: missing required field 'destination'"))
        #expect(!FileManager.default.fileExists(atPath: out))

        let rejects = tmp.appendingPathComponent("rejects.jsonl").path
        let ok = try CLI.tripconv("samples/bad-records.jsonl", "-o", out, "--rejects", rejects)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stderr.contains("rejected 3"))
        let written = try Self.pythonJSON(out, lines: true)
        #expect(written.contains("Lisbon") && written.contains("Évora") && !written.contains("Porto"))
        let set = try CLI.python("""
            import json,sys
            for l in open(sys.argv[1], encoding='utf-8'):
                r=json.loads(l); print(r['kind'], r['source'], r['record'], r['line'], r['reason'], 'text' in r)
            """, [rejects])
        #expect(set.out == """
            rejected samples/bad-records.jsonl 2 2 missing required field 'destination' True
            rejected samples/bad-records.jsonl 3 3 field 'startDate': expected an ISO 8601 date, found 'next week' True
            rejected samples/bad-records.jsonl 4 4 field 'hasReservation': expected true or false, found the string 'yes' True

            """)
    }

    @Test("--dedupe fail names the duplicates and writes nothing")
    func dedupeFail() throws {
        let tmp = try CLI.temporaryDirectory()
        let out = tmp.appendingPathComponent("out.json").path
        let r = try CLI.tripconv("samples/trips-v1.json", "-o", out, "--dedupe", "fail")
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: 2 names occur more than once ('Family Visit', 'Ski Week')"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("several inputs are deduplicated across all of them, in the order names first appear", .needsPython3)
    func acrossInputs() throws {
        let r = try CLI.tripconv("samples/trips-v2.jsonl", "samples/trips-v3.json")
        #expect(r.status == 0, "\(r.stderr)")
        let names = try CLI.run(try ExternalTool.program("python3"),
                                ["-c", "import json,sys\nprint([json.loads(l)['name'] for l in sys.stdin])"], stdin: r.stdout)
        #expect(names.out == "['Weekend in Portland', 'Road Trip', 'Kyoto', 'Reykjavík']\n")
        #expect(r.stderr.contains("merged 1"))
    }

    @Test("standard input needs --from and works as a filter")
    func filter() throws {
        let input = try Data(contentsOf: CLI.root.appendingPathComponent("samples/trips-v2.jsonl"))
        let r = try CLI.tripconv("--from", "jsonl", "-q", stdin: input)
        #expect(r.status == 0)
        #expect(r.out.split(separator: "\n").count == 3)
        #expect(r.stderr.isEmpty)
    }

    @Test("a store cannot be standard output")
    func storeToStdout() throws {
        let r = try CLI.tripconv("samples/trips-v3.json", "--to", "sqlite")
        #expect(r.status == 64)
    }

    @Test("detect --json gives format, version, evidence, counts for every sample", .needsPython3)
    func detectJSON() throws {
        let r = try CLI.tripconv("detect", "--json", "samples/trips-v1.json", "samples/trips-v2.jsonl", "samples/trips-v3.json")
        #expect(r.status == 0, "\(r.stderr)")
        let facts = try CLI.run(try ExternalTool.program("python3"), ["-c", """
            import json,sys
            for d in json.load(sys.stdin): print(d['input'], d['format'], d['version'], d['evidence'], d['trips'], d['repeatedNames'])
            """], stdin: r.stdout)
        #expect(facts.out == """
            samples/trips-v1.json json 1.0.0 fields start_date, end_date, bucketListItem, livingAccommodations 5 2
            samples/trips-v2.jsonl jsonl 1.0.0 fields start_date, end_date 3 0
            samples/trips-v3.json json 3.0.0 marker schemaVersion 3.0.0 2 0

            """)
    }
}
