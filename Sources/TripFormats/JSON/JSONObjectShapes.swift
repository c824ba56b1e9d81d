/// What each object of an entity writes in JSON or JSON Lines, laid out once per run in memory of
/// its own: every entity's head (`"Name": [` or `{"@entity": "Name"`) and member keys (`"name": `)
/// back to back in one block of bytes, and per entity the spans of those keys, the positions of the
/// attributes written and, per relationship, whether it is to-many and written by value. The writer
/// reads them through pointers per object: no array is retained and released per member, as
/// `[[UInt8]]` tables were (about a fifth of the writer's time at 1M objects).
final class JSONObjectShapes {
    /// One entity's share of the tables (positions in `spans` and `ints`).
    struct Entity {
        var head: Range<Int>
        var firstMember: Int
        var writesKey: Bool
        var firstSlot: Int
        var slotCount: Int
        var firstRelationship: Int
        var relationshipCount: Int
    }

    let entities: UnsafeMutableBufferPointer<Entity>
    /// Every head and member key.
    let bytes: UnsafeMutableBufferPointer<UInt8>
    /// Per member key (`@key`, attributes, relationships, in the entity's order): its range in `bytes`.
    let spans: UnsafeMutableBufferPointer<Range<Int>>
    /// The attribute slots of every entity, then per relationship 1 for to-many plus 2 for by value.
    let ints: UnsafeMutableBufferPointer<Int>

    /// The shapes of `layout`'s entities; `heads[e]` and `keys[e]` the bytes `JSONObjectWriter` works out.
    init(_ layout: ObjectGraphLayout, heads: [[UInt8]], keys: [[[UInt8]]], slots: [[Int]]) {
        var allBytes: [UInt8] = [], allSpans: [Range<Int>] = [], allInts: [Int] = [], all: [Entity] = []
        for (e, entity) in layout.entities.enumerated() {
            let head = allBytes.count..<(allBytes.count + heads[e].count)
            allBytes += heads[e]
            let firstMember = allSpans.count
            for key in keys[e] {
                allSpans.append(allBytes.count..<(allBytes.count + key.count))
                allBytes += key
            }
            let firstSlot = allInts.count
            allInts += slots[e]
            let firstRelationship = allInts.count
            allInts += entity.relationships.map { ($0.isToMany ? 1 : 0) + ($0.byValue ? 2 : 0) }
            all.append(Entity(head: head, firstMember: firstMember, writesKey: entity.writesKey, firstSlot: firstSlot,
                              slotCount: slots[e].count, firstRelationship: firstRelationship,
                              relationshipCount: entity.relationships.count))
        }
        func copy<T>(_ array: [T]) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: max(array.count, 1))
            _ = buffer.initialize(from: array)
            return buffer
        }
        entities = copy(all); bytes = copy(allBytes); spans = copy(allSpans); ints = copy(allInts)
    }

    deinit {
        entities.deallocate(); bytes.deallocate(); spans.deallocate(); ints.deallocate()
    }

    /// The bytes of `range` in `bytes`.
    @inline(__always)
    func text(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes.baseAddress! + range.lowerBound, count: range.count)
    }
}
