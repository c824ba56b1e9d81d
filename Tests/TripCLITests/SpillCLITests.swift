import Foundation
import Testing
import TripTestSupport

/// `--memory-limit`: a run whose trips do not fit goes on with them in temporary files, and writes
/// the same bytes, set-aside records and report as a run that holds them in memory.
@Suite("Memory limit: spilling to temporary files")
struct SpillCLITests {
    /// The report without what differs from run to run (the time) or with the memory (spills).
    static func steady(_ path: String) throws -> String {
        let r = try CLI.python("""
            import json,sys
            r=json.load(open(sys.argv[1]))
            r.pop('elapsedSeconds', None)
            for k in ('spilledTrips','spilledBytes','spilledEntries','spilled'): r.pop(k, None)
            print(json.dumps(r, sort_keys=True))
            """, [path])
        return r.out
    }

    /// The summary line without its time and its spill part.
    static func steadyLine(_ stderr: String) -> String {
        stderr.split(separator: "\n").map { line in
            line.split(separator: ";").filter { !$0.hasSuffix(" s") && !$0.contains("spilled") }.joined(separator: ";")
        }.joined(separator: "\n")
    }

    @Test("every input format, every policy, files and rejects and reports: the same with 1M as in memory", .needsPython3,
          arguments: ["json", "jsonl", "csv", "tsv", "xml", "yaml", "sqlite"])
    func sameOutput(format: String) throws {
        guard FileManager.default.isExecutableFile(atPath: AccountingTests.tripgen) else {
            Issue.record("tripgen is not built beside tripconv at \(AccountingTests.tripgen)")
            return
        }
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let spillDir = tmp.appendingPathComponent("spill")
        try FileManager.default.createDirectory(at: spillDir, withIntermediateDirectories: true)
        let input = tmp.appendingPathComponent("in.\(format)").path
        let gen = try CLI.run(AccountingTests.tripgen, ["--trips", "2500", "--version", "1.0.0", "--duplicates", "0.3",
                                                        "--nasty", "0.2", "--seed", "7", "-o", input])
        try #require(gen.status == 0, "\(gen.stderr)")
        _ = try AccountingTests.inject(3, into: input, format: format)
        for policy in ["merge", "last", "first", "fail"] {
            for out in ["jsonl", "csv"] {
                var results: [(status: Int32, output: Data?, rejects: Data?, report: String, line: String)] = []
                for limit in [nil, "1M"] {
                    let o = tmp.appendingPathComponent("out.\(out)").path
                    let rejects = tmp.appendingPathComponent("rejects.jsonl").path
                    let report = tmp.appendingPathComponent("report.json").path
                    var args = [input, "-o", o, "--dedupe", policy, "--rejects", rejects, "--report", report,
                                "--temp-dir", spillDir.path]
                    if let limit { args += ["--memory-limit", limit] }
                    let r = try CLI.run(CLI.binary, args)
                    if limit != nil, r.status == 0 { #expect(r.stderr.contains("to temporary files"), "\(r.stderr)") }
                    results.append((r.status, FileManager.default.contents(atPath: o), FileManager.default.contents(atPath: rejects),
                                    try Self.steady(report), Self.steadyLine(r.stderr)))
                    for f in [o, rejects, report] { try? FileManager.default.removeItem(atPath: f) }
                    // Spill files have no names: nothing is ever left in the directory.
                    #expect(try FileManager.default.contentsOfDirectory(atPath: spillDir.path).isEmpty)
                }
                let (a, b) = (results[0], results[1])
                let what = "\(format) -> \(out), \(policy)"
                #expect(a.status == b.status, "\(what)")
                #expect(a.output == b.output, "\(what): outputs differ")
                #expect(a.rejects == b.rejects, "\(what): rejects differ")
                #expect(a.report == b.report, "\(what): reports differ")
                #expect(a.line == b.line, "\(what): \(a.line) / \(b.line)")
                if policy != "fail" { #expect(a.status == 0 && a.output != nil, "\(what)") }
            }
        }
    }

    @Test("standard input spills too")
    func standardInput() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = tmp.appendingPathComponent("in.jsonl").path
        #expect(try CLI.run(AccountingTests.tripgen, ["--trips", "3000", "--duplicates", "0.2", "--to", "jsonl", "-o", input]).status == 0)
        let data = try #require(FileManager.default.contents(atPath: input))
        let memory = try CLI.tripconv("--from", "jsonl", "--to", "jsonl", "-q", stdin: data)
        let spilled = try CLI.tripconv("--from", "jsonl", "--to", "jsonl", "--memory-limit", "1M", stdin: data)
        #expect(memory.status == 0 && spilled.status == 0)
        #expect(memory.stdout == spilled.stdout && !memory.stdout.isEmpty)
        #expect(spilled.stderr.contains("to temporary files"))
    }

    @Test("-v says when the run starts to spill, and where to; without -v only the summary does")
    func verboseSaysSo() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = tmp.appendingPathComponent("in.jsonl").path
        #expect(try CLI.run(AccountingTests.tripgen, ["--trips", "3000", "--duplicates", "0.2", "--to", "jsonl", "-o", input]).status == 0)
        let line = "tripconv: the trips held passed half of --memory-limit 1 MiB; going on with temporary files in \(tmp.path)\n"
        let verbose = try CLI.run(CLI.binary, [input, "-o", tmp.appendingPathComponent("a.jsonl").path, "--memory-limit", "1M",
                                               "--temp-dir", tmp.path, "-v"])
        #expect(verbose.status == 0 && verbose.stderr.hasPrefix(line), "\(verbose.stderr)")
        let plain = try CLI.run(CLI.binary, [input, "-o", tmp.appendingPathComponent("b.jsonl").path, "--memory-limit", "1M",
                                             "--temp-dir", tmp.path])
        #expect(plain.status == 0 && !plain.stderr.contains("passed half") && plain.stderr.contains("to temporary files"), "\(plain.stderr)")
        let inMemory = try CLI.run(CLI.binary, [input, "-o", tmp.appendingPathComponent("c.jsonl").path, "-v"])
        #expect(inMemory.status == 0 && !inMemory.stderr.contains("passed half"), "\(inMemory.stderr)")
    }

