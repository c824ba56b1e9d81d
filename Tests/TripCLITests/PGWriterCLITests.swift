import Foundation
import Testing
import TripTestSupport

/// `tripconv … -o POSTGRES --pg-schema S` (issue 16): the same rows, accounting and set-aside
/// records as the SQLite store for the same runs, checked with psql and sqlite3; refusals and
/// faults with their exit statuses.
@Suite("tripconv writing PostgreSQL stores")
struct PGWriterCLITests {
    /// A run's totals from `--report`: read, written, merged, dropped, rejected, replacedInStore.
    static func totals(_ report: String) throws -> [Int] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        return ["read", "written", "merged", "dropped", "rejected", "replacedInStore"].map { json[$0] as? Int ?? -1 }
    }

    /// A message without the store's name (a path or `host:port/database/schema`).
    static func unnamed(_ stderr: String, _ name: String) -> String { stderr.replacing(name, with: "STORE") }

    @Test("two runs leave the rows, accounting and set-aside records the SQLite store gets", .needsSQLite3, .needsPostgres,
          arguments: ["merge", "last", "first", "fail"], ["3.0.0", "2.0.0", "1.0.0"])
    func sameAsSQLite(policy: String, version: String) throws {
        let store = try #require(PGCLIStore())
        let tmp = try CLI.temporaryDirectory()
        let db = tmp.appendingPathComponent("trips.sqlite").path
        // Under fail, inputs without names in common but the store's (the pipeline refuses any other).
        let runs = policy == "fail" ? [["samples/trips-v2.jsonl"], ["samples/trips-v3.json"]]
            : [["samples/trips-v1.json", "samples/trips-v2.jsonl"], ["samples/trips-v3.json", "samples/trips-v1.csv"]]
        for (n, inputs) in runs.enumerated() {
            let common = inputs + ["--target-version", version, "--dedupe", policy]
            let sqliteReport = tmp.appendingPathComponent("sqlite-\(n).json").path, pgReport = tmp.appendingPathComponent("pg-\(n).json").path
            let sqliteRejects = tmp.appendingPathComponent("sqlite-\(n).jsonl").path, pgRejects = tmp.appendingPathComponent("pg-\(n).jsonl").path
            let s = try CLI.run(CLI.binary, common + ["-o", db, "--report", sqliteReport, "--rejects", sqliteRejects])
            let p = try store.tripconv(common + ["--report", pgReport, "--rejects", pgRejects])
            #expect(p.status == s.status, "run \(n + 1): \(p.stderr) / \(s.stderr)")
            // The store as messages name it, after `tripconv: `: `host:port/database/schema`.
            let storeName = p.stderr.range(of: "/\(store.schema)").map { String(p.stderr[..<$0.upperBound].dropFirst(10)) } ?? ""
            guard s.status == 0 else {
                #expect(Self.unnamed(p.stderr, storeName).components(separatedBy: "\n").first == Self.unnamed(s.stderr, db).components(separatedBy: "\n").first)
                continue
            }
            #expect(try Self.totals(pgReport) == Self.totals(sqliteReport), "run \(n + 1)")
            let rejects = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
            #expect(rejects(pgRejects) == rejects(sqliteRejects), "run \(n + 1)")
        }
        let dates = version == "3.0.0" ? ["startDate", "endDate"] : ["start_date", "end_date"]
        let expected = try PGCLIStore.sqliteRows(db, dates: dates)
        #expect(try store.rows(dates: dates) == expected)
        #expect(policy == "fail" || expected.contains("2024-06-10T15:00:00.250Z"))
        try store.expectSound(unique: version != "1.0.0")
        #expect(try store.psql("SELECT value FROM tripconv_metadata WHERE key = 'schemaVersion'") == version + "\n")
    }

    @Test("a trip with NUL in its text is set aside as rejected, named by its input's line; the others are written", .needsPostgres)
    func nul() throws {
        let store = try #require(PGCLIStore())
        let tmp = try CLI.temporaryDirectory()
        let input = tmp.appendingPathComponent("nul.jsonl").path
        let rejects = tmp.appendingPathComponent("rejects.jsonl").path
        let trip = { (name: String, details: String) in
            "{\"name\": \"\(name)\", \"destination\": \"x\", \"startDate\": \"2024-01-01T00:00:00.123Z\", \"endDate\": \"2024-01-02T00:00:00Z\", "
                + "\"bucketList\": [{\"title\": \"t\", \"details\": \"\(details)\", \"hasReservation\": false, \"isInPlan\": true}]}\n"
        }
        try (trip("Alpha", "fine") + trip("Nul\\u0000name", "") + trip("Beta", "at \\u0000 noon") + trip("Gamma", "tab\\tnewline\\n"))
            .write(toFile: input, atomically: true, encoding: .utf8)
        let r = try store.tripconv([input, "--rejects", rejects])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("merged 0; dropped 0; rejected 2; wrote 2 at 3.0.0;"), "\(r.stderr)")
        let entries = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n")
            .map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        #expect(entries.map { $0["kind"] as? String } == ["rejected", "rejected"])
        #expect(entries.map { $0["line"] as? Int } == [2, 3])
        #expect(entries.map { $0["source"] as? String } == [input, input])
        #expect(entries.map { $0["reason"] as? String } == [
            "field 'name': PostgreSQL text cannot hold a NUL character (U+0000)",
            "bucketList: field 'details': PostgreSQL text cannot hold a NUL character (U+0000)",
        ])
        #expect(try store.psql("SELECT name, encode(convert_to(details, 'UTF8'), 'hex'), \"startDate\" FROM trips JOIN bucket_list_items ON trip_id = trips.id ORDER BY trips.id")
                == "Alpha|66696e65|2024-01-01 00:00:00.123+00\nGamma|746162096e65776c696e650a|2024-01-01 00:00:00.123+00\n")
    }

    @Test("a server that is not there is exit 69, naming its host and port and never the password")
    func unreachable() throws {
        let tmp = try CLI.temporaryDirectory()
        let missing = tmp.appendingPathComponent("no-socket").path
        for (address, place) in [("host=\(missing) port=5 connect_timeout=2", "\(missing):5"),
                                 ("postgresql://someone:s3cret-pass@127.0.0.1:1/trips?connect_timeout=2", "127.0.0.1:1")] {
            let r = try CLI.tripconv("samples/trips-v3.json", "-o", address)
            #expect(r.status == 69, "\(r.stderr)")
            #expect(r.stderr.hasPrefix("tripconv: \(place): cannot connect to PostgreSQL: "), "\(r.stderr)")
            #expect(!r.stderr.contains("s3cret"))
        }
    }

    @Test("a role the server refuses is exit 77", .needsPostgres)
    func refused() throws {
        let store = try #require(PGCLIStore())
        let r = try store.tripconv(["samples/trips-v3.json"], address: store.server + " user=nobody_here")
        #expect(r.status == 77, "\(r.stderr)")
        #expect(r.stderr.contains("PostgreSQL refused the credentials"), "\(r.stderr)")
    }

    @Test("a store at a version tripconv does not know is refused with 65, as a SQLite store is, and left as it was", .needsPostgres)
    func newerStore() throws {
        let store = try #require(PGCLIStore())
        #expect(try store.tripconv(["samples/trips-v3.json", "-q"]).status == 0)
        try store.psql("UPDATE tripconv_metadata SET value = '9.0.0' WHERE key = 'schemaVersion'")
        let r = try store.tripconv(["samples/trips-v2.jsonl"])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("tripconv: "), "\(r.stderr)")
        #expect(r.stderr.contains("/\(store.schema): metadata schemaVersion '9.0.0' is not a known version\nnote: known versions: 1.0.0, 2.0.0, 3.0.0"), "\(r.stderr)")
        #expect(try store.psql("SELECT count(*) FROM trips") == "2\n")
    }

    @Test("a store at 1.0.0 written at 3.0.0 without --migrate is a usage error naming --migrate", .needsPostgres)
    func olderStore() throws {
        let store = try #require(PGCLIStore())
        #expect(try store.tripconv(["samples/trips-v1.json", "--target-version", "1.0.0", "-q"]).status == 0)
        let r = try store.tripconv(["samples/trips-v3.json"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("store is at 1.0.0, target is 3.0.0; pass --migrate to migrate it in place"), "\(r.stderr)")
        #expect(try store.psql("SELECT count(*) FROM trips") == "5\n")
    }

    @Test("a connection terminated in the middle of a COPY is exit 74 with nothing of the run stored; the run again exits 0", .needsPostgres)
    func terminated() throws {
        let store = try #require(PGCLIStore())
        let tmp = try CLI.temporaryDirectory()
        let big = tmp.appendingPathComponent("big.jsonl").path
        let gen = try CLI.run(URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent("tripgen").path,
                              ["--trips", "20000", "--duplicates", "0", "--seed", "16", "-o", big])
        #expect(gen.status == 0, "\(gen.stderr)")
        #expect(try store.tripconv(["samples/trips-v3.json", "-q"]).status == 0)
        // The loader names itself, so the terminator cuts its connection and no other.
        let application = "tripconv_test_" + store.schema
        final class Box: @unchecked Sendable { var result: CLI.Result? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let arguments = [big, "-o", store.server + " application_name=\(application)", "--pg-schema", store.schema]
        Thread {
            box.result = try? CLI.run(CLI.binary, arguments)
            done.signal()
        }.start()
        var terminated = false
        let deadline = Date().addingTimeInterval(120)
        while !terminated && Date() < deadline && done.wait(timeout: .now() + 0.02) == .timedOut {
            terminated = try store.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(application)' "
                                        + "AND query LIKE 'COPY %' AND state <> 'idle'") == "t\n"
        }
        if terminated { done.wait() }
        #expect(terminated, "the loader's COPY was never seen")
        let r = try #require(box.result)
        #expect(r.status == 74, "\(r.stderr)")
        #expect(r.stderr.contains("the connection to PostgreSQL was lost"), "\(r.stderr)")
        #expect(try store.psql("SELECT count(*) FROM trips") == "2\n")
        // The same load again completes.
        let report = tmp.appendingPathComponent("again.json").path
        let again = try store.tripconv([big, "--report", report, "-q"])
        #expect(again.status == 0, "\(again.stderr)")
        let written = try Self.totals(report)[1]
        #expect(written > 19_000)
        #expect(try store.psql("SELECT count(*) FROM trips") == "\(written + 2)\n")
        try store.expectSound()
    }
}
