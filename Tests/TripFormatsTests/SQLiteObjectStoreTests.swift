import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// tripconv's SQLite store of any model: written from the objects a reader gives, read back with
/// no model given to the same objects, its tables checked by Python's sqlite3.
@Suite("tripconv's SQLite store of any model", .needsPython3)
struct SQLiteObjectStoreTests {
    let scratch = ScratchDirectory()
    typealias L = LibraryStore

    /// The objects of a list, as a reader gives them.
    struct ListReader: ObjectRecordReader {
        let model: ObjectModel
        var objects: [ObjectRecord]
        mutating func next() throws -> ObjectReadItem? { objects.isEmpty ? nil : .object(objects.removeFirst()) }
    }

    /// Objects without where they came from, to compare two readers' objects.
    static func plain(_ objects: [ObjectRecord]) -> [String] {
        objects.map { "\($0.entity):\($0.key) \($0.attributes) \($0.relationships.map { $0.map { "\($0.entity):\($0.key)" } })" }
    }

    /// Writes `reader`'s objects to a tripconv store at `path` and reads them back.
    static func roundTrip<R: ObjectRecordReader>(_ reader: inout R, _ path: String) throws -> (ObjectModel, [ObjectRecord]) {
        var writer = SQLiteObjectWriter(path: path)
        return try roundTrip(&reader, into: &writer) { try SQLiteObjectReader(path: path) }
    }

    /// Writes `reader`'s objects with `writer`, and reads them back with the reader `back` opens.
    static func roundTrip<R: ObjectRecordReader, W: ObjectRecordWriter>(
        _ reader: inout R, into writer: inout W, back open: () throws -> any ObjectRecordReader
    ) throws -> (ObjectModel, [ObjectRecord]) {
        var summary = ObjectConversionSummary()
        try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { Issue.record("set aside: \($0.reason)") }
        var back = try open()
        var out: [ObjectRecord] = []
        while let item = try back.next() {
            guard case .object(let o) = item else { Issue.record("set aside reading back"); continue }
            out.append(o)
        }
        return (back.model, out)
    }

    /// A file that is not tripconv's store, written by other tools: a SQLite database Python's sqlite3
    /// made of other tables, and a JSON file Python's json wrote. Each is a data error naming the file
    /// given; the second told by SQLite's result code (`SQLiteConnection.notADatabase`), as the
    /// SampleTrips path says it.
    @Test("a database of other tables and a file that is no database, both Python-written, are data errors naming the file")
    func notTripconvStores() throws {
        let other = scratch.path("other.sqlite"), json = scratch.path("export.sqlite")
        _ = try ExternalTool.python("""
            import json, sqlite3, sys
            c = sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE trips (name TEXT)'); c.execute("INSERT INTO trips VALUES ('a')")
            c.commit(); c.close()
            json.dump({"trips": [{"name": "a"}]}, open(sys.argv[2], 'w'))
            """, [other, json])
        func error(_ path: String) -> TripError? {
            do { _ = try SQLiteObjectReader.model(storeAt: path); return nil } catch { return error as? TripError }
        }
        #expect(error(other) == TripError.data("\(other): not a store of objects tripconv wrote: it has no readable tripconv_model table"))
        #expect(error(json) == TripError.data("\(json): not a SQLite store (file is not a database)"))
    }

    @Test("a Core Data store of every kind (Python-written): every object, value and relationship back from tripconv's store")
    func libraryRoundTrip() throws {
        let store = scratch.path("library.store")
        try L.write(store)
        let direct = try L.objects(try CoreDataObjectReader(path: store, model: L.model))
        var reader = try CoreDataObjectReader(path: store, model: L.model)
        let (model, back) = try Self.roundTrip(&reader, scratch.path("library.sqlite"))
        #expect(model == L.model)
        #expect(Self.plain(back) == Self.plain(direct))
        #expect(back.count == 13)
    }

