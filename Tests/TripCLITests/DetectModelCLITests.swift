import Foundation
import Testing
import TripTestSupport

/// `tripconv detect --model PLAN INPUT...`: the plan's version of each input, with what told it, on
/// exports another program wrote at each version of a small plan, and on SampleTrips' samples read
/// with SampleTrips' Swift source (the same versions as the trip path tells).
@Suite("detect --model: the plan's version of each input")
struct DetectModelCLITests {
    /// A shop's plan: 1.0.0 keeps `count` as text; 2.0.0 makes it Int64; 3.0.0 renames `name` to
    /// `title` (originalName) and adds `Note`.
    static let plan = """
        {"versions": [
          {"versionIdentifiers": ["1.0.0"], "entities": [ITEM1]},
          {"versionIdentifiers": ["2.0.0"], "entities": [ITEM2]},
          {"versionIdentifiers": ["3.0.0"], "entities": [ITEM3,
            {"name": "Note", "attributes": [{"name": "text", "type": "String", "optional": false}]}]}],
         "stages": [{"kind": "custom", "from": "1.0.0", "to": "2.0.0"}, {"kind": "lightweight", "from": "2.0.0", "to": "3.0.0"}]}
        """
        .replacingOccurrences(of: "ITEM1", with: item(name: "\"name\"", count: "String"))
        .replacingOccurrences(of: "ITEM2", with: item(name: "\"name\"", count: "Int64"))
        .replacingOccurrences(of: "ITEM3", with: item(name: "\"title\", \"renamingIdentifier\": \"name\"", count: "Int64"))

    static func item(name: String, count: String) -> String {
        """
        {"name": "Item", "attributes": [{"name": \(name), "type": "String", "optional": false},
          {"name": "count", "type": "\(count)", "optional": false}, {"name": "colour", "type": "String"}],
         "relationships": [{"name": "tags", "destination": "Item", "toMany": true}]}
        """
    }

