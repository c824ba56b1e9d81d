import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// A plan's first pass reads a graph's text restricted to the entities it needs
/// (`ObjectMigration.firstPassEntities`, issue 27's speed item): the objects it gives must be the
/// unrestricted reader's objects of those entities, with the same keys (an object left out is still
/// counted), values, references and places, whatever the others are (good, refused, unparseable);
/// its rejections only the decoder's of those entities; a reader reopened from it gives everything again.
@Suite struct ObjectGraphFirstPassTests {
    /// Every item of `reader`: its objects (entity, key, values, references, place) and its rejections' places.
    static func items<R: ObjectRecordReader>(_ reader: inout R) throws -> (objects: [String], rejected: [String]) {
        var objects: [String] = [], rejected: [String] = []
        while let item = try reader.next() {
            switch item {
            case .object(let o): objects.append("\(o.entity) \(o.key) \(o.attributes) \(o.relationships) \(o.origin)")
            case .rejected(let r): rejected.append("\(r.origin)")
            }
        }
        return (objects, rejected)
    }

    static let masks: [[Bool]] = [[true, false, false, false], [false, true, false, false], [false, false, true, false],
                                  [false, false, false, true], [true, false, true, false], [false, false, false, false]]

    /// The restricted reader of `path` against the unrestricted one, for every mask.
    static func compare(_ path: String, _ format: Format, model: ObjectModel = ObjectGraphSample.model, masks: [[Bool]] = masks) throws {
        var whole = try JSONObjectReader(.file(path), format: format, model: model)
        let all = try items(&whole)
        #expect(all.objects.count > 4 && !all.rejected.isEmpty)
        for mask in masks {
            let fresh = try JSONObjectReader(.file(path), format: format, model: model)
            var restricted = fresh.restricted(to: mask)
            let some = try items(&restricted)
            let expected = all.objects.filter { mask[Int($0.prefix { $0 != " " })!] }
            #expect(some.objects == expected, "\(mask)")
            // The marked entities' objects the decoder refuses, not the lines that do not parse.
            #expect(Set(some.rejected).isSubset(of: Set(all.rejected)) && some.rejected.count < all.rejected.count, "\(mask)")
            var again = try fresh.reopened()
            #expect(try items(&again) == all, "\(mask)")
        }
    }

    @Test("a restricted JSON Lines read gives the unrestricted read's objects of the entities marked, keys and places alike",
          .needsPython3)
    func linesRestricted() throws {
        let dir = ScratchDirectory()
        let out = try ExternalTool.python(ObjectGraphIndexPassTests.script).out
        // As written (Tag first: a pass per entity), and in the model's order (one pass), unparseable lines kept.
        let order = ["Thing", "Gadget", "Tag", "Step"]
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func rank(_ line: String) -> Int {
            order.firstIndex { line.hasPrefix("{\"@entity\": \"\($0)\"") } ?? order.count
        }
        let sorted = lines.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
        try Self.compare(dir.file("tricky.jsonl", out), .jsonl)
        try Self.compare(dir.file("ordered.jsonl", sorted.joined(separator: "\n")), .jsonl)
    }

