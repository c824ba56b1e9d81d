import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// Reading a PostgreSQL store (issue 16): stores written by psql with hand-written SQL, at every
/// version, read back through the reader and through a conversion to JSON that Foundation parses;
/// the version told by the metadata and by the structure as for SQLite; what is not a store, or is
/// a newer one, refused; one snapshot; bounded batches. Each test has a schema of its own.
@Suite("PostgreSQL store reading")
struct PGReaderTests {
    let scratch = ScratchDirectory()

    @Test("a store with tripconv's metadata reads at its version, exactly, told by the marker", .needsPostgres, arguments: TripMigrationPlan.versions)
    func byMarker(version: SchemaVersion) throws {
        try PGTestSchema.with { s in
            try s.run(PGStoreSQL.create(version) + PGStoreSQL.rows(version))
            let result = try s.read()
            #expect(result.detection == Detection(format: "postgresql", version: version, evidence: .marker("metadata schemaVersion \(version)")))
            #expect(result.rejected == [])
            #expect(result.trips == PGStoreSQL.trips(version))
            #expect(result.origins == (1...3).map { RecordOrigin(source: try! s.storeName, record: $0) })
            #expect(try s.storeName.hasSuffix("/postgres/\(s.name)"))
            let json = try s.json(at: version, scratch: scratch)
            #expect(PGStoreSQL.same(json, PGStoreSQL.json(version)), "\(json)")
            #expect(json.count == 3 && json[1]["name"] as? String == PGStoreSQL.hardName)
        }
    }

    @Test("a store without metadata is told by its columns and unique index", .needsPostgres, arguments: TripMigrationPlan.versions)
    func byStructure(version: SchemaVersion) throws {
        try PGTestSchema.with { s in
            try s.run(PGStoreSQL.create(version, metadata: false) + PGStoreSQL.rows(version))
            let result = try s.read()
            let expected = [
                "columns start_date, end_date; no unique index on name",
                "columns start_date, end_date; unique index on name",
                "columns startDate, endDate; unique index on name",
            ][version.major - 1]
            #expect(result.detection == Detection(format: "postgresql", version: version, evidence: .structure(expected)))
            #expect(result.trips == PGStoreSQL.trips(version))
            let store = try PGStore.open(address: s.address, schema: s.name)
            #expect(store.hasMetadata == false && store.version == version)
            #expect(try store.metadata() == [:])
        }
    }

    @Test("tables another program made (serial ids, timestamp without time zone, smallint flags, no foreign keys) read by structure", .needsPostgres)
    func handWrittenDDL() throws {
        try PGTestSchema.with { s in
            try s.run("""
                CREATE TABLE trips (id serial PRIMARY KEY, name varchar(200) NOT NULL UNIQUE, destination varchar(200),
                                    start_date timestamp NOT NULL, end_date timestamp NOT NULL, notes text);
                CREATE TABLE bucket_list_items (id serial PRIMARY KEY, trip_id integer, position smallint, title text,
                                                details text, "hasReservation" smallint, "isInPlan" smallint);
                INSERT INTO trips (id, name, destination, start_date, end_date) VALUES
                  (1, 'Kyoto', 'Japan', '2025-03-01 08:00:00.5', '2025-03-09 20:00:00'),
                  (3, 'Oslo', 'Norway', '2025-06-01 00:00:00', '2025-06-02 00:00:00'),
                  (5, 'Nowhere', NULL, '2025-06-01 00:00:00', '2025-06-02 00:00:00');
                INSERT INTO bucket_list_items (trip_id, position, title, details, "hasReservation", "isInPlan") VALUES
                  (1, 0, 'Fushimi Inari', 'early', 1, 0), (2, 0, 'orphan', '', 0, 0), (NULL, 0, 'loose', '', 0, 0),
                  (3, 1, 'Opera', '', 0, 1), (3, 0, 'Fjord', '', 0, 0), (99, 0, 'orphan', '', 0, 0);
                """)
            var options = s.readOptions
            options.ignoreUnknown = true
            let result = try s.read(options)
            #expect(result.detection.version == SchemaVersion(2, 0, 0))
            #expect(result.detection.evidence == .structure("columns start_date, end_date; unique index on name"))
            let json = try s.json(at: SchemaVersion(2, 0, 0), scratch: scratch, ignoringUnknown: true)
            let expected: [[String: Any]] = [
                ["name": "Kyoto", "destination": "Japan", "start_date": "2025-03-01T08:00:00.500Z", "end_date": "2025-03-09T20:00:00Z",
                 "bucketList": [["title": "Fushimi Inari", "details": "early", "hasReservation": true, "isInPlan": false]],
                 "livingAccommodation": NSNull()],
                ["name": "Oslo", "destination": "Norway", "start_date": "2025-06-01T00:00:00Z", "end_date": "2025-06-02T00:00:00Z",
                 "bucketList": [["title": "Fjord", "details": "", "hasReservation": false, "isInPlan": false],
                                ["title": "Opera", "details": "", "hasReservation": false, "isInPlan": true]],
                 "livingAccommodation": NSNull()],
            ]
            // The third trip's destination is NULL, which 2.0.0 does not allow: set aside, as from any
            // input. The items of trips that are not there (2, 99) or of none are stepped over.
            #expect(PGStoreSQL.same(json, expected), "\(json)")
            #expect(result.rejected.count == 1 && result.rejected.first?.origin.record == 3)
        }
    }

