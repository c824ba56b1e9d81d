import Testing
import TripKit

/// `ObjectRequiredRelationshipReader`: the fixed point of rejections through required to-ones, and
/// how many times it reads its input to find it.
@Suite struct ObjectRequiredRelationshipsTests {
    /// A.b → B and B.c → C required; C.z → C required; C.a → A optional.
    static let model = ObjectModel(entities: [
        EntityDescription("A", attributes: [], relationships: [RelationshipDescription("b", to: "B", isOptional: false)]),
        EntityDescription("B", attributes: [], relationships: [RelationshipDescription("c", to: "C", isOptional: false)]),
        EntityDescription("C", attributes: [], relationships: [RelationshipDescription("z", to: "C", isOptional: false),
                                                               RelationshipDescription("a", to: "A")]),
    ])

    struct ListReader: ObjectRecordReader {
        var model: ObjectModel { ObjectRequiredRelationshipsTests.model }
        var items: [ObjectReadItem]
        mutating func next() throws -> ObjectReadItem? { items.isEmpty ? nil : items.removeFirst() }
    }

    static func object(_ entity: Int, _ key: Int64, _ refs: [[ObjectReference]]) -> ObjectReadItem {
        .object(ObjectRecord(entity: entity, key: key, attributes: [], relationships: ObjectRelationships(refs),
                             origin: RecordOrigin(source: "s", record: Int(key))))
    }

    static func ref(_ entity: Int, _ key: Int64) -> ObjectReference { ObjectReference(entity: entity, key: key) }

    /// C1's z is empty: C1, then B1 (names C1), then A1 (names B1) are rejected; C2 loses its optional a → A1.
    static let chain: [ObjectReadItem] = [
        object(0, 1, [[ref(1, 1)]]), object(0, 2, [[ref(1, 2)]]),
        object(1, 1, [[ref(2, 1)]]), object(1, 2, [[ref(2, 2)]]),
        object(2, 1, [[], []]), object(2, 2, [[ref(2, 2)], [ref(0, 1), ref(0, 2)]]),
    ]

    static func run(_ items: [ObjectReadItem]) throws -> (reads: Int, kept: [ObjectRecord], rejected: [String], removed: Int) {
        var removed = 0
        var reader = try ObjectRequiredRelationshipReader(try #require(ObjectRequiredRelationships(model)), removed: { _, _, _ in removed += 1 }) {
            ListReader(items: items)
        }
        var kept: [ObjectRecord] = [], rejected: [String] = []
        while let item = try reader.next() {
            switch item {
            case .object(let o): kept.append(o)
            case .rejected(let r): rejected.append("\(r.origin.record) \(r.reason)")
            }
        }
        return (reader.reads, kept, rejected, removed)
    }

    @Test func aChainAgainstTheModelsOrderTakesAReadPerLevel() throws {
        let r = try Self.run(Self.chain)
        #expect(r.reads == 4)
        #expect(r.rejected == ["1 A.b: names a B that is rejected, and the model requires one",
                               "1 B.c: names a C that is rejected, and the model requires one",
                               "1 C.z: names no object, and the model requires one"])
        #expect(r.kept.map(\.reference) == [Self.ref(0, 2), Self.ref(1, 2), Self.ref(2, 2)])
        #expect(r.kept.last?.relationships == [[Self.ref(2, 2)], [Self.ref(0, 2)]])
        #expect(r.removed == 1)
    }

    @Test func theSameChainInTheOrderItNamesIsFoundInOneRead() throws {
        // C, B, A: each rejected before the objects that name it.
        let r = try Self.run([Self.chain[4], Self.chain[5], Self.chain[2], Self.chain[3], Self.chain[0], Self.chain[1]])
        #expect(r.reads == 2)
        #expect(r.rejected.count == 3 && r.kept.count == 3 && r.removed == 1)
        // Per entity, not per object: C2 naming C2 before C1 is rejected makes another read, which finds nothing new.
        #expect(try Self.run(Array(Self.chain.reversed())).reads == 3)
    }

    @Test func nothingToRejectIsOneReadToLookAndOneToGive() throws {
        let clean: [ObjectReadItem] = [Self.object(0, 2, [[Self.ref(1, 2)]]), Self.object(1, 2, [[Self.ref(2, 2)]]),
                                       Self.object(2, 2, [[Self.ref(2, 2)], []])]
        let r = try Self.run(clean)
        #expect(r.reads == 2 && r.kept.count == 3 && r.rejected.isEmpty && r.removed == 0)
        #expect(ObjectRequiredRelationships(ObjectModel(entities: [EntityDescription("A", attributes: [],
            relationships: [RelationshipDescription("b", to: "A"), RelationshipDescription("c", to: "A", toMany: true, isOptional: false)])])) == nil)
    }
}
