import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The graph readers' decoding as made faster for issue 27's speed item: members found from where
/// the previous one was, given members noted as bits, and a second read of the same input taking
/// the first's index (`JSONObjectReader.reopened`). Each reads what it read before.
@Suite struct ObjectGraphDecodingTests {
    static func readAll(_ reader: some ObjectRecordReader) throws -> (objects: [String], rejected: [String]) {
        let (objects, rejected) = try ObjectGraph.readAll(reader)
        return (objects.map(ObjectGraphSample.content),
                rejected.map { "\($0.place.line ?? 0):\($0.place.column ?? 0) \($0.reason)" })
    }

    /// Members in the reverse of the entity's order read as in order; an attribute or a relationship
    /// given twice, after others, is still refused.
    @Test func membersInAnyOrder() throws {
        let dir = ScratchDirectory()
        let inOrder = dir.file("order.jsonl", """
        {"@entity": "Thing", "@key": 1, "i64": 5, "str": "a", "flag": true, "tags": ["Iron"]}
        {"@entity": "Thing", "@key": 2, "i64": 6, "str": "b", "tags": ["Gold", "Iron"], "steps": []}
        {"@entity": "Tag", "name": "Iron", "things": [1, 2]}
        {"@entity": "Tag", "name": "Gold", "things": [2]}
        """)
        let reversed = dir.file("reversed.jsonl", """
        {"tags": ["Iron"], "flag": true, "str": "a", "i64": 5, "@key": 1, "@entity": "Thing"}
        {"steps": [], "tags": ["Gold", "Iron"], "str": "b", "i64": 6, "@key": 2, "@entity": "Thing"}
        {"things": [1, 2], "name": "Iron", "@entity": "Tag"}
        {"@entity": "Tag", "things": [2], "name": "Gold"}
        {"@entity": "Tag", "name": "Lead", "things": [], "name": "Tin"}
        {"@entity": "Tag", "name": "Zinc", "things": [], "things": [1]}
        """)
        let expected = try Self.readAll(JSONObjectReader(.file(inOrder), format: .jsonl, model: ObjectGraphSample.model))
        let read = try Self.readAll(JSONObjectReader(.file(reversed), format: .jsonl, model: ObjectGraphSample.model))
        #expect(expected.objects.count == 4 && expected.rejected.isEmpty)
        #expect(read.objects == expected.objects)
        #expect(read.rejected == ["5:58 'name' is given twice", "6:60 'things' is given twice"], "\(read.rejected)")
    }

    /// An attribute and a relationship of the same name: the attribute is the member (the first of
    /// the name), also when the member before it would point the search at the relationship.
    @Test func attributeAndRelationshipOfOneName() throws {
        let model = ObjectModel(entities: [
            EntityDescription("Box", attributes: [AttributeDescription("a", .string), AttributeDescription("x", .string)],
                              relationships: [RelationshipDescription("x", to: "Box")]),
        ])
        let dir = ScratchDirectory()
        let path = dir.file("box.jsonl", """
        {"@entity": "Box", "@key": 1, "a": "p", "x": "q"}
        {"@entity": "Box", "@key": 2, "x": "q", "x": 1}
        """)
        let read = try Self.readAll(JSONObjectReader(.file(path), format: .jsonl, model: model))
        #expect(read.objects == ["0 1 [TripKit.ObjectValue.string(\"p\"), TripKit.ObjectValue.string(\"q\")] [[]]"], "\(read.objects)")
        #expect(read.rejected == ["2:46 'x' is given twice"], "\(read.rejected)")
    }

    /// Past 64 members, given members are noted in a set: a repeat there is refused, and a missing
    /// required attribute there is found.
    @Test func manyMembers() throws {
        let attributes = (0..<70).map { AttributeDescription("a\($0)", .int64, isOptional: $0 != 66) }
        let model = ObjectModel(entities: [EntityDescription("Wide", attributes: attributes)])
        let all = (0..<70).map { "\"a\($0)\": \($0)" }.joined(separator: ", ")
        let dir = ScratchDirectory()
        let path = dir.file("wide.jsonl", """
        {"@entity": "Wide", "@key": 1, \(all)}
        {"@entity": "Wide", "@key": 2, \(all), "a65": 1}
        {"@entity": "Wide", "@key": 3, "a1": 1}
        """)
        let read = try Self.readAll(JSONObjectReader(.file(path), format: .jsonl, model: model))
        #expect(read.objects.count == 1)
        #expect(read.rejected.map { $0.drop { $0 != " " }.dropFirst() } == ["'a65' is given twice", "Wide requires 'a66', which is missing"],
                "\(read.rejected)")
        var given = GivenMembers()
        #expect(given.insert(3) && given.insert(63) && given.insert(64) && given.insert(200))
        #expect(!given.insert(63) && !given.insert(200) && given.contains(64) && !given.contains(65) && !given.contains(2))
    }

    /// A second read of the same input with the first's index gives the same objects and rejections
    /// in the same order, for an input in the model's order (one more pass) and one out of it (a pass
    /// per entity), in JSON Lines and JSON.
    @Test func reopenedReadsTheSame() throws {
        let dir = ScratchDirectory()
        let inOrder = dir.path("sample.jsonl"), document = dir.path("sample.json")
        try ObjectGraphSample.write(.jsonl, to: inOrder)
        try ObjectGraphSample.write(.json, to: document)
        let outOfOrder = dir.file("shuffled.jsonl", """
        {"@entity": "Tag", "name": "Iron", "things": [1]}
        {"@entity": "Thing", "@key": 1, "i64": 1, "str": "x", "tags": ["Iron", "Copper"]}
        {"@entity": "Tag", "name": "Gold", "colour": "red"}
        {"@entity": "Thing", "@key": 3, "i64": 0, "str": "ok", "tags": ["Iron"]}
        {"@entity": "Nope"}
        """)
        for (path, format) in [(inOrder, Format.jsonl), (document, .json), (outOfOrder, .jsonl)] {
            let first = try JSONObjectReader(.file(path), format: format, model: ObjectGraphSample.model)
            let again = try first.reopened()
            let fresh = try Self.readAll(first), second = try Self.readAll(again)
            #expect(fresh.objects == second.objects, "\(path)")
            #expect(fresh.rejected == second.rejected, "\(path)")
            #expect(!fresh.objects.isEmpty && (path != outOfOrder || fresh.rejected.count == 2), "\(path): \(fresh.rejected)")
        }
    }
}
