import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// libxml2 parses on a thread of its own and hands its events to the reader in batches, one per
/// 64 KiB chunk; the parse thread keeps what needs libxml2's buffer (places, the shape above the
/// trips, the input of rejected trips) and leaves out whitespace that means nothing. Reading with
/// the parser on the reader's own thread is the reference: both must give the same, to the byte.
@Suite("XML: libxml2 on a thread of its own")
struct XMLParseThreadTests {
    /// What a read gave, in a form two reads can be compared in: every trip and rejection with its
    /// origin, the rejections' texts, and the error that ended the read, if any.
    struct Outcome: Equatable {
        var items: [String] = []
        var error: String?
    }

    static func read(_ path: String, threaded: Bool) throws -> Outcome {
        var reader = try XMLRecordReader(.file(path), options: ReadOptions(), threaded: threaded)
        var outcome = Outcome()
        do {
            while let item = try reader.next() {
                switch item {
                case .trip(let t): outcome.items.append("trip \(t.origin) \(t.object)")
                case .rejected(let r): outcome.items.append("rejected \(r.origin) \(r.reason) \(r.text ?? "<no text>")")
                }
            }
        } catch let error as TripError {
            outcome.error = error.message
        }
        return outcome
    }

    /// Reads a document both ways; `difference` is nil when they agree, else their first difference.
    static func bothWays(_ bytes: [UInt8]) throws -> (threaded: Outcome, difference: String?) {
        let dir = ScratchDirectory()
        let path = dir.file("in.xml", bytes)
        return try withExtendedLifetime(dir) {
            let threaded = try read(path, threaded: true), here = try read(path, threaded: false)
            if let i = (0..<min(threaded.items.count, here.items.count)).first(where: { threaded.items[$0] != here.items[$0] }) {
                return (threaded, "item \(i): \(threaded.items[i]) against \(here.items[i])")
            }
            if threaded.items.count != here.items.count {
                return (threaded, "\(threaded.items.count) items against \(here.items.count)")
            }
            if threaded.error != here.error {
                return (threaded, "error \(threaded.error ?? "none") against \(here.error ?? "none")")
            }
            return (threaded, nil)
        }
    }

    @Test("trips, rejections with their text, and places are the same with libxml2 on its own thread, across many chunks")
    func sameBothWays() throws {
        let d = RejectedTextDocument.xml(rejectedTextTrips(1500, seed: 31))
        let bytes = Array(d.text.utf8)
        #expect(bytes.count > 8 * XMLLimits.chunkSize)
        let (threaded, difference) = try Self.bothWays(bytes)
        #expect(difference == nil)
        #expect(threaded.error == nil)
        #expect(threaded.items.count == 1500)
        #expect(threaded.items.filter { $0.hasPrefix("rejected") }.count == d.expected.count)
    }

    @Test("a document cut anywhere gives the same trips, then the same error, both ways")
    func cutDocuments() throws {
        let d = RejectedTextDocument.xml(rejectedTextTrips(600, seed: 32))
        let bytes = Array(d.text.utf8)
        var random = SplitMix64(seed: 33)
        var cuts = [1, 10, 40, bytes.count - 3, XMLLimits.chunkSize, XMLLimits.chunkSize + 1, 2 * XMLLimits.chunkSize - 3]
        for _ in 0..<12 { cuts.append(1 + random.below(bytes.count - 12)) }
        for cut in cuts {
            let (threaded, difference) = try Self.bothWays(Array(bytes[..<cut]))
            #expect(difference == nil, "cut at \(cut)")
            #expect(threaded.error != nil, "cut at \(cut)")
        }
    }

