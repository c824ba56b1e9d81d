import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Archives as directories and the expansion limits (issue 17), through the library: names, the
/// members an archive made by Python's tarfile gives, and the limits on a gzip made by Python.
@Suite("archives and expansion limits", .enabled(if: ExternalTool.python3 != nil, "python3 is not installed"))
struct ArchiveTests {
    let scratch = ScratchDirectory()

    @Test("member names: ./ and empty parts dropped; climbing, absolute, drive, backslash and control names refused")
    func relativePaths() throws {
        #expect(try ArchiveMembers.relativePath("./2019//trips.json", place: "a") == "2019/trips.json")
        #expect(try ArchiveMembers.relativePath("Tromsø/trips.csv", place: "a") == "Tromsø/trips.csv")
        #expect(try ArchiveMembers.relativePath("a..b/c.json", place: "a") == "a..b/c.json")
        for bad in ["../x.json", "a/../../x.json", "/etc/x.json", "C:/x.json", "c:x.json", "a\\..\\x.json", "a/\u{1B}x.json", "./", ""] {
            #expect(throws: TripError.self, "\(bad)") { try ArchiveMembers.relativePath(bad, place: "a") }
        }
    }

    @Test("archives by name and by their first bytes")
    func namesAndBytes() {
        for (name, format) in [("b.zip", ArchiveFormat.zip), ("B.TAR", .tar), ("x.tar.gz", .tar), ("x.tgz", .tar), ("x.tar.zst", .tar),
                               ("x.tar.xz", .tar), ("x.tbz2", .tar), ("dir.d/x.tar.bz2", .tar)] {
            #expect(ArchiveFormat.named(by: name) == format, "\(name)")
        }
        for name in ["x.json.gz", ".tar", "tar", "x.zip.json", "x.gz"] { #expect(ArchiveFormat.named(by: name) == nil, "\(name)") }
        #expect(ArchiveFormat.told(by: Array("PK\u{3}\u{4}rest".utf8)) == .zip)
        var tar = [UInt8](repeating: 0, count: 512)
        tar.replaceSubrange(257..<262, with: Array("ustar".utf8))
        #expect(ArchiveFormat.told(by: tar) == .tar)
        #expect(ArchiveFormat.told(by: Array("{\"trips\": []}".utf8)) == nil)
    }

    @Test("ExpandedInputs gives a tar's members in its order, each with its format, among plain inputs")
    func expanded() throws {
        let tar = scratch.path("b.tar")
        let r = try ExternalTool.python("""
            import sys, io, tarfile
            with tarfile.open(sys.argv[1], 'w') as t:
                for name, data in [('z/b.csv', b'name\\n'), ('a.json', b'[]'), ('skip.md', b'x'), ('d/', None)]:
                    i = tarfile.TarInfo(name.rstrip('/'))
                    if data is None: i.type = tarfile.DIRTYPE
                    else: i.size = len(data)
                    t.addfile(i, io.BytesIO(data) if data else None)
            """, [tar])
        #expect(r.status == 0, "\(r.stderr)")
        let plain = TestPaths.root.appendingPathComponent("samples/trips-v3.json").path
        var inputs = ExpandedInputs([RunInput(.file(plain), format: .json), RunInput(archive: .file(tar))], options: ReadOptions())
        var got: [String] = []
        while let input = try inputs.next() { got.append("\(input.location.name) \(input.format!.rawValue)") }
        #expect(got == ["\(plain) json", "\(tar)!z/b.csv csv", "\(tar)!a.json json"])
    }

    @Test("past the ratio or the total a gzip is a data error, decoded ahead or not; 0 lifts the ratio", arguments: [true, false])
    func limits(ahead: Bool) throws {
        let gz = scratch.path("t-\(ahead).jsonl.gz")
        let r = try ExternalTool.python("import sys, gzip; open(sys.argv[1], 'wb').write(gzip.compress(open(sys.argv[2], 'rb').read() * 20))",
                                        [gz, TestPaths.root.appendingPathComponent("samples/trips-v3.jsonl").path])
        #expect(r.status == 0, "\(r.stderr)")
        var options = ReadOptions()
        options.parsesAhead = ahead
        options.expansionGrace = 0
        options.maxExpansionRatio = 2
        func read(_ options: ReadOptions) throws -> Int {
            var reader = try FormatFactory.makeReader(.file(gz), format: .jsonl, options: options)
            return try ReadItems(reading: &reader).objects.count
        }
        do {
            _ = try read(options)
            Issue.record("the ratio was not enforced")
        } catch let e as TripError {
            #expect(e.kind == .data && e.message.hasPrefix("\(gz): its gzip data expands more than 2 times"), "\(e.message)")
        }
        options.maxExpansionRatio = 0
        #expect(try read(options) == 40)
        options.maxExpandedBytes = 100
        #expect(throws: TripError.self) { try read(options) }
    }
}
