import Foundation
import Testing
import TripKit
import TripTestSupport

/// `convert` of another app's store to tripconv's SQLite store (issue 26): the model's names, types,
/// foreign keys and unique indexes for sqlite3, and back to the same objects with no --model.
@Suite("another app's store, to tripconv's SQLite store", .needsPython3)
struct ObjectSQLiteStoreCLITests {
    static func scratch() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-objsqlite-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A Core Data store of `ObjectStoreCLITests.model` with `rows` objects per entity, by the Python writer, in `dir`.
    static func shelves(in dir: String, rows: Int) throws -> String {
        let store = dir + "/shelves.store"
        let written = try ModelStoreWriter.write(ObjectStoreCLITests.model, to: store, rows: rows)
        #expect(written.status == 0, "\(written.stderr)")
        return store
    }

    /// `store` (with `extra` arguments) to JSON Lines directly, and through a tripconv SQLite store
    /// read back with no --model: the same lines. Returns the SQLite store's path.
    static func throughSQLite(_ store: String, _ extra: [String] = [], in dir: String) throws -> String {
        let direct = try CLI.run(CLI.binary, [store, "-q", "-o", dir + "/direct.jsonl"] + extra)
        #expect(direct.status == 0, "\(direct.stderr)")
        let sqlite = dir + "/objects.sqlite"
        let written = try CLI.run(CLI.binary, [store, "-q", "-o", sqlite] + extra)
        #expect(written.status == 0, "\(written.stderr)")
        let back = try CLI.tripconv(sqlite, "-q", "-o", dir + "/back.jsonl")
        #expect(back.status == 0, "\(back.stderr)")
        let expected = try String(contentsOfFile: dir + "/direct.jsonl", encoding: .utf8)
        #expect(!expected.isEmpty)
        #expect(try String(contentsOfFile: dir + "/back.jsonl", encoding: .utf8) == expected)
        return sqlite
    }

