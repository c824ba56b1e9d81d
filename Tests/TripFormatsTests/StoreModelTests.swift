import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The store's own model: model caches a Python writer made (every attribute kind, every kind of
/// relationship, inheritance, uniqueness, each delete rule), damaged ones, the two real stores.
@Suite("The store's own model")
struct StoreModelTests {
    static func directory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// A model with every attribute kind, to-one, to-many, ordered, many-to-many, a self-reference,
    /// a to-one without inverse, inheritance (abstract root), uniqueness of one and of two names,
    /// every delete rule. Entities and properties in name order, as the reader gives them.
    static let everything = ObjectModel(entities: [
        EntityDescription("Animal", isAbstract: true, attributes: [
            AttributeDescription("born", .date, isOptional: true, defaultValue: .date(12.5)),
            AttributeDescription("name", .string, isOptional: false, defaultValue: .string("Rex")),
        ], relationships: [
            RelationshipDescription("keeper", to: "Keeper", inverse: "animals", isOptional: true, deleteRule: .nullify),
        ], uniquenessConstraints: [["name"]]),
        EntityDescription("Cat", superentity: "Animal", attributes: [
            AttributeDescription("lives", .int16, isOptional: false, defaultValue: .int(9)),
        ]),
        EntityDescription("Dog", superentity: "Animal", attributes: [
            AttributeDescription("good", .bool, isOptional: false, defaultValue: .bool(true)),
        ], relationships: [
            RelationshipDescription("friends", to: "Dog", inverse: "friends", toMany: true, deleteRule: .noAction),
        ]),
        EntityDescription("Keeper", attributes: [
            AttributeDescription("badge", .int32, isOptional: true, defaultValue: .int(-3)),
            AttributeDescription("height", .float, isOptional: true, defaultValue: .double(1.5)),
            AttributeDescription("id", .uuid, isOptional: false, defaultValue: .uuid(UUIDBytes(Array(0..<16))!)),
            AttributeDescription("notes", .transformable, isOptional: true, valueClassName: "NSArray",
                                 valueTransformerName: "NSSecureUnarchiveFromData"),
            AttributeDescription("photo", .binary, isOptional: true, defaultValue: .data([1, 2, 3])),
            AttributeDescription("salary", .decimal, isOptional: true),
            AttributeDescription("scratch", .string, isOptional: true, isTransient: true),
            AttributeDescription("serial", .int64, isOptional: false, defaultValue: .int(1 << 40)),
            AttributeDescription("site", .uri, isOptional: true, defaultValue: .url("https://example.com/a")),
            AttributeDescription("weight", .double, isOptional: true, defaultValue: .double(-2.25)),
        ], relationships: [
            RelationshipDescription("animals", to: "Animal", inverse: "keeper", toMany: true, deleteRule: .deny),
            RelationshipDescription("boss", to: "Keeper", isOptional: true, deleteRule: .nullify),
            RelationshipDescription("tasks", to: "Task", inverse: "keeper", toMany: true, ordered: true, deleteRule: .cascade),
            RelationshipDescription("zones", to: "Zone", inverse: "keepers", toMany: true, deleteRule: .nullify),
        ], uniquenessConstraints: [["id"], ["badge", "serial"]]),
        EntityDescription("Task", attributes: [AttributeDescription("title", .string, isOptional: true)], relationships: [
            RelationshipDescription("keeper", to: "Keeper", inverse: "tasks", isOptional: false, deleteRule: .nullify),
        ]),
        EntityDescription("Zone", attributes: [AttributeDescription("code", .string, isOptional: false)], relationships: [
            RelationshipDescription("keepers", to: "Keeper", inverse: "zones", toMany: true, deleteRule: .nullify),
        ]),
    ], versionIdentifiers: ["2.1.0"])

    @Test("a model cache of every attribute kind and every kind of relationship reads back to the model written",
          .needsPython3)
    func everyKind() throws {
        let path = try Self.directory() + "/zoo.store"
        let written = try ModelStoreWriter.write(Self.everything, to: path, rows: 2)
        try #require(written.status == 0, "\(written.stderr)")
        let store = try StoreModel.read(storeAt: path)
        #expect(store.source == .modelCache)
        #expect(store.model == Self.everything)
        #expect(store.versionIdentifiers == ["2.1.0"])
        #expect(store.frameworkVersion == 1345)
        #expect(store.storeType == "SQLite")
        #expect(store.entityNumbers == ["Animal": 1, "Cat": 2, "Dog": 3, "Keeper": 4, "Task": 5, "Zone": 6])
        #expect(store.objectCounts == ["Animal": 0, "Cat": 2, "Dog": 2, "Keeper": 2, "Task": 2, "Zone": 2])
        #expect(!store.hasPendingWAL)
        #expect(store.model.rootEntity(of: "Dog")?.name == "Animal")
        #expect(store.model.family(of: "Animal").map(\.name) == ["Animal", "Cat", "Dog"])
    }

