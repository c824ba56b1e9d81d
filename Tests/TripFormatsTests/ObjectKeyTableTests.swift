import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// `ObjectKeyTable` keeps a space's numbers 0..<n in an array while they come about in order, the
/// others in a dictionary, and all of them in a temporary database past its budget. Whatever the
/// numbers (in order, with gaps, far out, negative, repeated) and values (`Int64.min`, the array's
/// mark for none, included), it answers as one dictionary does, before and after it spills.
@Suite struct ObjectKeyTableTests {
    /// A reproducible run of updates: (space, number, value).
    static func updates(seed: UInt64) -> [(Int, Int64, Int64)] {
        var random = SeededRandom(seed)
        var out: [(Int, Int64, Int64)] = []
        var next: [Int64] = [1, 1, 1, 1]
        for _ in 0..<30_000 {
            let space = Int(random.next() % 4)
            let value = random.next() % 50 == 0 ? Int64.min : Int64(random.next() % 5)
            let number: Int64
            switch random.next() % 20 {
            case 0: number = -Int64(random.next() % 1_000)                         // negative
            case 1: number = Int64(random.next() % 1 << 40)                        // far out
            case 2: number = Int64(random.next() % UInt64(max(next[space], 1)))   // repeated or a gap filled
            case 3: next[space] += Int64(random.next() % 10); number = next[space] // a gap
            default: number = next[space]; next[space] += 1                         // in order
            }
            out.append((space, number, value))
        }
        // The largest keys a file may give (`Int64.max` once overflowed the array's growth).
        return out + [(0, Int64.max, 1), (1, Int64.max - 1, 2), (2, 1 << 40, 3), (3, (1 << 40) - 1, 4), (0, 4095, 2)]
    }

    @Test("the same answers as a dictionary, in memory and spilled", arguments: [1 as UInt64, 2, 3])
    func likeADictionary(seed: UInt64) throws {
        let scratch = ScratchDirectory()
        let updates = Self.updates(seed: seed)
        for budget in [nil, SpillBudget(limit: 256 << 10, directory: scratch.path)] {
            let table = ObjectKeyTable("the test's keys", budget: budget)
            var reference: [Int: [Int64: Int64]] = [:]
            for (i, (space, number, value)) in updates.enumerated() {
                let had = reference[space, default: [:]].updateValue(value, forKey: number) != nil
                #expect(try table.update(space, number, value) == had, "update \(i): \(space) \(number) \(value)")
                if i % 97 == 0 {
                    #expect(try table.value(space, number) == value)
                    #expect(try table.value(space, number + 1) == reference[space]?[number + 1], "\(space) \(number + 1)")
                }
            }
            #expect(table.spilled == (budget != nil), "the budget of 128 KiB is passed")
            for (space, values) in reference {
                for (number, value) in values { #expect(try table.value(space, number) == value, "\(space) \(number)") }
            }
            // Numbers never given: in the array's range, past it, negative, another space.
            for number in [0, 3, 1 << 20, -5, Int64.max, Int64.min] as [Int64] {
                #expect(try table.value(0, number) == reference[0]?[number], "\(number)")
            }
            #expect(try table.value(9, 1) == nil)
            #expect(!table.isEmpty)
        }
    }

    @Test("keys 1, 2, … are counted at 16 bytes each, and spill with the rest")
    func inOrder() throws {
        let scratch = ScratchDirectory()
        // 40,000 keys at 16 bytes are 640 KiB: past a budget of 1 MiB's half, under 4 MiB's.
        for (limit, spills) in [(1 << 20, true), (4 << 20, false)] {
            let table = ObjectKeyTable("the test's keys", budget: SpillBudget(limit: limit, directory: scratch.path))
            for k in 1...40_000 as ClosedRange<Int64> { #expect(try !table.update(0, k, k % 3)) }
            #expect(table.spilled == spills, "\(limit)")
            #expect(try table.update(0, 7, 2))
            #expect(try table.value(0, 7) == 2 && table.value(0, 8) == 2 && table.value(0, 40_001) == nil && table.value(0, 0) == nil)
        }
    }

    @Test("a sorted list space reads in reference order, in memory and spilled before or after the sort; another keeps the order appended")
    func sortedLists() throws {
        let scratch = ScratchDirectory()
        var random = SeededRandom(7)
        // 20,000 references of two entities appended to 200 owners' lists in spaces 0 and 1; space 1 is sorted.
        let appends = (0..<20_000).map { _ in
            (Int(random.next() % 2), ObjectReference(entity: 0, key: Int64(random.next() % 200)),
             ObjectReference(entity: Int(random.next() % 2), key: Int64(random.next() % 100_000)))
        }
        var expected: [[ObjectReference: [ObjectReference]]] = [[:], [:]]
        for (space, owner, reference) in appends { expected[space][owner, default: []].append(reference) }
        expected[1] = expected[1].mapValues { $0.sorted() }
        // In memory; spilled while the lists are appended (256 KiB); spilled after the sort, by numbers noted then (4 MiB).
        for limit in [nil, 256 << 10, 4 << 20] as [Int?] {
            let table = ObjectKeyTable("the test's keys", budget: limit.map { SpillBudget(limit: $0, directory: scratch.path) })
            for (space, owner, reference) in appends { try table.append(space, owner, reference) }
            #expect(table.spilled == (limit == 256 << 10))
            table.sortLists(1)
            if limit == 4 << 20 {
                for k in 1...60_000 as ClosedRange<Int64> { try table.update(2, k * 1_000_003, k) }
                #expect(table.spilled)
            }
            for space in 0..<2 {
                for (owner, list) in expected[space] { #expect(try table.references(space, owner) == list, "\(String(describing: limit)) \(space) \(owner)") }
            }
            #expect(try table.references(1, ObjectReference(entity: 0, key: 200)) == nil)
        }
    }
}

/// A xorshift generator: the same numbers for a seed on every machine.
struct SeededRandom {
    private var state: UInt64
    init(_ seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