    @Test("the tables: a table per root, a view per sub-entity, SQLite types, foreign keys with the inverse's delete rule, join tables, unique indexes")
    func tables() throws {
        let store = scratch.path("library.store")
        try L.write(store)
        var reader = try CoreDataObjectReader(path: store, model: L.model)
        let path = scratch.path("library.sqlite")
        _ = try Self.roundTrip(&reader, path)
        let check = try ExternalTool.python("""
            import sqlite3, sys, json
            c = sqlite3.connect(sys.argv[1])
            kinds = dict(c.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')").fetchall())
            assert kinds == {"tripconv_model": "table", "Author": "table", "Book": "table", "Media": "table", "Tag": "table",
                             "Audio": "view", "Video": "view", "Book_tags": "table", "Author_books": "table"}, kinds
            cols = lambda t: [(r[1], r[2], r[3]) for r in c.execute("PRAGMA table_info(%s)" % t)]
            author = cols("Author")
            assert author[:3] == [("_pk", "INTEGER", 0), ("name", "TEXT", 1), ("born", "TEXT", 0)], author
            assert ("rating", "REAL", 0) in author and ("active", "INTEGER", 0) in author and ("photo", "BLOB", 0) in author, author
            assert ("id", "TEXT", 0) in author and ("price", "TEXT", 0) in author and ("mentor", "INTEGER", 0) in author, author
            assert "scratch" not in [n for n, _, _ in author]
            # Two sub-entities with a "format" each: the second is Video_format in Media, "format" in its view.
            media = [n for n, _, _ in cols("Media")]
            assert media == ["_pk", "_entity", "title", "book", "seconds", "format", "width", "Video_format"], media
            assert [n for n, _, _ in cols("Video")] == ["_pk", "_entity", "title", "book", "width", "format"]
            fks = lambda t: sorted((r[3], r[2], r[4], r[6]) for r in c.execute("PRAGMA foreign_key_list(%s)" % t))
            assert fks("Book") == [("author", "Author", "_pk", "CASCADE")], fks("Book")
            assert fks("Author") == [("mentor", "Author", "_pk", "SET NULL")], fks("Author")
            assert fks("Tag") == [("featured", "Media", "_pk", "SET NULL")], fks("Tag")
            assert fks("Book_tags") == [("Book", "Book", "_pk", "CASCADE"), ("tags", "Tag", "_pk", "CASCADE")], fks("Book_tags")
            assert [n for n, _, _ in cols("Book_tags")] == ["Book", "tags", "tags_order"], cols("Book_tags")
            assert [n for n, _, _ in cols("Author_books")] == ["Author", "books", "books_order"]
            unique = [r[1] for r in c.execute("PRAGMA index_list(Author)") if r[2] == 1 and r[3] == "c"]
            assert [[x[2] for x in c.execute("PRAGMA index_info(%s)" % u)] for u in unique] == [["name"]], unique
            ada = c.execute("SELECT born, id, active, price, photo, homepage, count64 FROM Author WHERE name = 'Ada'").fetchone()
            assert ada == ("2001-01-01T00:01:40.500Z", "1B9FD00D-CB92-46CD-8711-5297025B7822", 1, "12.5", b"\\x00\\x01\\xff",
                           "https://example.com/ada", 1099511627776), ada
            assert c.execute("SELECT _pk, format FROM Audio").fetchall() == [(1, "mp3")]
            assert c.execute("SELECT _pk, format FROM Video").fetchall() == [(2, "mp4")]
            assert c.execute("SELECT tags, tags_order FROM Book_tags WHERE Book = 1 ORDER BY tags_order").fetchall() == [(3, 1), (1, 2)]
            assert c.execute("SELECT books FROM Author_books WHERE Author = 1 ORDER BY books_order").fetchall() == [(2,), (1,)]
            model = json.loads(c.execute("SELECT value FROM tripconv_model WHERE name = 'model'").fetchone()[0])
            assert [e["name"] for e in model["entities"]] == ["Audio", "Author", "Book", "Media", "Tag", "Video"]
            c.execute("PRAGMA foreign_keys = ON")
            assert c.execute("PRAGMA foreign_key_check").fetchall() == []
            c.execute("DELETE FROM Author WHERE name = 'Ada'")
            assert c.execute("SELECT count(*) FROM Book WHERE author = 1").fetchone() == (0,)
            print("ok")
            """, [path])
        #expect(check.out == "ok\n", "\(check.stderr)")
    }

