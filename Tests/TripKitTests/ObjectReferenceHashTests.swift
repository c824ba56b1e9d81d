import Testing
@testable import TripKit

/// References are placed in a `Dictionary` or `Set` by a hash of their own (`_rawHashValue(seed:)`,
/// one word mixed rather than a SipHash of two): each table still finds each reference and only it,
/// and keys that differ in a few bits (dense, or strided by a power of two) still spread over the buckets.
@Suite struct ObjectReferenceHashTests {
    static let keys: [Int64] = Array(1...3000) + [0, -1, -2, .min, .max, .max - 1, 1 << 32, (1 << 32) + 1, 1 << 62]
        + (1...500).map { Int64($0) << 20 }

    @Test("a Set and a Dictionary of references find each one and only it: keys near and far, of one entity and of several")
    func tables() {
        let references = (0..<4).flatMap { e in Self.keys.map { ObjectReference(entity: e, key: $0) } }
        #expect(Set(references).count == references.count)
        var numbers: [ObjectReference: Int] = [:]
        for (i, r) in references.enumerated() { numbers[r] = i }
        #expect(numbers.count == references.count)
        #expect(references.enumerated().allSatisfy { numbers[$0.element] == $0.offset })
        #expect(numbers[ObjectReference(entity: 4, key: 1)] == nil && numbers[ObjectReference(entity: 0, key: 3001)] == nil)
        #expect(ObjectReference(entity: 2, key: 7).hashValue == ObjectReference(entity: 2, key: 7).hashValue)
    }

    @Test("dense keys, and keys strided by 2^20, spread over a table's buckets", arguments: [0, 1, 987_654_321])
    func spread(seed: Int) {
        let mask = (1 << 13) - 1
        for keys in [(1...8192).map { Int64($0) }, (1...8192).map { Int64($0) << 20 }] {
            var buckets = [Int](repeating: 0, count: mask + 1)
            for k in keys { buckets[ObjectReference(entity: 1, key: k)._rawHashValue(seed: seed) & mask] += 1 }
            // 8,192 in 8,192 buckets at random: rarely more than 8 in one.
            #expect(buckets.max()! <= 12)
            #expect(buckets.filter { $0 == 0 }.count < 4000)
        }
    }
}
