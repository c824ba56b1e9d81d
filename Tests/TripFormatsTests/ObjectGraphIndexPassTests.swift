import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The index's pass of the JSON readers of graphs checks each object as it parses it
/// (`ObjectGraphCheck`, issue 27's speed item), without its members: it must find every object
/// valid or not exactly as the decoder does, and note it by the same value. Inputs are written by
/// python3's json module, with what could trip a parser that does not make members: escaped names,
/// `"@key"` and `"@entity"` inside strings, nested objects, members given twice, numbers at and past
/// the kinds' limits, names equal as Unicode but not as bytes.
@Suite struct ObjectGraphIndexPassTests {
    /// One object as the index's pass sees it: its entity, whether the index keeps it, and the value it is kept by.
    struct Seen: Equatable, CustomStringConvertible {
        var entity: Int
        var isValid: Bool
        var identity: String?
        var description: String { "\(entity) \(isValid) \(identity ?? "-")" }
    }

    /// Every object of `path` as the decoder (`next()`, then the decoder's check) sees it.
    static func decoded(_ path: String, isLines: Bool, model: ObjectModel) throws -> [Seen] {
        var parser = JSONGraphParser(try ByteInput(.file(path), options: ReadOptions()), isLines: isLines, model: model)
        let index = ObjectGraphIndex(model)
        var checker = ObjectGraphDecoder(index, resolvesReferences: false)
        var seen: [Seen] = []
        while let item = try parser.next() {
            guard case .object(let e, let fields, let origin) = item else { continue }
            guard case .object = try checker.decode(entity: e, fields: fields, origin: origin) else {
                seen.append(Seen(entity: e, isValid: false))
                continue
            }
            let name = index.slots[e].map { index.attributes[e][$0].name } ?? "@key"
            let field = fields.first { $0.name == name }
            // The index keeps only objects of entities something refers to.
            seen.append(Seen(entity: e, isValid: true, identity: index.referred[e] ? field.map { ObjectGraphDecoder.describe($0.value) } : nil))
        }
        return seen
    }

    /// Every object of `path` as the index's pass sees it, and how many it checked as it parsed them.
    static func indexed(_ path: String, isLines: Bool, model: ObjectModel) throws -> (seen: [Seen], checked: Int) {
        var parser = JSONGraphParser(try ByteInput(.file(path), options: ReadOptions()), isLines: isLines, model: model)
        let index = ObjectGraphIndex(model)
        var check = ObjectGraphCheck(index)
        var checked = 0
        var seen: [Seen] = []
        while let item = try parser.nextIndexed(&check) {
            switch item {
            case .checked(let o):
                checked += 1
                seen.append(Seen(entity: o.entity, isValid: o.isValid,
                                 identity: o.isValid ? o.identity.map { ObjectGraphDecoder.describe(.scalar($0)) } : nil))
            case .parsed(.object(let e, let fields, let origin)):
                var checker = ObjectGraphDecoder(index, resolvesReferences: false)
                guard case .object = try checker.decode(entity: e, fields: fields, origin: origin) else {
                    seen.append(Seen(entity: e, isValid: false))
                    continue
                }
                let name = index.slots[e].map { index.attributes[e][$0].name } ?? "@key"
                let field = index.referred[e] ? fields.first { $0.name == name } : nil
                seen.append(Seen(entity: e, isValid: true, identity: field.map { ObjectGraphDecoder.describe($0.value) }))
            case .parsed(.rejected), .decoded:
                continue
            }
        }
        return (seen, checked)
    }

    /// The index a first pass over `path` makes (as `ObjectGraphPasses` makes it), with removals of its own.
    static func firstPass(_ path: String, model: ObjectModel) throws -> ObjectGraphIndex {
        var parser = JSONGraphParser(try ByteInput(.file(path), options: ReadOptions()), isLines: true, model: model)
        var index = ObjectGraphIndex(model, removals: ObjectReferenceRemovals())
        var checker = ObjectGraphDecoder(index, resolvesReferences: false)
        var check = ObjectGraphCheck(index)
        while let item = try parser.nextIndexed(&check) {
            switch item {
            case .checked(let o): try index.note(entity: o.entity, identity: o.identity, isValid: o.isValid || !index.referred[o.entity])
            case .parsed(.object(let e, let fields, let origin)):
                var isValid = !index.referred[e]
                if isValid { checker.skip(e) } else if case .object = try checker.decode(entity: e, fields: fields, origin: origin) { isValid = true }
                try index.note(entity: e, fields: fields, isValid: isValid)
            case .parsed(.rejected), .decoded: continue
            }
        }
        return index
    }

