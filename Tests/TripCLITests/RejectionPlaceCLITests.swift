import Foundation
import Testing
import TripTestSupport

/// Places on the command line: an error, a `--rejects` record (read with python3's json module)
/// and `-v`'s list name the line and column of the value or item a trip is rejected for, not the
/// trip's first line (issue 25, item 11).
@Suite("Places of rejections, on the command line")
struct RejectionPlaceCLITests {
    /// A YAML file whose second trip has an untitled bucket-list item on line 12, column 18, and
    /// a third trip whose end date on line 16, column 16 is no date.
    static let yaml = """
        schemaVersion: "3.0.0"
        trips:
          - name: Good
            destination: Portugal
            startDate: 2024-11-02T09:00:00Z
            endDate: 2024-11-09T21:00:00Z
          - name: Untitled
            destination: Portugal
            startDate: 2024-11-02T09:00:00Z
            endDate: 2024-11-09T21:00:00Z
            bucketList: [{title: Tram 28},
                         {details: pasteis}]
          - name: Undated
            destination: Portugal
            startDate: 2024-11-02T09:00:00Z
            endDate:   next week

        """

    @Test("an error, the rejects file and -v name the item's and the value's line and column", .needsPython3)
    func yamlPlaces() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let input = tmp.appendingPathComponent("r.yaml").path
        try Self.yaml.write(toFile: input, atomically: true, encoding: .utf8)
        let lines = Self.yaml.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[11].hasPrefix("                 {details"), "line 12 holds the item, at column 18")
        #expect(lines[15] == "    endDate:   next week", "line 16 holds the bad date, at column 16")

        let failed = try CLI.tripconv(input, "-o", tmp.appendingPathComponent("out.json").path)
        #expect(failed.status == 65)
        #expect(failed.stderr.hasPrefix("tripconv: \(input):12:18: missing required field 'title' of a BucketListItem\n"), "\(failed.stderr)")

        let rejects = tmp.appendingPathComponent("rejects.jsonl").path
        let run = try CLI.tripconv(input, "-v", "-o", tmp.appendingPathComponent("out.json").path, "--rejects", rejects)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("tripconv: \(input):12:18: rejected: missing required field 'title' of a BucketListItem"), "\(run.stderr)")
        #expect(run.stderr.contains("tripconv: \(input):16:16: rejected: field 'endDate': expected an ISO 8601 date, found 'next week'"),
                "\(run.stderr)")
        let dump = try CLI.python("""
            import json, sys
            print(json.dumps([[r['record'], r['line'], r['column']] for r in map(json.loads, open(sys.argv[1], encoding='utf-8'))]))
            """, [rejects])
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.out.trimmingCharacters(in: .whitespacesAndNewlines) == "[[2, 12, 18], [3, 16, 16]]")
    }
}
