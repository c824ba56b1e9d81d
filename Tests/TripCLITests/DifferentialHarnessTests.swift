import Foundation
import Testing
import TripTestSupport

/// The differential harness (`.ci/differential/run`, issue 13) in small: every writer users have
/// (Python's csv module in each quoting mode, delimiter, line end and encoding, Miller, ElementTree,
/// lxml, xmlstarlet, PyYAML, ruamel.yaml, jq) writes 30 seeded trip sets that tripconv must read to
/// exactly the trips written, and what tripconv writes in each format must read back in those tools.
/// CI runs the harness in full (2,000 sets per writer); this keeps it from rotting under `swift test`.
@Suite("Differential harness")
struct DifferentialHarnessTests {
    @Test("30 trip sets per writer and reader: every file reads back to exactly the trips written", .needsPython3)
    func smallRun() throws {
        let python = try #require(CLI.tool("python3"))
        let script = CLI.root.appendingPathComponent(".ci/differential/run").path
        let r = try CLI.run(python, [script, "--sets", "30", "--tripconv", CLI.binary, "--shrink-budget", "40"])
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // What to show when it fails: each failure, its shrunk trip and the summary, not every set.
        let report = lines.filter {
            $0.hasPrefix("FAIL") || $0.hasPrefix("  smallest") || $0.hasPrefix("    {") || $0.hasPrefix("  written")
                || $0.hasPrefix("  reproduce") || $0.hasPrefix("skip") || $0.contains(" passed, ")
        }.joined(separator: "\n")
        // The last line is the total, alone: "N passed, N failed".
        let last = lines.last { !$0.isEmpty } ?? ""
        let counts = last.split(separator: " ")
        #expect(counts.count == 4 && counts[1] == "passed," && counts[3] == "failed", "last line: \(last)\n\(r.stderr)")
        let passed = counts.count == 4 ? Int(counts[0]) ?? 0 : 0
        #expect(passed >= 30, "no set passed: the harness ran nothing\n\(report)\n\(r.stderr)")
        #expect(r.status == 0, "the harness failed (exit \(r.status)):\n\(report)\n\(r.stderr)")
        // The cases whose tool or module is missing are passed over inside the one test: say which.
        for line in lines where line.hasPrefix("skip: ") { print("differential harness: \(line)") }
    }
}
