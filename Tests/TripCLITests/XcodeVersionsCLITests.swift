import Foundation
import Testing
import TripTestSupport

/// `tripconv schema --model X.xcdatamodeld`: every version of a Core Data model and the stages Core
/// Data would infer, from each older version straight to the current one.
@Suite("schema --model of an .xcdatamodeld with its versions")
struct XcodeVersionsCLITests {
    @Test("schema --model prints every version in numeric order and one lightweight stage from each to the current, a type change refused")
    func text() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try XcodeModelVersions.write(in: dir)
        let r = try CLI.tripconv("schema", "--model", bundle)
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.hasPrefix("model of \(bundle)\nschema Garden\n  Bed\n"))
        #expect(out.contains("\nschema 2.0\n"))
        #expect(out.contains("""
            schema Garden 10
              Plant
                color: String?
                heading: String  (originalName name)
                height: String?
                planted: Date?
                watered: Bool = false
                plot: Plot?  (to-one, inverse plants, delete rule nullify, originalName bed)
              Plot  (originalName Bed)
                label: String?
                plants: [Plant]  (to-many, inverse plot, delete rule nullify)
            migration plan
            """), "\(out)")
        let contents = "\(bundle)/Garden 10.xcdatamodel/contents:6"
        let refusal = "Plant.height changes type from Int32 to String, which a lightweight stage cannot do (declare a custom stage)"
        #expect(out.hasSuffix("""
            migration plan
              Garden -> Garden 10: lightweight
                add Plant.color (optional, nil)
                rename Plant.name to heading
                add Plant.watered = false
                rename relationship Plant.bed to plot
                rename entity Bed to Plot
                remove entity Seed (its objects are dropped and counted)
                refused: \(contents): lightweight stage Garden -> Garden 10: \(refusal)
              2.0 -> Garden 10: lightweight
                add Plant.color (optional, nil)
                rename Plant.title to heading
                rename relationship Plant.bed to plot
                rename entity Bed to Plot
                remove entity Seed (its objects are dropped and counted)
                refused: \(contents): lightweight stage 2.0 -> Garden 10: \(refusal)
            notes
              versions in the order of their folder names, numbers in them compared as numbers, the current one last: \
            Garden.xcdatamodel as 'Garden', Garden 2.xcdatamodel as '2.0', Garden 10.xcdatamodel as 'Garden 10'
              Core Data keeps no migration plan: it migrates a store by one lightweight mapping inferred from the store's version \
            straight to the current one, so each stage goes from an older version directly to 'Garden 10', not through the versions between

            """), "\(out)")
    }

    @Test("--json gives plan JSON (read by Python) that --model reads back to the same plan", .needsPython3)
    func json() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try XcodeModelVersions.write(in: dir)
        let json = try CLI.tripconv("schema", "--model", bundle, "--json")
        #expect(json.status == 0, "\(json.stderr)")
        try json.stdout.write(to: URL(fileURLWithPath: dir + "/plan.json"))
        let checked = try CLI.python("""
            import json, sys
            p = json.load(open(sys.argv[1]))
            print([v['versionIdentifiers'] for v in p['versions']], [(s['kind'], s['from'], s['to']) for s in p['stages']])
            print([len(d['steps']) for d in p['derivedSteps']], [len(d['refusals']) for d in p['derivedSteps']], p['derivedSteps'][1]['steps'][1])
            print([a['renamingIdentifier'] for e in p['versions'][2]['entities'] for a in e['attributes'] if a['name'] == 'heading'])
            """, [dir + "/plan.json"])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            [['Garden'], ['2.0'], ['Garden 10']] [('lightweight', 'Garden', 'Garden 10'), ('lightweight', '2.0', 'Garden 10')]
            [6, 5] [1, 1] rename Plant.title to heading
            ['name']

            """, "\(checked.stderr)")
        let fromBundle = try CLI.tripconv("schema", "--model", bundle)
        let fromJSON = try CLI.tripconv("schema", "--model", dir + "/plan.json")
        #expect(fromJSON.status == 0, "\(fromJSON.stderr)")
        let body = { (r: CLI.Result) in String(decoding: r.stdout, as: UTF8.self).split(separator: "\n", maxSplits: 1)[1] }
        #expect(body(fromBundle) == body(fromJSON))
    }

    @Test("a damaged version is exit 65 naming its contents file and line, nothing printed")
    func damaged() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try XcodeModelVersions.write(in: dir)
        let file = bundle + "/Garden 2.xcdatamodel/contents"
        try XcodeModelVersions.version2.replacingOccurrences(of: "\"Boolean\"", with: "\"Quaternion\"").write(toFile: file, atomically: true, encoding: .utf8)
        let r = try CLI.tripconv("schema", "--model", bundle)
        #expect(r.status == 65 && r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("tripconv: \(file):11: Plant.watered: unknown attributeType 'Quaternion'"), "\(r.stderr)")
    }
}
