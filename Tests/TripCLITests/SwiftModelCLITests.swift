import Foundation
import Testing
import TripKit
import TripTestSupport

/// `tripconv schema --model` of an app's Swift source (read by tripconv-swift-model) and of plan JSON.
@Suite("schema --model of Swift source and plan JSON")
struct SwiftModelCLITests {
    /// A temporary directory holding plan.json: `schema --model samples/swift-model --json`.
    static func samplePlanJSON() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        let json = try CLI.tripconv("schema", "--model", "samples/swift-model", "--json")
        #expect(json.status == 0, "\(json.stderr)")
        try json.stdout.write(to: dir.appendingPathComponent("plan.json"))
        return dir
    }

    @Test("schema --model samples/swift-model prints SampleTrips' versions and the plan with its derived steps")
    func sampleTripsText() throws {
        let r = try CLI.tripconv("schema", "--model", "samples/swift-model")
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.hasPrefix("model of samples/swift-model\nschema 1.0.0\n  Trip\n    name: String\n    destination: String\n"))
        #expect(out.contains("schema 3.0.0\n  Trip\n    name: String\n    destination: String\n    startDate: Date  (originalName start_date)\n"))
        #expect(out.hasSuffix("""
            migration plan
              1.0.0 -> 2.0.0: custom (willMigrate: not run, its steps derived from the two versions)
                deduplicate Trip on name (--dedupe)
              2.0.0 -> 3.0.0: lightweight
                rename Trip.start_date to startDate
                rename Trip.end_date to endDate
                delete rule of Trip.bucketList: nullify to cascade
                delete rule of Trip.livingAccommodation: nullify to cascade

            """))
    }

    @Test("--json gives plan JSON (read by Python) that --model reads back to the same plan", .needsPython3)
    func planJSONRoundTrip() throws {
        let dir = try Self.samplePlanJSON()
        let checked = try CLI.python("""
            import json, sys
            p = json.load(open(sys.argv[1]))
            print([v['versionIdentifiers'] for v in p['versions']], [(s['kind'], s['from'], s['to'], s['hooks']) for s in p['stages']])
            print(p['derivedSteps'][0], p['source'])
            """, [dir.path + "/plan.json"])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            [['1.0.0'], ['2.0.0'], ['3.0.0']] [('custom', '1.0.0', '2.0.0', ['willMigrate']), ('lightweight', '2.0.0', '3.0.0', [])]
            {'steps': ['deduplicate Trip on name (--dedupe)'], 'refusals': []} samples/swift-model

            """)
        let fromSource = try CLI.tripconv("schema", "--model", "samples/swift-model")
        let fromJSON = try CLI.tripconv("schema", "--model", dir.path + "/plan.json")
        #expect(fromJSON.status == 0, "\(fromJSON.stderr)")
        let body = { (r: CLI.Result) in String(decoding: r.stdout, as: UTF8.self).split(separator: "\n", maxSplits: 1)[1] }
        #expect(body(fromSource) == body(fromJSON))
    }

    @Test("A declaration that cannot be read is exit 65 with its file, line and column; no model at all, the same")
    func unreadable() throws {
        let dir = try CLI.temporaryDirectory()
        let file = dir.appendingPathComponent("Model.swift")
        try "import SwiftData\n\n@Model final class Box {\n    var size: Matrix\n}\n".write(to: file, atomically: true, encoding: .utf8)
        let r = try CLI.tripconv("schema", "--model", file.path)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: \(file.path):4:15: expected a type SwiftData stores"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        try "struct ContentView {}\n".write(to: file, atomically: true, encoding: .utf8)
        let none = try CLI.tripconv("schema", "--model", dir.path)
        #expect(none.status == 65)
        #expect(none.stderr.contains("expected a @Model class, found none in 1 Swift file"), "\(none.stderr)")
    }

    @Test("convert reads an export of objects with --model of Swift source: the plan's current version", .needsPython3)
    func convertWithSwiftModel() throws {
        let dir = try CLI.temporaryDirectory()
        let input = dir.appendingPathComponent("objects.jsonl")
        try """
            {"@entity": "Trip", "name": "Rome", "destination": "Italy", "startDate": "2025-01-01T00:00:00Z", "endDate": "2025-01-05T00:00:00Z", "bucketList": [1], "livingAccommodation": 2}
            {"@entity": "BucketListItem", "@key": 1, "title": "Colosseum", "details": "", "hasReservation": true, "isInPlan": true}
            {"@entity": "LivingAccommodation", "@key": 2, "address": "Via Roma 1", "placeName": "Hotel"}

            """.write(to: input, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("objects.json").path
        let r = try CLI.tripconv(input.path, "--model", "samples/swift-model", "-o", out, "-v")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("the model from the current version of an app's Swift source"), "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            print(d['Trip'][0]['startDate'], d['Trip'][0]['bucketList'], d['BucketListItem'][0]['title'], d['LivingAccommodation'][0]['placeName'])
            """, [out])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == "2025-01-01T00:00:00Z [1] Colosseum Hotel\n", "\(checked.stderr)")
    }

    @Test("plan JSON whose source path is long is still told from model JSON (only its first 256 bytes were looked at)", .needsPython3)
    func longSourcePlanJSON() throws {
        let dir = try Self.samplePlanJSON()
        // The same plan, its "source" (first) 600 characters long, as a path nested deep would make it.
        _ = try CLI.python("""
            import json, sys
            p = json.load(open(sys.argv[1]))
            p['source'] = '/deep' * 120
            json.dump(p, open(sys.argv[2], 'w'), indent=2)
            """, [dir.path + "/plan.json", dir.path + "/long.json"])
        let short = try CLI.tripconv("schema", "--model", dir.path + "/plan.json")
        let long = try CLI.tripconv("schema", "--model", dir.path + "/long.json")
        #expect(long.status == 0, "\(long.stderr)")
        let tail = { (r: CLI.Result) in String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").dropFirst().joined(separator: "\n") }
        #expect(tail(long) == tail(short) && tail(short).contains("migration plan"), "\(long.out)")
    }

    @Test("A plan listing its schemas with stages: [] migrates a 1.0.0 export by SwiftData's inferred lightweight stage (was: no stage, 65)",
          .needsPython3)
    func inferredLightweightStage() throws {
        let dir = try CLI.temporaryDirectory()
        let versions = (1...3).map { n in
            """
            enum SchemaV\(n): VersionedSchema {
                static var versionIdentifier: Schema.Version { .init(\(n), 0, 0) }
                static var models: [any PersistentModel.Type] { [Memory.self, Tag.self] }
                @Model final class Memory {
                    @Attribute(.unique) var id: String
                    var created: Date\(n >= 2 ? "\n        var notes: String = \"\"" : "")\(n == 3 ? "\n        var isPrivate: Bool = false" : "")
                    @Relationship(inverse: \\Tag.memories) var tags: [Tag] = []
                    init(id: String, created: Date) { self.id = id; self.created = created }
                }
                @Model final class Tag {
                    @Attribute(.unique) var label: String
                    var memories: [Memory] = []
                    init(label: String) { self.label = label }
                }
            }
            """
        }.joined(separator: "\n")
        try (versions + """

            enum AppSchemaMigrationPlan: SchemaMigrationPlan {
                static var schemas: [any VersionedSchema.Type] { [SchemaV1.self, SchemaV2.self, SchemaV3.self] }
                static var stages: [MigrationStage] { [] }
            }

            """).write(to: dir.appendingPathComponent("Schemas.swift"), atomically: true, encoding: .utf8)
        let written = try CLI.python("""
            import json, sys
            with open(sys.argv[1], 'w') as f:
                for o in [{'@entity': 'Memory', 'id': 'm1', 'created': '2024-01-01T00:00:00Z', 'tags': ['work']},
                          {'@entity': 'Tag', 'label': 'work', 'memories': ['m1']}]:
                    f.write(json.dumps(o) + '\\n')
            """, [dir.path + "/v1.jsonl"])
        #expect(written.status == 0, "\(written.stderr)")
        let out = dir.path + "/v3.json"
        let r = try CLI.tripconv(dir.path + "/v1.jsonl", "--model", dir.path + "/Schemas.swift", "--source-version", "1.0.0", "-o", out)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("lightweight stage 1.0.0 -> 3.0.0: add Memory.notes = \"\"; add Memory.isPrivate = false"), "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            m = d['Memory'][0]
            print(m['id'], repr(m['notes']), m['isPrivate'], m['tags'], d['Tag'][0]['memories'])
            """, [out])
        #expect(checked.out == "m1 '' False ['work'] ['m1']\n", "\(checked.stderr)")
        let schema = try CLI.tripconv("schema", "--model", dir.path + "/Schemas.swift")
        #expect(schema.out.contains("no stage from 1.0.0, 2.0.0: SwiftData migrates a store at those versions by a lightweight mapping"), "\(schema.out)")
    }
}