    @Test("model JSON reads back to the same model", .needsPython3)
    func jsonRoundTrip() throws {
        let dir = try Self.directory()
        let json = JSONText.Node.object(ObjectModelJSON.node(Self.everything)).render(indent: 2)
        try json.write(toFile: dir + "/model.json", atomically: true, encoding: .utf8)
        #expect(try ObjectModelJSON.read(dir + "/model.json") == Self.everything)
        let checked = try ExternalTool.python("import json, sys; m = json.load(open(sys.argv[1])); print(len(m['entities']), m['entities'][3]['attributes'][2]['default'])", [dir + "/model.json"])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == "6 00010203-0405-0607-0809-0A0B0C0D0E0F\n")
    }

    @Test("a damaged model cache is bad data naming Z_MODELCACHE.Z_CONTENT, never a crash",
          .needsPython3, arguments: ["truncate", "baduid", "notdeflate", "cycle"])
    func damaged(_ damage: String) throws {
        let path = try Self.directory() + "/damaged.store"
        let written = try ModelStoreWriter.write(Self.everything, to: path, damage: damage)
        try #require(written.status == 0, "\(written.stderr)")
        let error = try #require(throws: TripError.self) { try StoreModel.read(storeAt: path) }
        #expect(error.kind == .data)
        #expect(error.message.hasPrefix("\(path): Z_MODELCACHE.Z_CONTENT: a damaged model cache: "), "\(error.message)")
    }

    @Test("every truncation and every single-byte change of a model cache is refused or read, never a crash", .needsPython3)
    func mutations() throws {
        let path = try Self.directory() + "/small.store"
        let small = ObjectModel(entities: [Self.everything.entities[4], Self.everything.entities[5]].map { e in
            var e = e; e.relationships = []; return e
        })
        try #require(try ModelStoreWriter.write(small, to: path).status == 0)
        let connection = try SQLiteConnection(path: path, access: .reading)
        let s = try connection.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE")
        _ = try s.step()
        let blob = s.bytes(0)
        let plist = try RawInflate.inflate(blob)
        #expect(try ModelCache.model(compressed: blob) == small)
        var outcomes = (read: 0, refused: 0)
        func attempt(_ bytes: [UInt8]) {
            do { _ = try ModelCache.model(archive: KeyedArchive(bytes)); outcomes.read += 1 } catch { outcomes.refused += 1 }
        }
        for n in stride(from: 0, to: plist.count, by: 7) { attempt(Array(plist.prefix(n))) }
        for i in 0..<plist.count {
            var b = plist
            b[i] ^= 0x5A
            attempt(b)
        }
        for n in stride(from: 0, to: blob.count, by: 5) { #expect(throws: BinaryPropertyList.Failure.self) { try RawInflate.inflate(Array(blob.prefix(n))) } }
        #expect(outcomes.refused > 0)
    }

    @Test("inflating past the limit is refused", .needsPython3)
    func inflateLimit() throws {
        let zeros = try ExternalTool.python("import sys, zlib; c = zlib.compressobj(9, zlib.DEFLATED, -15); sys.stdout.buffer.write(c.compress(bytes(1 << 20)) + c.flush())")
        #expect(try RawInflate.inflate([UInt8](zeros.stdout), limit: 1 << 21).count == 1 << 20)
        #expect(throws: BinaryPropertyList.Failure.self) { try RawInflate.inflate([UInt8](zeros.stdout), limit: 1 << 19) }
    }

    @Test("without a model cache the model is told from the tables, saying what it guessed", .needsPython3)
    func fromTables() throws {
        let path = try Self.directory() + "/tables.store"
        try #require(try ModelStoreWriter.write(Self.everything, to: path, damage: "nocache").status == 0)
        let store = try StoreModel.read(storeAt: path)
        #expect(store.source == .tables)
        let keeper = try #require(store.model.entity("Keeper"))
        #expect(keeper.attribute("weight")?.kind == .double)
        #expect(keeper.attribute("serial")?.kind == .int64)
        #expect(keeper.attribute("photo")?.kind == .binary)
        #expect(keeper.attribute("salary")?.kind == .decimal)
        #expect(keeper.attribute("scratch") == nil)
        #expect(store.model.entity("Cat")?.superentity == "Animal")
        let zones = try #require(keeper.relationship("zones"))
        #expect(zones.isToMany && zones.destination == "Zone" && zones.inverse == "keepers")
        #expect(store.model.inferences.contains { $0.hasPrefix("Keeper.weight: ZWEIGHT FLOAT read as Double") })
        #expect(store.model.inferences.contains { $0.contains("join table Z_4ZONES") })
    }
}
