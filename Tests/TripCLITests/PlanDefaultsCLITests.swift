import Foundation
import Testing
import TripKit
import TripTestSupport

/// `--default Entity.attribute=VALUE`: a default the app's source computes when an object is made
/// (SwiftData evaluates it on the device as it migrates), given on the command line so that a stage
/// can fill a new required attribute.
@Suite("--default gives an app's plan the defaults its source computes", .needsPython3)
struct PlanDefaultsCLITests {
    /// The recipes plan with `Recipe.cuisine` (new and required at 3.0.0) left without a default, as
    /// `var cuisine: String = Locale.current.identifier` would leave it.
    static func planWithoutDefault(in dir: String) throws -> String {
        let path = dir + "/plan.json"
        let edited = try CLI.python("""
            import json, sys
            p = json.load(open(sys.argv[1]))
            for v in p['versions']:
                for e in v['entities']:
                    for a in e['attributes']:
                        if (e['name'], a['name']) == ('Recipe', 'cuisine'): a['default'] = None
            json.dump(p, open(sys.argv[2], 'w'))
            """, [PlanRunCLITests.plan, path])
        #expect(edited.status == 0, "\(edited.stderr)")
        return path
    }

    @Test("a new required attribute without a default refuses the stage (65); --default fills it, in schema and convert")
    func fills() throws {
        let dir = try PlanRunCLITests.exports().path
        let plan = try Self.planWithoutDefault(in: dir)
        let refused = try CLI.tripconv(dir + "/recipes-v1.json", "--model", plan, "-o", dir + "/out.jsonl")
        #expect(refused.status == 65 && !FileManager.default.fileExists(atPath: dir + "/out.jsonl"))
        #expect(refused.stderr.contains("Recipe.cuisine is new and required, with no default to give the objects that lack it"), "\(refused.stderr)")
        let schema = try CLI.tripconv("schema", "--model", plan, "--default", "Recipe.cuisine=fusion")
        #expect(schema.status == 0 && schema.out.contains("    add Recipe.cuisine = fusion\n"), "\(schema.stderr)\(schema.out)")
        let r = try CLI.tripconv(dir + "/recipes-v1.json", "--model", plan, "--default", "Recipe.cuisine=fusion", "-o", dir + "/out.jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            rows = [json.loads(l) for l in open(sys.argv[1])]
            print(sorted({r['cuisine'] for r in rows if r['@entity'] == 'Recipe'}), len(rows))
            """, [dir + "/out.jsonl"])
        #expect(checked.out == "['fusion'] 7\n", "\(checked.stderr)")
    }

    @Test("--default naming no attribute of the plan, a value not of its kind, no Entity.attribute=, or no plan: exit 64, nothing written")
    func refusals() throws {
        let dir = try PlanRunCLITests.exports().path
        let input = dir + "/recipes-v1.json", out = dir + "/out.jsonl"
        for (args, message) in [
            (["--model", PlanRunCLITests.plan, "--default", "Recipe.flavour=x"],
             "tripconv: --default Recipe.flavour: no version of the plan declares the attribute flavour of an entity Recipe\n"),
            (["--model", PlanRunCLITests.plan, "--default", "Recipe.servings=four"],
             "tripconv: --default Recipe.servings=four: expected a value of its kind, Int64, found \"four\"\n"),
            (["--model", "samples/swift-model-recipes/Recipes.swift", "--default", "cuisine"], "--default takes Entity.attribute=VALUE, found 'cuisine'"),
            (["--default", "Trip.name=x"], "--default gives defaults to an app's plan"),
        ] {
            let r = try CLI.run(CLI.binary, [input] + args + ["-o", out])
            #expect(r.status == 64 && !FileManager.default.fileExists(atPath: out), "\(args) \(r.stderr)")
            #expect(r.stderr.hasPrefix(message) || r.stderr.contains(message), "\(args) \(r.stderr)")
        }
    }
}
