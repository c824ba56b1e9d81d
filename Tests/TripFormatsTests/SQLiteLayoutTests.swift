import Foundation
import Testing
import TripKit
import TripFormats
import TripTestSupport

@Suite("SQLite store layout")
struct SQLiteLayoutTests {
    let scratch = ScratchDirectory()

    private func store(at version: SchemaVersion) throws -> String {
        let path = scratch.path("v\(version.major).sqlite")
        let schema = SQLiteTesting.schema(version)
        try SQLiteTesting.writeStore([SQLiteFixtures.trip("Paris Getaway", items: [SQLiteFixtures.item("Louvre")],
                                                          accommodation: SQLiteFixtures.accommodation("12 Rue de Rivoli", "Hôtel du Marais"),
                                                          schema: schema)],
                                     to: path, schema: schema)
        return path
    }

    @Test("the metadata table and user_version say the store's version", arguments: TripMigrationPlan.versions)
    func versionMarkers(version: SchemaVersion) throws {
        let path = try store(at: version)
        let store = try SQLiteStore.open(path: path)
        #expect(store.version == version)
        #expect(store.evidence == .marker("metadata schemaVersion \(version)"))
        #expect(try store.userVersion() == version.major)
        #expect(try store.metadata() == ["schemaVersion": version.description, "createdBy": "tripconv 0.1.0"])
        #expect(try store.migrationHistory() == [])
    }

