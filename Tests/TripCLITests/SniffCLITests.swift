import Foundation
import Testing
import TripTestSupport

/// Standard input and files whose extension names no format are read as their bytes tell (issue 25,
/// item 8): files that Python's json, csv and yaml modules, ElementTree, Miller and jq wrote, through
/// a pipe and under a name with no format's extension, read to the trips Python wrote.
@Suite("formats told by their bytes on the command line")
struct SniffCLITests {
    static let hasPython = CLI.tool("python3") != nil
    static let hasYAML = hasPython && ((try? CLI.python("import yaml").status) == 0)
    /// A tripconv that exits before reading its standard input (one that asks for --from) must fail
    /// the test, not kill the test process as it writes the rest.
    static let ignoringBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// The trips every writer writes (3.0.0, no related objects), with a quote, a comma, a semicolon,
    /// a tab-free pipe and text beyond ASCII; the script prints them as `expected` reads them back.
    static let trips = #"""
    trips = [
        {"name": "Paris \"Getaway\"", "destination": "Paris, France", "startDate": "2024-05-01T09:30:00Z", "endDate": "2024-05-08T18:00:00Z"},
        {"name": "Zoë's Köln", "destination": "Köln; Germany", "startDate": "2024-06-01T08:00:00Z", "endDate": "2024-06-03T20:00:00Z"},
        {"name": "Ski | Tahoe", "destination": "Lake Tahoe", "startDate": "2025-01-18T07:30:00Z", "endDate": "2025-01-26T16:00:00Z"},
    ]
    """#

    /// The trips as `name|destination|startDate|endDate` lines, sorted.
    static let expected = """
        Paris "Getaway"|Paris, France|2024-05-01T09:30:00Z|2024-05-08T18:00:00Z
        Ski | Tahoe|Lake Tahoe|2025-01-18T07:30:00Z|2025-01-26T16:00:00Z
        Zoë's Köln|Köln; Germany|2024-06-01T08:00:00Z|2024-06-03T20:00:00Z

        """

    /// Writes each case's bytes with Python's own modules into `dir` as `NAME.FORMAT.data`.
    static let pythonWriters = trips + #"""

    import csv, io, json, os, sys
    import xml.etree.ElementTree as ET
    out = sys.argv[1]
    def put(name, fmt, data):
        open(os.path.join(out, name + '.' + fmt + '.data'), 'wb').write(data.encode('utf-8') if isinstance(data, str) else data)
    put('json-wrapper', 'json', json.dumps({"schemaVersion": "3.0.0", "trips": trips}, indent=2, ensure_ascii=False))
    put('json-array', 'json', json.dumps(trips, ensure_ascii=False))
    put('jsonl', 'jsonl', ''.join(json.dumps(t, ensure_ascii=False) + '\n' for t in trips))
    put('jsonl-crlf-bom', 'jsonl', '\ufeff' + ''.join(json.dumps(t) + '\r\n' for t in trips))
    def table(**kw):
        s = io.StringIO(newline='')
        w = csv.DictWriter(s, fieldnames=list(trips[0]), **kw)
        w.writeheader(); w.writerows(trips)
        return s.getvalue()
    put('csv-minimal', 'csv', table())
    put('csv-quote-all-semicolon', 'csv', table(quoting=csv.QUOTE_ALL, delimiter=';'))
    put('csv-pipe-bom', 'csv', '\ufeff' + table(delimiter='|'))
    put('csv-excel-sep', 'csv', 'sep=;\r\n' + table(delimiter=';'))
    put('csv-tab-quoted', 'csv', table(delimiter='\t'))
    put('csv-tab-utf16', 'csv', table(delimiter='\t').encode('utf-16'))
    root = ET.Element('trips', schemaVersion='3.0.0')
    for t in trips:
        trip = ET.SubElement(root, 'trip')
        for k, v in t.items(): ET.SubElement(trip, k).text = v
    put('xml-elementtree', 'xml', ET.tostring(root, encoding='utf-8', xml_declaration=True))
    put('xml-elementtree-utf16', 'xml', ET.tostring(root, encoding='utf-16', xml_declaration=True))
    put('xml-no-declaration', 'xml', '\n\n' + ET.tostring(root, encoding='unicode'))
    """#

    /// PyYAML's styles: block, a bare list, flow, `---` and `%YAML`, and a comment first.
    static let yamlWriters = trips + #"""

