import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// The block-subset scanner must give exactly libyaml's events (kinds, styles, texts, lines,
/// columns, mapping offsets, errors) for every input: it reads what fits the subset, and leaves
/// everything else to libyaml. Each test reads the same bytes with the scanner allowed and with
/// libyaml only, and compares the two streams whole.
@Suite("YAML block-subset scanner")
struct YAMLBlockScannerTests {
    /// One event as the reader sees it, with its mapping offset, or the error that ended the stream.
    struct Seen: Equatable, CustomStringConvertible {
        var kind: YAMLEvent.Kind
        var style: YAMLEvent.Style
        var line: Int32
        var column: Int32
        var value: String
        var offset: Int
        var error: String?

        var description: String {
            if let error { return "error \(error)" }
            return "\(kind) \(style) \(line + 1):\(column + 1) \(value.debugDescription) @\(offset)"
        }
    }

    /// The events of `bytes`, read one at a time; and whether the scanner read them.
    static func events(_ bytes: [UInt8], scanner: Bool) -> (events: [Seen], scanned: Bool) {
        var limits = YAMLLimits()
        limits.usesBlockScanner = scanner
        let parser = YAMLEventParser(bytes: bytes, name: "t.yaml", limits: limits)
        var out: [Seen] = []
        while out.count < 100_000 {
            do {
                let e = try parser.next()
                out.append(Seen(kind: e.kind, style: e.style, line: e.line, column: e.column, value: e.value,
                                offset: parser.mappingOffset(of: e), error: nil))
                if e.kind == .streamEnd { break }
            } catch {
                out.append(Seen(kind: .streamEnd, style: .none, line: 0, column: 0, value: "", offset: 0, error: "\(error)"))
                break
            }
        }
        return (out, parser.readsWithBlockScanner)
    }

    /// Compares the two readings of `text`; whether the scanner read it.
    @discardableResult
    static func compare(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let fast = events(bytes, scanner: true)
        let slow = events(bytes, scanner: false)
        if fast.events != slow.events {
            let i = (0..<min(fast.events.count, slow.events.count)).first { fast.events[$0] != slow.events[$0] } ?? min(fast.events.count, slow.events.count)
            let shown = String(decoding: bytes.prefix(2000), as: UTF8.self).debugDescription
            Issue.record("""
                the scanner's events differ from libyaml's at event \(i):
                  scanner: \(i < fast.events.count ? fast.events[i].description : "(none)")
                  libyaml: \(i < slow.events.count ? slow.events[i].description : "(none)")
                input: \(shown)
                """, sourceLocation: sourceLocation)
        }
        return fast.scanned
    }

    static func compare(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        compare(Array(text.utf8), sourceLocation: sourceLocation)
    }

    @Test("the shapes of the subset are read by the scanner, with libyaml's events")
    func shapesInside() {
        let inside = [
            "schemaVersion: \"3.0.0\"\ntrips:\n  - name: a b  \n    x:\n    l:\n    - t: 1\n      d: 2 # c\n    m: []\n  - name: c\n# end\n",
            "---\na: 1\n",
            "# c\n\n---   \na: 1",
            "a: 1",
            "",
            "# only\n",
            "a:\n",
            "- x\n- \"y\"\n- 'z''s'\n",
            "a: {}\nb: x #c\n",
            "- a:\n  - x\n  b: 2\n- c\n",
            "- a:\n  b: 1\n",
            "k: \"\\x41\\u00e9\\U0001F600 \\N\\_\\L\\P \\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\\"\\/\\\\\"\n",
            "name: Tromsø ünïcødé ✈️\nd: \"ü: x\"\n",
            "ü: 1\nkey with spaces : v\n",
            "a: b:c\nurl: http://x.y/z?q=1#frag\nn: -5\nq: ?x\nc: :x\n",
            "  a: 1\n  b:\n    - 1\n",
            "a:\n\n\n  # comment\n  b: 1\n",
            "a: 1   \n   \nb: 2",
            "<<: x\n",
            "a: #\n - b\n",
            "a: 1\r\nb:\r\n  - x # c\r\n\r\n  - 'y'\r\n",
            "a:\r\n  b: 1\r\n#",
            "a:\n  b: 1\n#",
            "a:\n  b:\n    c: 1\n   ",
            "- a: 1\n  b: [] # x",
            "- - x\n",
        ]
        var scanned = 0
        for text in inside where Self.compare(text) { scanned += 1 }
        // All but the last (a sequence in a sequence's entry) fit.
        #expect(scanned == inside.count - 1)
    }

