import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

@Suite("Core Data objects of any model", .needsPython3)
struct CoreDataObjectReaderTests {
    let scratch = ScratchDirectory()
    typealias L = LibraryStore

    func ref(_ entity: Int, _ key: Int64) -> ObjectReference { ObjectReference(entity: entity, key: key) }

    @Test("every attribute kind, as Python's sqlite3 wrote it in Core Data's columns")
    func attributeKinds() throws {
        let path = scratch.path("library.store")
        try L.write(path)
        let objects = try L.objects(try CoreDataObjectReader(path: path, model: L.model))
        let authors = objects.filter { $0.entity == L.author }
        #expect(authors.map(\.key) == [1, 2, 3])
        let ada = authors[0]
        let expected: [ObjectValue] = [
            .string("Ada"), .date(100.5), .double(4.25), .double(1.5), .int(-7), .int(70000), .int(1 << 40), .decimal("12.5"),
            .bool(true), .data([0, 1, 255]), .data(Array(try PropertyListSerialization.data(fromPropertyList: ["theme": "dark"], format: .binary, options: 0))),
            .uuid(UUIDBytes(string: "1B9FD00D-CB92-46CD-8711-5297025B7822")!), .url("https://example.com/ada"), .null,
        ]
        // The settings plist is compared by what it holds, not its bytes (two writers may order a plist differently).
        #expect(Array(ada.attributes.prefix(10)) == Array(expected.prefix(10)))
        guard case .data(let plist) = ada.attributes[10] else { Issue.record("settings is not Data"); return }
        #expect((try PropertyListSerialization.propertyList(from: Data(plist), format: nil) as? [String: String]) == ["theme": "dark"])
        #expect(Array(ada.attributes.suffix(3)) == Array(expected.suffix(3)))
        #expect(authors[1].value("born", in: L.model) == .date(-31622400.25))
        #expect(authors[1].value("active", in: L.model) == .bool(false))
        #expect(authors[1].value("price", in: L.model) == .decimal("3"))
        #expect(authors[1].value("rating", in: L.model) == .null)
        #expect(authors[2].value("name", in: L.model) == .string("Cléo ☕"))
    }

    @Test("relationships: to-one, ordered to-many by Z_FOK_, many-to-many by its join table, self-reference, inheritance")
    func relationships() throws {
        let path = scratch.path("library.store")
        try L.write(path)
        let objects = try L.objects(try CoreDataObjectReader(path: path, model: L.model))
        // Entity by entity in the model's order, each in Z_PK order; a sub-entity's rows are its own.
        #expect(objects.map { "\($0.entity):\($0.key)" } == ["0:1", "1:1", "1:2", "1:3", "2:1", "2:2", "2:3", "2:4", "3:3", "4:1", "4:2", "4:3", "5:2"])
        func object(_ e: Int, _ k: Int64) -> ObjectRecord { objects.first { $0.entity == e && $0.key == k }! }
        let m = L.model
        // Ordered to-many: by Z_FOK_AUTHOR, not by Z_PK.
        #expect(object(L.author, 1).references("books", in: m) == [ref(L.book, 2), ref(L.book, 1)])
        #expect(object(L.author, 2).references("books", in: m) == [ref(L.book, 3)])
        #expect(object(L.author, 3).references("books", in: m) == [])
        // Self-reference both ways.
        #expect(object(L.author, 1).references("mentor", in: m) == [])
        #expect(object(L.author, 1).references("mentees", in: m) == [ref(L.author, 2), ref(L.author, 3)])
        #expect(object(L.author, 3).references("mentor", in: m) == [ref(L.author, 1)])
        // To-one.
        #expect(object(L.book, 3).references("author", in: m) == [ref(L.author, 2)])
        #expect(object(L.book, 4).references("author", in: m) == [])
        // Ordered many-to-many by Z_FOK_6TAGS; its other side in Z_PK order.
        #expect(object(L.book, 1).references("tags", in: m) == [ref(L.tag, 3), ref(L.tag, 1)])
        #expect(object(L.book, 4).references("tags", in: m) == [])
        #expect(object(L.tag, 1).references("books", in: m) == [ref(L.book, 1), ref(L.book, 2)])
        #expect(object(L.tag, 3).references("books", in: m) == [ref(L.book, 1)])
        // A to-one whose destination has sub-entities names the object's own entity.
        #expect(object(L.tag, 1).references("featured", in: m) == [ref(L.video, 2)])
        #expect(object(L.tag, 2).references("featured", in: m) == [ref(L.media, 3)])
        #expect(object(L.tag, 3).references("featured", in: m) == [])
        // Inheritance: inherited attributes first, a clash numbered ZFORMAT1 for the later entity number.
        #expect(object(L.audio, 1).attributes == [.string("Talk"), .int(300), .string("mp3")])
        #expect(object(L.video, 2).attributes == [.string("Film"), .int(1920), .string("mp4")])
        #expect(object(L.media, 3).attributes == [.string("Plain")])
        #expect(object(L.audio, 1).relationships == [[ref(L.book, 1)]])
        #expect(object(L.media, 3).relationships == [[ref(L.book, 4)]])
    }