    /// Exports of the shop's objects at each version, written by Python's json, csv, yaml and ElementTree.
    static let writer = #"""
        import csv, json, os, sys, yaml
        import xml.etree.ElementTree as ET
        d = sys.argv[1]
        items = [("Bolt", 12, "red"), ("Nut", 7, None)]
        def obj(version, name, count, colour):
            return {"@key": count, "title" if version == 3 else "name": name, "count": str(count) if version == 1 else count, "colour": colour, "tags": []}
        json.dump({"Item": [obj(1, *i) for i in items]}, open(f"{d}/v1.json", "w"))
        with open(f"{d}/v2.jsonl", "w") as f:
            for i in items: f.write(json.dumps({"@entity": "Item", **obj(2, *i)}) + "\n")
        json.dump({"Item": [obj(3, *i) for i in items], "Note": [{"@key": 1, "text": "restock"}]}, open(f"{d}/v3.json", "w"))
        yaml.safe_dump({"Item": [obj(2, *i) for i in items]}, open(f"{d}/v2.yaml", "w"))
        for v, head in ((1, "name"), (2, "name"), (3, "title")):
            os.makedirs(f"{d}/tables-v{v}")
            with open(f"{d}/tables-v{v}/Item.csv", "w", newline="") as f:
                w = csv.writer(f); w.writerow([head, "count", "colour"]); w.writerows(items)
        with open(f"{d}/tables-v3/Note.csv", "w", newline="") as f:
            w = csv.writer(f); w.writerow(["@key", "text"]); w.writerow([1, "restock"])
        root = ET.Element("objects")
        for name, count, colour in items:
            e = ET.SubElement(root, "Item"); ET.SubElement(e, "title").text = name; ET.SubElement(e, "count").text = str(count)
        ET.SubElement(ET.SubElement(root, "Note", key="1"), "text").text = "restock"
        ET.ElementTree(root).write(f"{d}/v3.xml")
        with open(f"{d}/bad.jsonl", "w") as f:
            f.write(json.dumps({"@entity": "Item", "name": "Bolt", "count": 3, "weight": 1.5}) + "\n")
        """#

    static func exports() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        try plan.write(to: dir.appendingPathComponent("plan.json"), atomically: true, encoding: .utf8)
        let r = try CLI.python(writer, [dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        return dir
    }

    @Test("Each export is told its version with the names and kinds that told it; CSV headers cannot tell 1.0.0 from 2.0.0, and say so",
          .needsPython3)
    func exportsOfEachVersion() throws {
        let d = try Self.exports().path
        let r = try CLI.tripconv("detect", "--model", d + "/plan.json", d + "/v1.json", d + "/v2.jsonl", d + "/v2.yaml", d + "/v3.json",
                                 d + "/v3.xml", d + "/tables-v1", d + "/tables-v3")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").map { String($0).replacingOccurrences(of: d + "/", with: "") }
        try #require(lines.count == 7)
        #expect(lines[0] == "v1.json: json objects, version 1.0.0 of the plan (exact names: Item has name, which only 1.0.0 and 2.0.0 declare "
                + "(3.0.0 renames name to title through originalName); Item.count holds strings: 1.0.0 declares String, 2.0.0 declares Int64, "
                + "which does not take them, 3.0.0 declares Int64, which does not take them), 2 objects looked at")
        #expect(lines[1].hasPrefix("v2.jsonl: jsonl objects, version 2.0.0 of the plan (exact names: "))
        #expect(lines[1].contains("Item.count holds numbers: 1.0.0 declares String, which does not take them, 2.0.0 declares Int64, 3.0.0 declares Int64"))
        #expect(lines[2].hasPrefix("v2.yaml: yaml objects, version 2.0.0 of the plan (exact names: "))
        #expect(lines[3] == "v3.json: json objects, version 3.0.0 of the plan (exact names: Item has title, which only 3.0.0 declares; "
                + "Item.count holds numbers: 1.0.0 declares String, which does not take them, 2.0.0 declares Int64, 3.0.0 declares Int64; "
                + "entity Note, which only 3.0.0 has), 3 objects looked at")
        #expect(lines[4].hasPrefix("v3.xml: xml objects, version 3.0.0 of the plan (names: Item has title, which only 3.0.0 declares; entity Note, "))
        #expect(lines[5] == "tables-v1: csv objects, version 1.0.0 of the plan (exact names: Item has name, which only 1.0.0 and 2.0.0 declare "
                + "(3.0.0 renames name to title through originalName); 1.0.0 and 2.0.0 cannot be told apart by the data: they declare the same "
                + "names, and the data tells no kinds: Item.count is String in 1.0.0, Int64 in 2.0.0; reading as 1.0.0, the earliest, so that "
                + "every stage after it runs), 1 table looked at")
        #expect(lines[6].hasPrefix("tables-v3: csv objects, version 3.0.0 of the plan (exact names: Item has title, which only 3.0.0 declares; "))
    }

    @Test("--json gives each input's planVersion (read by Python): version, basis, evidence and the versions it cannot be told from", .needsPython3)
    func json() throws {
        let d = try Self.exports().path
        let r = try CLI.tripconv("detect", "--json", "--model", d + "/plan.json", d + "/v2.jsonl", d + "/tables-v2")
        #expect(r.status == 0, "\(r.stderr)")
        try r.stdout.write(to: URL(fileURLWithPath: d + "/detect.json"))
        let checked = try CLI.python("""
            import json, os, sys
            for i in json.load(open(sys.argv[1])):
                p = i['planVersion']
                print(os.path.basename(i['input']), i['format'], p['version'], p['basis'], p['alike'], len(p['evidence']))
            """, [d + "/detect.json"])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            v2.jsonl jsonl 2.0.0 exact names [] 2
            tables-v2 csv 1.0.0 exact names ['2.0.0'] 2

            """)
    }

    @Test("tripconv's SQLite store of the plan's objects is told by the model it carries", .needsPython3)
    func objectStore() throws {
        let d = try Self.exports().path
        let written = try CLI.tripconv(d + "/v3.json", "--model", d + "/plan.json", "-o", d + "/objects.sqlite", "-q")
        #expect(written.status == 0, "\(written.stderr)")
        let r = try CLI.tripconv("detect", "--model", d + "/plan.json", d + "/objects.sqlite")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(String(decoding: r.stdout, as: UTF8.self).hasSuffix(
            "2 entities: Item 2, Note 1 objects; version 3.0.0 of the plan (marker tripconv_model versionIdentifiers 3.0.0)\n"), "\(r.stdout)")
    }

    @Test("A name no version of the plan declares is exit 65 naming it and the versions; --model naming no plan is 64", .needsPython3)
    func nothingFits() throws {
        let d = try Self.exports().path
        let r = try CLI.tripconv("detect", "--model", d + "/plan.json", d + "/bad.jsonl")
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: \(d)/bad.jsonl: Item has weight, which no version of the plan declares (1.0.0, 2.0.0, 3.0.0)\n"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let notPlan = try CLI.tripconv("detect", "--model", "samples/coredata-v3.store", d + "/v1.json")
        #expect(notPlan.status == 64)
        #expect(notPlan.stderr.hasPrefix("tripconv: samples/coredata-v3.store: detect --model takes an app's Swift source"), "\(notPlan.stderr)")
    }

    @Test("Only the first 100 objects of each entity are looked at; standard input is read from a copy and named <stdin>", .needsPython3)
    func bounded() throws {
        let d = try Self.exports().path
        var lines = (1...150).map { #"{"@entity": "Item", "name": "n\#($0)", "count": \#($0), "colour": null, "tags": []}"# }
        lines.append(#"{"@entity": "Item", "name": "late", "count": "not a number", "weight": 1}"#)
        try (lines.joined(separator: "\n") + "\n").write(toFile: d + "/many.jsonl", atomically: true, encoding: .utf8)
        let r = try CLI.tripconv("detect", "--model", d + "/plan.json", d + "/many.jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(String(decoding: r.stdout, as: UTF8.self).hasSuffix(", 100 objects looked at\n"))
        #expect(String(decoding: r.stdout, as: UTF8.self).contains("version 2.0.0 of the plan (exact names: "))
        let piped = try CLI.tripconv("detect", "--model", d + "/plan.json", "--from", "jsonl", "-",
                                     stdin: try Data(contentsOf: URL(fileURLWithPath: d + "/v2.jsonl")))
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(String(decoding: piped.stdout, as: UTF8.self).hasPrefix("<stdin>: jsonl objects, version 2.0.0 of the plan (exact names: "))
    }

    /// SampleTrips' trip files (model names, no marker) as object exports, one `@entity` object per line.
    static let tripsAsObjects = #"""
        import json, sys
        key = 0
        with open(sys.argv[2], "w") as out:
            for line in open(sys.argv[1]):
                trip = json.loads(line)
                key += 1; own = key; refs = {}
                for field, value in list(trip.items()):
                    if isinstance(value, list):
                        refs[field] = []
                        for item in value:
                            key += 1; refs[field].append(key)
                            out.write(json.dumps({"@entity": "BucketListItem", "@key": key, **item}) + "\n")
                    elif isinstance(value, dict):
                        key += 1; refs[field] = key
                        out.write(json.dumps({"@entity": "LivingAccommodation", "@key": key, **value}) + "\n")
                    elif value is None:
                        refs[field] = None
                out.write(json.dumps({"@entity": "Trip", "@key": own, **{**trip, **refs}}) + "\n")
        """#

    static func version(_ r: CLI.Result, _ path: [String]) throws -> String? {
        let array = try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]]
        var value: Any? = array?.first
        for key in path { value = (value as? [String: Any])?[key] }
        return value as? String
    }

    @Test("SampleTrips' Swift source tells the sample stores' and exports' versions as the trip path tells them", .needsPython3)
    func sampleTripsAgree() throws {
        for n in 1...3 {
            let store = "samples/coredata-v\(n).store"
            let trip = try CLI.tripconv("detect", store)
            let plan = try CLI.tripconv("detect", "--model", "samples/swift-model", store)
            #expect(plan.status == 0, "\(plan.stderr)")
            let tripLine = String(decoding: trip.stdout, as: UTF8.self).dropLast()
            // 1.0.0's store has no marker: the trip path tells it by its columns and the unique index it lacks, the plan by
            // the names of its model's attributes and the uniqueness it lacks.
            #expect(String(decoding: plan.stdout, as: UTF8.self) == "\(tripLine); version \(n).0.0 of the plan ("
                    + (n == 1 ? "exact names: Trip has end_date, start_date, which only 1.0.0 and 2.0.0 declare (3.0.0 renames end_date to endDate, "
                       + "3.0.0 renames start_date to startDate through originalName); the store's model makes nothing of Trip unique, as 1.0.0 does "
                       + "(2.0.0 does not))\n"
                       : "marker Z_METADATA NSStoreModelVersionIdentifiers \(n).0.0)\n"))
        }
        let dir = try CLI.temporaryDirectory().path
        for n in 1...3 {
            let sample = "samples/trips-v\(n).jsonl", objects = "\(dir)/objects-v\(n).jsonl"
            let converted = try CLI.python(Self.tripsAsObjects, [sample, objects])
            #expect(converted.status == 0, "\(converted.stderr)")
            let trip = try CLI.tripconv("detect", "--json", sample)
            let plan = try CLI.tripconv("detect", "--json", "--model", "samples/swift-model", objects)
            #expect(plan.status == 0, "\(plan.stderr)")
            let tripVersion = try Self.version(trip, ["version"])
            #expect(tripVersion != nil)
            #expect(try Self.version(plan, ["planVersion", "version"]) == tripVersion, "\(sample)")
            if n == 2 {
                let text = try CLI.tripconv("detect", "--model", "samples/swift-model", objects)
                #expect(String(decoding: text.stdout, as: UTF8.self).contains(
                    "1.0.0 and 2.0.0 cannot be told apart by the data: they declare the same names and types; reading as 1.0.0"))
            }
        }
    }
}
