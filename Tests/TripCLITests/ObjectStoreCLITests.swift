import Foundation
import Testing
import TripKit
import TripTestSupport

/// `convert` of another app's store (issue 26): the store's own model, every text format out, every
/// export read back with `--model` to the same objects, the store's files never changed.
@Suite("another app's store, converted", .needsPython3)
struct ObjectStoreCLITests {
    /// A model with every kind tripconv reads and a to-one / to-many pair, laid out by an
    /// independent (Python) writer of Core Data stores.
    static let model = ObjectModel(entities: [
        EntityDescription("Shelf", attributes: [
            AttributeDescription("label", .string, isOptional: false),
            AttributeDescription("bought", .date),
            AttributeDescription("width", .double),
            AttributeDescription("slots", .int16),
        ], relationships: [RelationshipDescription("books", to: "Volume", inverse: "shelf", toMany: true)],
           uniquenessConstraints: [["label"]]),
        EntityDescription("Volume", attributes: [
            AttributeDescription("id", .uuid), AttributeDescription("pages", .int64), AttributeDescription("read", .bool),
            AttributeDescription("price", .decimal), AttributeDescription("cover", .binary), AttributeDescription("link", .uri),
            AttributeDescription("weight", .float), AttributeDescription("copies", .int32),
        ], relationships: [RelationshipDescription("shelf", to: "Shelf", inverse: "books")]),
    ], versionIdentifiers: ["2.1.0"])

    static func md5(_ folder: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for f in try FileManager.default.contentsOfDirectory(atPath: folder) { out[f] = FileManager.default.contents(atPath: folder + "/" + f) }
        return out
    }

    /// Every format out, and back with --model to the JSON Lines the store gives directly.
    static func roundTrips(_ store: String, in dir: String) throws {
        let direct = try CLI.tripconv(store, "-q", "-o", dir + "/direct.jsonl")
        #expect(direct.status == 0, "\(direct.stderr)")
        let expected = try String(contentsOfFile: dir + "/direct.jsonl", encoding: .utf8)
        #expect(!expected.isEmpty)
        for format in ["json", "jsonl", "yaml", "xml", "csv", "tsv", "sqlite"] {
            let out = dir + "/out-" + format + (["csv", "tsv"].contains(format) ? "" : "." + format)
            let written = try CLI.tripconv(store, "-q", "--to", format, "-o", out)
            #expect(written.status == 0, "\(format): \(written.stderr)")
            let back = try CLI.tripconv(out, "--from", format, "--model", store, "-q", "-o", dir + "/back-\(format).jsonl")
            #expect(back.status == 0, "\(format): \(back.stderr)")
            #expect(try String(contentsOfFile: dir + "/back-\(format).jsonl", encoding: .utf8) == expected, "\(format)")
        }
        // The model JSON schema --json writes reads the exports as the store itself does.
        let schema = try CLI.tripconv("schema", "--model", store, "--json")
        try schema.out.write(toFile: dir + "/model.json", atomically: true, encoding: .utf8)
        let viaJSON = try CLI.tripconv(dir + "/out-json.json", "--model", dir + "/model.json", "-q", "-o", dir + "/back-model.jsonl")
        #expect(viaJSON.status == 0, "\(viaJSON.stderr)")
        #expect(try String(contentsOfFile: dir + "/back-model.jsonl", encoding: .utf8) == expected)
    }

