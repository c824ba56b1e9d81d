import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// A schema of its own for one test on the test server, dropped (with everything in it) when the
/// test is done; SQL goes in through psql, an independent writer.
final class PGTestSchema {
    let address: String
    let name: String

    /// Makes the schema (for a test with the `.needsPostgres` trait).
    static func make() throws -> PGTestSchema {
        let address = try PGConnectionTests.server()
        let schema = PGTestSchema(address: address, name: TestPostgres.uniqueName())
        try TestPostgres.psql(address, "CREATE SCHEMA \(schema.name)")
        return schema
    }

    private init(address: String, name: String) { self.address = address; self.name = name }

    /// Runs SQL with psql with the schema first on the search path; returns what psql prints.
    @discardableResult
    func run(_ sql: String) throws -> String {
        try TestPostgres.psql(address, "SET search_path TO \(name);\n" + sql)
    }

    /// Drops the schema; a connection left open on it would hold it, so psql waits 10 s at most.
    func drop() {
        do {
            try TestPostgres.psql(address, "SET lock_timeout = '10s'; DROP SCHEMA \(name) CASCADE")
        } catch {
            Issue.record("cannot drop schema \(name): \(error)")
        }
    }

    /// Runs `body` with a fresh schema, dropped after it (for a test with the `.needsPostgres` trait).
    static func with(_ body: (PGTestSchema) throws -> Void) throws {
        let schema = try make()
        defer { schema.drop() }
        try body(schema)
    }

    /// The store's name as readers and messages give it (`host:port/database/schema`).
    var storeName: String { get throws { try PGConnection(address, schema: name).name } }

    /// Read options that read this schema's store.
    var readOptions: ReadOptions {
        var o = ReadOptions()
        o.pgSchema = name
        return o
    }

    /// Reads the store to the end, as `SQLiteTesting.readStore` reads a SQLite one.
    func read(_ options: ReadOptions? = nil) throws -> SQLiteReadResult {
        var reader: any RecordReader = try PGRecordReader(address: address, options: options ?? readOptions)
        return try SQLiteTesting.readAll(&reader)
    }

    /// Converts the store into a JSON file at `version` and returns its `trips`, parsed by Foundation
    /// (`ignoringUnknown`: unknown columns ignored, bad records set aside).
    func json(at version: SchemaVersion, scratch: ScratchDirectory, ignoringUnknown: Bool = false) throws -> [[String: Any]] {
        var options = RunOptions()
        options.targetVersion = version
        options.reading = readOptions
        options.reading.ignoreUnknown = ignoringUnknown
        options.rejects = ignoringUnknown ? scratch.path("rejects-\(UUID().uuidString).jsonl") : nil
        let out = scratch.path("out-\(UUID().uuidString).json")
        _ = try options.conversion(to: .file(out)).run([RunInput(.file(address), format: .postgresql)])
        let top = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        #expect(top?["schemaVersion"] as? String == version.description)
        return top?["trips"] as? [[String: Any]] ?? []
    }
}

/// Hand-written SQL for the PostgreSQL store tests: the tables as tripconv's layout gives them, and
/// rows inserted as any other program would.
enum PGStoreSQL {
    /// The tables of `version` (`PGLayout`'s DDL) and, with `metadata`, tripconv's metadata saying so.
    static func create(_ version: SchemaVersion, metadata: Bool = true, saying: String? = nil) -> String {
        var sql = PGLayout(TripMigrationPlan.schema(for: version)!).createStatements.joined(separator: ";\n") + ";\n"
        if metadata {
            sql += PGLayout.metadataStatements.joined(separator: ";\n") + ";\n"
            sql += "INSERT INTO tripconv_metadata (key, value) VALUES ('schemaVersion', '\(saying ?? version.description)');\n"
        }
        return sql
    }

    /// The date columns' names at a version.
    static func dates(_ version: SchemaVersion) -> (start: String, end: String) {
        version.major >= 3 ? ("\"startDate\"", "\"endDate\"") : ("start_date", "end_date")
    }

    /// The hard text: tabs, newlines, backslashes, quotes and characters beyond ASCII.
    static let hardName = "Tabs\tand\nnewlines \\ back\\slash 'quote' \"dq\" é 日本 🏔️ \r end"

