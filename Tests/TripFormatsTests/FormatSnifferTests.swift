import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// `FormatSniffer` (issue 25, item 8): what an input's first bytes tell, and `ByteInput.peek`, which
/// looks at them without taking them from the reader.
@Suite("Formats told by their bytes")
struct FormatSnifferTests {
    static func told(_ text: String, atEnd: Bool = true, options: ReadOptions = ReadOptions()) -> SniffedFormat? {
        FormatSniffer.sniff(Array(text.utf8), atEnd: atEnd, options: options).told
    }

    @Test("each shape of a first byte or line tells its format, and says by what", arguments: [
        (#"{"schemaVersion": "3.0.0", "trips": []}"#, Format.json, #"an object whose first key is "schemaVersion""#),
        ("\n  {\n  \"trips\": [],\n  \"schemaVersion\": \"1.0.0\"}", .json, #"an object whose first key is "trips""#),
        (#"[{"name": "a"}]"#, .json, "an array of objects"),
        ("[]", .json, "'[' first"),
        ("{\n  \"name\": \"a\"\n}\n", .json, "one object over several lines"),
        ("{\"name\": \"a {x}\"}\n{\"name\": \"b\"}\n", .jsonl, "an object on each of its first lines"),
        ("{\"name\": \"a\\\"}\"}", .jsonl, "an object on its first line"),
        ("<?xml version=\"1.0\"?><trips/>", .xml, "'<' first"),
        ("\u{FEFF}<trips/>", .xml, "'<' first, after a UTF-8 byte order mark"),
        ("{schemaVersion: 1.0.0, trips: []}", .yaml, "a flow mapping with an unquoted key first"),
        ("[{name: a}]", .yaml, "a flow mapping with an unquoted key first"),
        ("%YAML 1.1\n---\n", .yaml, "a '%YAML' directive"),
        ("--- \nschemaVersion: 1.0.0\n", .yaml, "a '---' document start"),
        ("- name: a\n", .yaml, "a '- ' sequence item first"),
        ("# exported\n\nschemaVersion: 1.0.0\ntrips: []\n", .yaml, "a 'schemaVersion:' line first"),
        ("\"name\": a\n", .yaml, "a 'name:' line first"),
        ("name,destination,startDate,endDate\n", .csv, "a header split by ',' into 4 trip columns"),
        ("\"name\";\"destination\"\r\n\"a\";\"b\"\r\n", .csv, "a header split by ';' into 2 trip columns"),
        ("title,name|destination|x\n", .csv, "a header split by '|' into 1 trip column"),
        ("sep=,\nname,destination\n", .csv, "Excel's 'sep=,' line, then a header split by ',' into 2 trip columns"),
        ("name\tdestination\n\"a\"\tb\n", .csv, "a header split by tabs into 2 trip columns, and quoted cells"),
        ("name\tdestination\na\\tb\tc\n", .tsv, "a header split by tabs into 2 trip columns, and backslash escapes"),
        ("name\tdestination\na\tb\n", .tsv, "a header split by tabs into 2 trip columns"),
        ("SQLite format 3\0\u{1}", .sqlite, "SQLite's file header"),
    ])
    func told(text: String, format: Format, evidence: String) {
        let s = Self.told(text)
        #expect(s == SniffedFormat(format, evidence), "\(text.debugDescription)")
    }

    @Test("bytes that could be read another way are told as the likelier, and said to be assumed")
    func assumed() {
        // A one-line object that does not end in the window: JSON Lines, assumed.
        let long = "{\"name\": \"" + String(repeating: "x", count: FormatSniffer.windowSize) + "\"}\n"
        let bytes = Array(long.utf8.prefix(FormatSniffer.windowSize))
        let s = FormatSniffer.sniff(bytes, atEnd: false).told
        #expect(s?.format == .jsonl && s?.isAssumed == true)
        #expect(s?.phrase == "assumed from its bytes (an object on a first line longer than the 64 KiB looked at)")
        // Tab-separated with no cell quoted or escaped yet, and more to come: TSV, assumed.
        let tsv = Self.told("name\tdestination\na\tb\n", atEnd: false)
        #expect(tsv == SniffedFormat(.tsv, "a header split by tabs into 2 trip columns, no cell quoted in the first 64 KiB", assumed: true))
        // A key no trip has: YAML, assumed.
        #expect(Self.told("note: these are trips\n") == SniffedFormat(.yaml, "a 'note:' line first", assumed: true))
        // --csv-delimiter makes a tab-split header CSV's.
        var options = ReadOptions()
        options.csvDelimiter = 0x09
        #expect(Self.told("name\tdestination\n", options: options) == SniffedFormat(.csv, "a header split by tabs into 2 trip columns"))
    }

    @Test("UTF-16 is looked at through its byte order mark, or --input-encoding, or XML's '<' and NUL")
    func utf16() {
        func utf16(_ text: String, bigEndian: Bool, mark: Bool = true) -> [UInt8] {
            ((mark ? [UInt16(0xFEFF)] : []) + Array(text.utf16)).flatMap { u in
                bigEndian ? [UInt8(u >> 8), UInt8(u & 0xFF)] : [UInt8(u & 0xFF), UInt8(u >> 8)]
            }
        }
        let json = #"{"schemaVersion": "3.0.0", "trips": []}"#
        #expect(FormatSniffer.sniff(utf16(json, bigEndian: false), atEnd: true).told
                == SniffedFormat(.json, #"an object whose first key is "schemaVersion", after a UTF-16LE byte order mark"#))
        #expect(FormatSniffer.sniff(utf16("- name: Zoë\n", bigEndian: true), atEnd: true).told
                == SniffedFormat(.yaml, "a '- ' sequence item first, after a UTF-16BE byte order mark"))
        let noMark = utf16("name,destination\n", bigEndian: false, mark: false)
        #expect(FormatSniffer.sniff(noMark, atEnd: true).told == nil)
        #expect(FormatSniffer.sniff(noMark, atEnd: true, options: ReadOptions(inputEncoding: "utf-16le")).told?.format == .csv)
        #expect(FormatSniffer.sniff(utf16("<trips/>", bigEndian: true, mark: false), atEnd: true).told == SniffedFormat(.xml, "'<' in UTF-16"))
        // A window cut in the middle of a code unit is looked at up to it.
        #expect(FormatSniffer.sniff(Array(utf16("- a: b\n", bigEndian: false).dropLast()), atEnd: false).told?.format == .yaml)
    }

    @Test("no bytes at all is an empty stream (JSON Lines, assumed); nothing but blanks is empty; text in no format is unknown, quoting its first line")
    func emptyAndUnknown() {
        // The sniffer alone owns what an unnamed input of no bytes is (issue 25's rule for empty inputs).
        #expect(FormatSniffer.sniff([], atEnd: true) == .told(FormatSniffer.noBytes))
        #expect(FormatSniffer.noBytes.format == .jsonl && FormatSniffer.noBytes.isAssumed)
        #expect(FormatSniffer.sniff([], atEnd: false) == .empty)
        #expect(FormatSniffer.sniff(Array(" \n\r\n\t".utf8), atEnd: true) == .empty)
        #expect(FormatSniffer.sniff(Array("// swift-tools-version:6.0\nimport PackageDescription\n".utf8), atEnd: true)
                == .unknown("// swift-tools-version:6.0"))
        #expect(FormatSniffer.sniff(Array("Dear diary, we went to Paris.\n".utf8), atEnd: true) == .unknown("Dear diary, we went to Paris."))
        #expect(FormatSniffer.sniff(Array("# Title\n\nSome prose: here\n".utf8), atEnd: true) == .unknown("Some prose: here"))
        #expect(FormatSniffer.sniff(Array("id,title\n1,x\n".utf8), atEnd: true) == .unknown("id,title"))
    }

    @Test("ByteInput.peek looks at the first bytes, decompressed, and the reads still give every byte")
    func peek() throws {
        let scratch = ScratchDirectory()
        let text = (0..<20_000).map { "line \($0)\n" }.joined()
        let plain = scratch.file("t.txt", text)
        let gz = scratch.path("t.txt.gz")
        let zipped = try ExternalTool.run(ExternalTool.path("gzip") ?? "/usr/bin/gzip", ["-c", plain])
        try zipped.stdout.write(to: URL(fileURLWithPath: gz))
        for path in [plain, gz] {
            let input = try ByteInput(.file(path))
            #expect(try input.peek(5) == Array("line ".utf8))
            #expect(try input.peek(FormatSniffer.windowSize).count == FormatSniffer.windowSize)
            var all: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1000)
            while case let n = try buffer.withUnsafeMutableBytes({ try input.read(into: $0) }), n > 0 { all += buffer[..<n] }
            #expect(all == Array(text.utf8), "\(path)")
            #expect(try ByteInput.head(of: .file(path), count: 7).bytes == Array("line 0\n".utf8))
        }
        #expect(try ByteInput.head(of: .file(gz), count: 1).compression == .gzip)
    }
}