    /// Every item of an objects' pass over `path`: each object decoded as it is parsed where it can be
    /// (`decodeAsParsed`), else its members given to `decode`; and the references removed, and how many were decoded as parsed.
    static func objectsPass(_ path: String, model: ObjectModel, decodeAsParsed: Bool) throws -> (items: [String], removed: [String], fast: Int) {
        let index = try firstPass(path, model: model)
        var parser = JSONGraphParser(try ByteInput(.file(path), options: ReadOptions()), isLines: true, model: model)
        var decoder = ObjectGraphDecoder(index)
        var items: [String] = []
        var fast = 0
        while let got = try decodeAsParsed ? parser.nextDecoded(&decoder, skipping: nil, taking: { _ in true }) : parser.next().map(GraphIndexItem.parsed) {
            switch got {
            case .decoded(let item):
                fast += 1
                items.append("\(item)")
            case .parsed(.object(let e, let fields, let origin)): items.append("\(try decoder.decode(entity: e, fields: fields, origin: origin))")
            case .parsed(.rejected(let r)): items.append("\(r)")
            case .checked(let o): items.append("checked \(o.entity)")
            }
        }
        return (items, index.removals.firstMessages + ["\(index.removals.count)"], fast)
    }

    @Test("an objects' pass decoding lines as it parses them gives every object, rejection and removed reference decode gives",
          .needsPython3)
    func objectsPassAsTheDecoderReadsIt() throws {
        let dir = ScratchDirectory()
        // The tricky lines, then references good and bad to objects among them.
        let script = Self.script.replacingOccurrences(of: "sys.stdout.write", with: """
            for refs in [[1], [1, 1], [9], [1, 9, 1], [], [102, 102]]:
                add({"@entity": "Tag", "name": "refs %s" % refs, "things": refs})
            for parent in [1, 9, None, "Iron", 7]:
                add({"@entity": "Thing", "@key": 900 + len(lines), "i64": 1, "str": "p", "parent": parent})
            sys.stdout.write
            """)
        let path = dir.file("tricky.jsonl", try ExternalTool.python(script).out)
        let slow = try Self.objectsPass(path, model: ObjectGraphSample.model, decodeAsParsed: false)
        let fast = try Self.objectsPass(path, model: ObjectGraphSample.model, decodeAsParsed: true)
        #expect(fast.items == slow.items)
        #expect(fast.removed == slow.removed && slow.removed != ["0"], "\(fast.removed) \(slow.removed)")
        // Some objects are decoded as they are parsed, and not those decode refuses or removes a reference of.
        let objects = slow.items.filter { $0.hasPrefix("object(") }.count
        #expect(fast.fast > 10 && fast.fast < objects, "\(fast.fast) of \(objects)")
        #expect(slow.fast == 0 && slow.items.count > 90)
    }

