import Foundation
import Testing
import TripKit
import TripTestSupport

/// `tripconv schema --model` and `tripconv detect` on stores of other apps.
@Suite("schema --model and detect, for any store")
struct SchemaModelCLITests {
    @Test("schema --model prints the real SwiftData store's model; --json reads back through --model", .needsRealStores, .needsPython3)
    func realStore() throws {
        let dir = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        let text = try CLI.tripconv("schema", "--model", dir + "/default.store")
        #expect(text.status == 0, "\(text.stderr)")
        let out = String(decoding: text.stdout, as: UTF8.self)
        #expect(out.contains("  from the store's model cache (Z_MODELCACHE)\n"))
        #expect(out.contains("  Item  (entity 3, 4 objects)\n    name: String\n    craftingRecipe: CraftingRecipe?  (to-one, inverse producedItem, delete rule nullify)\n    unique: name\n"))
        #expect(out.contains("    requiredComponents: [Component]  (to-many, inverse craftingRecipe, delete rule nullify)\n"))
        #expect(out.contains("    count: Int64 = 1\n"))
        let json = try CLI.tripconv("schema", "--model", dir + "/default.store", "--json")
        try json.stdout.write(to: URL(fileURLWithPath: dir + "/model.json"))
        let again = try CLI.tripconv("schema", "--model", dir + "/model.json", "--json")
        #expect(again.status == 0, "\(again.stderr)")
        try again.stdout.write(to: URL(fileURLWithPath: dir + "/again.json"))
        let compared = try CLI.python("""
            import json, sys
            a, b = (json.load(open(p)) for p in sys.argv[1:3])
            print(a['entities'] == b['entities'], a['store']['pendingWAL'], b['source'], [e['objects'] for e in a['store']['entities']])
            """, [dir + "/model.json", dir + "/again.json"])
        #expect(String(decoding: compared.stdout, as: UTF8.self) == "True True a model JSON file (\(dir)/model.json) [1, 2, 4]\n")
    }

    @Test("schema --model reads an .xcdatamodel and its contents alike, an .xcdatamodeld as a plan of its one version", .needsRealStores)
    func xcodeModel() throws {
        let dir = try TestPaths.copyRealStore("coredata-feedback")
        let entities = "  FeedbackCategory\n    name: String?\n    subcategory: [FeedbackSubCategory]  (to-many, inverse category, delete rule nullify)\n"
            + "  FeedbackSubCategory\n    name: String?\n    category: FeedbackCategory?  (to-one, inverse subcategory, delete rule nullify)\n"
        for p in ["/Model.xcdatamodeld", "/Model.xcdatamodeld/Model.xcdatamodel", "/Model.xcdatamodeld/Model.xcdatamodel/contents"] {
            let r = try CLI.tripconv("schema", "--model", dir + p)
            #expect(r.status == 0, "\(r.stderr)")
            let out = String(decoding: r.stdout, as: UTF8.self)
            if p.hasSuffix(".xcdatamodeld") {
                #expect(out == "model of \(dir + p)\nschema Model\n" + entities + "migration plan\n  no stages\nnotes\n  one version: Model.xcdatamodel as 'Model'\n")
            } else {
                #expect(out.hasSuffix(entities))
            }
        }
    }

    @Test("detect on stores of other apps: entities, objects, versions, a pending -wal, where the model came from", .needsRealStores)
    func detect() throws {
        let swiftData = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        let r = try CLI.tripconv("detect", swiftData + "/default.store")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(String(decoding: r.stdout, as: UTF8.self) == "\(swiftData)/default.store: coredata store of another app than SampleTrips, "
            + "model version 1.0.0, framework version 1345, model from the store's model cache (Z_MODELCACHE); 3 entities: Component 1, "
            + "CraftingRecipe 2, Item 4 objects; a -wal file beside it holds changes not yet checkpointed (read here)\n")
        let coreData = try TestPaths.copyRealStore("coredata-feedback")
        let j = try CLI.tripconv("detect", "--json", coreData + "/Model.sqlite")
        let nodes = try #require(try JSONSerialization.jsonObject(with: j.stdout) as? [[String: Any]])
        let store = try #require(nodes.first?["store"] as? [String: Any])
        #expect(store["frameworkVersion"] as? Int == 479 && store["pendingWAL"] as? Bool == false)
        #expect((store["entities"] as? [[String: Any]])?.compactMap { $0["objects"] as? Int } == [19, 79])
        #expect(store["modelSource"] as? String == "the store's tables")
        #expect(store["hashedEntities"] as? [String] == ["FeedbackCategory", "FeedbackSubCategory"])
    }

    @Test("SampleTrips stores are detected as before: no store member", arguments: ["coredata-v1.store", "coredata-v3.store"])
    func sampleTrips(_ name: String) throws {
        let j = try CLI.tripconv("detect", "--json", "samples/" + name)
        let nodes = try #require(try JSONSerialization.jsonObject(with: j.stdout) as? [[String: Any]])
        #expect(nodes.first?["store"] == nil && (nodes.first?["trips"] as? Int ?? 0) > 0)
    }

