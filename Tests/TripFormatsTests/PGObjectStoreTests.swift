import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// tripconv's PostgreSQL store of any model: written from the objects a reader gives, read back with
/// no model given to the same objects, its tables checked with psql.
@Suite("tripconv's PostgreSQL store of any model", .needsPython3, .needsPostgres)
struct PGObjectStoreTests {
    let scratch = ScratchDirectory()
    typealias L = LibraryStore
    typealias S = SQLiteObjectStoreTests

    /// A fresh schema of the test server; dropped by `drop`.
    static func schema() throws -> (address: String, schema: String) {
        (try TestPostgres.requiredAddress(), TestPostgres.uniqueName())
    }

    static func drop(_ address: String, _ schema: String) { _ = try? TestPostgres.psql(address, "DROP SCHEMA IF EXISTS \(schema) CASCADE") }

    /// Writes `reader`'s objects to a store in `schema` and reads them back.
    static func roundTrip<R: ObjectRecordReader>(_ reader: inout R, _ address: String, _ schema: String) throws -> (ObjectModel, [ObjectRecord]) {
        var writer = PGObjectWriter(address: address, schema: schema)
        return try S.roundTrip(&reader, into: &writer) { try PGObjectReader(address: address, schema: schema) }
    }

    @Test("a Core Data store of every kind (Python-written): every object, value and relationship back from the PostgreSQL store")
    func libraryRoundTrip() throws {
        let (address, schema) = try Self.schema()
        defer { Self.drop(address, schema) }
        let store = scratch.path("library.store")
        try L.write(store)
        let direct = try L.objects(try CoreDataObjectReader(path: store, model: L.model))
        var reader = try CoreDataObjectReader(path: store, model: L.model)
        let (model, back) = try Self.roundTrip(&reader, address, schema)
        #expect(model == L.model)
        #expect(S.plain(back) == S.plain(direct))
        #expect(back.count == 13)
    }