    /// Three trips: one with two items (inserted out of order) and a stay, one with hard text and an
    /// item, one with nothing related; dates with milliseconds and a time zone other than UTC.
    static func rows(_ version: SchemaVersion) -> String {
        let (start, end) = dates(version)
        return """
            INSERT INTO trips (id, name, destination, \(start), \(end)) VALUES
              (1, 'Paris Getaway', 'Paris, France', '2024-05-01T09:30:00.123Z', '2024-05-08T18:00:00Z'),
              (2, \(literal(hardName)), 'Lisbon, Portugal', '2024-10-04T17:45:00.250+02:00', '2024-10-06T21:10:00.999Z'),
              (3, 'Nothing planned', '', '1999-12-31T23:59:59.001Z', '2000-01-01T00:00:00Z');
            INSERT INTO bucket_list_items (trip_id, position, title, details, "hasReservation", "isInPlan") VALUES
              (1, 1, 'Orsay', '', false, true),
              (1, 0, 'Louvre', 'Carrousel entrance', true, false),
              (2, 0, 'Tram 28', E'line\\none\\ttab', false, true);
            INSERT INTO living_accommodations (trip_id, address, "placeName") VALUES (1, '12 Rue de Rivoli', 'Hôtel du Marais');
            """
    }

    /// A string as an SQL literal (`E'…'`, every backslash and quote escaped).
    static func literal(_ s: String) -> String {
        "E'" + s.replacing("\\", with: "\\\\").replacing("'", with: "\\'").replacing("\t", with: "\\t").replacing("\n", with: "\\n")
            .replacing("\r", with: "\\r") + "'"
    }

    typealias F = SQLiteFixtures

    /// The trips `rows` inserts, as a reader of the version gives them.
    static func trips(_ version: SchemaVersion) -> [ModelObject] {
        let schema = TripMigrationPlan.schema(for: version)!
        return [
            F.trip("Paris Getaway", destination: "Paris, France", start: "2024-05-01T09:30:00.123Z", end: "2024-05-08T18:00:00Z",
                   items: [F.item("Louvre", details: "Carrousel entrance", reservation: true), F.item("Orsay", inPlan: true)],
                   accommodation: F.accommodation("12 Rue de Rivoli", "Hôtel du Marais"), schema: schema),
            F.trip(hardName, destination: "Lisbon, Portugal", start: "2024-10-04T15:45:00.250Z", end: "2024-10-06T21:10:00.999Z",
                   items: [F.item("Tram 28", details: "line\none\ttab", inPlan: true)], schema: schema),
            F.trip("Nothing planned", destination: "", start: "1999-12-31T23:59:59.001Z", end: "2000-01-01T00:00:00Z", schema: schema),
        ]
    }

    /// The same trips as JSON at the version, as Foundation parses it.
    static func json(_ version: SchemaVersion) -> [[String: Any]] {
        let (start, end) = version.major >= 3 ? ("startDate", "endDate") : ("start_date", "end_date")
        func item(_ title: String, _ details: String, _ reservation: Bool, _ inPlan: Bool) -> [String: Any] {
            ["title": title, "details": details, "hasReservation": reservation, "isInPlan": inPlan]
        }
        return [
            ["name": "Paris Getaway", "destination": "Paris, France", start: "2024-05-01T09:30:00.123Z", end: "2024-05-08T18:00:00Z",
             "bucketList": [item("Louvre", "Carrousel entrance", true, false), item("Orsay", "", false, true)],
             "livingAccommodation": ["address": "12 Rue de Rivoli", "placeName": "Hôtel du Marais"]],
            ["name": hardName, "destination": "Lisbon, Portugal", start: "2024-10-04T15:45:00.250Z", end: "2024-10-06T21:10:00.999Z",
             "bucketList": [item("Tram 28", "line\none\ttab", false, true)], "livingAccommodation": NSNull()],
            ["name": "Nothing planned", "destination": "", start: "1999-12-31T23:59:59.001Z", end: "2000-01-01T00:00:00Z",
             "bucketList": [[String: Any]](), "livingAccommodation": NSNull()],
        ]
    }

    /// Whether parsed JSON equals what was expected (Foundation's equality of property lists).
    static func same(_ a: [[String: Any]], _ b: [[String: Any]]) -> Bool {
        NSArray(array: a).isEqual(to: b)
    }
}
