import Testing
@testable import TripKit

/// `ObjectRelationships`: an object's lists of references in one buffer, read and changed as lists.
@Suite struct ObjectRelationshipsTests {
    static func r(_ entity: Int, _ key: Int64) -> ObjectReference { ObjectReference(entity: entity, key: key) }
    static let lists: [[ObjectReference]] = [[r(0, 1)], [], [r(1, 2), r(1, 3), r(2, 4)], []]

    @Test func readsTheListsItWasMadeOf() {
        let rels = ObjectRelationships(Self.lists)
        #expect(rels.count == 4 && rels.lists == Self.lists)
        #expect(rels[2].count == 3 && rels[2][1] == Self.r(1, 3) && rels[2].first == Self.r(1, 2) && rels[2].last == Self.r(2, 4))
        #expect(rels[1].isEmpty && rels[3].isEmpty && Array(rels[0]) == [Self.r(0, 1)])
        #expect(Array(rels.allReferences) == Self.lists.flatMap { $0 })
        #expect(rels.allReferences { $0.entity < 3 } && !rels.allReferences { $0.entity < 2 } && ObjectRelationships().allReferences { _ in false })
        #expect(ObjectRelationships().isEmpty && ObjectRelationships([[ObjectReference]]()).count == 0)
        #expect(ObjectRelationships(empty: 3).lists == [[], [], []])
        // A list read is indexed from zero whatever its place in the buffer.
        #expect(rels[2].indices == 0..<3 && rels[2].map(\.key) == [2, 3, 4])
    }

    @Test func equalListsAreEqualValuesWithEqualHashes() {
        var a = ObjectRelationships(Self.lists)
        let b: ObjectRelationships = [[Self.r(0, 1)], [], [Self.r(1, 2), Self.r(1, 3), Self.r(2, 4)], []]
        #expect(a == b && a.hashValue == b.hashValue && a == Self.lists)
        a[1] = [Self.r(0, 9)]
        #expect(a != b && a.lists == [[Self.r(0, 1)], [Self.r(0, 9)], [Self.r(1, 2), Self.r(1, 3), Self.r(2, 4)], []])
        a[1] = []
        #expect(a == b && a.hashValue == b.hashValue)
        // [[]] and [] differ: one empty relationship is not none.
        #expect(ObjectRelationships([[]]) != ObjectRelationships())
    }

    @Test func replacingAListMovesTheOnesAfterIt() {
        var rels = ObjectRelationships(Self.lists)
        rels.replace(0, with: [Self.r(0, 5), Self.r(0, 6)])
        #expect(rels.lists == [[Self.r(0, 5), Self.r(0, 6)], [], [Self.r(1, 2), Self.r(1, 3), Self.r(2, 4)], []])
        rels.replace(2, with: [Self.r(1, 7)])
        rels.replace(3, with: [Self.r(3, 8)])
        #expect(rels.lists == [[Self.r(0, 5), Self.r(0, 6)], [], [Self.r(1, 7)], [Self.r(3, 8)]])
        let copy = rels
        rels.replace(0, with: [])
        #expect(copy[0].count == 2 && rels[0].isEmpty && rels[3] == [Self.r(3, 8)])
    }

    @Test func resizedRemovedAndAppended() {
        var rels = ObjectRelationships(Self.lists)
        rels.resize(to: 2)
        #expect(rels.lists == [[Self.r(0, 1)], []])
        rels.resize(to: 4)
        #expect(rels.lists == [[Self.r(0, 1)], [], [], []])
        rels.removeLast()
        rels.appendEmpty()
        rels[3] = [Self.r(4, 4)]
        #expect(rels.lists == [[Self.r(0, 1)], [], [], [Self.r(4, 4)]])
        rels.resize(to: 0)
        #expect(rels.isEmpty && rels == ObjectRelationships())
    }

    @Test func referencesUpdatedAndRemovedInPlace() {
        var rels = ObjectRelationships(Self.lists)
        let removed = rels.updateReferences { $0.entity == 1 ? nil : ObjectReference(entity: $0.entity + 10, key: $0.key) }
        #expect(removed == 2 && rels.lists == [[Self.r(10, 1)], [], [Self.r(12, 4)], []])
        #expect(rels == ObjectRelationships([[Self.r(10, 1)], [], [Self.r(12, 4)], []]))
        var none = ObjectRelationships()
        #expect(none.updateReferences { $0 } == 0 && none.isEmpty)
    }

    @Test func filledInOrderReusingItsRoom() {
        var rels = ObjectRelationships(Self.lists)
        rels.reset(count: 3)
        #expect(rels.lists == [[], [], []])
        rels.append(Self.r(0, 1), to: 0)
        rels.append(Self.r(0, 2), to: 0)
        rels.append(Self.r(2, 3), to: 2)
        #expect(rels.lists == [[Self.r(0, 1), Self.r(0, 2)], [], [Self.r(2, 3)]])
        #expect(rels == ObjectRelationships([[Self.r(0, 1), Self.r(0, 2)], [], [Self.r(2, 3)]]))
    }

    @Test func madeFromSpansOfGatheredReferences() {
        // References gathered in the order members came: list 2's first, then list 0's.
        let gathered = [Self.r(1, 2), Self.r(1, 3), Self.r(0, 1)]
        let spans = [2, 3, 0, 0, 0, 2, 3, 3]
        let rels = gathered.withUnsafeBufferPointer { g in spans.withUnsafeBufferPointer { ObjectRelationships(references: g, spans: $0) } }
        #expect(rels.lists == [[Self.r(0, 1)], [], [Self.r(1, 2), Self.r(1, 3)], []])
        #expect(rels == ObjectRelationships(rels.lists))
        let none = gathered.withUnsafeBufferPointer { g in [Int]().withUnsafeBufferPointer { ObjectRelationships(references: g, spans: $0) } }
        #expect(none.isEmpty)
    }
}
