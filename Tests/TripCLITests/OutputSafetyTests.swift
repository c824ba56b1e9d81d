import Foundation
import Testing
import TripTestSupport

/// Outputs are complete or absent: interrupted, killed, or out of space, a run never leaves a partial
/// file, and a file it could not finish is cleaned up by the next run.
@Suite("Outputs complete or absent")
struct OutputSafetyTests {
    /// Starts tripconv reading standard input from a pipe that stays open, so the run is under way
    /// (its output's temporary file made) until the test says.
    static func startBlocked(_ arguments: [String]) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = arguments
        p.currentDirectoryURL = CLI.root
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let line = try Data(contentsOf: CLI.root.appendingPathComponent("samples/trips-v2.jsonl"))
        try input.fileHandleForWriting.write(contentsOf: line)
        return (p, input)
    }

    static func temporaries(in dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".tripconv-") }
    }

    static func waitForTemporary(in dir: URL) throws {
        for _ in 0..<200 where try temporaries(in: dir).isEmpty { usleep(10_000) }
    }

    @Test("SIGTERM and SIGINT remove the temporary file and leave the old output as it was", arguments: [SIGTERM, SIGINT])
    func interrupted(signal: Int32) throws {
        let tmp = try CLI.temporaryDirectory()
        let out = tmp.appendingPathComponent("out.json")
        try "old\n".write(to: out, atomically: true, encoding: .utf8)
        let (p, input) = try Self.startBlocked(["--from", "jsonl", "-o", out.path])
        try Self.waitForTemporary(in: tmp)
        #expect(try Self.temporaries(in: tmp).count == 1)
        kill(p.processIdentifier, signal)
        p.waitUntilExit()
        try? input.fileHandleForWriting.close()
        #expect(p.terminationReason == .uncaughtSignal)
        #expect(try Self.temporaries(in: tmp).isEmpty)
        #expect(try String(contentsOf: out, encoding: .utf8) == "old\n")
    }

    @Test("after SIGKILL the old output stands, and the next run removes the dead run's temporary file")
    func killed() throws {
        let tmp = try CLI.temporaryDirectory()
        let out = tmp.appendingPathComponent("out.jsonl")
        try "old\n".write(to: out, atomically: true, encoding: .utf8)
        let (p, input) = try Self.startBlocked(["--from", "jsonl", "-o", out.path])
        try Self.waitForTemporary(in: tmp)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        try? input.fileHandleForWriting.close()
        #expect(try Self.temporaries(in: tmp).count == 1, "SIGKILL cannot be caught: the file stays until the next run")
        #expect(try String(contentsOf: out, encoding: .utf8) == "old\n")
        let next = try CLI.tripconv("samples/trips-v2.jsonl", "-o", out.path, "-q")
        #expect(next.status == 0)
        #expect(try Self.temporaries(in: tmp).isEmpty)
        #expect(try String(contentsOf: out, encoding: .utf8).split(separator: "\n").count == 3)
    }

    @Test("a full disk is an I/O error with a message, and nothing is left",
          .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full, which this system has not"), arguments: [true, false])
    func fullDisk(viaOption: Bool) throws {
        let r = viaOption
            ? try CLI.tripconv("samples/trips-v1.json", "-o", "/dev/full", "--to", "jsonl")
            : try CLI.run("/bin/sh", ["-c", "\(CLI.binary) samples/trips-v1.json > /dev/full"])
        #expect(r.status == 74)
        #expect(r.stderr.contains("No space left on device"))
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test("a closed pipe ends the run quietly with the conventional status")
    func closedPipe() throws {
        let r = try CLI.run("/bin/sh", ["-c", "\(CLI.binary) samples/trips-v1.json samples/trips-v2.jsonl samples/trips-v3.json --target-version 1.0.0 | head -c 1 >/dev/null; echo status ${PIPESTATUS:-done}"])
        #expect(r.status == 0)
        #expect(!r.stderr.contains("Fatal error"))
        #expect(!r.stderr.contains("write error"))
    }

    @Test("--report writes the accounting, and read = written + merged + dropped + rejected", .needsPython3)
    func report() throws {
        let tmp = try CLI.temporaryDirectory()
        let report = tmp.appendingPathComponent("report.json").path
        let r = try CLI.tripconv("samples/trips-v1.json", "samples/bad-records.jsonl", "samples/trips-v3.csv",
                                 "--rejects", tmp.appendingPathComponent("rejects.jsonl").path, "--report", report, "-q")
        #expect(r.status == 0, "\(r.stderr)")
        let check = try CLI.python("""
            import json,sys
            r=json.load(open(sys.argv[1]))
            assert r['status']=='ok'
            assert r['read']==r['written']+r['merged']+r['dropped']+r['rejected'], r
            assert r['read']==sum(i['read'] for i in r['inputs'])
            print(r['read'], r['written'], r['merged'], r['rejected'], [i['format'] for i in r['inputs']], [s['stage'] for s in r['stages']])
            """, [report])
        #expect(check.out == "12 7 2 3 ['json', 'jsonl', 'csv'] ['1.0.0 -> 2.0.0 (custom)', '2.0.0 -> 3.0.0 (lightweight)']\n", "\(check.stderr)")

        let failed = try CLI.tripconv("samples/broken.json", "--report", report)
        #expect(failed.status == 65)
        let status = try CLI.python("import json,sys\nr=json.load(open(sys.argv[1]))\nprint(r['status'], r['exitStatus'])", [report])
        #expect(status.out == "failed 65\n")
    }
}

@Suite("Outputs under SIGKILL at random moments")
struct RandomKillTests {
    @Test("killed at any moment, the target is the old file or the complete new one")
    func randomKills() throws {
        let tripgen = AccountingTests.tripgen
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = tmp.appendingPathComponent("in.jsonl").path
        #expect(try CLI.run(tripgen, ["--trips", "20000", "--seed", "7", "-o", input]).status == 0)
        let out = tmp.appendingPathComponent("out.json")
        // The complete output, once, to know it when we see it.
        let full = try CLI.tripconv(input, "-o", out.path, "-q")
        try #require(full.status == 0)
        let complete = try Data(contentsOf: out)
        try Data("old\n".utf8).write(to: out)
        let started = Date()
        _ = try CLI.tripconv(input, "-o", tmp.appendingPathComponent("timing.json").path, "-q")
        let duration = Date().timeIntervalSince(started)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<12 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CLI.binary)
            p.arguments = [input, "-o", out.path, "-q"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(Double.random(in: 0...(duration * 1.1), using: &rng) * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let now = try Data(contentsOf: out)
            #expect(now == complete || now == Data("old\n".utf8), "a partial output after a kill")
            try Data("old\n".utf8).write(to: out)
        }
        // Whatever the kills left behind, the next run clears it.
        #expect(try CLI.tripconv(input, "-o", out.path, "-q").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).filter { $0.contains(".tripconv-") }.isEmpty)
        #expect(try Data(contentsOf: out) == complete)
    }
}