    @Test("what lies outside the subset is left to libyaml, which reads it as before")
    func shapesOutside() {
        let outside = [
            "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  text\n", "a: >\n  text\n", "a: [1, 2]\n", "a: {b: 1}\n",
            "a: plain\n  continued\n", "a: \"open\n  closed\"\n", "? a\n: b\n", "%YAML 1.2\n---\na: 1\n",
            "a: 1\n---\nb: 2\n", "a: 1\n...\n", "a:\tb\n", "a: 1\rb: 2\n", "a: 1\r", "a: \"x\ry\"\r\n", "\u{FEFF}a: 1\n", "a: x\u{2028}y\n",
            "a: x\u{85}y\n", "\"a\": 1\n", "a: b: c\n", "a: 1\n b: 2\n", "a: 1\nb\n", "- a\nb: 1\n", "a: \"x\"y\n",
            "a: \"\\q\"\n", "a: \"\\uD800\"\n", "-\n  a: 1\n", "a: 'x\n", "---\n", "a: \u{7F}\n", "a: \u{1}\n",
            "[a]\n", "a:\n  plain on its own line\n", "a: \"x\"#c\n", "key: - x\n",
        ]
        for text in outside {
            #expect(!Self.compare(text), "\(text.debugDescription) should be left to libyaml")
        }
        #expect(!Self.compare([0x61, 0x3A, 0x20, 0xC3, 0x28, 0x0A]))
        #expect(!Self.compare([0x61, 0x3A, 0x20, 0xED, 0xA0, 0x80, 0x0A]))
    }

