import Foundation
import Testing
import TripTestSupport

/// A PostgreSQL store of one CLI test's own: a random `--pg-schema` in the test server
/// (`TRIPCONV_TEST_PG`), dropped when released. Checked with psql, the server's own client.
final class PGCLIStore {
    let server: String
    let schema: String

    /// A fresh store, or nil when there is no test server (failing under CI=true).
    init?() {
        guard let server = try? PGCLITests.server() else { return nil }
        self.server = server
        schema = TestPostgres.uniqueName()
    }

    deinit { _ = try? psql("SET lock_timeout = '10s'; DROP SCHEMA IF EXISTS \(schema) CASCADE") }

    /// tripconv writing into this store: `-o SERVER --pg-schema SCHEMA` after the arguments.
    func tripconv(_ arguments: [String], address: String? = nil) throws -> CLI.Result {
        try CLI.run(CLI.binary, arguments + ["-o", address ?? server, "--pg-schema", schema])
    }

    /// Runs SQL with psql (unaligned, tuples only), names resolving in this store's schema.
    @discardableResult
    func psql(_ sql: String) throws -> String { try TestPostgres.psql(server, "SET search_path TO \(schema);\n" + sql) }

    /// Expects the store sound: each name once, no related row naming a trip that is not there.
    func expectSound(unique: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if unique {
            #expect(try psql("SELECT count(*) - count(DISTINCT name) FROM trips") == "0\n", "names stored twice", sourceLocation: sourceLocation)
        }
        for table in ["bucket_list_items", "living_accommodations"] {
            let orphans = try psql("SELECT count(*) FROM \(table) c WHERE c.trip_id IS NULL OR NOT EXISTS (SELECT 1 FROM trips t WHERE t.id = c.trip_id)")
            #expect(orphans == "0\n", "\(table): rows of no trip", sourceLocation: sourceLocation)
        }
    }

    /// The store's trips, items and accommodations as text rows, each trip by its rank in id order,
    /// dates as the SQLite store writes them (ISO 8601 in UTC, milliseconds only where there are
    /// some), Booleans as 0 and 1: the same text `sqliteRows` gives for a SQLite store.
    func rows(dates: [String]) throws -> String {
        let shown = dates.map { d in
            "to_char(\"\(d)\" AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN to_char(\"\(d)\", 'MS') <> '000' "
                + "THEN '.' || to_char(\"\(d)\", 'MS') ELSE '' END || 'Z'"
        }
        return try psql(Self.rowsSQL(dates: shown, bool: { "\"\($0)\"::int" }).joined(separator: "\n"))
    }

    /// The same rows of a SQLite store, read with the sqlite3 tool.
    static func sqliteRows(_ path: String, dates: [String]) throws -> String {
        let sql = rowsSQL(dates: dates.map { "\"\($0)\"" }, bool: { "\"\($0)\"" }).joined(separator: "\n")
        return try CLI.run(CLI.tool("sqlite3") ?? "/usr/bin/sqlite3", [path, sql]).out
    }

    private static func rowsSQL(dates: [String], bool: (String) -> String) -> [String] {
        let rank = { (id: String) in "(SELECT count(*) FROM trips r WHERE r.id <= \(id))" }
        return [
            "SELECT \(rank("t.id")), name, destination, \(dates.joined(separator: ", ")) FROM trips t ORDER BY t.id;",
            "SELECT \(rank("i.trip_id")), position, title, details, \(bool("hasReservation")), \(bool("isInPlan")) FROM bucket_list_items i ORDER BY i.trip_id, position;",
            "SELECT \(rank("a.trip_id")), address, \"placeName\" FROM living_accommodations a ORDER BY a.trip_id;",
        ]
    }
}
