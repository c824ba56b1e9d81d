import Foundation
import Testing
import TripTestSupport

/// `detect --memory-limit`: names that do not fit are counted in temporary files, and `detect`
/// prints what it prints in memory.
@Suite("detect under a memory limit")
struct DetectSpillCLITests {
    /// An input of `trips` trips, a third of their names repeated, made by tripgen in `directory`.
    static func input(_ directory: URL, trips: Int, format: String = "jsonl") throws -> String {
        try #require(FileManager.default.isExecutableFile(atPath: AccountingTests.tripgen),
                     "tripgen is not built beside tripconv at \(AccountingTests.tripgen)")
        let path = directory.appendingPathComponent("in.\(format)").path
        let gen = try CLI.run(AccountingTests.tripgen, ["--trips", "\(trips)", "--duplicates", "0.3", "--nasty", "0.2",
                                                        "--seed", "11", "-o", path])
        try #require(gen.status == 0, "\(gen.stderr)")
        return path
    }

    @Test("the same lines and JSON with 1M as in memory; -v says the names went to temporary files",
          arguments: ["jsonl", "csv"])
    func sameOutput(format: String) throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let spillDir = tmp.appendingPathComponent("spill")
        try FileManager.default.createDirectory(at: spillDir, withIntermediateDirectories: true)
        let input = try Self.input(tmp, trips: 20_000, format: format)
        let sample = CLI.root.appendingPathComponent("samples/trips-v1.json").path
        for json in [[], ["--json"]] {
            let memory = try CLI.run(CLI.binary, ["detect", "-v", input, sample] + json)
            let spilled = try CLI.run(CLI.binary, ["detect", "-v", input, sample, "--memory-limit", "1M", "--temp-dir", spillDir.path] + json)
            #expect(memory.status == 0 && spilled.status == 0, "\(memory.stderr) \(spilled.stderr)")
            #expect(memory.stdout == spilled.stdout && memory.out.contains("names repeated") == json.isEmpty)
            #expect(!memory.out.contains(" 0 names repeated"), "\(memory.out)")
            // Only the spilled run says so, and only of the input that did not fit.
            #expect(memory.stderr.isEmpty, "\(memory.stderr)")
            #expect(spilled.stderr.hasPrefix("tripconv: \(input): spilled ") && spilled.stderr.hasSuffix(" MiB) to temporary files\n"),
                    "\(spilled.stderr)")
            #expect(spilled.stderr.split(separator: "\n").count == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: spillDir.path).isEmpty)
        }
    }

    @Test("standard input too")
    func standardInput() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let data = try #require(FileManager.default.contents(atPath: try Self.input(tmp, trips: 20_000)))
        let memory = try CLI.run(CLI.binary, ["detect", "--from", "jsonl"], stdin: data)
        let spilled = try CLI.run(CLI.binary, ["detect", "--from", "jsonl", "-v", "--memory-limit", "1M"], stdin: data)
        #expect(memory.status == 0 && spilled.status == 0)
        #expect(memory.stdout == spilled.stdout && memory.out.contains("20000 trips"))
        #expect(spilled.stderr.contains("to temporary files"), "\(spilled.stderr)")
    }

    @Test("names equal only as Unicode text are two names, as convert keeps them two trips")
    func namesByBytes() throws {
        func line(_ name: String) -> String {
            "{\"name\": \"\(name)\", \"destination\": \"x\", \"startDate\": \"2024-01-01T00:00:00Z\", \"endDate\": \"2024-01-02T00:00:00Z\"}\n"
        }
        let data = Data((line("caf\u{E9}") + line("cafe\u{301}") + line("Oslo") + line("Oslo")).utf8)
        let detect = try CLI.run(CLI.binary, ["detect", "--from", "jsonl"], stdin: data)
        #expect(detect.status == 0 && detect.out.contains("4 trips, 1 name repeated"), "\(detect.out)")
        let convert = try CLI.run(CLI.binary, ["--from", "jsonl", "--to", "jsonl", "-q"], stdin: data)
        #expect(convert.status == 0 && convert.out.split(separator: "\n").count == 3, "\(convert.out)")
    }

    @Test("a full temporary disk is exit 74 naming the directory, and nothing is printed or left")
    func fullDisk() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = try Self.input(tmp, trips: 40_000)
        // As SpillCLITests: no file may grow past 256 KiB, and the signal that sends is ignored.
        let r = try CLI.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 256; exec \"$0\" \"$@\"", CLI.binary,
                                        "detect", input, "--memory-limit", "1M", "--temp-dir", tmp.path])
        #expect(r.status == 74, "\(r.status): \(r.stderr)")
        #expect(r.stderr.contains("\(tmp.path): cannot write temporary data"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["in.jsonl"])
    }

    @Test("bad --memory-limit and --temp-dir are usage errors (exit 64)")
    func usage() throws {
        let sample = CLI.root.appendingPathComponent("samples/json-v3.json").path
        for args in [["--memory-limit", "12Q"], ["--memory-limit", "512K"], ["--temp-dir", "/no/such/dir"]] {
            let r = try CLI.run(CLI.binary, ["detect", sample] + args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
    }
}
