import Foundation
import Testing

/// What a run is given and where it writes (issue 25, items 3, 4, 5 and 9): a run with nothing to
/// read fails and writes nothing; --output-dir keeps a directory's tree; every output path is
/// checked before any input is read; an input of no bytes is an input with no trips, in every format.
@Suite("inputs and outputs: nothing to read, directory trees, outputs checked first, empty inputs")
struct InputsOutputsCLITests {
    static let fm = FileManager.default

    /// Writes `text` to `path`, making its directories.
    static func write(_ text: String, _ path: String) throws {
        try fm.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A JSON file read by Foundation's own reader, independent of tripconv's writers.
    static func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
    }

    /// The lines of a JSON Lines file, each read by Foundation's reader.
    static func jsonLines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }

    // MARK: - Item 3: nothing to read

    @Test("a directory with nothing to read says so and fails (66), writing nothing: -o, --output-dir (with --report), detect")
    func directoryWithNothingToRead() throws {
        let tmp = try CLI.temporaryDirectory().path
        let dir = tmp + "/dir"
        try Self.write("notes\n", dir + "/a.txt")
        try Self.write("data\n", dir + "/sub/b.dat")
        let warning = "tripconv: \(dir): no file to read (2 files with no format's extension; --from FORMAT reads every file as FORMAT)\n"
        var r = try CLI.tripconv(dir, "-o", tmp + "/x.json")
        #expect(r.status == 66 && r.stderr.hasPrefix(warning), "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("tripconv: nothing to read in the inputs given; nothing written"), "\(r.stderr)")
        #expect(!Self.fm.fileExists(atPath: tmp + "/x.json"))

        r = try CLI.tripconv(dir, "--to", "json")
        #expect(r.status == 66 && r.out.isEmpty, "\(r.status) \(r.out)")

        r = try CLI.tripconv(dir, "--output-dir", tmp + "/out", "--report", tmp + "/report.json")
        #expect(r.status == 66 && r.stderr.hasPrefix(warning), "\(r.status) \(r.stderr)")
        #expect(!Self.fm.fileExists(atPath: tmp + "/out"), "no output folder for a run that writes nothing")
        let report = try Self.json(tmp + "/report.json")
        #expect(report["status"] as? String == "failed" && report["exitStatus"] as? Int == 66, "\(report)")

        r = try CLI.tripconv("detect", dir)
        #expect(r.status == 66 && r.out.isEmpty && r.stderr.hasPrefix(warning), "\(r.status) \(r.stderr)")

        // An empty directory says so without a count of files passed over.
        try Self.fm.createDirectory(atPath: tmp + "/empty", withIntermediateDirectories: true)
        r = try CLI.tripconv("detect", tmp + "/empty")
        #expect(r.status == 66 && r.stderr.hasPrefix("tripconv: \(tmp)/empty: no file to read\n"), "\(r.stderr)")

        // --from reads what was passed over: then a.txt is a (bad) JSON input, not nothing.
        r = try CLI.tripconv(dir, "--from", "json", "-o", tmp + "/x.json")
        #expect(r.status == 65 && !r.stderr.contains("no file to read"), "\(r.status) \(r.stderr)")
    }

    @Test("a directory with nothing to read among inputs that have trips is said and the run goes on")
    func directoryWithNothingAmongOthers() throws {
        let tmp = try CLI.temporaryDirectory().path
        try Self.write("notes\n", tmp + "/dir/a.txt")
        let r = try CLI.tripconv(tmp + "/dir", "samples/trips-v3.jsonl", "-o", tmp + "/x.json")
        #expect(r.status == 0 && r.stderr.hasPrefix("tripconv: \(tmp)/dir: no file to read (1 file with no format's extension;"),
                "\(r.status) \(r.stderr)")
        #expect((try Self.json(tmp + "/x.json")["trips"] as? [Any])?.count == 2)
    }

    // MARK: - Item 4: --output-dir keeps a directory's tree

    @Test("--output-dir keeps each file's path under the directory given; a file given itself keeps its flat name")
    func outputDirKeepsTree() throws {
        let tmp = try CLI.temporaryDirectory().path
        let sample = try String(contentsOfFile: CLI.root.path + "/samples/trips-v3.jsonl", encoding: .utf8)
        try Self.write(sample, tmp + "/yearly/2019/trips.jsonl")
        try Self.write(sample.split(separator: "\n").prefix(1).joined(separator: "\n") + "\n", tmp + "/yearly/2020/trips.jsonl")
        var r = try CLI.tripconv(tmp + "/yearly/", "--output-dir", tmp + "/out", "--to", "json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect((try Self.json(tmp + "/out/2019/trips.json")["trips"] as? [Any])?.count == 2)
        #expect((try Self.json(tmp + "/out/2020/trips.json")["trips"] as? [Any])?.count == 1)
        #expect(!Self.fm.fileExists(atPath: tmp + "/out/trips.json"))

        // An archive under the directory: its members under its place there, then their own paths.
        try Self.fm.createDirectory(atPath: tmp + "/yearly/2021", withIntermediateDirectories: true)
        try ArchiveCLITests.archive(tmp + "/yearly/2021/backup.zip", "zip", ["q1/trips.jsonl=samples/trips-v3.jsonl"])
        r = try CLI.tripconv(tmp + "/yearly", "--output-dir", tmp + "/out2")
        #expect(r.status == 0, "\(r.stderr)")
        let written = Self.fm.enumerator(atPath: tmp + "/out2")?.compactMap { $0 as? String }.filter { $0.hasSuffix(".jsonl") }.sorted()
        #expect(written == ["2019/trips.jsonl", "2020/trips.jsonl", "2021/q1/trips.jsonl"])
        #expect(try Self.jsonLines(tmp + "/out2/2021/q1/trips.jsonl").count == 2)

        r = try CLI.tripconv(tmp + "/yearly/2020/trips.jsonl", "--output-dir", tmp + "/flat")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.jsonLines(tmp + "/flat/trips.jsonl").count == 1)
    }

    @Test("--output-dir leaves no folder it made empty: one for a failed input, or all of a run whose inputs all failed")
    func noEmptyFolderLeft() throws {
        let tmp = try CLI.temporaryDirectory().path
        try Self.write(try String(contentsOfFile: CLI.root.path + "/samples/trips-v3.jsonl", encoding: .utf8), tmp + "/yearly/2019/trips.jsonl")
        try Self.write("{\"trips\": [", tmp + "/yearly/2020/bad.json")
        var r = try CLI.tripconv(tmp + "/yearly", "--output-dir", tmp + "/out")
        #expect(r.status == 65 && r.stderr.contains("converted 1 of 2 inputs, 1 failed"), "\(r.status) \(r.stderr)")
        #expect(try Self.jsonLines(tmp + "/out/2019/trips.jsonl").count == 2)
        #expect(!Self.fm.fileExists(atPath: tmp + "/out/2020"))
        r = try CLI.tripconv(tmp + "/yearly/2020/bad.json", "--output-dir", tmp + "/none/")
        #expect(r.status == 65 && !Self.fm.fileExists(atPath: tmp + "/none"), "\(r.status) \(r.stderr)")
        // A folder that was there stays, empty or not.
        try Self.fm.createDirectory(atPath: tmp + "/mine", withIntermediateDirectories: true)
        r = try CLI.tripconv(tmp + "/yearly/2020/bad.json", "--output-dir", tmp + "/mine")
        #expect(r.status == 65 && Self.fm.fileExists(atPath: tmp + "/mine"), "\(r.status) \(r.stderr)")
    }

    @Test("inputs that would be written to one file are all named, with how many; nothing is made, --report says why")
    func outputClashNamesEveryInput() throws {
        let tmp = try CLI.temporaryDirectory().path
        let sample = try String(contentsOfFile: CLI.root.path + "/samples/trips-v3.jsonl", encoding: .utf8)
        for path in ["/a/trips.jsonl", "/b/trips.jsonl", "/c/trips.jsonl", "/d/x.jsonl", "/e/x.jsonl"] { try Self.write(sample, tmp + path) }
        let out = tmp + "/out"
        let r = try CLI.tripconv(tmp + "/a/trips.jsonl", tmp + "/b/trips.jsonl", tmp + "/c/trips.jsonl", tmp + "/d/x.jsonl",
                                 tmp + "/e/x.jsonl", "--output-dir", out, "--report", tmp + "/report.json")
        let first = "tripconv: 3 inputs, \(tmp)/a/trips.jsonl, \(tmp)/b/trips.jsonl and \(tmp)/c/trips.jsonl, would all be written to \(out)/trips.jsonl\n"
        #expect(r.status == 64 && r.stderr.hasPrefix(first), "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("note: inputs \(tmp)/d/x.jsonl and \(tmp)/e/x.jsonl would both be written to \(out)/x.jsonl"), "\(r.stderr)")
        #expect(!Self.fm.fileExists(atPath: out), "a refused run leaves no output folder")
        let report = try Self.json(tmp + "/report.json")
        #expect(report["status"] as? String == "failed" && report["exitStatus"] as? Int == 64, "\(report)")
        #expect((report["error"] as? String)?.hasPrefix("3 inputs, ") == true, "\(report)")
    }

    // MARK: - Item 5: every output checked before any input is read

    @Test("an output that cannot be made is refused (73) before any input is read: nothing is written",
          arguments: ["-o", "--report", "--rejects", "--output-dir"])
    func outputCheckedFirst(option: String) throws {
        let tmp = try CLI.temporaryDirectory().path
        // A broken input: read, it would fail with 65 and its place.
        let broken = "samples/broken.json"
        for bad in [tmp + "/missing/out.json", CLI.root.path + "/samples/trips-v1.json/out.json"] {
            var arguments = [broken, option, bad]
            if option != "-o" && option != "--output-dir" { arguments += ["-o", tmp + "/good.json"] }
            let r = try CLI.run(CLI.binary, arguments)
            #expect(r.status == 73, "\(option) \(bad): \(r.status) \(r.stderr)")
            #expect(r.stderr.hasPrefix("tripconv: \(bad): cannot create: "), "\(r.stderr)")
            #expect(!r.stderr.contains("broken.json"), "the input was read: \(r.stderr)")
            #expect(!Self.fm.fileExists(atPath: tmp + "/good.json") && r.out.isEmpty)
        }
    }

    @Test("--report to a missing directory writes nothing to standard output; a directory is no file to write")
    func reportCheckedBeforeStandardOutput() throws {
        let tmp = try CLI.temporaryDirectory().path
        var r = try CLI.tripconv("samples/trips-v3.jsonl", "--report", tmp + "/missing/r.json")
        #expect(r.status == 73 && r.out.isEmpty, "\(r.status) \(r.out.count) bytes")
        r = try CLI.tripconv("samples/trips-v3.jsonl", "-o", tmp)
        #expect(r.status == 73 && r.stderr == "tripconv: \(tmp): cannot create: Is a directory\n", "\(r.stderr)")
        r = try CLI.tripconv("samples/trips-v3.jsonl", "--output-dir", CLI.root.path + "/samples/trips-v1.json")
        #expect(r.status == 73 && r.stderr.contains("exists and is not a directory"), "\(r.stderr)")
        // A device is written in place.
        r = try CLI.tripconv("samples/trips-v3.jsonl", "--report", "/dev/null", "-q")
        #expect(r.status == 0 && r.out.count > 0, "\(r.stderr)")
    }

    @Test("--rejects that cannot be made is refused before the output is written, and an unwritable directory too",
          .enabled(if: getuid() != 0, "root may write in any directory"))
    func unwritableDirectory() throws {
        let tmp = try CLI.temporaryDirectory().path
        let locked = tmp + "/locked"
        try Self.fm.createDirectory(atPath: locked, withIntermediateDirectories: true)
        #expect(chmod(locked, 0o555) == 0)
        defer { chmod(locked, 0o755) }
        let r = try CLI.tripconv("samples/trips-v3.jsonl", "-o", tmp + "/o.json", "--rejects", locked + "/r.jsonl")
        #expect(r.status == 73 && r.stderr.hasPrefix("tripconv: \(locked)/r.jsonl: cannot create: Permission denied"), "\(r.stderr)")
        #expect(!Self.fm.fileExists(atPath: tmp + "/o.json"))
    }

    // MARK: - Item 9: an input of no bytes

    @Test("an input of no bytes: a stream's (CSV, TSV, JSON Lines, YAML) has no trips, a document's (JSON, XML) is bad input (65); on a file, standard input, compressed, detect",
          arguments: ["csv", "tsv", "json", "jsonl", "xml", "yaml"])
    func emptyInput(format: String) throws {
        let tmp = try CLI.temporaryDirectory().path
        let empty = tmp + "/empty." + format
        try Data().write(to: URL(fileURLWithPath: empty))
        let gz = try CLI.run(CLI.tool("gzip") ?? "/usr/bin/gzip", ["-c", empty])
        #expect(gz.status == 0 && !gz.stdout.isEmpty)
        try gz.stdout.write(to: URL(fileURLWithPath: empty + ".gz"))
        let isDocument = format == "json" || format == "xml"
        let said = isDocument ? ": no bytes: a JSON or XML document" : "\(format) no version by no trips to tell by; no stages;"
        for (i, input) in [empty, empty + ".gz"].enumerated() {
            let r = try CLI.tripconv(input, "-o", tmp + "/out\(i).json")
            if isDocument {
                #expect(r.status == 65 && r.stderr.hasPrefix("tripconv: \(input)\(said)"), "\(input): \(r.status) \(r.stderr)")
                #expect(!Self.fm.fileExists(atPath: tmp + "/out\(i).json"))
            } else {
                #expect(r.status == 0 && r.stderr.contains(said), "\(input): \(r.status) \(r.stderr)")
                #expect((try Self.json(tmp + "/out\(i).json")["trips"] as? [Any])?.isEmpty == true)
            }
        }
        for stdin in [Data(), gz.stdout] {
            let r = try CLI.tripconv("--from", format, "--to", "json", stdin: stdin)
            if isDocument {
                #expect(r.status == 65 && r.stderr.hasPrefix("tripconv: <stdin>\(said)") && r.stdout.isEmpty, "\(r.status) \(r.stderr)")
            } else {
                #expect(r.status == 0 && r.stderr.contains(said), "\(r.status) \(r.stderr)")
                let trips = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
                #expect((trips?["trips"] as? [Any])?.isEmpty == true)
            }
        }
        let r = try CLI.tripconv("detect", empty, empty + ".gz")
        if isDocument {
            #expect(r.status == 65 && r.stderr.contains("\(empty)\(said)"), "\(r.status) \(r.out) \(r.stderr)")
        } else {
            #expect(r.status == 0 && r.out == """
                \(empty): \(format) unknown (no trips to tell by), 0 trips, 0 names repeated
                \(empty).gz: \(format) unknown (no trips to tell by), gzip-compressed, 0 trips, 0 names repeated

                """, "\(r.status) \(r.out) \(r.stderr)")
        }
    }

    @Test("standard input and a file of no extension with no bytes are an empty stream, no trips; with only blanks, asked for --from")
    func emptyUnnamed() throws {
        let tmp = try CLI.temporaryDirectory().path
        try Data().write(to: URL(fileURLWithPath: tmp + "/export"))
        var r = try CLI.tripconv(tmp + "/export", "--to", "json", "-v")
        #expect(r.status == 0 && r.stderr.contains("assumed from its bytes (no bytes: an empty stream, no trips)"), "\(r.status) \(r.stderr)")
        r = try CLI.tripconv("--to", "json", stdin: Data())
        let trips = (try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["trips"] as? [Any]
        #expect(r.status == 0 && trips?.isEmpty == true, "\(r.status) \(r.stderr)")
        r = try CLI.tripconv("--to", "json", stdin: Data(" \n\n".utf8))
        #expect(r.status == 64 && r.stderr.contains("only blanks") && r.stderr.contains("--from"), "\(r.status) \(r.stderr)")
    }

    @Test("a store's file of no bytes is refused as a document's is; under --output-dir an empty JSON or XML file fails alone")
    func emptyStoreAndDirectory() throws {
        let tmp = try CLI.temporaryDirectory().path
        try Data().write(to: URL(fileURLWithPath: tmp + "/empty.sqlite"))
        var r = try CLI.tripconv(tmp + "/empty.sqlite", "--to", "json")
        #expect(r.status == 65 && r.stderr.hasPrefix("tripconv: \(tmp)/empty.sqlite: no bytes"), "\(r.status) \(r.stderr)")
        for name in ["a.json", "b.xml", "c.yaml"] { try Self.write("", tmp + "/dir/" + name) }
        try Self.write("name,destination,startDate,endDate\nOslo,Norway,2025-01-01T00:00:00Z,2025-01-02T00:00:00Z\n", tmp + "/dir/d.csv")
        r = try CLI.tripconv(tmp + "/dir", "--output-dir", tmp + "/out", "--to", "jsonl")
        #expect(r.status == 65 && r.stderr.contains("converted 2 of 4 inputs, 2 failed"), "\(r.status) \(r.stderr)")
        #expect(Self.fm.fileExists(atPath: tmp + "/out/d.jsonl") && Self.fm.fileExists(atPath: tmp + "/out/c.jsonl"))
        #expect(!Self.fm.fileExists(atPath: tmp + "/out/a.jsonl") && !Self.fm.fileExists(atPath: tmp + "/out/b.jsonl"))
    }
}
