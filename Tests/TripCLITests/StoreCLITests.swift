import Foundation
import Testing
import TripTestSupport

/// The store through the command line, checked with the sqlite3 tool.
@Suite("tripconv with SQLite stores")
struct StoreCLITests {
    /// The tests that check a store with the sqlite3 tool skip without it, saying so.
    static let needsSQLite3 = ConditionTrait.needsProgram("sqlite3", install: "apt-get install sqlite3")

    /// What the sqlite3 tool prints for SQL on a store (for a test with `needsSQLite3`).
    static func sqlite(_ db: String, _ sql: String) throws -> String? {
        let tool = try #require(CLI.tool("sqlite3"), "the sqlite3 tool is not installed")
        return try CLI.run(tool, [db, sql]).out
    }

    static func checkIntegrity(_ db: String) throws {
        #expect(try sqlite(db, "PRAGMA integrity_check;") == "ok\n")
        #expect(try sqlite(db, "PRAGMA foreign_key_check;") == "")
    }

    @Test("exports go into a new store at 3.0.0, one trip per name, with a sound store", Self.needsSQLite3)
    func newStore() throws {
        let tmp = try CLI.temporaryDirectory()
        let db = tmp.appendingPathComponent("trips.sqlite").path
        let r = try CLI.tripconv("samples/trips-v1.json", "samples/trips-v2.jsonl", "-o", db)
        #expect(r.status == 0, "\(r.stderr)")
        try Self.checkIntegrity(db)
        #expect(try Self.sqlite(db, "PRAGMA user_version;") == "3\n")
        #expect(try Self.sqlite(db, "SELECT count(*) FROM trips;") == "6\n")
        #expect(try Self.sqlite(db, "SELECT name FROM trips ORDER BY id;") == "Family Visit\nSki Week\nConference\nWeekend in Portland\nRoad Trip\nKyoto\n")
        #expect(try Self.sqlite(db, "SELECT startDate FROM trips WHERE name = 'Conference';") == "2024-06-10T15:00:00.250Z\n")
    }

