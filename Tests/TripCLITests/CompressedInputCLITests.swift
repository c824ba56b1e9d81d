import Foundation
import Testing
import TripTestSupport

/// Compressed inputs on the command line (issue 17): standard input through a pipe, a directory
/// holding compressed files among plain ones, and a damaged file, made by gzip(1) and Python.
@Suite("compressed inputs on the command line")
struct CompressedInputCLITests {
    @Test("gzip on standard input, told by its bytes; a directory's .gz files read among the plain ones")
    func stdinAndDirectory() throws {
        let dir = try CLI.temporaryDirectory()
        let plain = try CLI.tripconv("samples/trips-v3.jsonl", "--to", "csv")
        #expect(plain.status == 0, "\(plain.stderr)")
        let gz = try CLI.run(CLI.tool("gzip") ?? "/usr/bin/gzip", ["-c", "samples/trips-v3.jsonl"])
        #expect(gz.status == 0 && !gz.stdout.isEmpty)
        var r = try CLI.tripconv("--from", "jsonl", "--to", "csv", stdin: gz.stdout)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == plain.out)

        // A directory: trips-v1.json plain, trips-v3.jsonl gzipped; the same trips as both plain.
        let inputs = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "samples/trips-v1.json", toPath: inputs.appendingPathComponent("a.json").path)
        try gz.stdout.write(to: inputs.appendingPathComponent("b.jsonl.gz"))
        let both = try CLI.tripconv("samples/trips-v1.json", "samples/trips-v3.jsonl", "--to", "csv")
        r = try CLI.tripconv(inputs.path, "--to", "csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == both.out && both.status == 0)
        #expect(r.stderr.contains("read") || r.stderr.isEmpty)
    }

    @Test("a damaged gzip input is exit 65 naming the file and the byte; nothing is written", .needsPython3)
    func damaged() throws {
        let dir = try CLI.temporaryDirectory()
        let bad = dir.appendingPathComponent("bad.jsonl.gz").path
        let make = try CLI.run(try ExternalTool.program("python3"), ["-c", """
            import sys, gzip
            g = bytearray(gzip.compress(open('samples/trips-v3.jsonl', 'rb').read())); g[-7] ^= 0x55
            open(sys.argv[1], 'wb').write(bytes(g))
            """, bad])
        #expect(make.status == 0, "\(make.stderr)")
        let out = dir.appendingPathComponent("out.csv").path
        let r = try CLI.tripconv(bad, "-o", out)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("\(bad): gzip data is corrupt at byte "), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("--compress compresses standard output; a file is compressed by its name; a store or a tables directory is not", .needsPython3)
    func outputs() throws {
        let dir = try CLI.temporaryDirectory()
        let plain = try CLI.tripconv("samples/trips-v3.json", "-q")
        var r = try CLI.tripconv("samples/trips-v3.json", "-q", "--compress", "gzip")
        #expect(r.status == 0, "\(r.stderr)")
        let gunzip = try CLI.run(CLI.tool("gzip") ?? "/usr/bin/gzip", ["-dc"], stdin: r.stdout)
        #expect(gunzip.status == 0 && gunzip.out == plain.out)
        let named = dir.appendingPathComponent("out.jsonl.xz").path
        r = try CLI.tripconv("samples/trips-v3.json", "-q", "-o", named)
        #expect(r.status == 0, "\(r.stderr)")
        let unxz = try CLI.run(try ExternalTool.program("python3"),
                               ["-c", "import sys, lzma; sys.stdout.write(lzma.decompress(open(sys.argv[1], 'rb').read()).decode())", named])
        #expect(unxz.out == plain.out)
        for (args, message) in [(["-o", dir.appendingPathComponent("x.json").path, "--compress", "zstd"], "--compress is for standard output"),
                                (["-o", dir.appendingPathComponent("x.sqlite.gz").path], "a store is written in place, not compressed"),
                                (["-o", dir.appendingPathComponent("t.csv.gz").path, "--csv-layout", "tables"], "not compressed")] {
            r = try CLI.run(CLI.binary, ["samples/trips-v3.json"] + args)
            #expect(r.status == 64 && r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out.jsonl.xz"])
    }

    @Test("detect says each input's compression, in its line and in --json (null for plain bytes), from a file or a pipe", .needsPython3)
    func detectSaysCompression() throws {
        let dir = try CLI.temporaryDirectory()
        let xz = dir.appendingPathComponent("t.csv.xz").path
        #expect(try CLI.tripconv("samples/trips-v3.csv", "-q", "-o", xz).status == 0)
        var r = try CLI.tripconv("detect", xz, "samples/trips-v3.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == "\(xz): csv 3.0.0 (fields startDate, endDate), xz-compressed, 2 trips, 0 names repeated\n"
                + "samples/trips-v3.csv: csv 3.0.0 (fields startDate, endDate), 2 trips, 0 names repeated\n", "\(r.out)")
        let gz = try CLI.run(CLI.tool("gzip") ?? "/usr/bin/gzip", ["-c", "samples/trips-v1.yaml"])
        r = try CLI.tripconv("detect", "--json", "--from", "yaml", stdin: gz.stdout)
        let check = try CLI.run(try ExternalTool.program("python3"),
                                ["-c", "import json,sys\nd=json.load(sys.stdin)[0]\nprint(d['compression'], d['format'], d['trips'])"], stdin: r.stdout)
        #expect(check.out == "gzip yaml 5\n", "\(r.out) \(r.stderr)")
        r = try CLI.tripconv("detect", "--json", "samples/trips-v3.csv")
        #expect(r.out.contains("\"compression\": null"), "\(r.out)")
    }
}