    @Test("migrate and its dry run with --memory-limit 1M: the same store, ledger and preview as in memory", arguments: ["merge", "last", "first"])
    func migrateSpills(policy: String) throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let original = tmp.appendingPathComponent("v1.sqlite").path
        let gen = try CLI.run(AccountingTests.tripgen, ["--trips", "6000", "--version", "1.0.0", "--duplicates", "0.3", "--seed", "5",
                                                        "--to", "sqlite", "-o", original])
        try #require(gen.status == 0, "\(gen.stderr)")
        var stores: [String] = [], previews: [String] = [], ledgers: [Data?] = [], lines: [String] = []
        for (i, limit) in [nil, "1M"].enumerated() {
            let store = tmp.appendingPathComponent("s\(i).sqlite").path, rejects = tmp.appendingPathComponent("r\(i).jsonl").path
            try FileManager.default.copyItem(atPath: original, toPath: store)
            let memory = limit.map { ["--memory-limit", $0, "--temp-dir", tmp.path] } ?? []
            let preview = try CLI.run(CLI.binary, ["migrate", "s\(i).sqlite", "--dry-run", "-v", "--dedupe", policy] + memory, directory: tmp)
            let run = try CLI.run(CLI.binary, ["migrate", "s\(i).sqlite", "--no-backup", "--dedupe", policy, "--rejects", rejects] + memory,
                                  directory: tmp)
            #expect(preview.status == 0 && run.status == 0, "\(preview.stderr) \(run.stderr)")
            #expect(run.stderr.contains("to temporary files") == (limit != nil), "\(run.stderr)")
            previews.append(preview.out.replacingOccurrences(of: "s\(i).sqlite", with: "STORE"))
            ledgers.append(FileManager.default.contents(atPath: rejects).map { Data(String(decoding: $0, as: UTF8.self)
                .replacingOccurrences(of: "s\(i).sqlite", with: "STORE").utf8) })
            lines.append(Self.steadyLine(run.stderr).replacingOccurrences(of: "s\(i).sqlite", with: "STORE"))
            stores.append(try CLI.run(CLI.binary, [store, "--to", "jsonl", "-q"]).out)
        }
        #expect(stores[0] == stores[1] && !stores[0].isEmpty)
        #expect(previews[0] == previews[1] && previews[0].contains("shared by several trips:"))
        #expect(ledgers[0] == ledgers[1] && ledgers[0] != nil)
        #expect(lines[0] == lines[1], "\(lines)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).sorted() == ["r0.jsonl", "r1.jsonl", "s0.sqlite", "s1.sqlite", "v1.sqlite"])
    }

    @Test("a full temporary disk is exit 74 naming the directory, and the output is absent")
    func fullDisk() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = tmp.appendingPathComponent("in.json").path
        #expect(try CLI.run(AccountingTests.tripgen, ["--trips", "20000", "--duplicates", "0.1", "-o", input]).status == 0)
        let out = tmp.appendingPathComponent("out.jsonl").path
        // No file may grow past 256 KiB (the spill file hits it first; pipes are not limited), and the
        // signal that limit sends is ignored, so the write fails with EFBIG as a full disk fails with ENOSPC.
        let r = try CLI.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 256; exec \"$0\" \"$@\"", CLI.binary,
                                        input, "-o", out, "--memory-limit", "1M", "--temp-dir", tmp.path])
        #expect(r.status == 74, "\(r.status): \(r.stderr)")
        #expect(r.stderr.contains("\(tmp.path): cannot write temporary data"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["in.json"])
    }

    @Test("SIGTERM while spilling leaves no output and no temporary file")
    func terminated() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = tmp.appendingPathComponent("in.json").path
        #expect(try CLI.run(AccountingTests.tripgen, ["--trips", "200000", "--duplicates", "0.1", "-o", input]).status == 0)
        let out = tmp.appendingPathComponent("out.jsonl").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = [input, "-o", out, "--memory-limit", "1M", "--temp-dir", tmp.path, "-q"]
        try process.run()
        Thread.sleep(forTimeInterval: 0.5)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal || process.terminationStatus != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["in.json"])
    }

    @Test("bad --memory-limit and --temp-dir are usage errors (exit 64)")
    func usage() throws {
        let sample = CLI.root.appendingPathComponent("samples/json-v3.json").path
        for args in [["--memory-limit", "12Q"], ["--memory-limit", "512K"], ["--temp-dir", "/no/such/dir"]] {
            let r = try CLI.run(CLI.binary, [sample, "--to", "jsonl"] + args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
    }
}