    @Test("errors the parse thread finds come after the trips before them: a stray element, text in the root, depth")
    func parseThreadErrors() throws {
        let trip = "<trip><name>A</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip>\n"
        let many = String(repeating: trip, count: 700)
        let deep = String(repeating: "<a>", count: 300)
        for tail in ["<foo/>", "oops", "<trip>\(deep)", "<!-- fine --><trip><name>&undeclared;</name></trip>"] {
            let bytes = Array("<trips>\n\(many)\(tail)</trips>".utf8)
            let (threaded, difference) = try Self.bothWays(bytes)
            #expect(difference == nil, "\(tail.prefix(20))")
            #expect(threaded.items.count == 700)
            #expect(threaded.error != nil)
        }
    }

    @Test("whitespace between elements means nothing, and a value of whitespace alone is kept, in every shape")
    func whitespace() throws {
        let items = """
        <bucketList> \n <item> <title> </title>\t<details>\n</details> </item>\n<item><title><![CDATA[ \t ]]></title></item> </bucketList>
        """
        let text = "<trips> <trip>\n  <name>  </name>  <destination>\r\n</destination>  <startDate>2024-05-01</startDate>" +
            "<endDate>2024-05-08</endDate> \(items)  <livingAccommodation> <address> \t</address> </livingAccommodation>\n</trip> </trips>"
        let result = try xmlRead(text: text)
        #expect(result.rejections.isEmpty)
        let trip = try #require(result.objects.first)
        #expect(trip.attributes[0] == .string("  "))
        #expect(trip.attributes[1] == .string("\n"))
        guard case .toMany(let list) = trip.relationships[0], case .toOne(let place) = trip.relationships[1] else {
            Issue.record("expected a bucket list and an accommodation"); return
        }
        #expect(list.map { $0.attributes[0] } == [.string(" "), .string(" \t ")])
        #expect(list.first?.attributes[1] == .string("\n"))
        #expect(place?.attributes[0] == .string(" \t"))
        #expect(try Self.bothWays(Array(text.utf8)).difference == nil)
    }

    @Test("text next to a child element still rejects its record, whitespace or not")
    func textBesideChildren() throws {
        let fields = "<destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate>"
        let cases: [(String, String)] = [
            ("<name> <b/> </name>\(fields)", "field 'name': expected text, found the element <b>"),
            ("<name>x<b/></name>\(fields)", "field 'name': expected text, found the element <b>"),
            ("<name>N</name>\(fields) <bucketList><item><title>t</title></item> x </bucketList>",
             "field 'bucketList': expected item elements, found the text 'x'"),
            ("<name>N</name> y \(fields)", "unexpected text 'y' in <trip>"),
            ("<name>N</name>\(fields)\n z\n", "unexpected text 'z' in <trip>"),
        ]
        for (inside, reason) in cases {
            let result = try xmlRead(text: "<trips>\n <trip>\(inside)</trip>\n</trips>")
            #expect(result.rejections.map(\.reason) == [reason], "\(inside)")
            #expect(result.trips.isEmpty)
        }
    }

    @Test("input that ends inside a skipped element names that element")
    func endInsideSkipped() throws {
        for (text, inside) in [("<trips><trip><foo>", "foo"), ("<trips><trip><name>x<b>", "b"), ("<trips>\n <trip><name>N</name>", "trip")] {
            let (outcome, difference) = try Self.bothWays(Array(text.utf8))
            #expect(difference == nil)
            #expect(outcome.error?.hasSuffix("unexpected end of input inside <\(inside)>") == true, "\(outcome.error ?? "no error")")
        }
    }

    @Test("a field of whitespace past the text limit, then a child, is rejected for its length, as when every piece is sent")
    func blankTextPastLimit() throws {
        let fields = "<destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate>"
        let spaces = String(repeating: " ", count: XMLLimits.maxTextBytes + 1)
        let text = "<trips><trip><name>\(spaces)<x/></name>\(fields)</trip><trip><name>Ok</name>\(fields)</trip></trips>"
        let result = try xmlRead(text: text)
        #expect(result.rejections.map(\.reason) == ["field 'name': text longer than \(XMLLimits.maxTextBytes) bytes"])
        #expect(result.trips.count == 1)
        #expect(try Self.bothWays(Array(text.utf8)).difference == nil)
    }

