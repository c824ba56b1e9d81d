import Foundation
import Testing
import TripKit
import TripTestSupport

/// A Core Data store written at an older version of an `.xcdatamodeld` (by Python, as Core Data lays
/// one out), read with `--model` naming the bundle: tripconv tells the store's version and runs Core
/// Data's inferred stage from it to the current version.
@Suite("convert and detect a store at an older version of an .xcdatamodeld")
struct XcodeVersionsStoreCLITests {
    /// `Garden.xcdatamodel` (the first version of `XcodeModelVersions`), described here by hand.
    static let garden1 = ObjectModel(entities: [
        EntityDescription("Bed", attributes: [AttributeDescription("label", .string)],
                          relationships: [RelationshipDescription("plants", to: "Plant", inverse: "bed", toMany: true)]),
        EntityDescription("Plant", attributes: [
            AttributeDescription("height", .int32), AttributeDescription("name", .string, isOptional: false),
            AttributeDescription("planted", .date),
        ], relationships: [RelationshipDescription("bed", to: "Bed", inverse: "plants")]),
        EntityDescription("Seed", attributes: [AttributeDescription("kind", .string)]),
    ])

    /// A store of `garden1` (entities numbered Bed 1, Plant 2, Seed 3; keys 1-2 beds, 3-4 plants,
    /// 5-6 seeds) with values in its rows; `cache` keeps the model cache Core Data writes since 2017,
    /// `identifiers` its `NSStoreModelVersionIdentifiers`.
    static func store(in dir: String, cache: Bool, identifiers: [String] = [""]) throws -> String {
        let path = dir + "/Garden.sqlite"
        var model = garden1
        model.versionIdentifiers = identifiers
        let written = try ModelStoreWriter.write(model, to: path, rows: 2, damage: cache ? "none" : "nocache")
        #expect(written.status == 0, "\(written.stderr)")
        let filled = try CLI.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("UPDATE ZBED SET ZLABEL = 'bed ' || Z_PK")
            db.execute("UPDATE ZPLANT SET ZNAME = 'plant ' || Z_PK, ZHEIGHT = Z_PK * 10, ZBED = 1")
            db.execute("UPDATE ZSEED SET ZKIND = 'seed ' || Z_PK")
            db.commit()
            """, [path])
        #expect(filled.status == 0, "\(filled.stderr)")
        return path
    }

    @Test("a store with no model cache at the first version converts to the current one ('2.0'): name renamed title, watered added",
          .needsPython3)
    func oldStoreConverts() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try XcodeModelVersions.write(in: dir, current: "Garden 2.xcdatamodel")
        let store = try Self.store(in: dir, cache: false)
        let r = try CLI.tripconv("convert", store, "--model", bundle, "-o", dir + "/out.json", "-v")
        #expect(r.status == 0, "\(r.stderr)")
        let err = r.stderr
        #expect(err.contains("version Garden of an Xcode model's versions"), "\(err)")
        let checked = try CLI.python("""
            import json, sys
            doc = json.load(open(sys.argv[1]))
            print(sorted((p['title'], p['height'], p['watered'], 'name' in p, p['bed']) for p in doc['Plant']))
            print(len(doc['Seed']), sorted(b['plants'] for b in doc['Bed']))
            """, [dir + "/out.json"])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            [('plant 3', 30, False, False, 1), ('plant 4', 40, False, False, 1)]
            2 [[], [3, 4]]

            """, "\(checked.stderr) \(String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: dir + "/out.json"))) ?? Data(), as: UTF8.self))")
    }

    @Test("a stage Core Data could not infer (Plant.height Int32 -> String in 'Garden 10') is exit 65 naming it, nothing written",
          .needsPython3)
    func refusedStage() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try XcodeModelVersions.write(in: dir)
        let store = try Self.store(in: dir, cache: false)
        let r = try CLI.tripconv("convert", store, "--model", bundle, "-o", dir + "/out.json")
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("lightweight stage Garden -> Garden 10: Plant.height changes type from Int32 to String"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.json"))
    }

    @Test("detect --model BUNDLE says the store's version and why; a store at 2.0 by its identifier", .needsPython3)
    func detects() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try XcodeModelVersions.write(in: dir, current: "Garden 2.xcdatamodel")
        let store = try Self.store(in: dir, cache: false)
        let r = try CLI.tripconv("detect", "--model", bundle, store)
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.contains("version Garden of the plan"), "\(out)")
        let one = try CLI.temporaryDirectory().path
        let single = one + "/Garden.xcdatamodeld/Garden.xcdatamodel"
        try FileManager.default.createDirectory(atPath: single, withIntermediateDirectories: true)
        try XcodeModelVersions.version1.write(toFile: single + "/contents", atomically: true, encoding: .utf8)
        let refused = try CLI.tripconv("detect", "--model", one + "/Garden.xcdatamodeld", store)
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("an .xcdatamodeld of several versions"))
    }

    @Test("a store whose identifiers name version '2.0' is read at 2.0, whatever its names look like", .needsPython3)
    func identifierDecides() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try XcodeModelVersions.write(in: dir, current: "Garden 2.xcdatamodel")
        let store = try Self.store(in: dir, cache: true, identifiers: ["2.0"])
        let r = try CLI.tripconv("detect", "--model", bundle, store)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(String(decoding: r.stdout, as: UTF8.self).contains("version 2.0 of the plan"), "\(String(decoding: r.stdout, as: UTF8.self))")
    }
}
