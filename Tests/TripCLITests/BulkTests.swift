import Foundation
import Testing
import TripTestSupport

/// The bulk workflow: a directory of mixed inputs into one output, or each into its own file with
/// --output-dir and --jobs; one bad file does not stop the others; a progress bar on a terminal only.
@Suite("Bulk migration")
struct BulkTests {
    @Test("--output-dir converts each input to its own file, in parallel, and one bad input fails alone", .needsPython3)
    func outputDir() throws {
        let tmp = try CLI.temporaryDirectory()
        let dir = tmp.appendingPathComponent("out").path
        let report = tmp.appendingPathComponent("report.json").path
        let r = try CLI.tripconv("samples/trips-v1.json", "samples/trips-v2.jsonl", "samples/broken.json", "samples/trips-v3.yaml",
                                 "--output-dir", dir, "--to", "json", "--jobs", "2", "--report", report)
        #expect(r.status == 65, "the first failed input's status")
        #expect(r.stderr.contains("samples/broken.json:3:39:"))
        #expect(r.stderr.contains("converted 3 of 4 inputs, 1 failed"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["trips-v1.json", "trips-v2.json", "trips-v3.json"])
        let facts = try CLI.python("""
            import json,sys
            r=json.load(open(sys.argv[1]))
            print(r['status'], r['converted'], r['failed'], r['read'], r['written'])
            for p in r['perInput']: print(p['input'], p['status'], p.get('format'), p.get('version'), p.get('read'), p.get('written'))
            for n in ['trips-v1','trips-v2','trips-v3']: print(n, len(json.load(open(sys.argv[2]+'/'+n+'.json'))['trips']))
            """, [report, dir])
        #expect(facts.out == """
            failed 3 1 11 9
            samples/trips-v1.json ok json 1.0.0 5 3
            samples/trips-v2.jsonl ok jsonl 1.0.0 3 3
            samples/broken.json failed None None None None
            samples/trips-v3.yaml ok yaml 3.0.0 3 3
            trips-v1 3
            trips-v2 3
            trips-v3 3

            """, "\(facts.stderr)")
    }

    @Test("--output-dir into a format with no file of its own is a usage error, not a crash", arguments: ["coredata", "postgresql"])
    func outputDirWithoutFiles(format: String) throws {
        let dir = try CLI.temporaryDirectory().appendingPathComponent("out").path
        let r = try CLI.tripconv("samples/trips-v1.json", "--output-dir", dir, "--to", format)
        #expect(r.status == 64, "\(r.status): \(r.stderr)")
        #expect(r.stderr.contains("--output-dir writes a file per input, and \(format) is not written to files"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir))
    }

    @Test("a directory of mixed formats and versions is read recursively and deduplicated into one output")
    func directory() throws {
        let r = try CLI.tripconv("samples", "--ignore-unknown", "--to", "jsonl", "--rejects", "/dev/null", "--input-encoding", "latin1")
        // Broken samples are in samples/ on purpose: a syntax error stops a single-output run.
        #expect(r.status == 65)
        let tmp = try CLI.temporaryDirectory()
        for name in ["trips-v1.json", "trips-v2.tsv", "trips-v3.xml", "trips-v1.sqlite", "stream.yaml"] {
            let sub = tmp.appendingPathComponent(name.hasSuffix("xml") ? "deep/er" : "deep")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: CLI.root.appendingPathComponent("samples/\(name)"), to: sub.appendingPathComponent(name))
        }
        let ok = try CLI.tripconv(tmp.path, "--to", "jsonl", "-v")
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stderr.contains("read 21 trips from 5 inputs"), "\(ok.stderr)")
        let names = ok.out.split(separator: "\n").map { String($0) }
        #expect(Set(names).count == names.count)
    }

    @Test("a progress bar is drawn on a terminal, and never on a pipe or with -q",
          .needsProgram("script", install: "util-linux's script gives the pseudo-terminal: apt-get install bsdutils"))
    func progressBar() throws {
        let script = try #require(CLI.tool("script"))
        let tmp = try CLI.temporaryDirectory()
        let input = tmp.appendingPathComponent("big.jsonl").path
        #expect(try CLI.run(AccountingTests.tripgen, ["--trips", "60000", "-o", input]).status == 0)
        let out = tmp.appendingPathComponent("out.jsonl").path
        let tty = try CLI.run(script, ["-qec", "\(CLI.binary) \(input) -o \(out)", "/dev/null"])
        #expect(tty.status == 0)
        #expect(tty.out.contains("trips") && tty.out.contains("MiB/s") && tty.out.contains("big.jsonl"), "no progress bar under a terminal")
        let quiet = try CLI.run(script, ["-qec", "\(CLI.binary) \(input) -o \(out) -q", "/dev/null"])
        #expect(!quiet.out.contains("MiB/s"))
        let piped = try CLI.tripconv(input, "-o", out)
        #expect(!piped.stderr.contains("MiB/s"))
        #expect(!piped.stderr.contains("\u{1B}["))
    }
}
