import Foundation
import Testing
import TripTestSupport

/// `--help`, the man page and the messages say exactly what works (issue 25, item 12).
@Suite("Help, usage errors and the manual")
struct HelpTests {
    /// `tripconv help COMMAND`, its whitespace folded, so that an option's entry reads as one line.
    static func help(_ command: String) throws -> String {
        let r = try CLI.tripconv("help", command)
        #expect(r.status == 0)
        return r.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// An option's entry in folded help: from its name to the next option's.
    static func entry(_ option: String, in help: String) -> String {
        guard let start = help.range(of: option) else { return "" }
        let rest = help[start.upperBound...]
        let end = rest.range(of: #" (-[a-z], )?--[a-z-]+ "#, options: .regularExpression)?.lowerBound ?? rest.endIndex
        return String(help[start.lowerBound..<end])
    }

    @Test("ArgumentParser's usage errors start 'tripconv: ' as every other message does, and exit 64")
    func usageErrors() throws {
        let cases: [[String]] = [
            ["--bogus"],
            ["samples/trips-v3.json", "--target-version", "4.0.0"],
            ["migrate"],
            ["migrate", "x.sqlite", "--backup", "b", "--no-backup"],
            ["detect", "--jobs", "2"],
        ]
        for arguments in cases {
            let r = try CLI.run(CLI.binary, arguments)
            #expect(r.status == 64, "\(arguments)")
            #expect(r.stderr.hasPrefix("tripconv: "), "\(arguments): \(r.stderr)")
            #expect(!r.stderr.contains("Error:"), "\(arguments): \(r.stderr)")
            #expect(r.out.isEmpty)
        }
        // Help, the version and completion scripts still go to standard output, with status 0.
        for arguments in [["--help"], ["help", "migrate"], ["--version"], ["--generate-completion-script", "bash"]] {
            let r = try CLI.run(CLI.binary, arguments)
            #expect(r.status == 0, "\(arguments)")
            #expect(!r.out.isEmpty && r.stderr.isEmpty, "\(arguments)")
        }
    }

    @Test("--to neither lists nor completes coredata, which it refuses (64); --from's values are given once")
    func formatValues() throws {
        let convert = try Self.help("convert")
        let to = Self.entry("--to <format>", in: convert)
        #expect(to.contains("postgresql"), "\(to)")
        #expect(!to.contains("coredata"), "\(to)")
        let from = Self.entry("--from <format>", in: convert)
        #expect(from.contains("coredata"), "\(from)")
        #expect(from.components(separatedBy: "jsonl").count == 2, "the values of --from printed more than once: \(from)")
        let bash = try CLI.tripconv("--generate-completion-script", "bash").out
        #expect(bash.contains("'sqlite'$'\\n''postgresql'\n"), "--to's completions end with postgresql")
        let refused = try CLI.tripconv("samples/trips-v3.json", "--to", "coredata", "-o", try CLI.temporaryDirectory().appendingPathComponent("new.store").path)
        #expect(refused.status == 64)
        #expect(refused.stderr.hasPrefix("tripconv: tripconv reads Core Data stores but never writes them"), "\(refused.stderr)")
    }

    @Test("--jobs shows one default")
    func jobsDefault() throws {
        let jobs = Self.entry("--jobs <n>", in: try Self.help("convert"))
        #expect(jobs.contains("the number of cores"), "\(jobs)")
        #expect(jobs.components(separatedBy: "default").count == 2, "\(jobs)")
    }

    @Test("the exit-status line of --help lists the statuses the man page lists")
    func exitStatuses() throws {
        let man = try String(contentsOf: CLI.root.appendingPathComponent("man/tripconv.1"), encoding: .utf8)
        let section = man.components(separatedBy: ".Sh EXIT STATUS")[1].components(separatedBy: ".Sh ")[0]
        let listed = section.split(separator: "\n").filter { $0.hasPrefix(".It ") }.map { String($0.dropFirst(4)) }
        #expect(listed.contains("69") && listed.contains("77"))
        let help = try CLI.tripconv("--help").out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard let line = help.range(of: #"Exit status: [^.]*\."#, options: .regularExpression).map({ String(help[$0]) }) else {
            Issue.record("no exit-status line in --help")
            return
        }
        let given = line.matches(of: #/(\d+) /#).map { String($0.1) }
        #expect(given == listed, "--help: \(line)")
    }

    @Test("-o NAME and --to must agree; a compressed name's inner extension counts; --output-dir takes --to", .needsPython3)
    func outputNameAndTo() throws {
        let tmp = try CLI.temporaryDirectory()
        for (name, to) in [("x.csv", "json"), ("x.tsv", "csv"), ("x.jsonl.gz", "json"), ("x.sqlite", "jsonl")] {
            let out = tmp.appendingPathComponent(name).path
            let r = try CLI.tripconv("samples/trips-v1.json", "-o", out, "--to", to)
            #expect(r.status == 64, "\(name) --to \(to)")
            #expect(r.stderr.hasPrefix("tripconv: \(out): the name says "), "\(r.stderr)")
            #expect(r.stderr.contains("but --to says \(to)"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        let gz = tmp.appendingPathComponent("x.json.gz").path
        #expect(try CLI.tripconv("samples/trips-v1.json", "-o", gz, "--to", "json", "-q").status == 0)
        let read = try CLI.python("import gzip, json, sys; print(len(json.load(gzip.open(sys.argv[1]))['trips']))", [gz])
        #expect(read.out == "3\n", "\(read.stderr)")
        let dir = tmp.appendingPathComponent("out").path
        #expect(try CLI.tripconv("samples/trips-v1.json", "--output-dir", dir, "--to", "json", "-q").status == 0)
        #expect(FileManager.default.fileExists(atPath: dir + "/trips-v1.json"))
    }

    @Test("--report's seconds and elapsedSeconds are numbers", .needsPython3)
    func reportSeconds() throws {
        let tmp = try CLI.temporaryDirectory()
        let report = tmp.appendingPathComponent("r.json").path, bulk = tmp.appendingPathComponent("b.json").path
        #expect(try CLI.tripconv("samples/trips-v1.json", "-o", tmp.appendingPathComponent("t.json").path, "--report", report).status == 0)
        #expect(try CLI.tripconv("samples/trips-v1.json", "samples/trips-v2.csv", "--output-dir", tmp.appendingPathComponent("d").path,
                                 "--report", bulk).status == 0)
        let check = try CLI.python("""
            import json, sys
            r, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
            number = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0
            print(number(r['elapsedSeconds']), number(b['elapsedSeconds']), [number(i['seconds']) for i in b['perInput']])
            """, [report, bulk])
        #expect(check.out == "True True [True, True]\n", "\(check.out)\(check.stderr)")
    }

    @Test("--quiet and --verbose are -q and -v")
    func longForms() throws {
        let tmp = try CLI.temporaryDirectory()
        let quiet = try CLI.tripconv("samples/trips-v1.json", "-o", tmp.appendingPathComponent("q.json").path, "--quiet")
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        let verbose = try CLI.tripconv("samples/trips-v1.json", "-o", tmp.appendingPathComponent("v.json").path, "--verbose")
        #expect(verbose.status == 0)
        #expect(verbose.stderr.contains("tripconv: samples/trips-v1.json: json 1.0.0 by "), "\(verbose.stderr)")
        #expect(try CLI.tripconv("detect", "samples/trips-v1.json", "--verbose").status == 0)
        let store = tmp.appendingPathComponent("s.sqlite").path
        try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("samples/trips-v1.sqlite").path, toPath: store)
        let migrate = try CLI.tripconv("migrate", store, "--quiet", "--no-backup")
        #expect(migrate.status == 0 && migrate.stderr.isEmpty, "\(migrate.stderr)")
    }

    @Test("the manual renders no word as an option and no two examples as one paragraph",
          .enabled(if: CLI.tool("mandoc") != nil, "mandoc renders the manual"))
    func manualRendering() throws {
        let r = try CLI.run(CLI.tool("mandoc")!, ["-Tutf8", "man/tripconv.1"])
        #expect(r.status == 0)
        // Bold and underline are overstrikes (x BS x, _ BS x) on a pipe.
        let text = r.out.replacingOccurrences(of: ".\u{8}", with: "", options: .regularExpression)
        var known: Set<String> = ["-h", "--help", "--version"]
        for command in ["convert", "detect", "schema", "migrate"] {
            for m in try CLI.tripconv("help", command).out.matches(of: /(?:^|[^\w-])(--[a-z][a-z-]*|-[a-z])/) { known.insert(String(m.1)) }
        }
        // Other programs' options in the examples (swift package's --target), and SQLite's -wal file.
        known.formUnion(["-P", "-n", "-y", "-wal", "--target"])
        let rendered = Set(text.matches(of: /(?:^|[^\w-])(-{1,2}[a-z][a-z-]*)/).map { String($0.1) })
        #expect(rendered.subtracting(known).isEmpty, "rendered as options: \(rendered.subtracting(known).sorted())")
        // Every example's sentence starts a paragraph of its own, after a blank line.
        let lines = text.components(separatedBy: "\n")
        guard let examples = lines.firstIndex(of: "EXAMPLES"), let end = lines.firstIndex(of: "SEE ALSO") else {
            Issue.record("no EXAMPLES section")
            return
        }
        for i in (examples + 2)..<end where lines[i].hasPrefix("     ") && !lines[i].hasPrefix("      ") && !lines[i].hasPrefix("\t") {
            // A sentence line (indented five) right after an example line (indented more) ran on.
            let before = lines[i - 1]
            #expect(!(before.hasPrefix("\t") || before.hasPrefix("      ")), "runs on from the example before: \(lines[i])")
        }
    }

    @Test("after a spill the progress bar gives the summary's MiB spilled, and says what the run does after reading",
          .enabled(if: CLI.tool("script") != nil, "the script tool (util-linux) gives a pseudo-terminal"))
    func progressAfterSpill() throws {
        let tmp = try CLI.temporaryDirectory()
        let input = tmp.appendingPathComponent("big.jsonl").path, out = tmp.appendingPathComponent("out.jsonl").path
        #expect(try CLI.run(AccountingTests.tripgen, ["--trips", "20000", "--duplicates", "0.3", "--to", "jsonl", "-o", input]).status == 0)
        let tty = try CLI.run(CLI.tool("script")!, ["-qec", "\(CLI.binary) \(input) -o \(out) --memory-limit 1M", "/dev/null"])
        #expect(tty.status == 0, "\(tty.out)")
        let frames = tty.out.replacingOccurrences(of: "\u{1B}[K", with: "").components(separatedBy: "\r")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let bars = frames.filter { $0.contains(" trips") && !$0.hasPrefix("tripconv:") }
        #expect(!bars.isEmpty, "no progress bar: \(tty.out)")
        #expect(bars.allSatisfy { !$0.contains(" MB") }, "a figure not in MiB: \(bars.first { $0.contains(" MB") } ?? "")")
        guard let summary = frames.first(where: { $0.contains("tripconv: read 20000 trips") }),
              let spilled = summary.firstMatch(of: /spilled \d+ trips \((\d+) MiB\) to temporary files/) else {
            Issue.record("no summary that says the run spilled: \(tty.out)")
            return
        }
        let figures = bars.compactMap { $0.firstMatch(of: /spilled (\d+) MiB/).flatMap { Int($0.1) } }
        #expect(figures.max() == Int(spilled.1), "the bar spilled \(figures.max() ?? 0) MiB, the summary \(spilled.1) MiB")
        #expect(bars.contains { $0.hasSuffix("  writing") }, "no phase while writing: \(bars.suffix(3))")
    }
}
