import Foundation
import Testing
import TripKit
@testable import TripFormats

/// A rejected record carries its source text, exactly, in every format that has it: JSON arrays and
/// wrappers, XML and YAML (JSON Lines and CSV have their own suites). Generated documents put bad
/// trips among good ones, across the readers' chunk and batch boundaries; feeding the texts back
/// in a document of their own rejects them again for the same reasons.
@Suite("Rejected records' text")
struct RejectedTextTests {
    // MARK: - JSON

    @Test("a JSON array's rejected trips carry their exact text, across chunk boundaries", arguments: [false, true])
    func jsonDocument(wrapped: Bool) throws {
        let d = RejectedTextDocument.json(rejectedTextTrips(400, seed: 11), wrapped: wrapped, seed: 12)
        #expect(d.expected.count > 30)
        let result = try JSONTestSupport.read(d.text, chunkSize: 4096)
        #expect(rejectedTextFound(result.rejections) == d.expected)
        #expect(result.trips.count == 400 - d.expected.count)
    }

    @Test("a JSON record longer than the kept-text limit has no text, even when its chunk held it whole")
    func jsonLongRecordWithinOneChunk() throws {
        var limits = JSONLimits()
        limits.maxRecordTextBytes = 100
        let bad = #"{"destination": "\#(String(repeating: "x", count: 200))", "startDate": "2024-01-01", "endDate": "2024-01-02"}"#
        let short = #"{"destination": "x", "startDate": "2024-01-01", "endDate": "2024-01-02"}"#
        let result = try JSONTestSupport.read("[\(bad), \(short)]", limits: limits)
        #expect(result.rejections.map(\.reason) == ["missing required field 'name'", "missing required field 'name'"])
        #expect(result.rejections.map(\.text) == [nil, short])
    }

    @Test("rejected JSON texts, put in an array of their own, are rejected again for the same reasons")
    func jsonFeedBack() throws {
        let d = RejectedTextDocument.json(rejectedTextTrips(200, seed: 13), wrapped: true, seed: 14)
        let first = try JSONTestSupport.read(d.text)
        let texts = try first.rejections.map { try #require($0.text) }
        let again = try JSONTestSupport.read("[" + texts.joined(separator: ",\n") + "]")
        #expect(again.trips.isEmpty)
        #expect(again.rejections.map(\.reason) == first.rejections.map(\.reason))
        #expect(again.rejections.map(\.text) == first.rejections.map(\.text))
    }

    // MARK: - XML

    @Test("an XML document's rejected trips carry their exact text, across the parser's 64 KiB chunks")
    func xmlDocument() throws {
        let d = RejectedTextDocument.xml(rejectedTextTrips(2000, seed: 21))
        let bytes = Array(d.text.utf8)
        #expect(bytes.count > 4 * XMLLimits.chunkSize)
        #expect(Self.someTextStraddlesChunks(d, in: bytes, chunk: XMLLimits.chunkSize))
        let result = try rejectedTextRead(bytes, format: .xml)
        #expect(rejectedTextFound(result.rejections) == d.expected)
        #expect(result.trips.count == 2000 - d.expected.count)
    }

    @Test("an XML document with CR LF line breaks keeps them in the text")
    func xmlCRLF() throws {
        let d = RejectedTextDocument.xml(rejectedTextTrips(60, seed: 22), newline: "\r\n")
        #expect(d.expected.allSatisfy { $0.text.contains("\r\n") })
        let result = try rejectedTextRead(Array(d.text.utf8), format: .xml)
        #expect(rejectedTextFound(result.rejections) == d.expected)
    }

    @Test("an XML document in UTF-16 gives its rejected trips' text as text")
    func xmlUTF16() throws {
        let d = RejectedTextDocument.xml(rejectedTextTrips(80, seed: 23))
        let utf16 = d.text.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"UTF-16\"")
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in utf16.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let result = try rejectedTextRead(bytes, format: .xml)
        #expect(rejectedTextFound(result.rejections) == d.expected)
    }

