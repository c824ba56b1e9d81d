import Foundation
import Testing
import TripTestSupport

/// `--rejects FILE` end to end: for JSON arrays and wrappers, XML and YAML, the rejects file (read
/// with python3's json module) holds each rejected trip's kind, source, record, line and reason,
/// and its exact source text, line breaks and all; the texts, put back in a document, are rejected
/// again for the same reasons.
@Suite("Rejects file texts")
struct RejectsTextCLITests {
    /// An input with good and bad trips; each bad one's record, line (of its fault: an untitled item's
    /// own line), reason and text.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var input: String
        var bad: [(record: Int, line: Int, reason: String, text: String)]
        /// The texts put back in a document of the format (YAML: each at its column).
        var feed: @Sendable ([String]) -> String
        var testDescription: String { name }
    }

    static let noTitle = "missing required field 'title' of a BucketListItem"
    static let badDate = "field 'startDate': expected an ISO 8601 date, found 'soon'"
    static let noName = "missing required field 'name'"

    static let jsonBad = [
        "{\"name\": \"Porto\", \"destination\": \"Portugal\", \"startDate\": \"2024-05-01\", \"endDate\": \"2024-05-03\",\n    \"bucketList\": [{\"details\": \"a \\\"quoted\\\" one\"}]}",
        "{\"name\": \"Évora\", \"destination\": \"Portugal\", \"startDate\": \"soon\", \"endDate\": \"2024-05-03\"}",
        "{\"destination\": \"Nowhere\\nat all\", \"startDate\": \"2024-05-01\", \"endDate\": \"2024-05-03\"}",
    ]
    static let jsonGood = "{\"name\": \"Lisbon\", \"destination\": \"Portugal\", \"startDate\": \"2024-05-01\", \"endDate\": \"2024-05-03\"}"

    static let xmlBad = [
        "<trip>\n    <name>Porto</name>\n    <destination>Portugal</destination>\n    <startDate>2024-05-01</startDate>\n    <endDate>2024-05-03</endDate>\n    <bucketList><item><details>a &lt;b&gt; one</details></item></bucketList>\n  </trip>",
        "<trip><name>Évora</name><destination>Portugal</destination><startDate>soon</startDate><endDate>2024-05-03</endDate></trip>",
        "<trip destination=\"Nowhere\" startDate=\"2024-05-01\" endDate=\"2024-05-03\"/>",
    ]
    static let xmlGood = "<trip><name>Lisbon</name><destination>Portugal</destination><startDate>2024-05-01</startDate><endDate>2024-05-03</endDate></trip>"

    static let yamlBad = [
        "name: Porto\n    destination: Portugal\n    startDate: 2024-05-01\n    endDate: 2024-05-03\n    bucketList:\n      - details: \"a \\\"quoted\\\" one\"",
        "{name: Évora, destination: Portugal, startDate: soon, endDate: 2024-05-03}",
        "destination: |\n      Nowhere\n      at all\n    startDate: 2024-05-01\n    endDate: 2024-05-03",
    ]

    static let cases: [Case] = [
        Case(name: "json array",
             input: "[\n  \(jsonBad[0]),\n  \(jsonGood),\n  \(jsonBad[1]), \(jsonBad[2])\n]\n",
             bad: [(1, 3, noTitle, jsonBad[0]), (3, 5, badDate, jsonBad[1]), (4, 5, noName, jsonBad[2])],
             feed: { "[" + $0.joined(separator: ",\n") + "]\n" }),
        Case(name: "json wrapper",
             input: "{\"schemaVersion\": \"3.0.0\", \"trips\": [\(jsonGood),\n  \(jsonBad[0]),\n  \(jsonBad[1]),\n  \(jsonBad[2])]}\n",
             bad: [(2, 3, noTitle, jsonBad[0]), (3, 4, badDate, jsonBad[1]), (4, 5, noName, jsonBad[2])],
             feed: { "{\"schemaVersion\": \"3.0.0\", \"trips\": [" + $0.joined(separator: ",\n") + "]}\n" }),
        Case(name: "xml",
             input: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<trips schemaVersion=\"3.0.0\">\n  \(xmlBad[0])\n  \(xmlGood)\n  \(xmlBad[1])\n  \(xmlBad[2])\n</trips>\n",
             bad: [(1, 8, noTitle, xmlBad[0]), (3, 11, badDate, xmlBad[1]), (4, 12, noName, xmlBad[2])],
             feed: { "<trips schemaVersion=\"3.0.0\">\n" + $0.joined(separator: "\n") + "\n</trips>\n" }),
        Case(name: "yaml",
             input: "schemaVersion: \"3.0.0\"\ntrips:\n  - \(yamlBad[0])\n  # the good one\n  - name: Lisbon\n    destination: Portugal\n    startDate: 2024-05-01\n    endDate: 2024-05-03\n  - \(yamlBad[1])\n  - \(yamlBad[2])\n",
             bad: [(1, 8, noTitle, yamlBad[0]), (3, 14, badDate, yamlBad[1]), (4, 15, noName, yamlBad[2])],
             feed: { texts in texts.map { "---\n    " + $0 + "\n" }.joined() }),
    ]

    static let extensions = ["json array": "json", "json wrapper": "json", "xml": "xml", "yaml": "yaml"]

    /// Reads a rejects file with python3's json module, one line at a time, and prints each record
    /// as JSON of its kind, source, record, line, reason and text (null when absent).
    static let dump = """
        import json, sys
        out = []
        for line in open(sys.argv[1], encoding='utf-8'):
            r = json.loads(line)
            out.append([r['kind'], r['source'], r['record'], r['line'], r['reason'], r.get('text')])
        print(json.dumps(out))
        """

    static func rejects(_ path: String) throws -> [[Any]] {
        let r = try CLI.python(dump, [path])
        #expect(r.status == 0, "\(r.stderr)")
        return try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[Any]] ?? []
    }

    @Test("the rejects file holds each rejected trip's origin, reason and exact text", .needsPython3, arguments: cases)
    func rejectsFile(_ c: Case) throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = tmp.appendingPathComponent("in.\(Self.extensions[c.name]!)").path
        try c.input.write(toFile: input, atomically: true, encoding: .utf8)
        let rejectsPath = tmp.appendingPathComponent("rejects.jsonl").path
        let run = try CLI.tripconv(input, "-o", tmp.appendingPathComponent("out.jsonl").path, "--rejects", rejectsPath)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("rejected 3"))
        let found = try Self.rejects(rejectsPath)
        #expect(found.count == c.bad.count)
        for (r, b) in zip(found, c.bad) {
            #expect(r[0] as? String == "rejected")
            #expect(r[1] as? String == input)
            #expect(r[2] as? Int == b.record)
            #expect(r[3] as? Int == b.line)
            #expect(r[4] as? String == b.reason)
            #expect(r[5] as? String == b.text)
        }
    }

    @Test("the rejected texts, put back in a document, are rejected again for the same reasons", .needsPython3, arguments: cases)
    func feedBack(_ c: Case) throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let ext = Self.extensions[c.name]!
        let input = tmp.appendingPathComponent("in.\(ext)").path
        try c.input.write(toFile: input, atomically: true, encoding: .utf8)
        let first = tmp.appendingPathComponent("first.jsonl").path
        #expect(try CLI.tripconv(input, "--to", "jsonl", "-o", tmp.appendingPathComponent("a.jsonl").path, "--rejects", first).status == 0)
        let firstFound = try Self.rejects(first)
        let texts = firstFound.compactMap { $0[5] as? String }
        #expect(texts.count == c.bad.count)

        let fed = tmp.appendingPathComponent("fed.\(ext)").path
        try c.feed(texts).write(toFile: fed, atomically: true, encoding: .utf8)
        let second = tmp.appendingPathComponent("second.jsonl").path
        let run = try CLI.tripconv(fed, "--to", "jsonl", "-o", tmp.appendingPathComponent("b.jsonl").path, "--rejects", second)
        #expect(run.status == 0, "\(run.stderr)")
        let secondFound = try Self.rejects(second)
        #expect(secondFound.map { $0[4] as? String } == firstFound.map { $0[4] as? String })
        #expect(secondFound.map { $0[5] as? String } == firstFound.map { $0[5] as? String })
    }

    @Test("a text holding line and paragraph separators stays on its one line of the rejects file", .needsPython3)
    func lineSeparators() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let text = "<trip>\n  <name>A\u{2028}B\u{2029}C\u{85}D\r\nE</name>\n  <destination>X</destination>\n</trip>"
        let input = tmp.appendingPathComponent("in.xml").path
        try "<trips>\n\(text)\n</trips>\n".write(toFile: input, atomically: true, encoding: .utf8)
        let rejectsPath = tmp.appendingPathComponent("rejects.jsonl").path
        #expect(try CLI.tripconv(input, "--to", "jsonl", "-o", tmp.appendingPathComponent("o.jsonl").path, "--rejects", rejectsPath).status == 0)
        // `splitlines` ends a line at U+2028, U+2029 and U+0085 too: each record must still be one line.
        let r = try CLI.python("""
            import json, sys
            lines = open(sys.argv[1], encoding='utf-8', newline='').read().splitlines()
            print(json.dumps([json.loads(l)['text'] for l in lines]))
            """, [rejectsPath])
        #expect(r.status == 0, "\(r.stderr)")
        let texts = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String]
        #expect(texts == [text])
    }
}