    @Test("the 1.0.0 sample store reads through the plan, merging its duplicates")
    func readStore() throws {
        let r = try CLI.tripconv("samples/trips-v1.sqlite", "--to", "jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("sqlite 1.0.0"))
        #expect(r.stderr.contains("stages 1.0.0 -> 2.0.0 (custom), 2.0.0 -> 3.0.0 (lightweight)"))
        let d = try CLI.tripconv("detect", "samples/trips-v1.sqlite")
        #expect(d.out.hasPrefix("samples/trips-v1.sqlite: sqlite 1.0.0"))
    }

    @Test("writing into an existing store upserts by name under the policy", Self.needsSQLite3, arguments: ["merge", "last", "first"])
    func upsert(policy: String) throws {
        let tmp = try CLI.temporaryDirectory()
        let db = tmp.appendingPathComponent("trips.sqlite").path
        #expect(try CLI.tripconv("samples/trips-v2.jsonl", "-o", db, "-q").status == 0)
        let r = try CLI.tripconv("samples/trips-v3.json", "-o", db, "--dedupe", policy)
        #expect(r.status == 0, "\(r.stderr)")
        try Self.checkIntegrity(db)
        #expect(try Self.sqlite(db, "SELECT count(*) FROM trips;") == "4\n")
        let end = try Self.sqlite(db, "SELECT endDate FROM trips WHERE name = 'Weekend in Portland';")
        #expect(end == (policy == "first" ? "2024-09-08T20:00:00Z\n" : "2024-09-08T20:00:00.500Z\n"))
        // Merge keeps the stored bucket list where the incoming one is empty; last replaces it.
        let items = try Self.sqlite(db, "SELECT count(*) FROM bucket_list_items i JOIN trips t ON t.id = i.trip_id WHERE t.name = 'Weekend in Portland';")
        #expect(items == (policy == "last" ? "0\n" : "1\n"))
        #expect(try Self.sqlite(db, "SELECT count(*) FROM bucket_list_items WHERE trip_id IS NULL;") == "0\n")
    }

    @Test("an upsert's accounting: under last the replacing trip counts as written, under merge as merged, under first as dropped",
          arguments: ["merge", "last", "first"])
    func upsertAccounting(policy: String) throws {
        let tmp = try CLI.temporaryDirectory()
        let db = tmp.appendingPathComponent("trips.sqlite").path
        let report = tmp.appendingPathComponent("report.json").path
        #expect(try CLI.tripconv("samples/trips-v2.jsonl", "-o", db, "-q").status == 0)
        // samples/trips-v3.json holds 2 trips, one of them a name the store holds.
        let r = try CLI.tripconv("samples/trips-v3.json", "-o", db, "--dedupe", policy, "--report", report)
        #expect(r.status == 0, "\(r.stderr)")
        let totals = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as! [String: Any]
        let counts = ["read", "written", "merged", "dropped", "rejected", "replacedInStore"].map { totals[$0] as? Int }
        switch policy {
        case "last":
            #expect(counts == [2, 2, 0, 0, 0, 1])
            #expect(r.stderr.contains("merged 0; dropped 0; rejected 0; wrote 2 at 3.0.0 (1 replacing stored trip);"), "\(r.stderr)")
        case "merge":
            #expect(counts == [2, 1, 1, 0, 0, 0])
            #expect(r.stderr.contains("merged 1; dropped 0; rejected 0; wrote 1 at 3.0.0;"), "\(r.stderr)")
        default:
            #expect(counts == [2, 1, 0, 1, 0, 0])
            #expect(r.stderr.contains("merged 0; dropped 1; rejected 0; wrote 1 at 3.0.0;"), "\(r.stderr)")
        }
    }

    @Test("a trip merged into a stored one is listed in --rejects with its input's file and line, not the store's")
    func upsertRejectsOrigin() throws {
        let tmp = try CLI.temporaryDirectory()
        let db = tmp.appendingPathComponent("trips.sqlite").path
        let rejects = tmp.appendingPathComponent("rejects.jsonl").path
        #expect(try CLI.tripconv("samples/trips-v2.jsonl", "-o", db, "-q").status == 0)
        let r = try CLI.tripconv("samples/trips-v3.json", "-o", db, "--rejects", rejects, "-q")
        #expect(r.status == 0, "\(r.stderr)")
        // The line of the `{` that opens the duplicate trip in the input.
        let lines = try String(contentsOfFile: CLI.root.appendingPathComponent("samples/trips-v3.json").path, encoding: .utf8)
            .components(separatedBy: "\n")
        let nameLine = try #require(lines.firstIndex { $0.contains("\"name\": \"Weekend in Portland\"") })
        let entries = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n")
            .map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(entries.count == 1)
        #expect(entries.first?["kind"] as? String == "merged")
        #expect(entries.first?["source"] as? String == "samples/trips-v3.json")
        #expect(entries.first?["record"] as? Int == 2)
        #expect(entries.first?["line"] as? Int == nameLine)  // 1-based line of the `{` just above
    }

    @Test("an older store is refused without --migrate and migrated in place with it", Self.needsSQLite3)
    func migrate() throws {
        let tmp = try CLI.temporaryDirectory()
        let db = tmp.appendingPathComponent("old.sqlite").path
        try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("samples/trips-v1.sqlite").path, toPath: db)
        let before = try Data(contentsOf: URL(fileURLWithPath: db))
        let refused = try CLI.tripconv("samples/trips-v3.json", "-o", db)
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("store is at 1.0.0, target is 3.0.0"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
        let migrated = try CLI.tripconv("samples/trips-v3.json", "-o", db, "--migrate")
        #expect(migrated.status == 0, "\(migrated.stderr)")
        try Self.checkIntegrity(db)
        #expect(try Self.sqlite(db, "PRAGMA user_version;") == "3\n")
        #expect(try Self.sqlite(db, "SELECT count(*) FROM tripconv_migrations;")?.trimmingCharacters(in: .whitespacesAndNewlines) != "0")
        #expect(try Self.sqlite(db, "SELECT count(*) FROM (SELECT name FROM trips GROUP BY name HAVING count(*) > 1);") == "0\n")
    }

    @Test("writing a store at 1.0.0 keeps duplicates, as 1.0.0 allows them", Self.needsSQLite3)
    func legacyStore() throws {
        let tmp = try CLI.temporaryDirectory()
        let db = tmp.appendingPathComponent("legacy.db").path
        #expect(try CLI.tripconv("samples/trips-v1.json", "--target-version", "1.0.0", "-o", db, "-q").status == 0)
        try Self.checkIntegrity(db)
        #expect(try Self.sqlite(db, "SELECT count(*) FROM trips;") == "5\n")
        #expect(try Self.sqlite(db, "PRAGMA user_version;") == "1\n")
    }
}