    import os, sys, yaml
    out = sys.argv[1]
    def put(name, data):
        open(os.path.join(out, name + '.yaml.data'), 'w', encoding='utf-8').write(data)
    doc = {"schemaVersion": "3.0.0", "trips": trips}
    put('yaml-block', yaml.safe_dump(doc, allow_unicode=True))
    put('yaml-list', yaml.safe_dump(trips, allow_unicode=True, sort_keys=False))
    put('yaml-flow', yaml.safe_dump(doc, default_flow_style=True, allow_unicode=True, width=1000))
    put('yaml-explicit-start', yaml.safe_dump(doc, explicit_start=True))
    put('yaml-directive', yaml.safe_dump(doc, version=(1, 1)))
    put('yaml-comment', '# trips exported by hand\n\n' + yaml.safe_dump(doc))
    """#

    /// Reads tripconv's JSON output back with Python's json module.
    static let readBack = #"""
    import json, sys
    doc = json.load(sys.stdin)
    for t in sorted(doc['trips'], key=lambda t: t['name']):
        print('|'.join([t['name'], t['destination'], t['startDate'], t['endDate']]))
    """#

    /// Every `NAME.FORMAT.data` in `dir`: through a pipe, and as a file named `NAME.export` (an
    /// extension no format has), read to the expected trips and detected as FORMAT, told by its bytes.
    static func checkEach(in dir: URL, cases: Int) throws {
        ignoringBrokenPipes
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".data") }.sorted()
        #expect(files.count == cases, "\(files)")
        for file in files {
            let parts = file.split(separator: ".")
            let format = String(parts[1])
            let bytes = try Data(contentsOf: dir.appendingPathComponent(file))
            let renamed = dir.appendingPathComponent("\(parts[0]).export").path
            try bytes.write(to: URL(fileURLWithPath: renamed))
            for (how, run) in [("pipe", { try CLI.tripconv("--to", "json", "-q", stdin: bytes) }),
                               ("file", { try CLI.tripconv(renamed, "--to", "json", "-q") })] {
                let r = try run()
                #expect(r.status == 0, "\(file) by \(how): \(r.stderr)")
                let back = try CLI.run(CLI.tool("python3")!, ["-c", readBack], stdin: r.stdout)
                #expect(back.out == expected, "\(file) by \(how): \(back.stderr)")
            }
            let d = try CLI.tripconv("detect", "--json", stdin: bytes)
            let facts = try CLI.run(CLI.tool("python3")!, ["-c", """
                import json, sys
                d = json.load(sys.stdin)[0]
                print(d['format'], d['trips'], d['sniffed'] is not None and not d['sniffed']['assumed'])
                """], stdin: d.stdout)
            #expect(facts.out == "\(format) 3 True\n", "\(file): \(d.stderr) \(facts.stderr)")
        }
    }

    @Test("Python's json, csv and ElementTree: JSON, JSON Lines, CSV (any delimiter, sep=, UTF-16) and XML by their bytes",
          .enabled(if: hasPython, "needs python3"))
    func pythonWriters() throws {
        let dir = try CLI.temporaryDirectory()
        let w = try CLI.python(Self.pythonWriters, [dir.path])
        #expect(w.status == 0, "\(w.stderr)")
        try Self.checkEach(in: dir, cases: 13)
    }

    @Test("PyYAML's block, list, flow, --- and %YAML styles, and a comment first, are YAML by their bytes",
          .enabled(if: hasYAML, "needs python3 with PyYAML"))
    func pyYAMLWriters() throws {
        let dir = try CLI.temporaryDirectory()
        let w = try CLI.python(Self.yamlWriters, [dir.path])
        #expect(w.status == 0, "\(w.stderr)")
        try Self.checkEach(in: dir, cases: 6)
    }

    @Test("Miller's JSON, JSON Lines, CSV and TSV, and jq's JSON and JSON Lines, by their bytes",
          .enabled(if: hasPython && CLI.tool("mlr") != nil && CLI.tool("jq") != nil, "needs python3, mlr and jq"))
    func millerAndJQ() throws {
        let dir = try CLI.temporaryDirectory()
        let source = dir.appendingPathComponent("source.json").path
        let w = try CLI.python(Self.trips + "\nimport json, sys\njson.dump(trips, open(sys.argv[1], 'w'))", [source])
        #expect(w.status == 0, "\(w.stderr)")
        let runs: [(String, String, [String])] = [
            ("mlr-json.json", "mlr", ["--ijson", "--ojson", "cat", source]),
            ("mlr-jsonl.jsonl", "mlr", ["--ijson", "--ojsonl", "cat", source]),
            ("mlr-csv.csv", "mlr", ["--ijson", "--ocsv", "cat", source]),
            ("mlr-tsv.tsv", "mlr", ["--ijson", "--otsv", "cat", source]),
            ("jq-wrapper.json", "jq", ["{schemaVersion: \"3.0.0\", trips: .}", source]),
            ("jq-lines.jsonl", "jq", ["-c", ".[]", source]),
        ]
        for (name, tool, arguments) in runs {
            let r = try CLI.run(CLI.tool(tool)!, arguments)
            #expect(r.status == 0, "\(tool) \(arguments): \(r.stderr)")
            try r.stdout.write(to: dir.appendingPathComponent(name + ".data"))
        }
        try Self.checkEach(in: dir, cases: runs.count)
    }

    @Test("compressed standard input is told after decompression; --from overrides the bytes", .enabled(if: hasPython, "needs python3"))
    func compressedAndOverride() throws {
        Self.ignoringBrokenPipes
        let tsv = try CLI.tripconv("samples/trips-v3.json", "--to", "tsv", "-q")
        let gz = try CLI.run(CLI.tool("gzip") ?? "/usr/bin/gzip", ["-c"], stdin: tsv.stdout)
        #expect(gz.status == 0)
        var d = try CLI.tripconv("detect", stdin: gz.stdout)
        #expect(d.status == 0, "\(d.stderr)")
        #expect(d.out.hasPrefix("<stdin>: tsv 3.0.0 (fields startDate, endDate), format told by its bytes (a header split by tabs"), "\(d.out)")
        #expect(d.out.contains("gzip-compressed, 2 trips"), "\(d.out)")
        // --from csv reads the same bytes as CSV: the format the user gave, nothing sniffed.
        d = try CLI.tripconv("detect", "--json", "--from", "csv", stdin: tsv.stdout)
        let facts = try CLI.run(CLI.tool("python3")!, ["-c", "import json,sys; d = json.load(sys.stdin)[0]; print(d['format'], d['sniffed'])"],
                                stdin: d.stdout)
        #expect(facts.out == "csv None\n", "\(d.stderr)")
    }

    @Test("bytes open to two readings say what was assumed, in -v, detect and detect --json", .enabled(if: hasPython, "needs python3"))
    func assumed() throws {
        Self.ignoringBrokenPipes
        // One JSON object on a first line longer than the 64 KiB looked at: JSON Lines, assumed.
        let made = try CLI.python(#"""
            import json, sys
            t = {"name": "Long", "destination": "x" * 70000, "startDate": "2024-01-01T00:00:00Z", "endDate": "2024-01-02T00:00:00Z"}
            sys.stdout.write(json.dumps(t) + "\n" + json.dumps(dict(t, name="Second")) + "\n")
            """#)
        let line = "format assumed from its bytes (an object on a first line longer than the 64 KiB looked at)"
        var r = try CLI.tripconv("detect", stdin: made.stdout)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == "<stdin>: jsonl 3.0.0 (fields startDate, endDate), \(line), 2 trips, 0 names repeated\n")
        r = try CLI.tripconv("detect", "--json", stdin: made.stdout)
        let facts = try CLI.run(CLI.tool("python3")!, ["-c", "import json,sys; d = json.load(sys.stdin)[0]; print(d['format'], d['sniffed'])"],
                                stdin: r.stdout)
        #expect(facts.out == "jsonl {'evidence': 'an object on a first line longer than the 64 KiB looked at', 'assumed': True}\n")
        r = try CLI.tripconv("-v", "--to", "csv", stdin: made.stdout)
        #expect(r.status == 0)
        #expect(r.stderr.hasPrefix("tripconv: <stdin>: read as jsonl, assumed from its bytes (an object on a first line longer"), "\(r.stderr)")
    }

    @Test("a directory's files with no format's extension are still passed over; a named one is told by its bytes")
    func directoryWalk() throws {
        let dir = try CLI.temporaryDirectory()
        let inputs = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "samples/trips-v3.csv", toPath: inputs.appendingPathComponent("a.csv").path)
        try FileManager.default.copyItem(atPath: "samples/trips-v1.jsonl", toPath: inputs.appendingPathComponent("notes").path)
        var r = try CLI.tripconv("detect", inputs.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.split(separator: "\n").count == 1 && r.out.contains("/in/a.csv: csv 3.0.0"), "\(r.out)")
        r = try CLI.tripconv("detect", inputs.appendingPathComponent("notes").path)
        #expect(r.out.contains("/in/notes: jsonl 1.0.0 (fields start_date, end_date), format told by its bytes"), "\(r.out) \(r.stderr)")
    }

    @Test("no input at a terminal prints the usage and exits 64 instead of waiting on the keyboard",
          .enabled(if: hasPython, "needs python3 for a pseudo-terminal"))
    func terminal() throws {
        let r = try CLI.python(#"""
            import os, pty, subprocess, sys
            leader, follower = pty.openpty()
            for args in ([], ['detect'], ['--to', 'csv']):
                try:
                    p = subprocess.run([sys.argv[1]] + args, stdin=follower, capture_output=True, timeout=20)
                    print(args, p.returncode, p.stderr.decode().splitlines()[:2])
                except subprocess.TimeoutExpired:
                    print(args, 'waited on the terminal')
            """#, [CLI.binary])
        #expect(r.out == """
            [] 64 ['tripconv: no input named, and standard input is a terminal', 'usage: tripconv convert [<options>] [<input> ...]']
            ['detect'] 64 ['tripconv: no input named, and standard input is a terminal', 'usage: tripconv detect [<options>] [<input> ...]']
            ['--to', 'csv'] 64 ['tripconv: no input named, and standard input is a terminal', 'usage: tripconv convert [<options>] [<input> ...]']

            """, "\(r.stderr)")
    }
}
