import Foundation
import Testing
import TripTestSupport

/// Whether `LD_DEBUG=files` makes the loader list the objects it maps (glibc does).
private let loaderLists: Bool = {
    guard let sh = CLI.tool("sh") else { return false }
    return (try? CLI.run(sh, ["-c", "true"], environment: ["LD_DEBUG": "files"]))?.stderr.contains("file=libc.so.6") ?? false
}()

/// What a run loads (issue 25, item 14): libpq, libarchive and libxml2 (with the Kerberos, LDAP, GnuTLS,
/// nettle, ICU, liblzma, … they bring) are opened when a run needs them, so that a run without
/// PostgreSQL, an archive or XML starts without them. Told by glibc's loader itself (`LD_DEBUG=files` lists every object it maps).
@Suite("start-up: libraries loaded when needed", .enabled(if: loaderLists, "the loader is not glibc's (no LD_DEBUG=files)"))
struct StartupCLITests {

    /// Runs tripconv under `LD_DEBUG=files`: its result (the loader's lines taken out of standard
    /// error) and the file names of the shared objects it mapped.
    static func run(_ arguments: [String], stdin: Data? = nil) throws -> (result: CLI.Result, loaded: Set<String>) {
        var r = try CLI.run(CLI.binary, arguments, stdin: stdin, environment: ["LD_DEBUG": "files"])
        var loaded = Set<String>()
        var rest: [Substring] = []
        for line in r.stderr.split(separator: "\n", omittingEmptySubsequences: false) {
            // The loader's lines: `   4711:\tfile=libpq.so.5 [0];  needed by …` (the pid first).
            let trimmed = line.drop { $0 == " " }
            guard trimmed.first?.isNumber == true, trimmed.drop(while: \.isNumber).hasPrefix(":") else {
                rest.append(line)
                continue
            }
            if let at = line.range(of: "file=") {
                let name = line[at.upperBound...].prefix { $0 != " " && $0 != "[" }
                loaded.insert(String(name.split(separator: "/").last ?? name))
            }
        }
        r.stderr = rest.joined(separator: "\n")
        return (r, loaded)
    }

    static func has(_ loaded: Set<String>, _ prefix: String) -> Bool { loaded.contains { $0.hasPrefix(prefix) } }

    @Test("--version and 3-trip conversions to JSON Lines, CSV and SQLite map none of libpq, libarchive, libxml2 and ICU")
    func plainRunsLoadNeither() throws {
        let dir = try CLI.temporaryDirectory()
        let store = dir.appendingPathComponent("three.sqlite").path
        let runs: [[String]] = [["--version"], ["samples/trips-v1.json", "--to", "jsonl"], ["samples/trips-v1.json", "--to", "csv"],
                                ["-q", "samples/trips-v1.json", "-o", store]]
        for arguments in runs {
            let (r, loaded) = try Self.run(arguments)
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
            #expect(Self.has(loaded, "libc.so"), "\(arguments): the loader listed nothing: \(loaded.sorted())")
            #expect(!Self.has(loaded, "libpq"), "\(arguments) mapped libpq: \(loaded.sorted())")
            #expect(!Self.has(loaded, "libarchive"), "\(arguments) mapped libarchive: \(loaded.sorted())")
            #expect(!Self.has(loaded, "libkrb5") && !Self.has(loaded, "libldap") && !Self.has(loaded, "libgnutls"), "\(arguments): \(loaded.sorted())")
            #expect(!Self.has(loaded, "libxml2") && !Self.has(loaded, "libicu") && !Self.has(loaded, "liblzma"), "\(arguments): \(loaded.sorted())")
        }
        if let sqlite3 = CLI.tool("sqlite3") {
            let count = try CLI.run(sqlite3, [store, "SELECT count(*) FROM trips"])
            #expect(count.status == 0 && count.out == "3\n", "\(count.out) \(count.stderr)")
        }
    }

    @Test("an xz input opens libarchive when it is read, and converts as the plain file does", .needsPython3)
    func xzInputOpensLibarchive() throws {
        let xz = try CLI.python("import lzma, sys; sys.stdout.buffer.write(lzma.compress(open('samples/trips-v3.jsonl', 'rb').read()))")
        #expect(xz.status == 0 && !xz.stdout.isEmpty, "\(xz.stderr)")
        let plain = try CLI.tripconv("samples/trips-v3.jsonl", "--to", "csv")
        let (r, loaded) = try Self.run(["--from", "jsonl", "--to", "csv"], stdin: xz.stdout)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == plain.out && plain.status == 0)
        #expect(Self.has(loaded, "libarchive.so"), "\(loaded.sorted())")
        #expect(!Self.has(loaded, "libpq"), "\(loaded.sorted())")
    }

    @Test("an XML input opens libxml2 when it is read, and reads its trips; XML written maps no libxml2", .needsPython3)
    func xmlInputOpensLibxml2() throws {
        // The names, as Python's ElementTree reads them, and as tripconv's JSON Lines give them.
        let expected = try CLI.python("import xml.etree.ElementTree as E, sys; [print(t.findtext('name')) for t in E.parse(sys.argv[1]).getroot()]",
                                      ["samples/trips-v3.xml"])
        let (r, loaded) = try Self.run(["-q", "samples/trips-v3.xml", "--to", "jsonl"])
        #expect(r.status == 0 && expected.status == 0, "\(r.stderr) \(expected.stderr)")
        let names = try CLI.run(try ExternalTool.program("python3"), ["-c", "import json, sys; [print(json.loads(l)['name']) for l in sys.stdin]"],
                                stdin: Data(r.out.utf8))
        #expect(names.out == expected.out && expected.out.split(separator: "\n").count == 3, "\(names.out) \(expected.out)")
        #expect(Self.has(loaded, "libxml2.so"), "\(loaded.sorted())")
        #expect(!Self.has(loaded, "libpq") && !Self.has(loaded, "libarchive"), "\(loaded.sorted())")
        // tripconv writes XML itself: libxml2 only parses.
        let (w, written) = try Self.run(["samples/trips-v3.json", "--to", "xml"])
        #expect(w.status == 0 && w.out.contains("<trip"), "\(w.stderr)")
        #expect(!Self.has(written, "libxml2"), "\(written.sorted())")
    }

    @Test("--version alone (answered before ArgumentParser) prints what ArgumentParser prints for it")
    func versionAlone() throws {
        let fast = try CLI.tripconv("--version")
        let parsed = try CLI.tripconv("-q", "--version")
        #expect(fast.status == 0 && parsed.status == 0, "\(fast.stderr) \(parsed.stderr)")
        #expect(fast.out == "tripconv 0.1.0\n" && fast.out == parsed.out, "\(fast.out) \(parsed.out)")
    }
}