    @Test("a self-closing XML trip's text is its one tag")
    func xmlEmptyElement() throws {
        let result = try xmlRead(text: #"<trips><trip name="A" destination="B" startDate="2024-01-01" endDate="2024-01-02"/><trip name="C" /></trips>"#)
        #expect(result.trips.count == 1)
        #expect(result.rejections.map(\.text) == [#"<trip name="C" />"#])
    }

    @Test("an XML trip longer than 1 MiB is rejected without text, and the next bad trip has its text")
    func xmlLongRecord() throws {
        let details = String(repeating: "d", count: 1000)
        let items = String(repeating: "<item><title>t</title><details>\(details)</details></item>", count: 1100)
        let long = "<trip><destination>x</destination><startDate>2024-01-01</startDate><endDate>2024-01-02</endDate><bucketList>\(items)</bucketList></trip>"
        let short = "<trip><destination>y</destination><startDate>2024-01-01</startDate><endDate>2024-01-02</endDate></trip>"
        #expect(long.utf8.count > XMLLimits.maxRecordTextBytes)
        let result = try xmlRead(text: "<trips>\(long)\n\(short)</trips>")
        #expect(result.rejections.map(\.reason) == ["missing required field 'name'", "missing required field 'name'"])
        #expect(result.rejections.map(\.text) == [nil, short])
    }

    @Test("rejected XML texts, put in a document of their own, are rejected again for the same reasons")
    func xmlFeedBack() throws {
        let d = RejectedTextDocument.xml(rejectedTextTrips(200, seed: 24))
        let first = try rejectedTextRead(Array(d.text.utf8), format: .xml)
        let texts = try first.rejections.map { try #require($0.text) }
        let again = try xmlRead(text: "<trips schemaVersion=\"3.0.0\">\n" + texts.joined(separator: "\n") + "\n</trips>\n")
        #expect(again.trips.isEmpty)
        #expect(again.rejections.map(\.reason) == first.rejections.map(\.reason))
        #expect(again.rejections.map(\.text) == first.rejections.map(\.text))
    }

    // MARK: - YAML

    @Test("a YAML document's rejected trips carry their exact text, across the parse thread's batches",
          arguments: [RejectedTextDocument.YAMLShape.wrapper, .sequence, .documents])
    func yamlDocument(shape: RejectedTextDocument.YAMLShape) throws {
        let d = RejectedTextDocument.yaml(rejectedTextTrips(1500, seed: 31), shape: shape, seed: 32)
        #expect(d.expected.count > 100)
        let result = try rejectedTextRead(Array(d.text.utf8), format: .yaml)
        #expect(rejectedTextFound(result.rejections) == d.expected)
        #expect(result.trips.count == 1500 - d.expected.count)
    }

    @Test("a YAML document read on one thread gives the same texts")
    func yamlOneThread() throws {
        let d = RejectedTextDocument.yaml(rejectedTextTrips(600, seed: 33), shape: .wrapper, seed: 34)
        let parser = YAMLEventParser(bytes: Array(d.text.utf8), name: "t.yaml")
        var reader = YAMLRecordReader(parser: parser, options: ReadOptions(), threaded: false)
        var rejections: [SetAsideRecord] = []
        while let item = try reader.next() { if case .rejected(let r) = item { rejections.append(r) } }
        #expect(rejectedTextFound(rejections) == d.expected)
    }

    @Test("a YAML document with CR LF line breaks, a byte order mark and non-ASCII text gives exact texts")
    func yamlCRLFAndBOM() throws {
        let d = RejectedTextDocument.yaml(rejectedTextTrips(300, seed: 35), shape: .sequence, newline: "\r\n", seed: 36)
        #expect(d.expected.contains { $0.text.contains("\r\n") })
        let result = try rejectedTextRead([0xEF, 0xBB, 0xBF] + Array(d.text.utf8), format: .yaml)
        #expect(rejectedTextFound(result.rejections) == d.expected)
    }

    @Test("a YAML trip's text ends with its last value's line: an empty value's colon and a comment stay, what follows goes")
    func yamlTextEnd() throws {
        let text = """
        trips:
          - name: A
            destination: X
            startDate: 2024-01-01
            livingAccommodation:
          # about B
          - name: B   # the second
            destination: Y
            startDate: 2024-01-01
            endDate: 2024-01-02
            bucketList:
              - details: a literal follows
          - startDate: 2024-01-01
            endDate: 2024-01-02
            destination: |
              Zagreb
              # not a comment, part of the value

        """
        let result = try YAMLTestSupport.read(text)
        #expect(result.rejections.map(\.text) == [
            "name: A\n    destination: X\n    startDate: 2024-01-01\n    livingAccommodation:",
            "name: B   # the second\n    destination: Y\n    startDate: 2024-01-01\n    endDate: 2024-01-02\n    bucketList:\n      - details: a literal follows",
            "startDate: 2024-01-01\n    endDate: 2024-01-02\n    destination: |\n      Zagreb\n      # not a comment, part of the value\n",
        ])
        #expect(result.rejections.map(\.reason) == ["missing required field 'endDate'", "missing required field 'title' of a BucketListItem",
                                                    "missing required field 'name'"])
    }

    @Test("a YAML flow mapping's text runs to its closing brace, not to its line's end")
    func yamlFlowInLine() throws {
        let result = try YAMLTestSupport.read("[{name: A, destination: X}, {name: B, destination: Y, startDate: 2024-01-01, endDate: 2024-01-02}, {name: C}]\n")
        #expect(result.rejections.map(\.text) == ["{name: A, destination: X}", "{name: C}"])
    }

    @Test("a YAML trip longer than the kept-text limit is rejected without text; the next one has its text")
    func yamlLongRecord() throws {
        var limits = YAMLLimits()
        limits.maxRecordTextBytes = 100
        let long = "- destination: \(String(repeating: "x", count: 150))\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n"
        let short = "- destination: y\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n"
        let parser = YAMLEventParser(bytes: Array((long + short).utf8), name: "t.yaml", limits: limits)
        var reader = YAMLRecordReader(parser: parser, options: ReadOptions())
        var rejections: [SetAsideRecord] = []
        while let item = try reader.next() { if case .rejected(let r) = item { rejections.append(r) } }
        #expect(rejections.map(\.reason) == ["missing required field 'name'", "missing required field 'name'"])
        #expect(rejections.map(\.text) == [nil, "destination: y\n  startDate: 2024-01-01\n  endDate: 2024-01-02"])
    }

    @Test("a YAML trip longer than 1 MiB is rejected without text")
    func yamlLongRecordDefault() throws {
        let items = String(repeating: "    - {title: t, details: \(String(repeating: "d", count: 1000))}\n", count: 1100)
        let text = "- destination: x\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n  bucketList:\n\(items)- destination: y\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n"
        let result = try rejectedTextRead(Array(text.utf8), format: .yaml)
        #expect(result.rejections.map(\.text) == [nil, "destination: y\n  startDate: 2024-01-01\n  endDate: 2024-01-02"])
    }

    @Test("a YAML input in UTF-16 rejects the trips UTF-8 rejects with text, without text")
    func yamlUTF16() throws {
        let text = "- name: A\n  destination: X\n- name: B\n  destination: Y\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n"
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in text.utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let utf8 = try rejectedTextRead(Array(text.utf8), format: .yaml)
        let other = try rejectedTextRead(utf16, format: .yaml)
        #expect(utf8.rejections.map(\.text) == ["name: A\n  destination: X"])
        #expect(other.trips.count == 1)
        #expect(other.rejections.map(\.reason) == utf8.rejections.map(\.reason))
        #expect(other.rejections.map { [$0.origin.record, $0.origin.line] } == utf8.rejections.map { [$0.origin.record, $0.origin.line] })
        #expect(other.rejections.map(\.text) == [nil])
    }

    @Test("a YAML trip replayed by an alias is rejected without text, not with another trip's; an anchor is part of its node's text")
    func yamlAlias() throws {
        let text = "- &bad {name: A, destination: X}\n- {name: B, destination: Y, startDate: 2024-01-01, endDate: 2024-01-02}\n- *bad\n"
        let result = try YAMLTestSupport.read(text)
        #expect(result.rejections.map(\.origin.record) == [1, 3])
        #expect(result.rejections.map(\.text) == ["&bad {name: A, destination: X}", nil])
    }

    @Test("a YAML trip with a merge key has its own text, the alias and not what it merges")
    func yamlMergeKey() throws {
        let text = "- &b {name: A, destination: X, startDate: 2024-01-01, endDate: 2024-01-02}\n- <<: *b\n  name: B\n  startDate: nope\n"
        let result = try YAMLTestSupport.read(text)
        #expect(result.trips.count == 1)
        #expect(result.rejections.map(\.reason) == ["field 'startDate': expected an ISO 8601 date, found 'nope'"])
        #expect(result.rejections.map(\.text) == ["<<: *b\n  name: B\n  startDate: nope"])
    }

    @Test("rejected YAML texts, each put at its column in a document of its own, are rejected again for the same reasons")
    func yamlFeedBack() throws {
        let d = RejectedTextDocument.yaml(rejectedTextTrips(300, seed: 37), shape: .wrapper, seed: 38)
        let first = try rejectedTextRead(Array(d.text.utf8), format: .yaml)
        let documents = try first.rejections.map { r in
            "---\n" + String(repeating: " ", count: (r.origin.column ?? 1) - 1) + (try #require(r.text)) + "\n"
        }
        let again = try YAMLTestSupport.read(documents.joined())
        #expect(again.trips.isEmpty)
        #expect(again.rejections.map(\.reason) == first.rejections.map(\.reason))
        #expect(again.rejections.map(\.text) == first.rejections.map(\.text))
    }

    // MARK: - Helpers

    /// Whether some expected text's bytes cross a multiple of `chunk`, so a test exercises that.
    static func someTextStraddlesChunks(_ d: RejectedTextDocument, in bytes: [UInt8], chunk: Int) -> Bool {
        var searchFrom = 0
        for e in d.expected {
            let needle = Array(e.text.utf8)
            guard let start = find(needle, in: bytes, from: searchFrom) else { return false }
            searchFrom = start + needle.count
            if start / chunk != (start + needle.count - 1) / chunk { return true }
        }
        return false
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var i = from
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