    @Test("a store at a version tripconv does not know (newer than tripconv) is refused: exit 65", .needsPostgres)
    func newerVersion() throws {
        try PGTestSchema.with { s in
            try s.run(PGStoreSQL.create(SchemaVersion(3, 0, 0), saying: "9.0.0") + PGStoreSQL.rows(SchemaVersion(3, 0, 0)))
            let expected = TripError.data("\(try s.storeName): metadata schemaVersion \("9.0.0".quotedForMessage) is not a known version",
                                          notes: ["known versions: 1.0.0, 2.0.0, 3.0.0"])
            let reading = SQLiteTesting.tripError { _ = try PGRecordReader(address: s.address, options: s.readOptions) }
            #expect(reading == expected)
            #expect(reading?.kind.rawValue == 65)
            #expect(SQLiteTesting.tripError { _ = try PGStore.open(address: s.address, schema: s.name) } == expected)
        }
    }

    @Test("metadata the columns contradict is a data error, as for SQLite", .needsPostgres)
    func contradictingMetadata() throws {
        try PGTestSchema.with { s in
            try s.run(PGStoreSQL.create(SchemaVersion(1, 0, 0), saying: "3.0.0"))
            let error = SQLiteTesting.tripError { _ = try PGRecordReader(address: s.address, options: s.readOptions) }
            #expect(error == TripError.data("\(try s.storeName): metadata says 3.0.0, but the trips table has columns start_date, end_date; no unique index on name",
                                            notes: ["its columns fit 1.0.0, 2.0.0"]))
        }
    }

    @Test("a schema without a trips table is not a trip store; a schema that does not exist is no input", .needsPostgres)
    func notAStore() throws {
        try PGTestSchema.with { s in
            let name = try s.storeName
            let empty = SQLiteTesting.tripError { _ = try PGRecordReader(address: s.address, options: s.readOptions) }
            #expect(empty == TripError.data("\(name): not a trip store: it has no trips table", notes: ["schema \"\(s.name)\" has no tables"]))
            #expect(empty?.kind.rawValue == 65)
            try s.run("CREATE TABLE orders (id int); CREATE TABLE customers (id int);")
            let other = SQLiteTesting.tripError { _ = try PGStore.open(address: s.address, schema: s.name) }
            #expect(other == TripError.data("\(name): not a trip store: it has no trips table", notes: ["its tables: orders, customers"]))
            var options = s.readOptions
            options.pgSchema = s.name + "_absent"
            let missing = SQLiteTesting.tripError { _ = try PGRecordReader(address: s.address, options: options) }
            #expect(missing?.kind == .noInput, "\(String(describing: missing))")
        }
    }

    @Test("the store's catalog: tables, columns, unique indexes, foreign keys, metadata, history, count", .needsPostgres)
    func storeCatalog() throws {
        try PGTestSchema.with { s in
            try s.run(PGStoreSQL.create(SchemaVersion(1, 0, 0)) + PGStoreSQL.rows(SchemaVersion(1, 0, 0)) + """
                INSERT INTO tripconv_metadata (key, value) VALUES ('createdBy', 'psql');
                INSERT INTO tripconv_migrations (from_version, to_version, applied_at, tool_version, stages, trips_before, trips_after)
                  VALUES ('1.0.0', '2.0.0', '2025-01-01T00:00:00Z', '0.1.0', '1.0.0 -> 2.0.0 (custom)', 4, 3);
                """)
            let store = try PGStore.open(address: s.address, schema: s.name)
            #expect(store.version == SchemaVersion(1, 0, 0) && store.evidence == .marker("metadata schemaVersion 1.0.0") && store.hasMetadata)
            #expect(try store.tableNames() == ["trips", "bucket_list_items", "living_accommodations", "tripconv_metadata", "tripconv_migrations"])
            #expect(try store.columnNames(of: "trips") == ["id", "name", "destination", "start_date", "end_date"])
            #expect(try store.columnNames(of: "absent") == [])
            #expect(try store.uniqueIndexes(of: "trips") == [])
            #expect(try store.uniqueIndexes(of: "living_accommodations") == [["trip_id"]])
            let setNull = StoreForeignKey(table: "bucket_list_items", column: "trip_id", referencedTable: "trips", referencedColumn: "id",
                                           onDelete: "SET NULL")
            #expect(try store.foreignKeys(of: "bucket_list_items") == [setNull])
            #expect(try store.metadata() == ["schemaVersion": "1.0.0", "createdBy": "psql"])
            #expect(try store.migrationHistory() == [StoreMigrationRecord(from: SchemaVersion(1, 0, 0), to: SchemaVersion(2, 0, 0),
                                                                            appliedAt: "2025-01-01T00:00:00Z", toolVersion: "0.1.0",
                                                                            stages: "1.0.0 -> 2.0.0 (custom)", tripsBefore: 4, tripsAfter: 3)])
            #expect(try store.tripCount() == 3)
            #expect(try store.problems() == [])
        }
        try PGTestSchema.with { s in
            try s.run(PGStoreSQL.create(SchemaVersion(3, 0, 0)))
            let store = try PGStore.open(address: s.address, schema: s.name)
            #expect(try store.uniqueIndexes(of: "trips") == [["name"]])
            #expect(try store.foreignKeys(of: "living_accommodations").map(\.onDelete) == ["CASCADE"])
            #expect(try store.migrationHistory() == [] && store.tripCount() == 0)
        }
    }

    @Test("problems: rows whose trip is missing, and names held twice where the version makes them unique", .needsPostgres)
    func problems() throws {
        try PGTestSchema.with { s in
            // 2.0.0 by the metadata, on tables made without the constraints that rule these out.
            try s.run(PGLayout.metadataStatements.joined(separator: ";\n") + """
                ;
                INSERT INTO tripconv_metadata VALUES ('schemaVersion', '2.0.0');
                CREATE TABLE trips (id bigint PRIMARY KEY, name text, destination text, start_date timestamptz, end_date timestamptz);
                CREATE TABLE bucket_list_items (id bigint PRIMARY KEY, trip_id bigint, position int, title text, details text,
                                                "hasReservation" boolean, "isInPlan" boolean);
                INSERT INTO trips VALUES (1, 'Rome', 'Italy', now(), now()), (2, 'Rome', 'Italy', now(), now());
                INSERT INTO bucket_list_items VALUES (7, 1, 0, 'a', '', false, false), (8, 42, 0, 'b', '', false, false);
                """)
            let store = try PGStore.open(address: s.address, schema: s.name)
            #expect(try store.problems() == ["bucket_list_items row 8 refers to a missing trips row",
                                             "trips: name \("Rome".quotedForMessage) is held by 2 rows, where 2.0.0 makes it unique"])
        }
    }

    @Test("one snapshot: a writer committing after the reader opened is not seen, not even in part", .needsPostgres)
    func snapshot() throws {
        try PGTestSchema.with { s in
            let v3 = SchemaVersion(3, 0, 0)
            try s.run(PGStoreSQL.create(v3) + PGStoreSQL.rows(v3))
            var reader: any RecordReader = try PGRecordReader(address: s.address, options: s.readOptions)
            try s.run("""
                BEGIN;
                DELETE FROM trips WHERE id = 3;
                INSERT INTO trips (id, name, destination, "startDate", "endDate") VALUES (4, 'Late', 'X', now(), now());
                INSERT INTO bucket_list_items (trip_id, position, title) VALUES (1, 2, 'Added later');
                COMMIT;
                """)
            let result = try SQLiteTesting.readAll(&reader)
            #expect(result.trips == PGStoreSQL.trips(v3))
            #expect(try s.read().trips.map { $0.attributes[0] } == [.string("Paris Getaway"), .string(PGStoreSQL.hardName), .string("Late")])
        }
    }

    @Test("more trips and items than one FETCH: merged across the batches' edges, in id and position order", .needsPostgres)
    func batches() throws {
        try PGTestSchema.with { s in
            let n = PGBatches.batchSize * 2 + 517
            try s.run(PGStoreSQL.create(SchemaVersion(3, 0, 0)) + """
                INSERT INTO trips (id, name, destination, "startDate", "endDate")
                  SELECT i, 'trip ' || i, 'd', timestamptz '2024-01-01Z' + i * interval '1 millisecond', timestamptz '2025-01-01Z'
                  FROM generate_series(1, \(n)) i;
                INSERT INTO bucket_list_items (trip_id, position, title)
                  SELECT i, p, i || '/' || p FROM generate_series(1, \(n)) i, generate_series(0, 2) p WHERE p < i % 4;
                INSERT INTO living_accommodations (trip_id, address) SELECT i, 'a' || i FROM generate_series(1, \(n), 7) i;
                """)
            let result = try s.read()
            #expect(result.trips.count == n && result.rejected.isEmpty)
            var wrong = 0
            for (k, trip) in result.trips.enumerated() {
                let i = k + 1
                let items = trip.relationships[0].objects.map { $0.attributes[0] }
                let stay = trip.relationships[1].objects.first?.attributes[0]
                let start = SQLiteFixtures.date("2024-01-01T00:00:00Z")
                guard case .date(let t0) = start, case .date(let t) = trip.attributes[2] else { wrong += 1; continue }
                let expectedItems: [Value] = (0..<(i % 4)).map { p in .string("\(i)/\(p)") }
                let expectedStay: Value? = i % 7 == 1 ? .string("a\(i)") : nil
                if trip.attributes[0] != .string("trip \(i)") || items != expectedItems || stay != expectedStay
                    || t.milliseconds - t0.milliseconds != Int64(i) {
                    wrong += 1
                }
            }
            #expect(wrong == 0)
        }
    }

    @Test("--pg-schema reads its schema's store, not public's; without it, the current schema alone", .needsPostgres)
    func schemas() throws {
        let address = try PGConnectionTests.server()
        let database = TestPostgres.uniqueName()
        try TestPostgres.psql(address, "CREATE DATABASE \(database)")
        defer { _ = try? TestPostgres.psql(address, "DROP DATABASE \(database) WITH (FORCE)") }
        let db = address + " dbname=\(database)"
        let v3 = SchemaVersion(3, 0, 0)
        try TestPostgres.psql(db, PGStoreSQL.create(v3) + PGStoreSQL.rows(v3) + "CREATE SCHEMA fleet; SET search_path TO fleet;\n"
                              + PGStoreSQL.create(SchemaVersion(1, 0, 0))
                              + "INSERT INTO trips (name, destination, start_date, end_date) VALUES ('Fleet trip', 'Sea', now(), now());")
        var reader: any RecordReader = try PGRecordReader(address: db)
        #expect(try SQLiteTesting.readAll(&reader).trips == PGStoreSQL.trips(v3))
        var options = ReadOptions()
        options.pgSchema = "fleet"
        reader = try PGRecordReader(address: db, options: options)
        let fleet = try SQLiteTesting.readAll(&reader)
        #expect(fleet.trips.map { $0.attributes[0] } == [.string("Fleet trip")])
        #expect(fleet.detection.version == SchemaVersion(1, 0, 0))
        #expect(fleet.origins.first?.source.hasSuffix("/\(database)/fleet") == true)
        // A schema named after the user comes first on the default search path; its trips are read
        // without public's items, whose trip_id matches.
        let user = try TestPostgres.psql(db, "SELECT current_user").trimmingCharacters(in: .whitespacesAndNewlines)
        try TestPostgres.psql(db, "CREATE SCHEMA \"\(user)\"; SET search_path TO \"\(user)\";\n"
                              + "CREATE TABLE trips (id bigint PRIMARY KEY, name text UNIQUE, destination text, \"startDate\" timestamptz, \"endDate\" timestamptz);"
                              + "INSERT INTO trips VALUES (1, 'Mine', 'Home', '2024-01-01Z', '2024-01-02Z');")
        reader = try PGRecordReader(address: db)
        let mine = try SQLiteTesting.readAll(&reader)
        #expect(mine.trips.map { $0.attributes[0] } == [.string("Mine")])
        #expect(mine.trips.first?.relationships[0].objects.isEmpty == true)
    }

    @Test("an address's password never shows in input names")
    func addressWithoutPassword() {
        let cases: [(String, String)] = [
            ("postgresql://u:s3cret@db.example:5432/trips?sslmode=require", "postgresql://u@db.example:5432/trips?sslmode=require"),
            ("postgres://db.example/trips?password=s3cret&application_name=x", "postgres://db.example/trips?application_name=x"),
            ("postgresql://u@h/db", "postgresql://u@h/db"),
            ("postgresql://u:p@s3cret@h/db", "postgresql://u@h/db"),
            ("postgresql://h/db/with@sign", "postgresql://h/db/with@sign"),
            ("host=h password=s3cret dbname=trips", "host=h dbname=trips"),
            ("host=h password = 'it''s s3cret' dbname=trips", "(a PostgreSQL address)"),
            ("host=h password='it\\'s s3cret' user=u", "host=h user=u"),
            ("dbname=postgresql://u:s3cret@h/db", "dbname='postgresql://u@h/db'"),
            ("host=/tmp/socket user=tripconv dbname=postgres", "host=/tmp/socket user=tripconv dbname=postgres"),
        ]
        for (address, shown) in cases {
            #expect(Format.redactedPostgreSQLAddress(address) == shown, "\(address)")
            #expect(!InputLocation.file(address).name.contains("s3cret"))
        }
        #expect(InputLocation.file("trips:password@x.json").name == "trips:password@x.json")
    }
}