    /// Lines of the sample model's objects, good and bad, as python3's json writes them (and a few
    /// written by hand where json would not write them so).
    static let script = #"""
    import json, sys
    lines = []
    def add(o, **kw): lines.append(json.dumps(o, **kw))
    add({"@entity": "Tag", "name": "Iron", "things": [1]})
    lines.append('{"@entity": "Tag", "n\\u0061me": "Escaped name", "things": []}')
    lines.append('{"\\u0040entity": "Tag", "name": "escaped @entity", "things": []}')
    add({"@entity": "Tag", "name": "\"@key\": 5, \"@entity\": \"Thing\"", "things": []})
    add({"@entity": "Tag", "name": "東京 é", "things": []}, ensure_ascii=False)
    add({"@entity": "Tag", "name": "東京 é"})
    add({"@entity": "Tag", "name": "Nested", "things": {"@key": 1}})
    add({"@entity": "Tag", "name": "Nested list", "things": [[1]]})
    add({"@entity": "Tag", "name": "Nested in list", "things": [{"a": 1}]})
    lines.append('{"@entity": "Tag", "name": "Twice", "name": "Twice again", "things": []}')
    add({"@entity": "Tag", "name": None, "things": []})
    add({"@entity": "Tag", "things": []})
    add({"@entity": "Tag", "name": 5})
    add({"@entity": "Tag", "name": "Unknown member", "colour": "red"})
    add({"@entity": "Tag", "name": "things null", "things": None})
    add({"@entity": "Tag", "name": "things scalar", "things": 1})
    add({"name": "entity last", "things": [], "@entity": "Tag"})
    add({"@entity": "Tag", "name": "entity twice", "@entity": "Step"})
    lines.append('{"@entity": "Tag", "name": "Trailing"} x')
    lines.append('{"@entity": "Tag", "name": "Bad escape \\q"}')
    lines.append('{"@entity": "Tag", "name": "Unterminated}')
    add({"@entity": "Nothing", "name": "no such entity"})
    add({"@entity": 5, "name": "entity a number"})
    add([1, 2])
    lines.append('')
    for key in ["9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
                "1.0", "1e2", "-0", "0", "\"5\"", "null", "true", "[1]"]:
        lines.append('{"@entity": "Thing", "@key": %s, "i64": 1, "str": "k"}' % key)
    lines.append('{"@entity": "Thing", "@key": 7, "@key": 8, "i64": 1, "str": "twice"}')
    # Integer texts and strings the decoder makes straight from their bytes, as from a scalar.
    for i64 in ["9223372036854775807", "-9223372036854775808", "9223372036854775808", "-0", "0", "1e2", "1E0",
                "-1.0", "100000000000000000000", "0.5"]:
        lines.append('{"@entity": "Thing", "@key": %d, "i64": %s, "str": "i64 %s"}' % (300 + len(lines), i64, i64))
    for s in ["", r'\u00e9', r'\u00e9\n\"', "a" * 40, r'\ud83d\ude00', "é"]:
        lines.append('{"@entity": "Thing", "@key": %d, "i64": 1, "str": "%s"}' % (300 + len(lines), s))
    add({"@entity": "Thing", "i64": 1, "str": "no key"})
    for name, value in [("i16", 32767), ("i16", 32768), ("i16", -32768), ("i16", -32769), ("i32", 2147483647),
                        ("i32", 2147483648), ("i32", -2147483649), ("i64", 2**63), ("i64", -2**63), ("i64", 1.5),
                        ("i64", "1"), ("dbl", 1e308), ("dbl", "NaN"), ("dbl", "nan"), ("flt", 0.1), ("dec", "12.50"),
                        ("dec", 12.5), ("dec", "x"), ("when", "2024-02-29T12:00:00Z"), ("when", 1.5), ("when", "never"),
                        ("blob", "AAEC"), ("blob", "not base64!"), ("uid", "1b9fd00d-cb92-46cd-8711-5297025b7822"),
                        ("uid", "no"), ("flag", True), ("flag", 1), ("flag", "true"), ("link", "x:y"), ("link", 3),
                        ("xf", "AAEC"), ("scratch", "kept"), ("str", None), ("parent", [1]), ("parent", 1),
                        ("parent", "x"), ("parent", None), ("children", 1), ("children", [1, "a", None]),
                        ("steps", {"a": 1}), ("i32", {"a": [1, {"b": 2}]})]:
        o = {"@entity": "Thing", "@key": 100 + len(lines), "str": "s"}
        if name != "i64": o["i64"] = 3
        o[name] = value
        add(o)
    add({"@entity": "Gadget", "@key": 500, "i64": 1, "str": "g", "power": 9, "owner": "Iron"})
    add({"@entity": "Gadget", "@key": 501, "i64": 1, "str": "g", "power": "9"})
    add({"@entity": "Step", "id": "a0a0a0a0-0000-4000-8000-000000000001", "order": 1, "thing": 1})
    add({"@entity": "Step", "id": "A0A0A0A0-0000-4000-8000-000000000001"})
    add({"@entity": "Step", "id": "not a uuid"})
    add({"@entity": "Step", "order": 2})
    add({"@entity": "Step", "id": "0B0B0B0B-0000-4000-8000-000000000002", "@key": 3})
    lines.append('{"@entity": "Step" , "id" :"0B0B0B0B-0000-4000-8000-000000000003" ,"thing":null }  ')
    sys.stdout.write("\n".join(lines) + "\n")
    """#

    @Test("each JSON Lines object is found valid or not, and noted by the same value, as the decoder finds it", .needsPython3)
    func linesAsTheDecoderReadsThem() throws {
        let dir = ScratchDirectory()
        let path = dir.file("tricky.jsonl", try ExternalTool.python(Self.script).out)
        let decoded = try Self.decoded(path, isLines: true, model: ObjectGraphSample.model)
        let (seen, checked) = try Self.indexed(path, isLines: true, model: ObjectGraphSample.model)
        #expect(seen == decoded)
        #expect(decoded.count > 80 && decoded.contains { $0.isValid } && decoded.contains { !$0.isValid })
        // All but the one object whose first member is not "@entity" (escaped, it is) are checked as they are parsed.
        #expect(checked == decoded.count - 1, "\(checked) of \(decoded.count)")
    }

    /// `script`'s objects as a JSON document written to the path its first argument names (its
    /// entities' arrays; an array where an object should be), unparseable lines and unknown entities left out.
    static let documentScript = script + #"""

