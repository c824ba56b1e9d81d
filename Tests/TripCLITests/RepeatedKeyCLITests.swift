import Foundation
import Testing
import TripTestSupport

/// Two objects of one entity giving the same `"@key"`: both are refused, and every reference to that
/// key is removed from the object that makes it, which is written, with and without an app's plan
/// (was: the referring objects were written naming an object no output holds, and a plan's run
/// stopped at its writer with exit 65).
@Suite("a repeated @key is refused, and the references to it removed")
struct RepeatedKeyCLITests {
    /// The recipe book at 1.0.0 written by Python's json, two of its recipes given `"@key"` 2.
    static let writer = """
        import json, sys
        rows = [
            {"@entity": "Recipe", "@key": 1, "title": "Pancakes", "servings": 4, "notes": "fluffy", "ingredients": [1]},
            {"@entity": "Recipe", "@key": 2, "title": "Soup", "servings": 2, "notes": None, "ingredients": [2]},
            {"@entity": "Recipe", "@key": 2, "title": "Salad", "servings": 1, "notes": "quick", "ingredients": [3]},
            {"@entity": "Ingredient", "@key": 1, "name": "flour", "quantity": 200, "recipe": 1},
            {"@entity": "Ingredient", "@key": 2, "name": "leek", "quantity": 2, "recipe": 2},
            {"@entity": "Ingredient", "@key": 3, "name": "lettuce", "quantity": 1, "recipe": 2},
        ]
        with open(sys.argv[1], "w") as f:
            for r in rows: f.write(json.dumps(r) + "\\n")
        """

    static let check = """
        import json, sys
        rows = [json.loads(line) for line in open(sys.argv[1])]
        print(sorted((r['@entity'], r.get('title', r.get('name'))) for r in rows))
        for line in open(sys.argv[2]):
            r = json.loads(line); print(r['line'], r['reason'])
        """

    @Test("without a stage and through the plan's stages (--dedupe merge), every record is written or refused with its reason",
          .needsPython3, arguments: [["--target-version", "1.0.0"], ["--dedupe", "merge"]])
    func repeatedKey(_ options: [String]) throws {
        let dir = try CLI.temporaryDirectory()
        let input = dir.appendingPathComponent("recipes.jsonl").path
        let made = try CLI.python(Self.writer, [input])
        #expect(made.status == 0, "\(made.stderr)")
        let out = dir.appendingPathComponent("out.jsonl").path, rejects = dir.appendingPathComponent("rejects.jsonl").path
        let r = try CLI.run(CLI.binary, [input, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version", "1.0.0",
                                  "-o", out, "--rejects", rejects] + options)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("rejected 2;") && r.stderr.contains("removed 2 references to objects not written"), "\(r.stderr)")
        let checked = try CLI.python(Self.check, [out, rejects])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            [('Ingredient', 'flour'), ('Ingredient', 'leek'), ('Ingredient', 'lettuce'), ('Recipe', 'Pancakes')]
            2 a second object of Recipe with "@key" 2
            3 a second object of Recipe with "@key" 2

            """, "\(checked.stderr)")
        // What was written reads back whole: no reference names an object it does not hold.
        let again = try CLI.tripconv(out, "--model", "samples/swift-model-recipes/recipes-plan.json", "--source-version",
                                     options.first == "--target-version" ? "1.0.0" : "3.0.0", "--target-version",
                                     options.first == "--target-version" ? "1.0.0" : "3.0.0", "-o", dir.appendingPathComponent("again.jsonl").path)
        #expect(again.status == 0 && again.stderr.contains("rejected 0;"), "\(again.stderr)")
    }
}
