import Foundation
import Testing
import TripTestSupport

/// A PostgreSQL store as an input of the command line (issue 16): `detect`, `convert` and the default
/// command read an address as they read a SQLite store's path. The stores are made by psql, with
/// DDL written here by hand, each in a schema of its own that `--pg-schema` names.
@Suite("tripconv with PostgreSQL stores as input")
struct PGCLITests {
    /// The test server's address, for a test with the `.needsPostgres` trait.
    static func server(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try TestPostgres.requiredAddress(sourceLocation: sourceLocation)
    }

    @Test("a PostgreSQL server is given under CI=true", .enabled(if: TestPostgres.isRequired, "only CI=true requires a server"))
    func givenUnderCI() {
        TestPostgres.checkGivenUnderCI()
    }

    /// A 3.0.0 store (or one whose metadata says `saying`) of two trips in a fresh schema, dropped
    /// after `body`.
    static func withStore(saying version: String = "3.0.0", _ body: (_ address: String, _ schema: String) throws -> Void) throws {
        let address = try server()
        let schema = TestPostgres.uniqueName()
        try TestPostgres.psql(address, """
            CREATE SCHEMA \(schema);
            SET search_path TO \(schema);
            CREATE TABLE trips (id bigserial PRIMARY KEY, name text NOT NULL, destination text NOT NULL,
                                "startDate" timestamptz NOT NULL, "endDate" timestamptz NOT NULL);
            CREATE UNIQUE INDEX trips_name_unique ON trips (name);
            CREATE TABLE bucket_list_items (id bigserial PRIMARY KEY, trip_id bigint REFERENCES trips ON DELETE CASCADE,
                                            position integer NOT NULL, title text NOT NULL, details text NOT NULL DEFAULT '',
                                            "hasReservation" boolean NOT NULL DEFAULT false, "isInPlan" boolean NOT NULL DEFAULT false);
            CREATE TABLE living_accommodations (id bigserial PRIMARY KEY, trip_id bigint UNIQUE REFERENCES trips ON DELETE CASCADE,
                                                address text NOT NULL DEFAULT '', "placeName" text NOT NULL DEFAULT '');
            CREATE TABLE tripconv_metadata (key text PRIMARY KEY, value text NOT NULL);
            INSERT INTO tripconv_metadata VALUES ('schemaVersion', '\(version)');
            INSERT INTO trips (name, destination, "startDate", "endDate") VALUES
              ('Kyoto', 'Japan', '2025-03-01T08:00:00.250Z', '2025-03-09T20:00:00Z'),
              (E'Tab\\there, ''quoted'' \\\\ é', 'Norway', '2025-06-01T02:00:00+02:00', '2025-06-02T00:00:00Z');
            INSERT INTO bucket_list_items (trip_id, position, title, "isInPlan") VALUES (1, 1, 'Tea', true), (1, 0, 'Shrine', false);
            INSERT INTO living_accommodations (trip_id, address, "placeName") VALUES (2, 'Karl Johans gate 1', 'Hotel');
            """)
        defer { _ = try? TestPostgres.psql(address, "SET lock_timeout = '10s'; DROP SCHEMA \(schema) CASCADE") }
        try body(address, schema)
    }

    @Test("detect names the address, the format, the version and its evidence; --json as for any input", .needsPostgres)
    func detect() throws {
        try Self.withStore { address, schema in
            let r = try CLI.tripconv("detect", address, "--pg-schema", schema)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.out == "\(address): postgresql 3.0.0 (marker metadata schemaVersion 3.0.0), 2 trips, 0 names repeated\n")
            let j = try CLI.tripconv("detect", "--json", address, "--pg-schema", schema)
            let nodes = try JSONSerialization.jsonObject(with: j.stdout) as? [[String: Any]]
            #expect(nodes?.count == 1)
            #expect(nodes?.first?["format"] as? String == "postgresql" && nodes?.first?["version"] as? String == "3.0.0")
            #expect(nodes?.first?["evidence"] as? String == "marker metadata schemaVersion 3.0.0")
            #expect(nodes?.first?["trips"] as? Int == 2 && nodes?.first?["badRecords"] as? Int == 0)
            // The password of an address shows nowhere (trust authentication takes any).
            let secret = try CLI.tripconv("detect", address + " password=s3cret-pw", "--pg-schema", schema)
            #expect(secret.status == 0 && !secret.out.contains("s3cret") && secret.out.hasPrefix(address + ": postgresql"), "\(secret.out)")
        }
    }

    @Test("convert ADDRESS -o out.json, and the default command into CSV, give the stored trips", .needsPostgres)
    func convert() throws {
        try Self.withStore { address, schema in
            let tmp = try CLI.temporaryDirectory()
            let out = tmp.appendingPathComponent("out.json").path
            let r = try CLI.tripconv("convert", address, "--pg-schema", schema, "-o", out)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("read 2 trips from 1 input; postgresql 3.0.0 by marker metadata schemaVersion 3.0.0"), "\(r.stderr)")
            let top = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
            let trips = top?["trips"] as? [[String: Any]] ?? []
            #expect(trips.count == 2)
            #expect(trips.first?["startDate"] as? String == "2025-03-01T08:00:00.250Z")
            let titles = (trips.first?["bucketList"] as? [[String: Any]])?.compactMap { $0["title"] as? String }
            #expect(titles == ["Shrine", "Tea"])
            #expect(trips.last?["name"] as? String == "Tab\there, 'quoted' \\ é")
            #expect(trips.last?["startDate"] as? String == "2025-06-01T00:00:00Z")
            #expect((trips.last?["livingAccommodation"] as? [String: Any])?["placeName"] as? String == "Hotel")

            let csv = try CLI.tripconv(address, "--pg-schema", schema, "--to", "csv", "-q")
            #expect(csv.status == 0, "\(csv.stderr)")
            #expect(csv.out.hasPrefix("name,destination,startDate,endDate,"), "\(csv.out)")
            #expect(csv.out.contains("Kyoto,Japan,2025-03-01T08:00:00.250Z,2025-03-09T20:00:00Z,"))
        }
    }

    @Test("a store newer than tripconv, and a schema without trips, are refused: exit 65", .needsPostgres)
    func refused() throws {
        try Self.withStore(saying: "9.0.0") { address, schema in
            let r = try CLI.tripconv(address, "--pg-schema", schema, "-q")
            #expect(r.status == 65)
            #expect(r.stderr.contains("metadata schemaVersion") && r.stderr.contains("is not a known version"), "\(r.stderr)")
            #expect(r.stderr.contains("known versions: 1.0.0, 2.0.0, 3.0.0"), "\(r.stderr)")
            let d = try CLI.tripconv("detect", address, "--pg-schema", schema)
            #expect(d.status == 65 && d.out.isEmpty)
            try TestPostgres.psql(address, "DROP TABLE \(schema).trips CASCADE")
            let none = try CLI.tripconv("detect", address, "--pg-schema", schema)
            #expect(none.status == 65 && none.stderr.contains("not a trip store: it has no trips table"), "\(none.stderr)")
        }
    }

    @Test("a server that is not there is exit 69, naming the host and port and never the password")
    func unreachable() throws {
        let r = try CLI.tripconv("detect", "postgresql://someone:s3cret@127.0.0.1:1/trips?connect_timeout=2")
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.contains("127.0.0.1:1") && !r.stderr.contains("s3cret"), "\(r.stderr)")
    }
}