    groups = {}
    for line in lines:
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict) and isinstance(o.get("@entity"), str):
            groups.setdefault(o["@entity"], []).append(o)
    groups.pop("Nothing", None)
    groups["Tag"].append([1, 2])
    json.dump(groups, open(sys.argv[1], "w"))
    """#

    @Test("each object of a JSON document is found valid or not as the decoder finds it; a bad document fails at the same place",
          .needsPython3)
    func documentAsTheDecoderReadsIt() throws {
        let dir = ScratchDirectory()
        let script = Self.documentScript + #"""

        with open(sys.argv[2], "w") as f:
            f.write('{"Tag": [{"name": "a"}, {"name": "b", "things": [1 2]}]}')
        """#
        let good = dir.path("graph.json"), bad = dir.path("bad.json")
        _ = try ExternalTool.python(script, [good, bad])
        let decoded = try Self.decoded(good, isLines: false, model: ObjectGraphSample.model)
        let (seen, checked) = try Self.indexed(good, isLines: false, model: ObjectGraphSample.model)
        #expect(seen == decoded)
        #expect(checked == decoded.count && decoded.count > 80)
        var message: [String] = []
        for indexed in [false, true] {
            do {
                if indexed { _ = try Self.indexed(bad, isLines: false, model: ObjectGraphSample.model) } else {
                    _ = try Self.decoded(bad, isLines: false, model: ObjectGraphSample.model)
                }
            } catch {
                message.append("\(error)")
            }
        }
        let place = "bad.json:1:52: expected ',' or ']' after an array element"
        #expect(message.count == 2 && message[0] == message[1] && message[0].contains(place), "\(message)")
    }

    /// A member name equal to the model's as Unicode but not as bytes (K, KELVIN SIGN) is that
    /// member, as the decoder's `String` comparison finds it; a model's non-ASCII names too.
    @Test("names equal as Unicode, not as bytes, are the same member", .needsPython3)
    func canonicallyEqualNames() throws {
        let model = ObjectModel(entities: [
            EntityDescription("Unit", attributes: [AttributeDescription("Kelvin", .string, isOptional: false),
                                                   AttributeDescription("café", .int16)],
                              uniquenessConstraints: [["Kelvin"]]),
            EntityDescription("Use", attributes: [], relationships: [RelationshipDescription("unit", to: "Unit")]),
        ])
        let dir = ScratchDirectory()
        let path = dir.file("units.jsonl", try ExternalTool.python(#"""
        import json
        for o in [{"@entity": "Unit", "\u212Aelvin": "k1"}, {"@entity": "Unit", "Kelvin": "k2", "cafe\u0301": 3},
                  {"@entity": "Unit", "Kelvin": "k3", "caf\u00e9": 3, "cafe\u0301": 4},
                  {"@entity": "Unit", "Kelvin": "k4", "café": 70000}, {"@entity": "Use", "@key": 1, "unit": "k1"}]:
            print(json.dumps(o))
        """#).out)
        let decoded = try Self.decoded(path, isLines: true, model: model)
        let (seen, checked) = try Self.indexed(path, isLines: true, model: model)
        #expect(seen == decoded && checked == 5, "\(seen) \(decoded)")
        #expect(decoded.map(\.isValid) == [true, true, false, false, true], "\(decoded)")
        let read = try ObjectGraphDecodingTests.readAll(JSONObjectReader(.file(path), format: .jsonl, model: model))
        #expect(read.objects.count == 3 && read.rejected.count == 2, "\(read)")
    }

    /// An object of an entity others refer to, refused for a member of its own, is refused with its
    /// reason and place, and a reference to it is removed from the object that makes it, which is read.
    @Test("a referred-to object with a bad member is refused, and a reference to it removed", .needsPython3)
    func referredObjectWithABadMember() throws {
        let dir = ScratchDirectory()
        let path = dir.file("refs.jsonl", try ExternalTool.python(#"""
        import json
        for o in [{"@entity": "Thing", "@key": 1, "i64": 1, "str": "a", "tags": ["Iron", "Gold"]},
                  {"@entity": "Thing", "@key": 2, "i64": 2**63, "str": "b"},
                  {"@entity": "Thing", "@key": 3, "i64": 3, "str": "c", "parent": 2},
                  {"@entity": "Tag", "name": "Iron", "things": [1]},
                  {"@entity": "Tag", "name": "Gold", "things": {"nested": True}}]:
            print(json.dumps(o))
        """#).out)
        let read = try ObjectGraphDecodingTests.readAll(JSONObjectReader(.file(path), format: .jsonl, model: ObjectGraphSample.model))
        #expect(read.objects.count == 3, "\(read.objects)")
        #expect(read.rejected == [
            "2:40 expected Int64 for 'i64', found a number 9223372036854775808",
            "5:46 expected an array of references for 'things', found an object",
        ], "\(read.rejected)")
        // Thing 1 keeps its tag Iron, not Gold; Thing 3 has no parent; Iron keeps Thing 1.
        #expect(read.objects.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["0 1", "0 3", "2 1"], "\(read.objects)")
        #expect(read.objects[0].hasSuffix("[[], [], [TripKit.ObjectReference(entity: 2, key: 1)], []]"), "\(read.objects[0])")
        #expect(read.objects[1].hasSuffix("[[], [], [], []]") && read.objects[2].hasSuffix("[[TripKit.ObjectReference(entity: 0, key: 1)]]"),
                "\(read.objects)")
    }

    /// Member names are found by their length and first eight bytes as one word, then the rest
    /// (`GraphNames`): every length from 0 to 17 bytes, names differing only in one byte (each
    /// position, inside and past the first eight), `@entity` and `@key`'s words, non-ASCII bytes.
    @Test("a name is found by its bytes at every length and differing byte, as comparing them finds it")
    func namesByTheirBytes() {
        var names: [[UInt8]] = (0...17).map { n in (0..<n).map { UInt8(0x61 + $0) } }
        for n in 1...17 {
            for at in 0..<n {
                var near = names[n]
                near[at] = 0x5A
                names.append(near)
            }
        }
        names.append(Array("caf\u{E9}".utf8))
        names.append(Array("cafe\u{301}".utf8))
        let table = GraphNames(names.map { String(decoding: $0, as: UTF8.self) })
        for (i, name) in names.enumerated() {
            name.withUnsafeBytes { raw in
                #expect(table.find(raw, from: nil) == i, "\(name)")
                #expect(table.find(raw, from: (i + 1) % names.count) == i, "\(name)")
                #expect(table.find(raw, from: i) == i, "\(name)")
            }
            // One byte more, one fewer or one changed: another name, or none.
            for other in [name + [0x61], Array(name.dropLast()), name.isEmpty ? [0x7A] : [0x7A] + name.dropFirst()] {
                other.withUnsafeBytes { raw in
                    #expect(table.find(raw, from: i) == names.firstIndex(of: other), "\(other)")
                }
            }
        }
        for (name, head) in [("@entity", ObjectGraphCheck.entityHead), ("@key", ObjectGraphCheck.keyHead)] {
            Array(name.utf8).withUnsafeBytes { #expect(GraphNames.head($0) == head, "\(name)") }
        }
        // The word holds the first bytes in order, byte 0 lowest, at every length.
        for name in names {
            let word = name.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) }
            name.withUnsafeBytes { #expect(GraphNames.head($0) == word, "\(name)") }
        }
        Array("abcdefghij".utf8).withUnsafeBytes { #expect(GraphNames.head($0) == 0x6867_6665_6463_6261) }
        Array("abc".utf8).withUnsafeBytes { #expect(GraphNames.head($0) == 0x63_6261) }
    }

    /// The check finds `@entity`, `@key` and names of every length as the decoder's `String`
    /// comparison does, in a file python3 wrote with members in and out of declaration order.
    @Test("members of every length, in any order, are checked as the decoder checks them", .needsPython3)
    func namesOfEveryLength() throws {
        let names = ["a", "abcd", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghX", "abcdefghijklmnopq"]
        let model = ObjectModel(entities: [
            EntityDescription("Long", attributes: names.map { AttributeDescription($0, .int64) }),
        ])
        let dir = ScratchDirectory()
        let path = dir.file("names.jsonl", try ExternalTool.python(#"""
        import json
        names = ["a", "abcd", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghX", "abcdefghijklmnopq"]
        print(json.dumps(dict([("@entity", "Long"), ("@key", 1)] + [(n, i) for i, n in enumerate(names)])))
        print(json.dumps(dict([("@key", 2), ("@entity", "Long")] + [(n, i) for i, n in reversed(list(enumerate(names)))])))
        for bad in ["abcdefghY", "abcdefghijklmnopQ", "abcdefgx", "@entitY", "@kez", "b", "", "abcdefghijklmnopqr"]:
            print(json.dumps({"@entity": "Long", "@key": 3, "a": 1, bad: 2}))
        print('{"@entity": "Long", "@key": 4, "abcdefghi": 1, "abcdefghi": 2}')
        """#).out)
        let decoded = try Self.decoded(path, isLines: true, model: model)
        let (seen, checked) = try Self.indexed(path, isLines: true, model: model)
        // The second object, not opening with `@entity`, is checked from its members' fields.
        #expect(seen == decoded && checked == 10, "\(seen) \(decoded)")
        #expect(decoded.map(\.isValid) == [true, true] + Array(repeating: false, count: 9), "\(decoded)")
    }

    /// A number's text is read by `ObjectGraphCheck.integer` as `Int64(_:)` reads it: every text of up
    /// to five digits, random ones of every length to twenty with and without a sign, one byte changed
    /// to a non-digit at a random place, the limits.
    @Test("a number's text is read as Int64(_:) reads it, at every length and with any byte not a digit")
    func integersAsInt64ReadsThem() {
        var texts = (0...99_999).map(String.init) + ["", "+", "-", "+-1", "--1", " 1", "1 ", "1.0", "1e2", "0x1", "\u{663}",
                                                    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                                    "-9223372036854775809", "00000000000000000001", "+00000000", "-99999999"]
        var generator = SystemRandomNumberGenerator()
        for length in 1...20 {
            for _ in 0..<300 {
                var digits = String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
                switch Int.random(in: 0...2, using: &generator) {
                case 0: digits = "-" + digits
                case 1: digits = "+" + digits
                default: break
                }
                texts.append(digits)
                var bytes = Array(digits.utf8)
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[at] = [0x2F, 0x3A, 0x20, 0x2E, 0x65, 0x00, 0xFF, 0x30 | 0x80][Int.random(in: 0...7, using: &generator)]
                texts.append(String(decoding: bytes, as: UTF8.self))
                // The same bytes, not as a String (0xFF is no UTF-8).
                let got = bytes.withUnsafeBytes { ObjectGraphCheck.integer($0) }
                let ok = bytes.allSatisfy { $0 < 0x80 } ? Int64(String(decoding: bytes, as: UTF8.self)) : nil
                #expect(got == ok, "\(bytes)")
            }
        }
        for text in texts {
            let got = Array(text.utf8).withUnsafeBytes { ObjectGraphCheck.integer($0) }
            #expect(got == Int64(text), "\(text)")
        }
    }
}
