import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// `../shared/real-stores/swiftdata-resourcesmanager`, or nil when it is absent.
private let resourcesManager: String? = TestPaths.shared.flatMap { shared in
    let p = shared + "/real-stores/swiftdata-resourcesmanager"
    return FileManager.default.fileExists(atPath: p + "/default.store") ? p : nil
}

/// `../shared/real-stores/coredata-feedback`, or nil when it is absent.
private let feedback: String? = TestPaths.shared.flatMap { shared in
    let p = shared + "/real-stores/coredata-feedback"
    return FileManager.default.fileExists(atPath: p + "/Model.sqlite") ? p : nil
}

@Suite("Core Data stores read as SQLite reads them, unchanged", .needsPython3)
struct CoreDataSnapshotTests {
    let scratch = ScratchDirectory()
    typealias L = LibraryStore

    /// A store whose rows are all in its `-wal` (with its `-shm`), as an app leaves one; in `copy/`.
    func walStore() throws -> String {
        try L.write(scratch.path("writer.store"), ["wal", scratch.path("copy")])
        let path = scratch.path("copy/library.store")
        // The rows are in the -wal only: the main file alone has none.
        #expect(FileSystem.size(path + "-wal") ?? 0 > 0)
        return path
    }

    @Test("the -wal is read and no byte of the store, its -wal or its -shm changes (a read-only -shm)")
    func walReadUnchanged() throws {
        let path = try walStore()
        let before = try L.checksums(scratch.path("copy"))
        let reader = try CoreDataObjectReader(path: path, model: L.model)
        #expect(reader.route == .readOnlyIndex)
        #expect(try L.objects(reader).count == 13)
        #expect(try L.checksums(scratch.path("copy")) == before)
    }