    @Test("the tables by psql: PostgreSQL types, deferred foreign keys with the inverse's delete rule, join tables, unique indexes, views")
    func tables() throws {
        let (address, schema) = try Self.schema()
        defer { Self.drop(address, schema) }
        let store = scratch.path("library.store")
        try L.write(store)
        var reader = try CoreDataObjectReader(path: store, model: L.model)
        _ = try Self.roundTrip(&reader, address, schema)
        let q = { (sql: String) in try TestPostgres.psql(address, "SET search_path TO \(schema);\n" + sql) }
        #expect(try q("SELECT c.relname || ':' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                      + "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v') ORDER BY 1")
                == "Audio:v\nAuthor:r\nAuthor_books:r\nBook:r\nBook_tags:r\nMedia:r\nTag:r\nVideo:v\ntripconv_model:r\n")
        let columns = { (t: String) in
            try q("SELECT column_name || ' ' || data_type || ' ' || is_nullable FROM information_schema.columns "
                  + "WHERE table_schema = current_schema() AND table_name = '\(t)' ORDER BY ordinal_position")
        }
        let author = try columns("Author")
        for c in ["_pk bigint NO", "name text NO", "born text YES", "rating double precision YES", "active boolean YES", "photo bytea YES",
                  "id uuid YES", "price numeric YES", "mentor bigint YES", "count64 bigint YES"] {
            #expect(author.contains(c + "\n"), "\(c) in \(author)")
        }
        #expect(try columns("Media").split(separator: "\n").map { $0.split(separator: " ")[0] }
                == ["_pk", "_entity", "title", "book", "seconds", "format", "width", "Video_format"])
        #expect(try columns("Book_tags") == "Book bigint NO\ntags bigint NO\ntags_order integer YES\n")
        let fks = try q("SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) FROM pg_constraint "
                        + "WHERE contype = 'f' AND connamespace = current_schema()::regnamespace ORDER BY 1")
        for fk in ["\"Book\" FOREIGN KEY (author) REFERENCES \"Author\"(_pk) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED",
                   "\"Author\" FOREIGN KEY (mentor) REFERENCES \"Author\"(_pk) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED",
                   "\"Tag\" FOREIGN KEY (featured) REFERENCES \"Media\"(_pk) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED",
                   "\"Book_tags\" FOREIGN KEY (\"Book\") REFERENCES \"Book\"(_pk) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED",
                   "\"Book_tags\" FOREIGN KEY (tags) REFERENCES \"Tag\"(_pk) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED"] {
            #expect(fks.contains(fk + "\n"), "\(fk) in \(fks)")
        }
        #expect(try q("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'Author' AND indexdef LIKE 'CREATE UNIQUE%' "
                      + "AND indexname <> 'Author_pkey'").contains("USING btree (name)"))
        #expect(try q("SELECT born, id, active, price, encode(photo, 'hex'), homepage, count64 FROM \"Author\" WHERE name = 'Ada'")
                == "2001-01-01T00:01:40.500Z|1b9fd00d-cb92-46cd-8711-5297025b7822|t|12.5|0001ff|https://example.com/ada|1099511627776\n")
        #expect(try q("SELECT _pk, format FROM \"Video\"") == "2|mp4\n")
        #expect(try q("SELECT tags, tags_order FROM \"Book_tags\" WHERE \"Book\" = 1 ORDER BY tags_order") == "3|1\n1|2\n")
        #expect(try q("SELECT (born::timestamptz AT TIME ZONE 'UTC')::text FROM \"Author\" WHERE name = 'Ada'") == "2001-01-01 00:01:40.5\n")
        #expect(try q("DELETE FROM \"Author\" WHERE name = 'Ada'; SELECT count(*) FROM \"Book\" WHERE author = 1") == "0\n")
    }

    @Test("an abstract root, a self-inverse many-to-many, a to-many without inverse, a NaN, defaults and a unique pair")
    func zooRoundTrip() throws {
        let (address, schema) = try Self.schema()
        defer { Self.drop(address, schema) }
        let objects = S.zooObjects
        var reader = S.ListReader(model: S.zoo, objects: objects)
        let (model, back) = try Self.roundTrip(&reader, address, schema)
        #expect(model == S.zoo)
        #expect(S.plain(back) == S.plain(objects))
        let q = { (sql: String) in try TestPostgres.psql(address, "SET search_path TO \(schema);\n" + sql) }
        #expect(try q("SELECT column_default FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'Animal' "
                      + "AND column_name IN ('name', 'good') ORDER BY column_name") == "true\n'Rex'::text\n")
        #expect(try q("SELECT weight FROM \"Dog\" WHERE _pk = 1") == "NaN\n")
        #expect(try q("SELECT \"Dog\", friends FROM \"Dog_friends\" ORDER BY 1, 2") == "1|2\n1|3\n2|1\n3|1\n")
        #expect(throws: TestPostgres.Failure.self) { try q("INSERT INTO \"Animal\" (_pk, _entity, name) VALUES (9, 'Dog', 'Fido')") }
    }

    @Test("the output is complete or absent: a unique value repeated, or a reference to an object not written, leaves no table")
    func failureLeavesNothing() throws {
        let (address, schema) = try Self.schema()
        defer { Self.drop(address, schema) }
        let o = { (k: Int64, name: String, friend: Int64?) in
            ObjectRecord(entity: 1, key: k, attributes: [.string(name), .bool(true), .null],
                         relationships: [friend.map { [ObjectReference(entity: 1, key: $0)] } ?? []], origin: RecordOrigin(source: "list", record: Int(k)))
        }
        for objects in [[o(1, "Rex", nil), o(2, "Rex", nil)], [o(1, "Rex", 5)]] {
            var reader = S.ListReader(model: S.zoo, objects: objects)
            #expect(throws: TripError.self) { _ = try Self.roundTrip(&reader, address, schema) }
            #expect(try TestPostgres.psql(address, "SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema)'") == "0\n")
        }
    }
}