    /// A family keyed by its unique attribute's place: an object of the entity left out still takes its number.
    @Test("an object left out is counted: a sub-entity's objects keep their keys when the superentity's are left out")
    func familyKeys() throws {
        let model = ObjectModel(entities: [
            EntityDescription("Base", attributes: [AttributeDescription("code", .string, isOptional: false)], uniquenessConstraints: [["code"]]),
            EntityDescription("Special", superentity: "Base", attributes: [AttributeDescription("level", .int64)]),
            EntityDescription("Use", attributes: [], relationships: [RelationshipDescription("base", to: "Base")]),
        ])
        let text = #"""
        {"@entity": "Base", "code": "a"}
        {"@entity": "Special", "code": "b", "level": 1}
        {"@entity": "Base", "code": "c"}
        {"@entity": "Base", "code": "x" x
        {"@entity": "Special", "code": "d", "level": 2}
        {"code": "e", "@entity": "Special"}
        {"@entity": "Use", "@key": 1, "base": "e"}
        {"@entity": "Base", "code": "f"}
        {"@entity": "Special", "code": "g", "level": "high"}
        {"@entity": "Special", "code": "h"}
        """#
        let dir = ScratchDirectory()
        let masks = [[false, true, false], [true, false, false], [false, true, true]]
        try Self.compare(dir.file("family.jsonl", text), .jsonl, model: model, masks: masks)
        let ordered = text.split(separator: "\n").sorted { ($0.contains("Use") ? 1 : 0) < ($1.contains("Use") ? 1 : 0) }
        try Self.compare(dir.file("ordered.jsonl", ordered.joined(separator: "\n")), .jsonl, model: model, masks: masks)
    }

    @Test("a restricted JSON document read gives the unrestricted read's objects of the entities marked", .needsPython3)
    func documentRestricted() throws {
        let dir = ScratchDirectory()
        let path = dir.path("graph.json")
        _ = try ExternalTool.python(ObjectGraphIndexPassTests.documentScript, [path])
        try Self.compare(path, .json)
    }

    /// What a reader says it will give, per entity (`expectedObjects`): each entity's own objects, a
    /// sub-entity's not counted in its root's (a deduplication on the root sums its family's itself).
    @Test("the objects the index's pass counted, per entity, a sub-entity's apart from its root's")
    func expectedObjectsPerEntity() throws {
        let model = ObjectModel(entities: [
            EntityDescription("Trip", attributes: [AttributeDescription("name", .string)]),
            EntityDescription("BusinessTrip", superentity: "Trip", attributes: [AttributeDescription("client", .string)]),
            EntityDescription("Note", attributes: [AttributeDescription("text", .string)]),
        ])
        let text = #"""
        {"@entity": "Trip", "@key": 1, "name": "a"}
        {"@entity": "BusinessTrip", "@key": 2, "name": "b", "client": "c"}
        {"@entity": "Trip", "@key": 3, "name": "d"}
        {"@entity": "Trip", "@key": 4, "name": "e"}
        """#
        let dir = ScratchDirectory()
        let reader = try JSONObjectReader(.file(dir.file("trips.jsonl", text)), format: .jsonl, model: model)
        #expect(reader.expectedObjects == [3, 1, 0])
        withExtendedLifetime(dir) {}
    }

    /// An object's relationships are one buffer of its own (`ObjectRelationships`: the decoder gathers
    /// its references and copies them once): read whole, on one thread and through the read-ahead's
    /// two, every object has the references its line gives, its lists lie one after another in one
    /// buffer, and a change to one object's list leaves the others as read.
    @Test("an object's relationships are one buffer of its own, and each object keeps its own references")
    func relationshipsInOneBuffer() throws {
        let model = ObjectModel(entities: [
            EntityDescription("Parent", attributes: [AttributeDescription("name", .string, isOptional: false)],
                              relationships: [RelationshipDescription("children", to: "Child", toMany: true)]),
            EntityDescription("Child", attributes: [AttributeDescription("n", .int64)],
                              relationships: [RelationshipDescription("parent", to: "Parent"), RelationshipDescription("other", to: "Parent")]),
        ])
        let text = #"""
        {"@entity": "Parent", "@key": 1, "name": "a"}
        {"@entity": "Parent", "@key": 2, "name": "b"}
        {"@entity": "Child", "@key": 1, "n": 1, "parent": 1, "other": 2}
        {"@entity": "Child", "@key": 2, "n": 2, "parent": 1, "other": 1}
        {"@entity": "Child", "@key": 3, "n": 3, "parent": 2, "other": 1}
        {"@entity": "Child", "@key": 4, "n": 4, "parent": 2}
        {"@entity": "Child", "@key": 5, "n": 5, "parent": 1, "other": null}
        """#
        let dir = ScratchDirectory()
        let path = dir.file("children.jsonl", text)
        let expected = ["1: [[1], [2]]", "2: [[1], [1]]", "3: [[2], [1]]", "4: [[2], []]", "5: [[1], []]"]
        for ahead in [false, true] {
            let reader = try JSONObjectReader(.file(path), format: .jsonl, model: model)
            var source: any ObjectRecordReader = ahead ? ObjectReadAhead.reading(reader, batchSize: 2, window: 1) : reader
            var children: [ObjectRecord] = []
            while let item = try source.next() {
                if case .object(let o) = item, o.entity == 1 { children.append(o) }
            }
            #expect(children.map { "\($0.key): \($0.relationships.map { $0.map(\.key) })" } == expected, "ahead \(ahead)")
            // What the index's pass counted, per entity, said before the first object and after.
            #expect(source.expectedObjects == [2, 5], "ahead \(ahead)")
            func storage(_ i: Int, _ r: Int) -> UnsafePointer<ObjectReference>? {
                children[i].relationships[r].withUnsafeBufferPointer { $0.baseAddress }
            }
            // Child 1's two lists, one after the other in one buffer; child 2's in another.
            #expect(storage(0, 0) != nil && storage(0, 0).map { $0 + 1 } == storage(0, 1), "ahead \(ahead)")
            #expect(storage(0, 0) != storage(1, 0), "ahead \(ahead)")
            children[0].relationships[0] = [ObjectReference(entity: 0, key: 7)]
            #expect(children[0].relationships == [[ObjectReference(entity: 0, key: 7)], [ObjectReference(entity: 0, key: 2)]])
            #expect(children[1].relationships[0] == [ObjectReference(entity: 0, key: 1)], "ahead \(ahead)")
        }
        withExtendedLifetime(dir) {}
    }
}