    @Test("a damaged model cache: exit 65 naming Z_MODELCACHE.Z_CONTENT, for schema and detect", .needsPython3,
          arguments: ["truncate", "baduid", "cycle"])
    func damaged(_ damage: String) throws {
        let dir = try CLI.temporaryDirectory().path
        let model = ObjectModel(entities: [EntityDescription("A", attributes: [AttributeDescription("x", .string)]),
                                           EntityDescription("B", attributes: [AttributeDescription("y", .int64)])])
        try #require(try ModelStoreWriter.write(model, to: dir + "/d.store", damage: damage).status == 0)
        for command in ["schema --model", "detect"] {
            let r = try CLI.run(CLI.binary, command.split(separator: " ").map(String.init) + [dir + "/d.store"])
            #expect(r.status == 65)
            #expect(r.stderr.hasPrefix("tripconv: \(dir)/d.store: Z_MODELCACHE.Z_CONTENT: a damaged model cache: "), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }

    @Test("the sample stores carry SampleTrips' model in their model cache: schema --model prints its entities", .needsPython3,
          arguments: [1, 2, 3])
    func sampleModelCache(_ version: Int) throws {
        let dir = try CLI.temporaryDirectory().path
        let store = try CLI.tripconv("schema", "--model", "samples/coredata-v\(version).store", "--json")
        #expect(store.status == 0, "\(store.stderr)")
        try store.stdout.write(to: URL(fileURLWithPath: dir + "/store.json"))
        try CLI.tripconv("schema", "\(version).0.0", "--json").stdout.write(to: URL(fileURLWithPath: dir + "/schema.json"))
        // Python's json compares the store's model with SampleTrips' schema at that version: the same entities,
        // attributes (type, default, transient, renamed from), unique names and relationships, the store adding
        // only the inverse `trip` of each relationship of Trip.
        let compared = try CLI.python("""
            import json, sys
            store, schema = (json.load(open(p)) for p in sys.argv[1:3])
            kinds = {"string": "String", "date": "Date", "bool": "Bool", "int": "Int64"}
            norm = lambda v: json.loads(v) if isinstance(v, str) and v.startswith('"') else v
            assert store["source"] == "the store's model cache (Z_MODELCACHE)", store["source"]
            entities = {e["name"]: e for e in store["entities"]}
            sample = schema["schemas"][0]["entities"]
            assert sorted(entities) == sorted(e["name"] for e in sample), sorted(entities)
            for e in sample:
                got = entities[e["name"]]
                attributes = {a["name"]: a for a in got["attributes"]}
                assert sorted(attributes) == sorted(a["name"] for a in e["attributes"]), (e["name"], sorted(attributes))
                for a in e["attributes"]:
                    g = attributes[a["name"]]
                    assert (g["type"], norm(g["default"]), g["transient"], g["renamingIdentifier"]) == \
                        (kinds[a["type"]], norm(a["default"]), a["transient"], a["originalName"]), (a, g)
                assert got["uniquenessConstraints"] == [[a["name"]] for a in e["attributes"] if a["unique"]], got
                relationships = {r["name"]: r for r in got["relationships"]}
                for r in e["relationships"]:
                    g = relationships.pop(r["name"])
                    assert (g["destination"], g["toMany"], g["deleteRule"], g["inverse"]) == (r["destination"], r["toMany"], r["deleteRule"], "trip"), g
                assert all(n == "trip" and g["destination"] == "Trip" for n, g in relationships.items()), relationships
            print(store["store"]["entities"] and [(e["name"], e["objects"]) for e in store["store"]["entities"]])
            """, [dir + "/store.json", dir + "/schema.json"])
        let counts = [1: "[('BucketListItem', 13), ('LivingAccommodation', 4), ('Trip', 6)]",
                      2: "[('BucketListItem', 4), ('LivingAccommodation', 3), ('Trip', 4)]",
                      3: "[('BucketListItem', 4), ('LivingAccommodation', 2), ('Trip', 3)]"]
        #expect(String(decoding: compared.stdout, as: UTF8.self) == counts[version]! + "\n", "\(compared.stderr)")
        let text = try CLI.tripconv("schema", "--model", "samples/coredata-v\(version).store")
        #expect(text.status == 0 && text.stdout.starts(with: Data("model of samples/coredata-v\(version).store\n  from the store's model cache".utf8)))
    }

    @Test("schema --model refuses a file that is no model (65) and a version with --model (64)")
    func notAModel() throws {
        let csv = try CLI.tripconv("schema", "--model", "samples/trips-v1.csv")
        #expect(csv.status == 65)
        #expect(csv.stderr.hasPrefix("tripconv: samples/trips-v1.csv: not a model: expected a Core Data store"))
        let both = try CLI.tripconv("schema", "1.0.0", "--model", "samples/coredata-v3.store")
        #expect(both.status == 64 && both.stderr == "tripconv: give a version or --model, not both\n")
    }
}