    @Test("a start tag of megabytes of attributes is read, and the trips after it too")
    func hugeStartTag() throws {
        let fields = "<destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate>"
        let long = String(repeating: "n", count: 3 << 20)
        var text = "<trips>\n<trip name=\"\(long)\">\(fields)</trip>\n"
        for i in 0..<2000 { text += "<trip><name>T\(i)</name>\(fields)</trip>\n" }
        text += "</trips>\n"
        let (outcome, difference) = try Self.bothWays(Array(text.utf8))
        #expect(difference == nil)
        #expect(outcome.error == nil)
        #expect(outcome.items.count == 2001)
        #expect(outcome.items.first?.contains(String(repeating: "n", count: 1000)) == true)
    }

    @Test("opening an XML reader parses nothing; the first next() starts the parse thread")
    func startsOnFirstNext() throws {
        let dir = ScratchDirectory()
        let path = dir.file("in.xml", Array("<trips><trip><name>A</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>".utf8))
        try withExtendedLifetime(dir) {
            var reader = try XMLRecordReader(.file(path), options: ReadOptions())
            #expect(!reader.hasStarted)
            #expect(reader.parsesAhead)
            guard case .trip = try reader.next() else { Issue.record("expected a trip"); return }
            #expect(reader.hasStarted)
        }
    }

    @Test("a rejected trip's text is not pieced together across input that was never kept")
    func windowGap() {
        func segment(_ start: Int, _ text: String) -> InputSegment {
            let bytes = ByteStorage(capacity: text.utf8.count)
            Array(text.utf8).withUnsafeBufferPointer { bytes.append($0) }
            return InputSegment(start: start, bytes: bytes)
        }
        var window = SourceWindow(maxTextBytes: 100)
        window.keep(from: 0)
        window.add([segment(0, "<trip>ab"), segment(10, "cd</trip>")], lowMark: 0)
        #expect(window.text(from: 0, to: 8) == "<trip>ab")
        #expect(window.text(from: 10, to: 19) == "cd</trip>")
        #expect(window.text(from: 0, to: 19) == nil)
        #expect(window.text(from: 6, to: 12) == nil)
    }
}

/// `ReadOptions.parsesAhead` (false with `--jobs 1`) keeps the XML and YAML parsers on the reader's
/// thread, and changes nothing that is read.
@Suite("Parsing ahead, or not")
struct ParsesAheadTests {
    static func readAll(_ reader: inout any RecordReader) throws -> [String] {
        var items: [String] = []
        while let item = try reader.next() {
            switch item {
            case .trip(let t): items.append("\(t.origin) \(t.object)")
            case .rejected(let r): items.append("\(r.origin) \(r.reason) \(r.text ?? "")")
            }
        }
        return items
    }

    @Test("XML and YAML parse on a thread of their own by default, and on the reader's with parsesAhead false, reading the same", arguments: [Format.xml, .yaml])
    func parsesAhead(format: Format) throws {
        let d = format == .xml ? RejectedTextDocument.xml(rejectedTextTrips(300, seed: 34))
                               : RejectedTextDocument.yaml(rejectedTextTrips(300, seed: 34), shape: .wrapper, seed: 35)
        let dir = ScratchDirectory()
        let path = dir.file("in.\(format)", Array(d.text.utf8))
        try withExtendedLifetime(dir) {
            var results: [[String]] = []
            for ahead in [true, false] {
                var reader = try FormatFactory.makeReader(.file(path), format: format, options: ReadOptions(parsesAhead: ahead))
                if let xml = reader as? XMLRecordReader { #expect(xml.parsesAhead == ahead) }
                else if let yaml = reader as? YAMLRecordReader { #expect(yaml.parsesAhead == ahead) }
                else { Issue.record("expected the \(format) reader, found \(type(of: reader))") }
                results.append(try Self.readAll(&reader))
            }
            #expect(results[0].count == 300)
            #expect(results[0] == results[1])
        }
    }
}
