import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats
#if canImport(Glibc)
import Glibc
#endif

/// YAML as other programs write it: PyYAML in its styles, ruamel.yaml's round-trip and safe dumpers,
/// and `yq -y`, each writing generated trip sets at every schema version. Every file must read to
/// exactly the trips written, field by field, both as a file (the block scanner when the file fits
/// its subset, else libyaml) and through a pipe (always libyaml); where the scanner takes a file, its
/// events must be libyaml's.
///
/// The seed is `TRIPCONV_SEED` (fixed in CI), the number of sets per writer `TRIPCONV_YAML_SETS`
/// (2,000 by default). A failure names the writer, the seed, the set and the trip, and shows the
/// trip written, the trip read and the file's text.
@Suite("YAML from other writers")
struct YAMLForeignWriterTests {
    typealias S = YAMLTestSupport

    static let seed: UInt64 = ProcessInfo.processInfo.environment["TRIPCONV_SEED"].flatMap { UInt64($0) } ?? 20_240_613
    static let setCount: Int = ProcessInfo.processInfo.environment["TRIPCONV_YAML_SETS"].flatMap { Int($0) } ?? 2000

    static func hasModule(_ name: String) -> Bool {
        (try? ExternalTool.python("import \(name)"))?.status == 0
    }
    static let hasRuamel = hasModule("ruamel.yaml")