    @Test("a -wal without its -shm is read from a private copy: no -shm is made beside the store, the copy is removed")
    func walWithoutIndex() throws {
        let path = try walStore()
        try FileManager.default.removeItem(atPath: path + "-shm")
        let before = try L.checksums(scratch.path("copy"))
        let temporary = scratch.path("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let reader = try CoreDataObjectReader(path: path, model: L.model, temporaryDirectory: temporary)
        #expect(reader.route == .privateCopy)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).count == 1)
        #expect(try L.objects(reader).count == 13)
        #expect(try L.checksums(scratch.path("copy")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    }

    @Test("a WAL-mode store without a -wal is opened immutable: no -wal or -shm appears beside it")
    func walModeWithoutLog() throws {
        try FileManager.default.createDirectory(atPath: scratch.path("closed"), withIntermediateDirectories: true)
        let path = scratch.path("closed/library.store")
        try L.write(path, ["walclosed"])
        let before = try L.checksums(scratch.path("closed"))
        let reader = try CoreDataObjectReader(path: path, model: L.model)
        #expect(reader.route == .immutable)
        #expect(try L.objects(reader).count == 13)
        #expect(try L.checksums(scratch.path("closed")) == before)
    }

    @Test("one snapshot: what another connection commits while the store is read is not half-seen")
    func oneSnapshot() throws {
        let path = try walStore()
        let reader = try CoreDataObjectReader(path: path, model: L.model)
        guard case .object(let first) = try reader.next() else { Issue.record("no first object"); return }
        #expect(first.entity == L.audio)
        // Another process, as an app writing its store would be (in this process SQLite would share the read-only index).
        let write = try ExternalTool.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.executescript("DELETE FROM ZAUTHOR WHERE Z_PK = 3; INSERT INTO ZTAG VALUES (4, 6, 1, NULL, 'new'); UPDATE ZBOOK SET ZAUTHOR = NULL;")
            print(db.execute("SELECT count(*) FROM ZAUTHOR").fetchone()[0])
            """, [path])
        #expect(write.status == 0 && write.out == "2\n", "\(write.stderr)")
        var rest: [ObjectRecord] = []
        while let item = try reader.next() { if case .object(let o) = item { rest.append(o) } }
        #expect(rest.count == 12)
        #expect(rest.filter { $0.entity == L.author }.map(\.key) == [1, 2, 3])
        #expect(rest.first { $0.entity == L.book && $0.key == 3 }?.references("author", in: L.model) == [ObjectReference(entity: L.author, key: 2)])
    }

    @Test("the real Core Data store of 2014 (rollback journal, no model cache), read with its Xcode model's entities",
          .enabled(if: feedback != nil, "needs ../shared/real-stores/coredata-feedback, which is absent"))
    func realCoreDataStore() throws {
        let copy = scratch.path("feedback")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: feedback! + "/Model.sqlite", toPath: copy + "/Model.sqlite")
        chmod(copy + "/Model.sqlite", 0o644)
        let before = try L.checksums(copy)
        let model = ObjectModel(entities: [
            EntityDescription("FeedbackCategory", attributes: [AttributeDescription("name", .string)], relationships: [
                RelationshipDescription("subcategory", to: "FeedbackSubCategory", inverse: "category", toMany: true)]),
            EntityDescription("FeedbackSubCategory", attributes: [AttributeDescription("name", .string)], relationships: [
                RelationshipDescription("category", to: "FeedbackCategory", inverse: "subcategory")]),
        ])
        let reader = try CoreDataObjectReader(path: copy + "/Model.sqlite", model: model)
        #expect(reader.route == .ordinary)
        let objects = try L.objects(reader)
        #expect(try L.checksums(copy) == before)
        let categories = objects.filter { $0.entity == 0 }, subcategories = objects.filter { $0.entity == 1 }
        #expect(categories.count == 19 && subcategories.count == 79)
        // Each category's to-many is the subcategories whose to-one names it, in Z_PK order.
        for c in categories {
            #expect(c.relationships[0] == subcategories.filter { $0.relationships[0] == [c.reference] }.map(\.reference))
        }
        #expect(categories.flatMap { $0.relationships[0] }.count == subcategories.filter { !$0.relationships[0].isEmpty }.count)
        // The names, as Python's sqlite3 reads them.
        let dump = try ExternalTool.python("""
            import sqlite3, sys, json
            db = sqlite3.connect(sys.argv[1])
            print(json.dumps([r[0] for r in db.execute("SELECT ZNAME FROM ZFEEDBACKCATEGORY ORDER BY Z_PK")]
                             + [r[0] for r in db.execute("SELECT ZNAME FROM ZFEEDBACKSUBCATEGORY ORDER BY Z_PK")]))
            """, [copy + "/Model.sqlite"])
        let names = try JSONSerialization.jsonObject(with: dump.stdout) as! [Any]
        #expect(objects.map(\.attributes) == names.map { [($0 as? String).map(ObjectValue.string) ?? .null] })
    }

    static let resourcesModel = ObjectModel(entities: [
        EntityDescription("Component", attributes: [AttributeDescription("count", .int64), AttributeDescription("id", .uuid)],
                          relationships: [RelationshipDescription("craftingRecipe", to: "CraftingRecipe", inverse: "requiredComponents"),
                                          RelationshipDescription("item", to: "Item")]),
        EntityDescription("CraftingRecipe", attributes: [AttributeDescription("producedItemCount", .string)],
                          relationships: [RelationshipDescription("producedItem", to: "Item", inverse: "craftingRecipe"),
                                          RelationshipDescription("requiredComponents", to: "Component", inverse: "craftingRecipe", toMany: true)]),
        EntityDescription("Item", attributes: [AttributeDescription("name", .string)],
                          relationships: [RelationshipDescription("craftingRecipe", to: "CraftingRecipe", inverse: "producedItem")],
                          uniquenessConstraints: [["name"]]),
    ])

    @Test("the real SwiftData store: every object is in its -wal; read on a copy, which stays byte for byte as it was",
          .enabled(if: resourcesManager != nil, "needs ../shared/real-stores/swiftdata-resourcesmanager, which is absent"))
    func realStore() throws {
        let copy = scratch.path("real")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: resourcesManager! + "/default.store" + suffix, toPath: copy + "/default.store" + suffix)
            chmod(copy + "/default.store" + suffix, 0o644)
        }
        let before = try L.checksums(copy)
        let m = Self.resourcesModel
        let objects = try L.objects(try CoreDataObjectReader(path: copy + "/default.store", model: m))
        #expect(try L.checksums(copy) == before)
        // As the README says: 1 Component, 2 CraftingRecipe, 4 Item.
        #expect(objects.map(\.entity) == [0, 1, 1, 2, 2, 2, 2])

        // The values, as Python's sqlite3 reads them from a second copy (opened read-write: it is ours).
        let second = scratch.path("second")
        try FileManager.default.copyItem(atPath: copy, toPath: second)
        let dump = try ExternalTool.python("""
            import sqlite3, sys, json
            db = sqlite3.connect(sys.argv[1] + "/default.store")
            print(json.dumps({
              "Item": [[k, n, r] for k, n, r in db.execute("SELECT Z_PK, ZNAME, ZCRAFTINGRECIPE FROM ZITEM ORDER BY Z_PK")],
              "CraftingRecipe": [[k, c, p] for k, c, p in db.execute("SELECT Z_PK, ZPRODUCEDITEMCOUNT, ZPRODUCEDITEM FROM ZCRAFTINGRECIPE ORDER BY Z_PK")],
              "Component": [[k, c, r, i, u.hex()] for k, c, r, i, u in db.execute("SELECT Z_PK, ZCOUNT, ZCRAFTINGRECIPE, ZITEM, ZID FROM ZCOMPONENT ORDER BY Z_PK")],
            }))
            """, [second])
        let python = try JSONSerialization.jsonObject(with: dump.stdout) as! [String: [[Any]]]
        func key(_ v: Any) -> [ObjectReference] { (v as? Int).map { [ObjectReference(entity: 0, key: Int64($0))] } ?? [] }
        func refs(_ v: Any, _ entity: Int) -> [ObjectReference] { key(v).map { ObjectReference(entity: entity, key: $0.key) } }
        let items = objects.filter { $0.entity == 2 }
        #expect(items.map(\.key) == python["Item"]!.map { Int64($0[0] as! Int) })
        #expect(items.map(\.attributes) == python["Item"]!.map { [.string($0[1] as! String)] })
        #expect(items.map(\.relationships.lists) == python["Item"]!.map { [refs($0[2], 1)] })
        let recipes = objects.filter { $0.entity == 1 }
        #expect(recipes.map(\.attributes) == python["CraftingRecipe"]!.map { [.string($0[1] as! String)] })
        #expect(recipes.map { $0.relationships[0].array } == python["CraftingRecipe"]!.map { refs($0[2], 2) })
        let component = objects[0]
        let row = python["Component"]![0]
        #expect(component.key == Int64(row[0] as! Int))
        #expect(component.attributes[0] == .int(Int64(row[1] as! Int)))
        guard case .uuid(let id) = component.attributes[1] else { Issue.record("id is not a UUID"); return }
        #expect(id.bytes.map { String(format: "%02x", $0) }.joined() == row[4] as! String)
        #expect(component.relationships == [refs(row[2], 1), refs(row[3], 2)])
        // The to-many is the inverse of the components' to-one; the one-to-one pairs agree both ways.
        for r in recipes {
            #expect(r.relationships[1] == objects.filter { $0.entity == 0 && $0.relationships[0].contains(r.reference) }.map(\.reference))
            for p in r.relationships[0] { #expect(items.first { $0.reference == p }?.relationships[0] == [r.reference]) }
        }
    }
}
