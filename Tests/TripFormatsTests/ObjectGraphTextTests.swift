import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The graph writers and readers of JSON, JSON Lines and YAML: round trips, the shapes checked by
/// Python's json and yaml modules, files Python wrote read back, bad records set aside with places.
@Suite struct ObjectGraphTextTests {
    static let formats: [Format] = [.json, .jsonl, .yaml]

    @Test(arguments: formats)
    func roundTrip(_ format: Format) throws {
        let dir = ScratchDirectory()
        let path = dir.path("graph.\(format.rawValue)")
        try ObjectGraphSample.write(format, to: path)
        let read = try ObjectGraphSample.read(format, from: path)
        #expect(read.rejected.isEmpty, "\(read.rejected)")
        #expect(read.objects.map(ObjectGraphSample.content) == ObjectGraphSample.objects.map(ObjectGraphSample.content))
    }

    /// Python's json and yaml read the three outputs to one document, in the shape DESIGN-NOTES lays down.
    @Test(.needsPython3)
    func shapesCheckedByPython() throws {
        let dir = ScratchDirectory()
        for format in Self.formats { try ObjectGraphSample.write(format, to: dir.path("graph.\(format.rawValue)")) }
        let script = #"""
        import json, sys, yaml, decimal, base64
        d = sys.argv[1]
        doc = json.load(open(d + "/graph.json"), parse_float=decimal.Decimal)
        assert list(doc) == ["Thing", "Gadget", "Tag", "Step"], list(doc)
        t1, t2 = doc["Thing"]
        assert list(t1)[:3] == ["@key", "i16", "i32"], list(t1)
        assert "scratch" not in t1 and list(t1)[-4:] == ["parent", "children", "tags", "steps"]
        assert t1["@key"] == 1 and t1["i64"] == -2**63 and t1["dec"] == decimal.Decimal("12.5")
        assert t1["str"] == 'quote " back \\ nl \n tab \t sep \u2028 true é 東京'
        assert t1["when"] == "2024-10-30T16:53:20.123456836Z", t1["when"]
        assert base64.b64decode(t1["blob"]) == bytes([0, 1, 2, 250, 255])
        assert t1["uid"] == "1B9FD00D-CB92-46CD-8711-5297025B7822" and t1["link"] == "https://example.com/a?b=c&d"
        assert t1["parent"] is None and t1["children"] == [2, 5] and t1["tags"] == ["Iron", "null"]
        assert t1["steps"] == ["0B0B0B0B-0000-4000-8000-000000000002", "A0A0A0A0-0000-4000-8000-000000000001"]
        assert (t2["dbl"], t2["i32"], t2["when"], t2["str"]) == ("Infinity", None, "1970-01-01T00:00:00Z", "true"), t2
        g = doc["Gadget"][0]
        assert g["@key"] == 5 and list(g)[-7:-5] == ["xf", "power"] and g["owner"] == "- x: y" and g["children"] == [5]
        assert [t["name"] for t in doc["Tag"]] == ["Iron", "null", "- x: y"] and "@key" not in doc["Tag"][0]
        assert doc["Tag"][1]["things"] == [1, 2] and doc["Step"][0]["thing"] == 1
        lines = [json.loads(l, parse_float=decimal.Decimal) for l in open(d + "/graph.jsonl")]
        assert all(list(l)[0] == "@entity" for l in lines)
        grouped = {}
        for l in lines:
            grouped.setdefault(l.pop("@entity"), []).append(l)
        assert grouped == {k: v for k, v in doc.items() if v}, grouped
        y = yaml.safe_load(open(d + "/graph.yaml"))
        def norm(v, key=None):
            if isinstance(v, dict): return {k: norm(x, k) for k, x in v.items()}
            if isinstance(v, list): return [norm(x) for x in v]
            if key == "dec" and v is not None: return decimal.Decimal(str(v))
            if isinstance(v, decimal.Decimal): return float(v)
            return v
        assert norm(y) == norm(doc), (norm(y), norm(doc))
        print("ok")
        """#
        #expect(try JSONPython.run(script: script, arguments: [dir.path]) == "ok\n")
    }

    /// Files Python wrote (other member order, indentation, `@entity` last, entities out of order,
    /// YAML's flow and sorted keys) read back to the same objects, entity by entity in the model's
    /// order (an input out of order is read once more per entity).
    @Test(.needsPython3)
    func readsWhatPythonWrote() throws {
        let dir = ScratchDirectory()
        try ObjectGraphSample.write(.json, to: dir.path("ours.json"))
        let script = #"""
        import json, sys, yaml
        d = sys.argv[1]
        doc = json.load(open(d + "/ours.json"))
        rev = {k: [dict(reversed(list(o.items()))) for o in v] for k, v in reversed(list(doc.items()))}
        json.dump(rev, open(d + "/py.json", "w"), indent=2, ensure_ascii=True)
        with open(d + "/py.jsonl", "w") as f:
            for k in ["Step", "Thing", "Tag", "Gadget"]:
                for o in doc[k]:
                    f.write(json.dumps(dict(list(o.items()) + [("@entity", k)])) + "\n")
        yaml.safe_dump(doc, open(d + "/py.yaml", "w"), sort_keys=True, allow_unicode=True)
        yaml.safe_dump(doc, open(d + "/flow.yaml", "w"), default_flow_style=True)
        """#
        _ = try JSONPython.run(script: script, arguments: [dir.path])
        for (file, format) in [("py.json", Format.json), ("py.jsonl", .jsonl), ("py.yaml", .yaml), ("flow.yaml", .yaml)] {
            let read = try ObjectGraphSample.read(format, from: dir.path(file))
            #expect(read.rejected.isEmpty, "\(file): \(read.rejected)")
            #expect(read.inModelOrder, "\(file): objects out of the model's order")
            #expect(read.objects.map(ObjectGraphSample.content) == ObjectGraphSample.objects.map(ObjectGraphSample.content), "\(file)")
        }
    }

    /// Each bad record is set aside with its place and reason; the good ones are read, a reference
    /// to an object not read removed from them.
    @Test func badRecordsSetAside() throws {
        let dir = ScratchDirectory()
        let path = dir.file("bad.jsonl", """
        {"@entity": "Tag", "name": "Iron", "things": []}
        {"@entity": "Tag", "name": "Gold", "colour": "red"}
        {"@entity": "Step", "id": "A0A0A0A0-0000-4000-8000-000000000001", "order": "one"}
        {"@entity": "Step", "id": "0B0B0B0B-0000-4000-8000-000000000002", "thing": 4}
        {"@entity": "Thing", "@key": 1, "i64": 1, "tags": ["Iron", "Copper"]}
        {"@entity": "Thing", "@key": 2, "str": "x"}
        {"@entity": "Thing", "@key": 3, "i64": 0, "str": "ok", "tags": ["Iron"]}
        {"@entity": "Tag", "name": "Iron"}
        {"@entity": "Nope"}
        {"@entity": "Tag", "name":
        {"@entity": "Thing", "@key": 5, "i64": 0, "str": "ok", "tags": ["Gold"]}
        """)
        let read = try ObjectGraphSample.read(.jsonl, from: path)
        #expect(read.inModelOrder)
        #expect(read.objects.map { "\($0.entity) \($0.key)" } == ["0 3", "0 5", "2 1", "3 2"])
        // Thing 3 keeps its tag Iron; Thing 5's tag Gold is refused and Step 2's Thing 4 does not exist: removed.
        #expect(read.objects.map { $0.relationships.map(\.count) } == [[0, 0, 1, 0], [0, 0, 0, 0], [0], [0]], "\(read.objects)")
        // The input has Tags before Things: read once more per entity, so the rejections come in the
        // model's order of their entities; sorted by line here.
        let places = read.rejected.sorted { ($0.place.line ?? 0) < ($1.place.line ?? 0) }.map { "\($0.place.line ?? 0):\($0.place.column ?? 0) \($0.reason)" }
        #expect(places == [
            "2:46 Tag has no attribute or relationship 'colour'",
            "3:76 expected Int32 for 'order', found a string 'one'",
            "5:1 Thing requires 'str', which is missing",
            "6:1 Thing requires 'i64', which is missing",
            "8:1 a second Tag whose 'name' is 'Iron'",
            "9:13 \"@entity\" is not an entity of the model: a string 'Nope'",
            "10:27 expected a JSON value, found end of line",
        ], "\(places)")
    }

    /// A broken document stops the read with its place (exit 65), as does an entity the model lacks.
    @Test func brokenDocument() throws {
        let dir = ScratchDirectory()
        let broken = dir.file("broken.json", "{\"Tag\": [\n{\"name\": \"Iron\"}\n}")
        #expect(throws: TripError.data("\(broken):3:1: expected ',' or ']' after an object, found '}'")) {
            _ = try ObjectGraphSample.read(.json, from: broken)
        }
        let unknown = dir.file("unknown.yaml", "Tag: []\nWidget:\n  - a: 1\n")
        #expect(throws: TripError.data("\(unknown):2:1: the model has no entity 'Widget'")) {
            _ = try ObjectGraphSample.read(.yaml, from: unknown)
        }
        let yamlBad = dir.file("bad.yaml", "Tag:\n  - name: Iron\n    flag: [1, {a: 2}]\n")
        let read = try ObjectGraphSample.read(.yaml, from: yamlBad)
        #expect(read.rejected.map(\.reason) == ["Tag has no attribute or relationship 'flag'"])
        #expect(read.rejected.first?.place.line == 3)
    }

    /// Entities without objects, before, between and after those with some, and no objects at all,
    /// are empty arrays, and the documents parse (Python's json and yaml).
    @Test(.needsPython3)
    func entitiesWithoutObjects() throws {
        let dir = ScratchDirectory()
        let tags = ObjectGraphSample.objects.filter { $0.entity == 2 }.map { o -> ObjectRecord in
            var o = o; o.relationships = [[]]; return o
        }
        for (name, objects) in [("tags", tags), ("none", [])] {
            var json = try JSONObjectWriter(.file(dir.path(name + ".json")), format: .json)
            var yaml = try YAMLObjectWriter(.file(dir.path(name + ".yaml")))
            try json.begin(ObjectGraphSample.model); try yaml.begin(ObjectGraphSample.model)
            for o in objects { try json.write(o); try yaml.write(o) }
            try json.finish(); try yaml.finish()
        }
        let script = #"""
        import json, sys, yaml
        d = sys.argv[1]
        for name, tags in [("tags", [{"name": "Iron", "things": []}, {"name": "null", "things": []}, {"name": "- x: y", "things": []}]),
                           ("none", [])]:
            want = {"Thing": [], "Gadget": [], "Tag": tags, "Step": []}
            assert json.load(open(d + "/" + name + ".json")) == want, name
            assert yaml.safe_load(open(d + "/" + name + ".yaml")) == want, name
        print("ok")
        """#
        #expect(try JSONPython.run(script: script, arguments: [dir.path]) == "ok\n")
        #expect(try ObjectGraphSample.read(.json, from: dir.path("none.json")).objects.isEmpty)
    }

    /// A reference to an object that never comes is an error naming the object (at `finish`: the
    /// referring object waits for the names of later entities), and the output is left absent.
    @Test func unknownReferenceValue() throws {
        let dir = ScratchDirectory()
        var writer = try JSONObjectWriter(.file(dir.path("out.json")), format: .json)
        try writer.begin(ObjectGraphSample.model)
        try writer.write(ObjectGraphSample.objects[0])
        #expect(throws: TripError.self) { try writer.finish() }
        writer.abort()
        #expect(dir.contents("out.json") == nil)
    }

    /// Names noted out of key order are found by key, read back as the unique attribute's kind;
    /// keys never noted are not; `@key` entities are named by their key.
    @Test func referenceNamesInAnyOrder() throws {
        let naming = ObjectNaming(ObjectGraphSample.model) { _, _ in true }
        let origin = RecordOrigin(source: "test", record: 0)
        for key in [5, 1, 9, 3, 7] as [Int64] {
            try naming.note(ObjectRecord(entity: 2, key: key, attributes: [.string("t\(key)")], relationships: [[]], origin: origin))
        }
        for key in [1, 3, 5, 7, 9] as [Int64] {
            #expect(try naming.value(of: ObjectReference(entity: 2, key: key), in: "out") == .string("t\(key)"))
        }
        #expect(throws: TripError.self) { try naming.value(of: ObjectReference(entity: 2, key: 4), in: "out") }
        #expect(try naming.value(of: ObjectReference(entity: 0, key: 12), in: "out") == .int(12))
        try naming.note(ObjectRecord(entity: 3, key: 2, attributes: [.uuid(ObjectGraphSample.step2), .null], relationships: [[]], origin: origin))
        #expect(try naming.value(of: ObjectReference(entity: 3, key: 2), in: "out") == .uuid(ObjectGraphSample.step2))
    }

    /// The byte-appending text of a value is the text `ObjectValueText.text` gives.
    @Test func appendTextAgreesWithText() {
        let values: [ObjectValue] = [.int(0), .int(-1), .int(Int64.min), .int(Int64.max), .date(752_000_000.123456789), .date(0.5),
                                     .date(-1e300), .uuid(ObjectGraphSample.uuid1), .string("é"), .double(0.1), .bool(true), .decimal("1.50")]
        for v in values {
            var bytes: [UInt8] = [0x41]
            ObjectValueText.appendText(v, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "A" + (ObjectValueText.text(v) ?? ""), "\(v)")
        }
    }
}
