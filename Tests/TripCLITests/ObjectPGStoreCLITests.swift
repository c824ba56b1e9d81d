import Foundation
import Testing
import TripKit
import TripTestSupport

/// `convert` of another app's store to tripconv's PostgreSQL store (issue 26), read back with no
/// --model to the same JSON Lines as the store gives directly; the tables checked with psql.
@Suite("another app's store, to tripconv's PostgreSQL store", .needsPython3, .needsPostgres)
struct ObjectPGStoreCLITests {
    /// `store` to JSON Lines directly and through a PostgreSQL store in `pg`'s schema: the same lines.
    static func throughPostgreSQL(_ store: String, _ pg: PGCLIStore, in dir: String) throws {
        let direct = try CLI.run(CLI.binary, [store, "-q", "-o", dir + "/direct.jsonl", "--rejects", dir + "/rejects.jsonl"])
        #expect(direct.status == 0, "\(direct.stderr)")
        let written = try pg.tripconv([store, "-q", "--rejects", dir + "/rejects.jsonl"])
        #expect(written.status == 0, "\(written.stderr)")
        let back = try CLI.tripconv(pg.server, "--pg-schema", pg.schema, "-q", "-o", dir + "/back.jsonl")
        #expect(back.status == 0, "\(back.stderr)")
        let expected = try String(contentsOfFile: dir + "/direct.jsonl", encoding: .utf8)
        #expect(!expected.isEmpty)
        #expect(try String(contentsOfFile: dir + "/back.jsonl", encoding: .utf8) == expected)
    }

    @Test("the real SwiftData store: types, foreign keys and the unique index by psql; back to the same objects; detect and schema --model",
          .needsRealStores)
    func realSwiftDataStore() throws {
        let pg = try #require(PGCLIStore())
        let copy = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let dir = try ObjectSQLiteStoreCLITests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.throughPostgreSQL(copy + "/default.store", pg, in: dir)
        #expect(try pg.psql("SELECT column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '-') "
                            + "FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'Component' ORDER BY ordinal_position")
                == "_pk bigint NO -\ncount bigint NO 1\nid uuid NO '1b9fd00d-cb92-46cd-8711-5297025b7822'::uuid\n"
                + "craftingRecipe bigint YES -\nitem bigint YES -\n")
        #expect(try pg.psql("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = '\"Component\"'::regclass AND contype = 'f' ORDER BY 1")
                == "FOREIGN KEY (\"craftingRecipe\") REFERENCES \"CraftingRecipe\"(_pk) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED\n"
                + "FOREIGN KEY (item) REFERENCES \"Item\"(_pk) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED\n")
        #expect(try pg.psql("SELECT indexdef FROM pg_indexes WHERE tablename = 'Item' AND indexdef LIKE 'CREATE UNIQUE%' AND indexname <> 'Item_pkey'")
            .contains("(name)"))
        #expect(try pg.psql("SELECT c.count, c.id, i.name, p.name FROM \"Component\" c JOIN \"Item\" i ON i._pk = c.item "
                            + "JOIN \"CraftingRecipe\" r ON r._pk = c.\"craftingRecipe\" JOIN \"Item\" p ON p._pk = r.\"producedItem\"")
                == "2|c8ad661e-8b9c-40e8-b736-6bf3c3a7db3b|Stone|Stone Axe\n")
        let detect = try CLI.tripconv("detect", pg.server, "--pg-schema", pg.schema)
        #expect(detect.out.contains("postgresql store of another app than SampleTrips, model version 1.0.0, model from the model table of a tripconv store "
                                    + "(tripconv_model); 3 entities: Component 1, CraftingRecipe 2, Item 4 objects"), "\(detect.out)\(detect.stderr)")
        let schema = try CLI.tripconv("schema", "--model", pg.server + " options=-csearch_path=\(pg.schema)")
        #expect(schema.status == 0 && schema.out.contains("    unique: name\n"), "\(schema.out)\(schema.stderr)")
        // --pg-schema names the schema as convert's and detect's do; the same model either way.
        let named = try CLI.tripconv("schema", "--model", pg.server, "--pg-schema", pg.schema)
        #expect(named.status == 0 && named.out == schema.out.replacingOccurrences(of: " options=-csearch_path=\(pg.schema)", with: ""),
                "\(named.out)\(named.stderr)")
        let json = try CLI.tripconv("schema", "--model", pg.server, "--pg-schema", pg.schema, "--json")
        #expect(json.status == 0 && json.out.contains("\"Component\""), "\(json.stderr)")
    }

    @Test("a Python-written store of every kind of relationship, through PostgreSQL: the same JSON Lines")
    func shelves() throws {
        let pg = try #require(PGCLIStore())
        let dir = try ObjectSQLiteStoreCLITests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.throughPostgreSQL(try ObjectSQLiteStoreCLITests.shelves(in: dir, rows: 4), pg, in: dir)
        for layout in [ObjectStoreLayoutCLITests.groups, ObjectStoreLayoutCLITests.hidden] {
            let other = try #require(PGCLIStore())
            let store = dir + "/layout.store"
            try? FileManager.default.removeItem(atPath: store)
            #expect(try ModelStoreWriter.write(layout, to: store, rows: 3).status == 0)
            try Self.throughPostgreSQL(store, other, in: dir)
        }
    }

    @Test("the target: a schema holding a trips store is left as it is (73), a tripconv store is appended to, the same store in and out is 64")
    func targets() throws {
        let pg = try #require(PGCLIStore())
        let dir = try ObjectSQLiteStoreCLITests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try ObjectSQLiteStoreCLITests.shelves(in: dir, rows: 3)
        let trips = try pg.tripconv([TestPaths.samples + "/trips-v3.json", "-q"])
        #expect(trips.status == 0, "\(trips.stderr)")
        let refused = try pg.tripconv([store])
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("holds tables that are not a store of objects tripconv wrote"), "\(refused.stderr)")
        #expect(try pg.psql("SELECT count(*) FROM trips") != "0\n")
        #expect(try pg.psql("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'tripconv_model'") == "0\n")
        let ours = try #require(PGCLIStore())
        for _ in 0..<2 {
            let run = try ours.tripconv([store, "-q", "--rejects", dir + "/rejects.jsonl"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        // The second run's volumes appended after the first's (keys moved past the store's largest), none replaced (was: 3, the store replaced).
        #expect(try ours.psql("SELECT count(*), count(DISTINCT _pk) FROM \"Volume\"") == "6|6\n")
        let same = try CLI.tripconv(ours.server, "--pg-schema", ours.schema, "-o", ours.server)
        #expect(same.status == 64, "\(same.stderr)")
    }
}