    @Test("what the YAML writer writes is read by the scanner, with libyaml's events", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func writerOutput(seed: UInt64) throws {
        var generator = ArbitraryTrips.yaml(seed: seed)
        let trips = (0..<60).map { _ in generator.trip() }
        let text = try YAMLTestSupport.write(trips)
        #expect(Self.compare(text))
        // As written on Windows: CR LF line ends.
        #expect(Self.compare(text.replacingOccurrences(of: "\n", with: "\r\n")))
    }

    /// A document in PyYAML's block style: sequences at their key's indentation, single quotes.
    static let pyYAMLStyle = """
        # exported
        ---
        schemaVersion: '2.0.0'
        trips:
        - name: 'It''s far'
          destination: Zürich
          startDate: 2024-01-02T03:04:05Z
          endDate: "2024-01-03T03:04:05.250Z"
          bucketList:
          - title: Walk
            details: ''
            hasReservation: false
            isInPlan: yes
          - {}
          livingAccommodation:
            address: 1 Main St # the first
            placeName: Inn
        - name: Other
          bucketList: []
          livingAccommodation: null

        """

    @Test("random edits of a document: the scanner's events are libyaml's, whoever reads them", arguments: [0, 1] as [Int])
    func mutations(document: Int) throws {
        var generator = ArbitraryTrips.yaml(seed: 99)
        let base = document == 0 ? Array(try YAMLTestSupport.write((0..<3).map { _ in generator.trip() }).utf8)
            : Array(Self.pyYAMLStyle.utf8)
        #expect(Self.compare(base))
        let pieces: [[UInt8]] = [" ", "\n", "- ", ": ", ":", "#", " #", "\"", "'", "\\", "&a ", "*a", "!", "|", ">", "[", "]",
                                 "{", "}", "[]", "{}", "\t", "é", "\u{2028}", "x", "%", "? ", ",", "---\n", "...\n", "\r",
                                 "\\u00e9", "\\x", "\r\n", "  ", "    ", "\n  - ", "\n    ", "\n- ", "''", "\u{FEFF}"].map { Array($0.utf8) }
        var random = SplitMix64(seed: 2026 + UInt64(document))
        var scanned = 0
        // TRIPCONV_YAML_MUTATIONS=N runs a longer sweep.
        let cases = Int(ProcessInfo.processInfo.environment["TRIPCONV_YAML_MUTATIONS"] ?? "") ?? 2000
        for _ in 0..<cases {
            var bytes = base
            for _ in 0..<random.int(1...4) {
                let at = random.int(0...bytes.count)
                switch random.int(0...2) {
                case 0: bytes.insert(contentsOf: random.pick(pieces), at: at)
                case 1: if at < bytes.count { bytes.removeSubrange(at..<min(bytes.count, at + random.int(1...4))) }
                default: if at < bytes.count { bytes.replaceSubrange(at..<at + 1, with: random.pick(pieces)) }
                }
            }
            if Self.compare(bytes) { scanned += 1 }
        }
        // Both sides of the line are exercised.
        #expect(scanned > cases / 10 && scanned < cases * 9 / 10, "scanned \(scanned) of \(cases)")
        print("YAML block scanner: mutations of document \(document): scanned \(scanned) of \(cases)")
    }

    @Test("a file is checked, then read from its start by the scanner; its bytes count once for progress")
    func fileReadTwice() throws {
        var generator = ArbitraryTrips.yaml(seed: 7)
        let trips = (0..<200).map { _ in generator.trip() }
        let path = try YAMLTestSupport.writeFile(trips)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        let input = try ByteInput(.file(path))
        let parser = YAMLEventParser(input: input)
        var events = 0
        while try parser.next().kind != .streamEnd { events += 1 }
        #expect(parser.readsWithBlockScanner)
        #expect(events > 200)
        #expect(input.bytesCounted == size)
        let read = try YAMLTestSupport.readFile(path)
        #expect(read.objects.count == trips.count)
    }

    @Test("a file outside the subset, checked part way, then read by libyaml: its bytes count once for progress")
    func fileDeclinedPartWay() throws {
        var generator = ArbitraryTrips.yaml(seed: 8)
        // An anchor on the first line: the check stops in the first of several chunks.
        let text = "extra: &anchor 1\n" + (try YAMLTestSupport.write((0..<1500).map { _ in generator.trip() }))
        #expect(text.utf8.count > 2 * YAMLBlockScanner.chunkSize)
        let path = try YAMLTestSupport.writeFile([])
        defer { try? FileManager.default.removeItem(atPath: path) }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let input = try ByteInput(.file(path))
        let parser = YAMLEventParser(input: input)
        while try parser.next().kind != .streamEnd {}
        #expect(!parser.readsWithBlockScanner)
        #expect(input.bytesCounted == text.utf8.count)
    }

    @Test("progress over two passes moves evenly: half the bytes in the check, the rest spread over the read")
    func progressOverTwoPasses() throws {
        let path = try YAMLTestSupport.writeFile([])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let size = 100_001
        try Data(repeating: 0x61, count: size).write(to: URL(fileURLWithPath: path))
        let input = try ByteInput(.file(path))
        #expect(input.canRewind)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 10_000, alignment: 8)
        defer { buffer.deallocate() }
        func readAll() throws { while try input.read(into: buffer) > 0 {} }
        input.beginCheckPass()
        _ = try input.read(into: buffer)
        #expect(input.bytesCounted == 5_000)
        try readAll()
        #expect(input.bytesCounted == size / 2)
        #expect(input.rewindForSecondPass())
        _ = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<5_000]))
        #expect(input.bytesCounted == size / 2 + (size - size / 2) * 5_000 / size)
        try readAll()
        #expect(input.bytesCounted == size)
    }

    @Test("progress over two passes of a file over 4 GiB: no overflow, the file counted once in all")
    func progressOverTwoPassesOfAHugeFile() {
        // A 10M-trip YAML export is 5.2 GB: `rest * read` passed Int.max and the parse thread trapped.
        let size = 5_169_048_289, checked = size / 2
        #expect(ByteInput.dueAfterCheck(read: 0, checked: checked, size: size) == 0)
        #expect(ByteInput.dueAfterCheck(read: size / 2, checked: checked, size: size) == (size - checked) / 2)
        #expect(ByteInput.dueAfterCheck(read: size - 1, checked: checked, size: size) == size - checked - 1)
        #expect(ByteInput.dueAfterCheck(read: size, checked: checked, size: size) == size - checked)
        #expect(ByteInput.dueAfterCheck(read: size + 10, checked: checked, size: size) == size - checked + 10)
        // Larger still: an exabyte-sized file, read to its end.
        let huge = Int.max / 2
        #expect(ByteInput.dueAfterCheck(read: huge, checked: huge / 2, size: huge) == huge - huge / 2)
    }

    @Test("chunks end at line ends: lines longer than a chunk, and a last line without its LF, read as libyaml reads them")
    func longLines() {
        // Lines of 1.2 MiB: a value of 0.6 MiB (under the scalar limit) and a comment as long.
        let long = String(repeating: "ab ", count: YAMLBlockScanner.chunkSize / 5)
        let longLines = Self.compare("a: \(long)x # \(long)\nb: \"\(long)\" # \(long)\nc: 1")
        #expect(longLines)
        let many = (0..<40_000).map { "- k\($0): \"v \($0) ünï\"\n  n: \($0)" }.joined(separator: "\n")
        let manyLines = Self.compare(many)
        #expect(manyLines)
    }
}
