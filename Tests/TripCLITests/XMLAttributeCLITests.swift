import Foundation
import Testing
import TripTestSupport

/// Issue 13's silent corruption, end to end: an `&` in an XML attribute (which libxml2 hands over
/// as `&#38;`) is an `&` in everything tripconv prints: converted trips, `detect`'s count of
/// repeated names, and the reasons in the rejects file. One thread and several.
@Suite("XML attributes through the CLI")
struct XMLAttributeCLITests {
    /// Two trips named `AT&T`, one by attribute, one by element (so a corrupted attribute would make
    /// them two names), one more, and one trip rejected for a date written as an attribute.
    static let input = """
    <?xml version="1.0" encoding="UTF-8"?>
    <trips schemaVersion="1.0.0">
      <trip name="AT&amp;T" destination="Tom &#38; Jerry" start_date="2024-01-01T00:00:00Z" end_date="2024-01-02T00:00:00Z">
        <bucketList><item title="R&amp;D" details="&lt;&amp;&gt;&#x26;"/></bucketList>
        <livingAccommodation address="1 &amp; 2" placeName="B&amp;B"/>
      </trip>
      <trip><name>AT&amp;T</name><destination>X</destination><start_date>2024-01-01T00:00:00Z</start_date><end_date>2024-01-02T00:00:00Z</end_date></trip>
      <trip name="Ben &amp; Jerry&apos;s" destination="Tom &#38; Jerry" start_date="2024-01-01T00:00:00Z" end_date="2024-01-02T00:00:00Z"/>
      <trip name="Q&amp;A" destination="D" start_date="soon &amp; later" end_date="2024-01-02T00:00:00Z"/>
    </trips>

    """

    /// Prints the JSON Lines file's records, and the rejects file's reasons, as python's json reads them.
    static let readBack = """
    import json, sys
    trips = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8') if l.strip()]
    rejects = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8') if l.strip()]
    print(json.dumps({"trips": trips, "reasons": sorted(r["reason"] for r in rejects)}, sort_keys=True))
    """

    @Test("convert, with one thread and with two, writes AT&T, and the rejects file's reasons say &",
          .enabled(if: ExternalTool.python3 != nil, "python3 is not installed"), arguments: ["1", "2"])
    func convert(jobs: String) throws {
        let dir = ScratchDirectory()
        let input = dir.file("in.xml", Self.input)
        let output = dir.path("out.jsonl"), rejects = dir.path("rejects.jsonl")
        let run = try CLI.tripconv(input, "--to", "jsonl", "-o", output, "--rejects", rejects, "--jobs", jobs)
        #expect(run.status == 0, "\(run.stderr)")
        let read = try CLI.python(Self.readBack, [output, rejects])
        #expect(read.status == 0, "\(read.stderr)")
        let got = try #require(try JSONSerialization.jsonObject(with: read.stdout) as? [String: Any])
        let trips = try #require(got["trips"] as? [[String: Any]])
        #expect(trips.map { $0["name"] as? String } == ["AT&T", "Ben & Jerry's"])
        #expect(trips.map { $0["destination"] as? String } == ["X", "Tom & Jerry"])
        let trip = try #require(trips.first)
        let items = trip["bucketList"] as? [[String: Any]]
        #expect(items?.map { $0["title"] as? String } == ["R&D"])
        #expect(items?.map { $0["details"] as? String } == ["<&>&"])
        let place = trip["livingAccommodation"] as? [String: Any]
        #expect(place?["address"] as? String == "1 & 2")
        #expect(place?["placeName"] as? String == "B&B")
        #expect(got["reasons"] as? [String] == [
            "duplicate name 'AT&T': merged into the trip first seen at \(input):3:3",
            "field 'start_date': expected an ISO 8601 date, found 'soon & later'",
        ])
    }

    @Test("detect counts AT&T by attribute and AT&T by element as one repeated name")
    func detect() throws {
        let dir = ScratchDirectory()
        let input = dir.file("in.xml", Self.input)
        let run = try CLI.tripconv("detect", "--json", input)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [[String: Any]])
        #expect(report.first?["trips"] as? Int == 3)
        #expect(report.first?["repeatedNames"] as? Int == 1)
        #expect(report.first?["badRecords"] as? Int == 1)
    }
}