    @Test("the real SwiftData store: its 7 objects from the -wal, in every format and back, its files unchanged", .needsRealStores)
    func realStore() throws {
        let copy = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let before = try Self.md5(copy)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-objects-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try CLI.tripconv(copy + "/default.store", "-o", out + "/all.json")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("read 7 objects; wrote 7 (Component 1, CraftingRecipe 2, Item 4); rejected 0"), "\(run.stderr)")
        // Python's json reads the document: the one-to-one pair and the to-many agree.
        let check = try ExternalTool.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            items = {i["name"]: i for i in d["Item"]}
            recipes = {r["@key"]: r for r in d["CraftingRecipe"]}
            assert len(items) == 4 and len(recipes) == 2 and len(d["Component"]) == 1, d
            for k, r in recipes.items():
                assert items[r["producedItem"]]["craftingRecipe"] == k, (k, r)
            c = d["Component"][0]
            assert c["@key"] in recipes[c["craftingRecipe"]]["requiredComponents"], c
            assert c["item"] in items and len(c["id"]) == 36
            print("ok")
            """, [out + "/all.json"])
        #expect(check.out == "ok\n", "\(check.stderr)")
        try Self.roundTrips(copy + "/default.store", in: out)
        #expect(try Self.md5(copy) == before, "the store, its -wal or its -shm changed")
    }

    @Test("a store an independent writer laid out, every attribute kind: every format and back")
    func writtenStore() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-objects-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let written = try ModelStoreWriter.write(Self.model, to: dir + "/shelves.store", rows: 5)
        #expect(written.status == 0, "\(written.stderr)")
        // Values of every kind, as Core Data stores them, by Python's sqlite3 (the last volume all null).
        let filled = try ExternalTool.python("""
            import sqlite3, sys, uuid
            c = sqlite3.connect(sys.argv[1])
            for i, (pk,) in enumerate(c.execute("SELECT Z_PK FROM ZSHELF ORDER BY Z_PK").fetchall()):
                c.execute("UPDATE ZSHELF SET ZLABEL=?, ZBOUGHT=?, ZWIDTH=?, ZSLOTS=? WHERE Z_PK=?",
                          ("shelf, \\"%d\\"" % i, 754000000.123456789 + i * 86400.5, 0.1 * i, -32768 + i, pk))
            shelves = [pk for (pk,) in c.execute("SELECT Z_PK FROM ZSHELF ORDER BY Z_PK")]
            volumes = [pk for (pk,) in c.execute("SELECT Z_PK FROM ZVOLUME ORDER BY Z_PK")]
            for i, pk in enumerate(volumes[:-1]):
                c.execute("UPDATE ZVOLUME SET ZID=?, ZPAGES=?, ZREAD=?, ZPRICE=?, ZCOVER=?, ZLINK=?, ZWEIGHT=?, ZCOPIES=?, ZSHELF=? WHERE Z_PK=?",
                          (uuid.UUID(int=i * 7919 + 1).bytes, 2**62 + i, i % 2, "12.3%d" % i, bytes(range(i * 3)),
                           "https://example.org/v?%d" % i, 1.5 * i, 2**31 - 1 - i, shelves[i % 2], pk))
            c.commit()
            print("ok")
            """, [dir + "/shelves.store"])
        #expect(filled.out == "ok\n", "\(filled.stderr)")
        try Self.roundTrips(dir + "/shelves.store", in: dir)
        let lines = try String(contentsOfFile: dir + "/direct.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 10)
        #expect(lines[0] == #"{"@entity": "Shelf", "bought": "2024-11-22T20:26:40.123456836Z", "label": "shelf, \"0\"", "slots": -32768, "#
                 + #""width": 0.0, "books": [6, 8]}"#, "\(lines[0])")
    }

    @Test("Data Core Data kept outside the store: its marker byte read, its file found beside the store, a missing file set aside")
    func externalStorage() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-objects-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let model = ObjectModel(entities: [
            EntityDescription("Photo", attributes: [
                AttributeDescription("title", .string),
                AttributeDescription("image", .binary, allowsExternalStorage: true),
            ]),
        ])
        let store = dir + "/photos.store"
        #expect(try ModelStoreWriter.write(model, to: store, rows: 4).status == 0)
        // As Core Data writes them (_PFExternalReferenceData): 1 then the bytes; 2 then a UUID, a NUL,
        // and the bytes in .photos_SUPPORT/_EXTERNAL_DATA/UUID; the third's file is missing.
        let filled = try ExternalTool.python("""
            import os, sqlite3, sys
            store = sys.argv[1]
            ext = os.path.join(os.path.dirname(store), ".photos_SUPPORT", "_EXTERNAL_DATA")
            os.makedirs(ext)
            big = bytes(range(256)) * 2
            with open(os.path.join(ext, "0F3C6A53-7B1E-4F7D-9C39-2E0B6D1A9A11"), "wb") as f:
                f.write(big)
            c = sqlite3.connect(store)
            pks = [pk for (pk,) in c.execute("SELECT Z_PK FROM ZPHOTO ORDER BY Z_PK")]
            rows = [b"\\x01" + b"inline", b"\\x02" + b"0F3C6A53-7B1E-4F7D-9C39-2E0B6D1A9A11\\x00",
                    b"\\x02" + b"AAAAAAAA-7B1E-4F7D-9C39-2E0B6D1A9A11\\x00", None]
            for i, (pk, v) in enumerate(zip(pks, rows)):
                c.execute("UPDATE ZPHOTO SET ZTITLE=?, ZIMAGE=? WHERE Z_PK=?", ("p%d" % i, v, pk))
            c.commit()
            print("ok")
            """, [store])
        #expect(filled.out == "ok\n", "\(filled.stderr)")
        let run = try CLI.tripconv(store, "--to", "jsonl", "--rejects", dir + "/rejects.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.out.split(separator: "\n").map(String.init)
        let big = Base64.encode(Array((0..<2).flatMap { _ in 0...255 }.map(UInt8.init)))
        #expect(lines == [
            // The model cache keeps no declaration order: attributes come by name.
            #"{"@entity": "Photo", "@key": 1, "image": "aW5saW5l", "title": "p0"}"#,
            #"{"@entity": "Photo", "@key": 2, "image": ""# + big + #"", "title": "p1"}"#,
            #"{"@entity": "Photo", "@key": 4, "image": null, "title": "p3"}"#,
        ], "\(run.out)")
        let rejects = try String(contentsOfFile: dir + "/rejects.jsonl", encoding: .utf8)
        #expect(rejects.contains("AAAAAAAA-7B1E-4F7D-9C39-2E0B6D1A9A11, which cannot be read"), "\(rejects)")
        // The model says so, and model JSON keeps it.
        let schema = try CLI.tripconv("schema", "--model", store, "--json")
        #expect(schema.out.contains(#""externalStorage": true"#), "\(schema.out)")
    }

    @Test("what an object run refuses: --migrate into a store, two inputs, CSV to standard output, an export without --model")
    func refusals() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-objects-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = dir + "/shelves.store"
        #expect(try ModelStoreWriter.write(Self.model, to: store).status == 0)
        for (arguments, status) in [([store, "--migrate", "-o", dir + "/x.sqlite"], 64), ([store, store, "--to", "json"], 64),
                                    ([store, "--to", "csv"], 64), ([store, "--target-version", "2.0.0"], 64)] as [([String], Int32)] {
            let run = try CLI.run(CLI.binary, arguments)
            #expect(run.status == status, "\(arguments): \(run.stderr)")
            #expect(run.stderr.hasPrefix("tripconv: "), "\(arguments): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.sqlite"))
        let bad = try CLI.tripconv(store, "--model", dir + "/nothing.json", "-o", dir + "/y.json")
        #expect(bad.status == 66, "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/y.json"))
    }
}