    @Test("read ahead, each object made in a spent one's arrays: the objects of a direct read, those the taker keeps unchanged",
          arguments: [1, 2, 3])
    func readAheadReusesArrays(batchSize: Int) throws {
        let path = scratch.path("library.store")
        try L.write(path)
        let direct = try L.objects(try CoreDataObjectReader(path: path, model: L.model))
        func object(_ item: ObjectReadItem) -> ObjectRecord? { if case .object(let o) = item { return o } else { return nil } }
        // Dropped as they come: the reader's thread makes the next objects in their arrays, emptied.
        var reader = ObjectReadAhead.reading(try CoreDataObjectReader(path: path, model: L.model), batchSize: batchSize, window: 1)
        var position = 0
        while let item = try reader.next() {
            #expect(position < direct.count && object(item) == direct[position], "item \(position)")
            position += 1
        }
        #expect(position == direct.count)
        // Kept: the arrays are shared, so new ones are made and what the taker holds does not change.
        reader = ObjectReadAhead.reading(try CoreDataObjectReader(path: path, model: L.model), batchSize: batchSize, window: 1)
        var kept: [ObjectRecord?] = []
        while let item = try reader.next() { kept.append(object(item)) }
        #expect(kept == direct.map(Optional.some))
    }

    @Test("a value of the wrong storage class sets its object aside with table, Z_PK and column; the rest is read")
    func wrongStorageClass() throws {
        let path = scratch.path("library.store")
        try L.write(path, ["damage=UPDATE ZAUTHOR SET ZCOUNT16 = 'many' WHERE Z_PK = 2; UPDATE ZTAG SET ZLABEL = X'00' WHERE Z_PK = 3; "
                           + "UPDATE ZAUTHOR SET ZACTIVE = 2 WHERE Z_PK = 3; UPDATE ZMEDIA SET ZSECONDS = 3000000000 WHERE Z_PK = 1;"])
        let items = try L.drain(try CoreDataObjectReader(path: path, model: L.model))
        let reasons = items.compactMap { item -> String? in if case .rejected(let r) = item { return r.reason } else { return nil } }
        #expect(reasons == ["ZMEDIA row Z_PK 1: column ZSECONDS (seconds): holds 3000000000, out of the range of Int32",
                            "ZAUTHOR row Z_PK 2: column ZCOUNT16 (count16): holds TEXT where an Int16 is stored as INTEGER",
                            "ZAUTHOR row Z_PK 3: column ZACTIVE (active): holds 2 where a Bool is stored as 0 or 1",
                            "ZTAG row Z_PK 3: column ZLABEL (label): holds BLOB where a String is stored as TEXT"])
        #expect(items.count == 13)
    }

    @Test("a reference to a row that is not there is exit 65 naming table, row and column",
          arguments: [("UPDATE ZBOOK SET ZAUTHOR = 99 WHERE Z_PK = 3;", "ZBOOK row Z_PK 3: column ZAUTHOR names Z_PK 99"),
                      ("INSERT INTO Z_2TAGS VALUES (2, 42, 2);", "Z_2TAGS row of owner Z_PK 2: column Z_6TAGS names Z_PK 42"),
                      ("UPDATE ZTAG SET ZFEATURED = 4 WHERE Z_PK = 2;", "ZTAG row Z_PK 2: column ZFEATURED names Z_PK 4"),
                      ("UPDATE ZTAG SET ZFEATURED = 1 WHERE Z_PK = 2; UPDATE ZMEDIA SET Z_ENT = 2 WHERE Z_PK = 1;",
                       "ZMEDIA row Z_PK 1: Z_ENT 2 is no entity of the model sharing ZMEDIA"),
                      ("UPDATE ZMEDIA SET ZBOOK = 2 WHERE Z_PK = 1; UPDATE ZBOOK SET Z_ENT = 6 WHERE Z_PK = 2;", "Z_ENT 6 is no entity")])
    func dangling(damage: String, place: String) throws {
        let path = scratch.path("library.store")
        try L.write(path, ["damage=" + damage])
        let error = #expect(throws: TripError.self) { try L.drain(try CoreDataObjectReader(path: path, model: L.model)) }
        #expect(error?.kind == .data)
        #expect(error?.message.contains(place) == true, "\(error?.message ?? "")")
    }

    @Test("a column not where Core Data's rules put it is refused with table and column")
    func missingColumn() throws {
        let path = scratch.path("library.store")
        try L.write(path, ["damage=ALTER TABLE ZMEDIA RENAME COLUMN ZFORMAT1 TO ZFORMAT2;"])
        let error = #expect(throws: TripError.self) { try CoreDataObjectReader(path: path, model: L.model) }
        #expect(error?.kind == .data)
        #expect(error?.message.hasSuffix("ZMEDIA has no column ZFORMAT1 for Video.format") == true, "\(error?.message ?? "")")
    }

    @Test("a model whose inheritance does not end in a root entity is refused, not a crash", arguments: ["Nowhere", "Video"])
    func brokenInheritance(superentity: String) throws {
        let path = scratch.path("library.store")
        try L.write(path)
        var model = L.model
        model.entities[L.media].superentity = superentity
        let error = #expect(throws: TripError.self) { try CoreDataObjectReader(path: path, model: model) }
        #expect(error?.message.contains("does not end in a root entity") == true, "\(error?.message ?? "")")
    }

    @Test("a to-many without an inverse whose hidden column the destination's table lacks is refused naming table and column")
    func toManyWithoutInverse() throws {
        let path = scratch.path("library.store")
        try L.write(path)
        var model = L.model
        model.entities[L.tag].relationships.append(RelationshipDescription("related", to: "Tag", toMany: true))
        let error = #expect(throws: TripError.self) { try CoreDataObjectReader(path: path, model: model) }
        #expect(error?.kind == .data)
        #expect(error?.message.hasSuffix("ZTAG has no column Z6RELATED for Tag.related, a to-many without an inverse") == true, "\(error?.message ?? "")")
    }
}