    /// A model with what `LibraryStore` lacks: an abstract root, required sub-entity attributes,
    /// defaults, a many-to-many that is its own inverse, a to-many without inverse, a unique pair.
    static let zoo = ObjectModel(entities: [
        EntityDescription("Animal", isAbstract: true, attributes: [
            AttributeDescription("name", .string, isOptional: false, defaultValue: .string("Rex")),
        ], uniquenessConstraints: [["name"]]),
        EntityDescription("Dog", superentity: "Animal", attributes: [
            AttributeDescription("good", .bool, isOptional: false, defaultValue: .bool(true)),
            AttributeDescription("weight", .double),
        ], relationships: [RelationshipDescription("friends", to: "Dog", inverse: "friends", toMany: true)]),
        EntityDescription("Keeper", attributes: [
            AttributeDescription("badge", .int32), AttributeDescription("serial", .int64, isOptional: false, defaultValue: .int(7)),
        ], relationships: [RelationshipDescription("pets", to: "Animal", toMany: true, deleteRule: .cascade)],
           uniquenessConstraints: [["badge", "serial"]]),
    ])

    /// Objects of `zoo`: a NaN, a self-inverse many-to-many both ways, a to-many into the abstract root.
    static var zooObjects: [ObjectRecord] {
        let r = { (e: Int, k: Int64) in ObjectReference(entity: e, key: k) }
        let o = { (e: Int, k: Int64, a: [ObjectValue], rel: [[ObjectReference]]) in
            ObjectRecord(entity: e, key: k, attributes: a, relationships: ObjectRelationships(rel), origin: RecordOrigin(source: "list", record: Int(k)))
        }
        return [
            o(1, 1, [.string("Rex"), .bool(true), .double(.nan)], [[r(1, 2), r(1, 3)]]),
            o(1, 2, [.string("Fido"), .bool(false), .double(-0.5)], [[r(1, 1)]]),
            o(1, 3, [.string("Bo"), .bool(true), .null], [[r(1, 1)]]),
            o(2, 1, [.int(4), .int(7)], [[r(1, 1), r(1, 3)]]),
            o(2, 2, [.null, .int(8)], [[]]),
        ]
    }

    @Test("an abstract root, a self-inverse many-to-many, a to-many without inverse, a NaN, defaults and a unique pair")
    func zooRoundTrip() throws {
        let objects = Self.zooObjects
        var reader = ListReader(model: Self.zoo, objects: objects)
        let path = scratch.path("zoo.sqlite")
        let (model, back) = try Self.roundTrip(&reader, path)
        #expect(model == Self.zoo)
        #expect(Self.plain(back) == Self.plain(objects))
        let check = try ExternalTool.python("""
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            sql = c.execute("SELECT sql FROM sqlite_master WHERE name = 'Animal'").fetchone()[0]
            assert "\\"name\\" TEXT NOT NULL DEFAULT 'Rex'" in sql, sql
            assert "CHECK (\\"_entity\\" NOT IN ('Dog') OR \\"good\\" IS NOT NULL) DEFAULT 1" in sql, sql
            assert c.execute("SELECT weight FROM Dog WHERE _pk = 1").fetchone() == ("NaN",)
            assert c.execute("SELECT Dog, friends FROM Dog_friends ORDER BY 1, 2").fetchall() == [(1, 2), (1, 3), (2, 1), (3, 1)]
            assert c.execute("SELECT pets FROM Keeper_pets WHERE Keeper = 1 ORDER BY 1").fetchall() == [(1,), (3,)]
            idx = [r[1] for r in c.execute("PRAGMA index_list(Keeper)") if r[2] == 1 and r[3] == "c"]
            assert [[x[2] for x in c.execute("PRAGMA index_info(%s)" % i)] for i in idx] == [["badge", "serial"]], idx
            try:
                c.execute("INSERT INTO Animal (_pk, _entity, name) VALUES (9, 'Dog', 'Fido')")
                raise SystemExit("a second Fido went in")
            except sqlite3.IntegrityError:
                pass
            print("ok")
            """, [path])
        #expect(check.out == "ok\n", "\(check.stderr)")
    }

    @Test("the output is complete or absent: a unique value repeated leaves no store and no temporary file")
    func failureLeavesNothing() throws {
        let o = { (k: Int64, name: String) in
            ObjectRecord(entity: 1, key: k, attributes: [.string(name), .bool(true), .null], relationships: [[]],
                         origin: RecordOrigin(source: "list", record: Int(k)))
        }
        var reader = ListReader(model: Self.zoo, objects: [o(1, "Rex"), o(2, "Rex")])
        let path = scratch.path("twice.sqlite")
        #expect(throws: TripError.self) { _ = try Self.roundTrip(&reader, path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains("twice") } == [])
    }
}