    @Test("the real SwiftData store: tables, types, foreign keys and the unique index by the model's names; back to the same objects",
          .needsRealStores)
    func realSwiftDataStore() throws {
        let copy = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sqlite = try Self.throughSQLite(copy + "/default.store", in: dir)
        let check = try ExternalTool.python("""
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            tables = sorted(r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
            assert tables == ["Component", "CraftingRecipe", "Item", "tripconv_model"], tables
            cols = [(r[1], r[2], r[3], r[4]) for r in c.execute("PRAGMA table_info(Component)")]
            assert cols == [("_pk", "INTEGER", 0, None), ("count", "INTEGER", 1, "1"),
                            ("id", "TEXT", 1, "'1B9FD00D-CB92-46CD-8711-5297025B7822'"),
                            ("craftingRecipe", "INTEGER", 0, None), ("item", "INTEGER", 0, None)], cols
            fks = sorted((r[3], r[2], r[6]) for r in c.execute("PRAGMA foreign_key_list(Component)"))
            assert fks == [("craftingRecipe", "CraftingRecipe", "SET NULL"), ("item", "Item", "SET NULL")], fks
            assert [(r[3], r[2]) for r in c.execute("PRAGMA foreign_key_list(Item)")] == [("craftingRecipe", "CraftingRecipe")]
            unique = [r[1] for r in c.execute("PRAGMA index_list(Item)") if r[2] == 1 and r[3] == "c"]
            assert [[x[2] for x in c.execute("PRAGMA index_info(%s)" % u)] for u in unique] == [["name"]], unique
            rows = c.execute("SELECT c.count, c.id, i.name, r.producedItemCount, p.name FROM Component c JOIN Item i ON i._pk = c.item "
                             "JOIN CraftingRecipe r ON r._pk = c.craftingRecipe JOIN Item p ON p._pk = r.producedItem").fetchall()
            assert rows == [(2, "C8AD661E-8B9C-40E8-B736-6BF3C3A7DB3B", "Stone", "1", "Stone Axe")], rows
            c.execute("PRAGMA foreign_keys = ON")
            assert c.execute("PRAGMA foreign_key_check").fetchall() == []
            print("ok")
            """, [sqlite])
        #expect(check.out == "ok\n", "\(check.stderr)")
        let detect = try CLI.tripconv("detect", sqlite)
        #expect(detect.out.contains("sqlite store of another app than SampleTrips, model version 1.0.0, model from the model table of a tripconv store "
                                    + "(tripconv_model); 3 entities: Component 1, CraftingRecipe 2, Item 4 objects"), "\(detect.out)\(detect.stderr)")
        let schema = try CLI.tripconv("schema", "--model", sqlite)
        #expect(schema.status == 0 && schema.out.contains("    unique: name\n"), "\(schema.out)\(schema.stderr)")
    }

    @Test("the real Core Data store of 2014, read with its Xcode model: through tripconv's store to the same objects", .needsRealStores)
    func realCoreDataStore() throws {
        let copy = try TestPaths.copyRealStore("coredata-feedback")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sqlite = try Self.throughSQLite(copy + "/Model.sqlite", ["--model", copy + "/Model.xcdatamodeld"], in: dir)
        let check = try ExternalTool.python("""
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            assert c.execute("SELECT count(*) FROM FeedbackCategory").fetchone() == (19,)
            assert c.execute("SELECT count(*) FROM FeedbackSubCategory WHERE category IS NOT NULL").fetchone()[0] > 0
            print("ok")
            """, [sqlite])
        #expect(check.out == "ok\n", "\(check.stderr)")
    }

    @Test("the target: a file that is not a tripconv store is left as it is (73), one that is is appended to, standard output is refused (64)")
    func targets() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Self.shelves(in: dir, rows: 3)
        let other = dir + "/notes.sqlite"
        try Data("not ours".utf8).write(to: URL(fileURLWithPath: other))
        let refused = try CLI.tripconv(store, "-o", other)
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("exists and is not a store of objects tripconv wrote"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "not ours")
        let ours = dir + "/objects.sqlite"
        for _ in 0..<2 {
            let run = try CLI.tripconv(store, "-o", ours, "--rejects", dir + "/rejects.jsonl")
            #expect(run.status == 0, "\(run.stderr)")
            // The writer's shelves have no label, which the model requires: set aside each time, every object accounted for.
            #expect(run.stderr.hasPrefix("tripconv: read 6 objects; wrote 3 (Shelf 0, Volume 3); rejected 3; "), "\(run.stderr)")
        }
        // The second run's volumes appended after the first's (keys moved past the store's largest), none replaced.
        let count = try ExternalTool.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute('SELECT count(*), count(DISTINCT _pk) FROM Volume').fetchone())
            """, [ours])
        #expect(count.out == "(6, 6)\n", "\(count.out) \(count.stderr)")
        let stdout = try CLI.tripconv(store, "--to", "sqlite")
        #expect(stdout.status == 64, "\(stdout.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["notes.sqlite", "objects.sqlite", "rejects.jsonl", "shelves.store"])
    }
}

@Suite("tripconv's SQLite store of objects, refused where trips go", .needsPython3)
struct ObjectSQLiteStoreRefusalCLITests {
    @Test("migrate of such a store, and trips written into one with or without --migrate: exit 64, the store unchanged")
    func tripsAndMigrateRefused() throws {
        let dir = try ObjectSQLiteStoreCLITests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try ObjectSQLiteStoreCLITests.shelves(in: dir, rows: 2)
        let objects = dir + "/objects.sqlite"
        #expect(try CLI.tripconv(store, "-q", "-o", objects, "--rejects", dir + "/rejects.jsonl").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: objects))
        let trips = dir + "/trips.jsonl"
        try Data(#"{"name": "a", "destination": "b", "startDate": "2024-01-01T00:00:00Z", "endDate": "2024-01-02T00:00:00Z"}"#.utf8)
            .write(to: URL(fileURLWithPath: trips))
        for arguments in [["migrate", objects], [trips, "-o", objects], [trips, "--migrate", "-o", objects]] {
            let run = try CLI.run(CLI.binary, arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(run.stderr.hasPrefix("tripconv: \(objects): a tripconv store of another app's objects"), "\(arguments): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: objects)) == before)
    }

    @Test("a tripconv store whose model row is damaged, or whose table is gone: exit 65 naming the place, nothing written")
    func damagedStore() throws {
        let dir = try ObjectSQLiteStoreCLITests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try ObjectSQLiteStoreCLITests.shelves(in: dir, rows: 2)
        for (n, (sql, place)) in [("UPDATE tripconv_model SET value = '{\"entities\": [' WHERE name = 'model'", "table tripconv_model row 'model'"),
                                  ("DROP TABLE Volume", "no such table: Volume")].enumerated() {
            let objects = dir + "/objects\(n).sqlite"
            #expect(try CLI.tripconv(store, "-q", "-o", objects, "--rejects", dir + "/rejects.jsonl").status == 0)
            let damage = try ExternalTool.python("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()", [objects, sql])
            #expect(damage.status == 0, "\(damage.stderr)")
            let run = try CLI.tripconv(objects, "-o", dir + "/out\(n).jsonl")
            #expect(run.status == 65, "\(run.stderr)")
            #expect(run.stderr.hasPrefix("tripconv: \(objects)") && run.stderr.contains(place), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/out\(n).jsonl"))
        }
    }
}
