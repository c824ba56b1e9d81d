import Foundation
import Testing
import TripFormats
import TripKit
import TripTestSupport

/// The library's one-call entry points (`TripConverter`, `RunInput.resolve`), as a program without
/// the command line uses them; outputs read back with python3's json and csv and the sqlite3 tool.
@Suite("TripConverter: the library's calls")
struct TripConverterTests {
    @Test("TripConverter's example: a v1 CSV and a v2 JSON export to one JSON Lines file at 3.0.0, every name once", .needsPython3)
    func convertsExports() throws {
        let dir = ScratchDirectory()
        let out = dir.path("trips.jsonl")
        let inputs = [TestPaths.samples + "/trips-v1.csv", TestPaths.samples + "/trips-v2.json"]
        let summary = try TripConverter.convert(inputs, to: .file(out))
        #expect(summary.inputs.map { $0.detection.version?.description } == ["1.0.0", "2.0.0"])
        #expect(summary.read == summary.written + summary.merged + summary.dropped + summary.rejected)
        let check = try ExternalTool.python("""
            import csv, json, sys
            trips = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
            names = [t["name"] for t in trips]
            given = {r["name"] for r in csv.DictReader(open(sys.argv[2], encoding="utf-8-sig", newline=""))}
            given |= {t["name"] for t in json.load(open(sys.argv[3], encoding="utf-8"))["trips"]}
            assert len(names) == len(set(names)) and set(names) == given, (names, given)
            assert all("startDate" in t and "bucketList" in t for t in trips)
            print(len(trips))
            """, [out] + inputs)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.out == "\(summary.written)\n")
    }

    @Test("TripConverter.loadModel: a Core Data store's entities with their objects, as sqlite3 counts them", .needsSQLite3)
    func loadsStoreModel() throws {
        let path = TestPaths.samples + "/coredata-v3.store"
        let store = try TripConverter.loadModel(path)
        #expect(Set(store.model.entities.map(\.name)) == ["Trip", "BucketListItem", "LivingAccommodation"])
        for entity in store.model.entities {
            let counted = try ExternalTool.run(try #require(ExternalTool.path("sqlite3")), [
                "file:\(path)?mode=ro&immutable=1",
                "SELECT COUNT(*) FROM Z\(entity.name.uppercased()) WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity.name)')",
            ])
            #expect(counted.out == "\(store.objectCounts[entity.name] ?? -1)\n", "\(entity.name): \(counted.stderr)")
        }
    }

    @Test("TripConverter.loadModel: a file that is no model is a data error naming it")
    func refusesNonModel() throws {
        let dir = ScratchDirectory()
        let path = dir.file("notes.txt", "not a model\n")
        let error = #expect(throws: TripError.self) { try TripConverter.loadModel(path) }
        #expect(error?.kind == .data)
        #expect(error?.message.hasPrefix(path + ": not a model") == true)
    }

    @Test("RunInput.resolve: a directory's files in path order with their formats and folders, an unnamed file told by its bytes")
    func resolvesInputs() throws {
        let dir = ScratchDirectory()
        _ = dir.file("b.jsonl", "{\"name\": \"Oslo\"}\n")
        try FileManager.default.createDirectory(atPath: dir.path("a"), withIntermediateDirectories: true)
        _ = dir.file("a/c.csv", "name,destination\nLima,Peru\n")
        _ = dir.file("notes.md", "# notes\n")
        let unnamed = dir.file("export", "name,destination\nParis,France\n")
        var nothing: [String] = []
        let inputs = try RunInput.resolve([dir.path, unnamed]) { directory, _ in nothing.append(directory) }
        #expect(inputs.map(\.location.name) == [dir.path("a/c.csv"), dir.path("b.jsonl"), unnamed])
        #expect(inputs.map(\.format) == [.csv, .jsonl, .csv])
        #expect(inputs.map(\.subdirectory) == ["a/", "", ""])
        #expect(inputs[2].sniffed?.format == .csv)
        #expect(nothing.isEmpty)
    }

    @Test("TripConverter.convert: a directory with nothing to read is said, the run fails with no input, and no output is made")
    func nothingToRead() throws {
        let dir = ScratchDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("empty"), withIntermediateDirectories: true)
        _ = dir.file("empty/notes.md", "# notes\n")
        var said: [(String, Int)] = []
        let error = #expect(throws: TripError.self) {
            try TripConverter.convert([dir.path("empty")], to: .file(dir.path("out.jsonl"))) { said.append(($0, $1)) }
        }
        #expect(error?.kind == .noInput)
        #expect(said.map(\.0) == [dir.path("empty")] && said.map(\.1) == [1])
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.jsonl")))
    }

    @Test("TripConverter.detectVersion and convertObjects run an app's plan: the recipes' 1.0.0 export, told 1.0.0 by its names, written at 3.0.0 with the duplicate merged (python3's json reads it)",
          .needsPython3)
    func runsAPlan() throws {
        let dir = ScratchDirectory()
        let made = try ExternalTool.python(String(contentsOfFile: TestPaths.samples + "/swift-model-recipes/make-recipes-v1.py", encoding: .utf8),
                                           [dir.path])
        #expect(made.status == 0, "\(made.stderr)")
        let plan = try TripConverter.loadPlan(TestPaths.samples + "/swift-model-recipes/recipes-plan.json")
        let input = dir.path("recipes-v1.json")
        let verdict = try TripConverter.detectVersion(input, plan: plan)
        #expect(verdict.version == "1.0.0")
        let out = dir.path("recipes.jsonl")
        var setAside: [SetAsideRecord] = []
        let summary = try TripConverter.convertObjects(input, model: TestPaths.samples + "/swift-model-recipes/recipes-plan.json",
                                                       to: .file(out), as: .jsonl, policy: .merge) { setAside.append($0) }
        #expect(summary.written == 7 && setAside.count == 3, "\(summary)")
        let check = try ExternalTool.python("""
            import json, sys
            rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
            titles = [r["title"] for r in rows if r["@entity"] == "Recipe"]
            assert len(titles) == len(set(titles)) == 3, titles
            assert all("cuisine" in r and "summary" in r for r in rows if r["@entity"] == "Recipe")
            assert not any(r["@entity"] == "Chef" for r in rows)
            print(len(rows))
            """, [out])
        #expect(check.status == 0 && check.out == "7\n", "\(check.stderr)")
    }
}