    @Test("the sqlite3 tool reads the same version markers", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote),
          arguments: TripMigrationPlan.versions)
    func versionMarkersIndependently(version: SchemaVersion) throws {
        let path = try store(at: version)
        #expect(try SQLiteCLI.run(path, "PRAGMA user_version;") == "\(version.major)\n")
        #expect(try SQLiteCLI.run(path, "SELECT value FROM tripconv_metadata WHERE key = 'schemaVersion';") == "\(version)\n")
    }

    @Test("column names are the version's attribute names, without the transient one", arguments: TripMigrationPlan.versions)
    func columnNames(version: SchemaVersion) throws {
        let store = try SQLiteStore.open(path: try store(at: version))
        let dates = version.major < 3 ? ["start_date", "end_date"] : ["startDate", "endDate"]
        #expect(try store.columnNames(of: "trips") == ["id", "name", "destination"] + dates)
        #expect(try store.columnNames(of: "bucket_list_items")
                == ["id", "trip_id", "position", "title", "details", "hasReservation", "isInPlan"])
        #expect(try store.columnNames(of: "living_accommodations") == ["id", "trip_id", "address", "placeName"])
        #expect(try store.tableNames() == ["trips", "bucket_list_items", "living_accommodations",
                                           "tripconv_metadata", "tripconv_migrations"])
    }

    @Test("the trip name has a unique index from 2.0.0 on", arguments: TripMigrationPlan.versions)
    func uniqueName(version: SchemaVersion) throws {
        let store = try SQLiteStore.open(path: try store(at: version))
        let nameIndexes = try store.uniqueIndexes(of: "trips").filter { $0 == ["name"] }
        #expect(nameIndexes.count == (version.major >= 2 ? 1 : 0))
    }

    @Test("foreign keys delete as the relationships' delete rules say", arguments: TripMigrationPlan.versions)
    func deleteRules(version: SchemaVersion) throws {
        let store = try SQLiteStore.open(path: try store(at: version))
        let action = version.major < 3 ? "SET NULL" : "CASCADE"
        #expect(try store.foreignKeys(of: "bucket_list_items")
                == [StoreForeignKey(table: "bucket_list_items", column: "trip_id", referencedTable: "trips", referencedColumn: "id", onDelete: action)])
        #expect(try store.foreignKeys(of: "living_accommodations")
                == [StoreForeignKey(table: "living_accommodations", column: "trip_id", referencedTable: "trips", referencedColumn: "id", onDelete: action)])
    }

    @Test("the DDL is derived from the declarations: 3.0.0 renames the date columns and cascades")
    func derivedStatements() {
        let v1 = SQLiteStore.createStatements(for: TripSchemaV1.self)
        let v3 = SQLiteStore.createStatements(for: TripSchemaV3.self)
        #expect(v1[0] == """
            CREATE TABLE "trips" (
              "id" INTEGER PRIMARY KEY,
              "name" TEXT NOT NULL,
              "destination" TEXT NOT NULL,
              "start_date" TEXT NOT NULL,
              "end_date" TEXT NOT NULL
            )
            """)
        #expect(v3[1] == #"CREATE UNIQUE INDEX "trips_name_unique" ON "trips" ("name")"#)
        #expect(v3.contains("""
            CREATE TABLE "living_accommodations" (
              "id" INTEGER PRIMARY KEY,
              "trip_id" INTEGER UNIQUE REFERENCES "trips" ("id") ON DELETE CASCADE,
              "address" TEXT NOT NULL DEFAULT '',
              "placeName" TEXT NOT NULL DEFAULT ''
            )
            """))
        #expect(!v1.contains { $0.contains("UNIQUE INDEX") })
    }

    @Test("the sample store has the derived 1.0.0 layout", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func sampleLayout() throws {
        let sample = TestPaths.samples + "/trips-v1.sqlite"
        let ours = try store(at: SchemaVersion(1, 0, 0))
        let query = "SELECT type, name, sql FROM sqlite_master ORDER BY name;"
        #expect(try SQLiteCLI.run(sample, query) == SQLiteCLI.run(ours, query))
        #expect(try SQLiteCLI.run(sample, "PRAGMA user_version;") == "1\n")
        try SQLiteTesting.expectSoundStore(sample)
    }

    @Test("the sample store is what its SQL script makes", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func sampleIsRebuildable() throws {
        let rebuilt = scratch.path("rebuilt.sqlite")
        let script = try String(contentsOfFile: TestPaths.samples + "/make-trips-v1-sqlite.sql", encoding: .utf8)
        try SQLiteCLI.run(rebuilt, script)
        let sample = TestPaths.samples + "/trips-v1.sqlite"
        #expect(try SQLiteCLI.run(rebuilt, ".dump") == SQLiteCLI.run(sample, ".dump"))
    }
}

@Suite("SQLite delete rules")
struct SQLiteDeleteRuleTests {
    let scratch = ScratchDirectory()

    private func deleteParis(at version: SchemaVersion) throws -> (items: String, orphans: String, accommodations: String) {
        let schema = SQLiteTesting.schema(version)
        let path = scratch.path("rules.sqlite")
        try SQLiteTesting.writeStore([
            SQLiteFixtures.trip("Paris Getaway", items: [SQLiteFixtures.item("Louvre"), SQLiteFixtures.item("Orsay")],
                                accommodation: SQLiteFixtures.accommodation("12 Rue de Rivoli", "Hôtel du Marais"), schema: schema),
            SQLiteFixtures.trip("Weekend in Lisbon", items: [SQLiteFixtures.item("Tram 28")], schema: schema),
        ], to: path, schema: schema)
        // The sqlite3 tool enforces foreign keys only when asked, as every connection must be.
        try SQLiteCLI.run(path, "PRAGMA foreign_keys = ON; DELETE FROM trips WHERE name = 'Paris Getaway';")
        try SQLiteTesting.expectSoundStore(path)
        return (try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items;"),
                try SQLiteCLI.run(path, "SELECT count(*) FROM bucket_list_items WHERE trip_id IS NULL;"),
                try SQLiteCLI.run(path, "SELECT count(*) FROM living_accommodations;"))
    }

    @Test("deleting a trip deletes its items and accommodation at 3.0.0", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func cascade() throws {
        let counts = try deleteParis(at: SchemaVersion(3, 0, 0))
        #expect(counts.items == "1\n")
        #expect(counts.orphans == "0\n")
        #expect(counts.accommodations == "0\n")
    }

    @Test("deleting a trip leaves its items without a trip at 1.0.0", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func nullify() throws {
        let counts = try deleteParis(at: SchemaVersion(1, 0, 0))
        #expect(counts.items == "3\n")
        #expect(counts.orphans == "2\n")
        #expect(counts.accommodations == "1\n")
    }
}
