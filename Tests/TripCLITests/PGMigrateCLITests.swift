import Foundation
import Testing
import TripTestSupport

/// `tripconv migrate` on a PostgreSQL store (issue 16), checked with psql, an independent reader.
@Suite("migrate a PostgreSQL store", .needsPostgres)
struct PGMigrateCLITests {
    static func server(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try TestPostgres.requiredAddress(sourceLocation: sourceLocation)
    }

    static func psql(_ server: String, _ sql: String) throws -> String {
        let r = try CLI.run(CLI.tool("psql") ?? "/usr/bin/psql", [server, "-X", "-q", "-A", "-t", "-c", sql])
        #expect(r.status == 0, "\(r.stderr)")
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("load at 1.0.0, dry run, migrate with rejects, history and layout as psql sees them")
    func migrate() throws {
        let server = try Self.server()
        let schema = "t_cli_\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? Self.psql(server, "DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        let dir = try CLI.temporaryDirectory()
        var r = try CLI.tripconv("samples/trips-v1.json", "--target-version", "1.0.0", "-o", server, "--pg-schema", schema)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.psql(server, "SELECT count(*) FROM \(schema).trips") == "5")

        r = try CLI.tripconv("migrate", server, "--pg-schema", schema, "--dry-run")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.contains("would migrate 1.0.0 -> 3.0.0 in place under --dedupe merge"), "\(r.out)")
        #expect(r.out.contains("would merge 2 and drop 0: 5 trips -> 3 at 3.0.0"), "\(r.out)")
        #expect(r.out.contains("2 names are shared by several trips:\n  'Family Visit': 2 trips (row ids 1, 3)"), "\(r.out)")
        // The names shared, their row ids and the fields on which their trips differ: as the SQLite
        // store's dry run of the same trips says them.
        let sqlite = dir.appendingPathComponent("same.sqlite").path
        #expect(try CLI.tripconv("samples/trips-v1.json", "--target-version", "1.0.0", "-o", sqlite).status == 0)
        let sqliteRun = try CLI.tripconv("migrate", sqlite, "--dry-run")
        let sharedLines = { (out: String) in out.split(separator: "\n").filter { $0.hasPrefix("  '") } }
        #expect(sharedLines(r.out).count == 2 && sharedLines(r.out) == sharedLines(sqliteRun.out), "\(r.out)\n\(sqliteRun.out)")
        #expect(sharedLines(r.out).allSatisfy { $0.contains(" differs: ") || $0.hasSuffix("; no values differ") })
        #expect(try Self.psql(server, "SELECT value FROM \(schema).tripconv_metadata WHERE key = 'schemaVersion'") == "1.0.0")

        r = try CLI.tripconv("migrate", server, "--pg-schema", schema, "--backup", dir.appendingPathComponent("b").path)
        #expect(r.status == 64, "\(r.stderr)")

        let rejects = dir.appendingPathComponent("merged.jsonl").path
        r = try CLI.tripconv("migrate", server, "--pg-schema", schema, "--rejects", rejects)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("migrated 1.0.0 -> 3.0.0 in place"), "\(r.stderr)")
        let lines = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["kind"] as? String == "merged")
        }
        #expect(try Self.psql(server, "SELECT count(*) FROM \(schema).trips") == "3")
        #expect(try Self.psql(server, "SELECT string_agg(to_version, ',' ORDER BY id) FROM \(schema).tripconv_migrations") == "2.0.0,3.0.0")
        #expect(try Self.psql(server, "SELECT data_type FROM information_schema.columns WHERE table_schema = '\(schema)' "
                              + "AND table_name = 'trips' AND column_name = 'startDate'") == "timestamp with time zone")
        #expect(try Self.psql(server, "SELECT count(*) FROM pg_indexes WHERE schemaname = '\(schema)' AND indexname = 'trips_name_unique'") == "1")

        r = try CLI.tripconv("migrate", server, "--pg-schema", schema)
        #expect(r.status == 0 && r.stderr.contains("already at 3.0.0"), "\(r.stderr)")
        // No password in any message.
        r = try CLI.tripconv("migrate", "postgresql://someone:s3cret@127.0.0.1:1/x?connect_timeout=2")
        #expect(r.status == 69 && !r.stderr.contains("s3cret"), "\(r.stderr)")
    }
}
