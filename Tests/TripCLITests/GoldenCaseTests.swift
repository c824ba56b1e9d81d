import Foundation
import Testing

/// Golden CLI cases, as Miller keeps them: `Cases/<case>/cmd` is a shell command line run in the
/// package root with the built tripconv first on PATH and `$TMP` a fresh directory; `stdout`,
/// `stderr` and `status` beside it are what it must print and exit with. The elapsed time in the
/// summary line is written `N.NNN s`. `TRIPCONV_UPDATE_GOLDEN=1 swift test` rewrites the
/// expectations, for review in `git diff`.
@Suite("Golden CLI cases")
struct GoldenCaseTests {
    static let casesDirectory = CLI.root.appendingPathComponent("Tests/TripCLITests/Cases")

    static var caseNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: casesDirectory.path)) ?? []).sorted()
    }

    static func normalize(_ text: String) -> String {
        text.replacingOccurrences(of: #"\d+\.\d{3} s"#, with: "N.NNN s", options: .regularExpression)
    }

    @Test("the command prints what the case says and exits with its status", arguments: caseNames)
    func goldenCase(name: String) throws {
        let dir = Self.casesDirectory.appendingPathComponent(name)
        let command = try String(contentsOf: dir.appendingPathComponent("cmd"), encoding: .utf8)
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let result = try CLI.run("/bin/sh", ["-c", command], environment: ["TMP": tmp.path])
        let stderr = Self.normalize(result.stderr.replacingOccurrences(of: tmp.path, with: "$TMP"))
        let stdout = result.out.replacingOccurrences(of: tmp.path, with: "$TMP")
        if ProcessInfo.processInfo.environment["TRIPCONV_UPDATE_GOLDEN"] == "1" {
            try stdout.write(to: dir.appendingPathComponent("stdout"), atomically: true, encoding: .utf8)
            try stderr.write(to: dir.appendingPathComponent("stderr"), atomically: true, encoding: .utf8)
            try "\(result.status)\n".write(to: dir.appendingPathComponent("status"), atomically: true, encoding: .utf8)
            return
        }
        let expectedStdout = try String(contentsOf: dir.appendingPathComponent("stdout"), encoding: .utf8)
        let expectedStderr = try String(contentsOf: dir.appendingPathComponent("stderr"), encoding: .utf8)
        let expectedStatus = try String(contentsOf: dir.appendingPathComponent("status"), encoding: .utf8)
        #expect(stdout == expectedStdout, "stdout of \(name)")
        #expect(stderr == expectedStderr, "stderr of \(name)")
        #expect("\(result.status)\n" == expectedStatus, "status of \(name)")
    }
}