    /// Why `yq -y` cannot be one of the writers here, or nil when it can. The writer is python-yq
    /// (pip's yq, or Debian's package, 3.1.0 in bookworm; both write YAML through PyYAML); another
    /// program named yq, such as mikefarah's Go yq, has no `-y` and is told apart by running it.
    static let yqAbsence: String? = {
        guard S.hasPyYAML else { return "python3 with PyYAML is not installed (pip install PyYAML)" }
        guard ExternalTool.path("jq") != nil else { return "jq, which python-yq runs, is not installed (apt-get install jq)" }
        guard let yq = ExternalTool.path("yq") else { return "python-yq is not installed (pip install yq, or apt-get install yq)" }
        let r = try? ExternalTool.run(yq, ["-y", "."], stdin: Data(#"{"a": [1]}"#.utf8))
        guard r?.status == 0, r?.out == "a:\n  - 1\n" else {
            return "\(yq) is not python-yq: `yq -y .` did not write YAML (mikefarah's Go yq has no -y); pip install yq"
        }
        return nil
    }()

    @Test("PyYAML's safe_dump in every style reads to exactly the trips written",
          .enabled(if: S.hasPyYAML, "python3 with PyYAML is not installed (pip install PyYAML)"),
          arguments: ["pyyaml-default", "pyyaml-flow", "pyyaml-unicode", "pyyaml-narrow", "pyyaml-explicit", "pyyaml-stream"])
    func pyyaml(_ writer: String) throws {
        try check(writer)
    }

    @Test("ruamel.yaml's round-trip and safe dumpers read to exactly the trips written",
          .enabled(if: S.hasPyYAML && hasRuamel, "python3 with PyYAML and ruamel.yaml is not installed (pip install PyYAML ruamel.yaml)"),
          arguments: ["ruamel-rt", "ruamel-indented", "ruamel-safe"])
    func ruamel(_ writer: String) throws {
        try check(writer)
    }

    @Test("yq -y output reads to exactly the trips written",
          .enabled(if: yqAbsence == nil, Comment(rawValue: "yq cannot be a writer here: " + (yqAbsence ?? ""))))
    func yq() throws {
        try check("yq")
    }

    /// Our output as ruamel.yaml (YAML 1.2) loads it, in the JSON shape `YAMLRoundTripTests.expectedTree` gives.
    /// Arguments: the file, `typ`, and `pure` or `default` (its C loader when ruamel.yaml.clib is installed).
    static let ruamelToJSON = YAMLRoundTripTests.pythonConvert + #"""
    from ruamel.yaml import YAML
    typ, pure = sys.argv[2], sys.argv[3] == "pure"
    y = YAML(typ=typ, pure=pure) if typ != "rt" else YAML()
    with open(sys.argv[1], encoding="utf-8") as f:
        print(json.dumps(conv(y.load(f)), ensure_ascii=True))
    """#

    @Test("ruamel.yaml reads what tripconv writes as exactly the values written, strings staying strings",
          .enabled(if: hasRuamel, "python3 with ruamel.yaml is not installed (pip install ruamel.yaml)"),
          arguments: [("safe", "pure", 31), ("safe", "default", 32), ("rt", "default", 33)] as [(String, String, UInt64)])
    func ruamelReadsOurOutput(typ: String, pure: String, seed: UInt64) throws {
        var generator = ArbitraryTrips.yaml(seed: seed)
        let trips = YAMLRoundTripTests.example + (0..<400).map { _ in generator.trip() }
        let path = try S.writeFile(trips)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try ExternalTool.python(Self.ruamelToJSON, [path, typ, pure])
        try #require(result.status == 0, "ruamel.yaml (\(typ), \(pure)) failed: \(result.stderr)")
        guard case .mapping(let got)? = try YAMLTestJSON.parseAll(result.out).first, case .sequence(let gotTrips)? = got["trips"],
              case .mapping(let want) = YAMLRoundTripTests.expectedTree(trips), case .sequence(let wantTrips)? = want["trips"] else {
            Issue.record("unexpected shape: \(result.out.prefix(200))")
            return
        }
        #expect(got["schemaVersion"] == .string("3.0.0"))
        #expect(gotTrips.count == wantTrips.count)
        for (i, (a, b)) in zip(gotTrips, wantTrips).enumerated() where !Self.exactlyEqual(a, b) {
            Issue.record("ruamel.yaml \(typ) \(pure), seed \(seed), trip \(i): it read \(a), we wrote \(b)")
            break
        }
    }

    // MARK: - The check

    /// Writes `setCount` sets with `writer`, reads each back both ways, and compares.
    func check(_ writer: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("yaml-foreign-\(writer)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try ExternalTool.python(Self.writerScript, [writer, dir.path, String(Self.seed), String(Self.setCount)])
        try #require(result.status == 0, "\(writer) (seed \(Self.seed)) failed: \(result.stderr)")
        guard case .mapping(let out)? = try YAMLTestJSON.parseAll(result.out).first,
              case .sequence(let sets)? = out["sets"], case .number(let uncarried)? = out["uncarried"] else {
            Issue.record("unexpected output from the writer script: \(result.out.prefix(300))")
            return
        }
        #expect(sets.count == Self.setCount)
        if uncarried > 0 {
            // Sets the writer itself cannot carry (its own reader reads back something else) were
            // replaced; say how many, so that a writer's defects stay visible.
            print("\(writer): \(Int(uncarried)) generated sets replaced, the writer's own reader reading them back otherwise; e.g. \(out["example"].map { "\($0)" } ?? "")".prefix(600))
        }
        if case .number(let only12)? = out["only12"], only12 > 0 {
            // Text in YAML 1.2 only, which libyaml (YAML 1.1, as PyYAML) cannot read as written.
            print("\(writer): \(Int(only12)) generated sets replaced, written in YAML 1.2 only (PyYAML reads other scalars); e.g. \(out["example12"].map { "\($0)" } ?? "")".prefix(600))
        }
        var failures = 0, scanned = 0, trips = 0
        for (i, set) in sets.enumerated() where failures < 3 {
            guard case .mapping(let s) = set, case .sequence(let want)? = s["trips"], case .string(let version)? = s["version"],
                  case .bool(let marked)? = s["marked"] else {
                Issue.record("set \(i): unexpected shape \(set)")
                return
            }
            trips += want.count
            let path = dir.appendingPathComponent("\(i).yaml").path
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            let place = "\(writer), seed \(Self.seed), set \(i) (\(version))"
            let text = String(decoding: bytes.prefix(3000), as: UTF8.self).debugDescription

            do {
                // A file: the scanner when the file fits its subset, else libyaml.
                let fromFile = try S.readFile(path)
                if !Self.same(fromFile, want, marked ? version : nil, place: "\(place), read as a file", text: text) { failures += 1 }
                // A pipe: libyaml.
                let fromPipe = try Self.readThroughPipe(bytes)
                if !Self.same(fromPipe, want, marked ? version : nil, place: "\(place), read from a pipe", text: text) { failures += 1 }
            } catch {
                Issue.record("\(place): \(error)\nfile: \(text)")
                failures += 1
            }
            // Where the scanner takes the file, its events are libyaml's.
            if YAMLBlockScannerTests.compare(bytes) { scanned += 1 }
        }
        print("\(writer): \(sets.count) sets, \(trips) trips, \(scanned) sets read by the block scanner (seed \(Self.seed))")
    }

    /// Whether a reading gave exactly `want`; records an issue naming the first trip that differs.
    static func same(_ read: ReadItems, _ want: [YAMLValue], _ version: String?, place: String, text: String) -> Bool {
        if let r = read.rejections.first {
            Issue.record("\(place): a trip was rejected: \(r)\nfile: \(text)")
            return false
        }
        if let version, let got = read.detection.version, "\(got.major).\(got.minor).\(got.patch)" != version {
            Issue.record("\(place): detected \(got), the file says \(version)")
            return false
        }
        guard case .mapping(let tree) = YAMLRoundTripTests.expectedTree(read.objects), case .sequence(let got)? = tree["trips"] else {
            return false
        }
        if got.count != want.count {
            Issue.record("\(place): read \(got.count) trips, \(want.count) were written\nfile: \(text)")
            return false
        }
        for (j, (g, w)) in zip(got, want).enumerated() where !exactlyEqual(g, w) {
            Issue.record("\(place), trip \(j):\n  written: \(w)\n  read:    \(g)\nfile: \(text)")
            return false
        }
        return true
    }

    /// Equality with strings compared scalar by scalar (Swift's `==` takes canonically equivalent
    /// strings for equal: "é" and "e\u{301}").
    static func exactlyEqual(_ a: YAMLValue, _ b: YAMLValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case (.sequence(let x), .sequence(let y)): return x.count == y.count && zip(x, y).allSatisfy { exactlyEqual($0, $1) }
        case (.mapping(let x), .mapping(let y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { exactlyEqual(value, $0) } ?? false }
        default: return a == b
        }
    }

    /// Reads bytes as YAML from a pipe, as standard input is read: it cannot be read twice, so
    /// libyaml reads it.
    static func readThroughPipe(_ bytes: [UInt8], options: ReadOptions = ReadOptions()) throws -> ReadItems {
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw TripError.data("pipe: \(String(cString: strerror(errno)))") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(writeEnd, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        var reader = try FormatFactory.makeReader(.file("/dev/fd/\(readEnd)"), format: .yaml, options: options)
        return try ReadItems(reading: &reader)
    }

    // MARK: - The writers (YAMLForeignWriterScript.swift)

    @Test("a stream of YAML documents splits into each document, whether the marker is alone on its line or not",
          .enabled(if: S.hasPyYAML, "python3 with PyYAML is not installed (pip install PyYAML)"))
    func documentsSplit() throws {
        // PyYAML's dump_all, as yq 3 writes (`--- []`), and with explicit_start, as yq 4 marks each
        // document: each part must load back to its document alone.
        let script = Self.splitDocuments + #"""
            import sys, json, yaml
            docs = [{"a": [1]}, [], [{"name": "n", "list": []}], [], {"b": "--- x"}, {}, "---", [[]], {"s": "l1\n---\nl2"}]
            for explicit in (False, True):
                texts = split_documents(yaml.safe_dump_all(docs, explicit_start=explicit))
                print(json.dumps({"explicit": explicit, "count": len(texts), "same": [yaml.safe_load(t) == d for t, d in zip(texts, docs)]}))
            """#
        let r = try ExternalTool.python(script)
        try #require(r.status == 0, "\(r.stderr)")
        let lines = r.out.split(separator: "\n").map(String.init)
        let want = #"[true, true, true, true, true, true, true, true, true]"#
        #expect(lines == [#"{"explicit": false, "count": 9, "same": \#(want)}"#, #"{"explicit": true, "count": 9, "same": \#(want)}"#])
    }
}
