import Testing
import TripFormats
import TripKit
import TripTestSupport

/// Counting repeated values under a budget too small for them gives the counts of a dictionary
/// holding them all: the values go to partition files and each is counted alone.
@Suite("Repeated values counted out of core")
struct RepeatedValuesTests {
    /// Names from a pool where some occur many times, most once or twice: ASCII, non-ASCII, the
    /// empty name, and a name in two canonically equivalent spellings (NFC and NFD).
    static func names(seed: UInt64, count: Int) -> [String] {
        var rng = SplitMix64(seed: seed)
        let pieces = ["Trip", "é", "e\u{301}", "Tromsø", "東京", "🇫🇷", " ", "\"", "a long enough name to live on the heap"]
        return (0..<count).map { _ in
            switch rng.next() % 10 {
            case 0: return ""
            case 1: return "often \(rng.next() % 7)"
            case 2: return "Caf\u{E9}"
            case 3: return "Cafe\u{301}"
            default:
                return pieces[Int(rng.next() % UInt64(pieces.count))] + " \(rng.next() % UInt64(count / 8))"
            }
        }
    }

    /// The count a dictionary of every value gives.
    static func reference<V: Hashable>(_ values: [V]) -> Int {
        var counts: [V: Int] = [:]
        for v in values { counts[v, default: 0] += 1 }
        return counts.values.count { $0 > 1 }
    }

    @Test("strings: the same count with a budget of a few KiB (spilled, partitions of partitions) as in memory",
          arguments: [1 as UInt64, 2, 3])
    func strings(seed: UInt64) throws {
        let scratch = ScratchDirectory()
        let names = Self.names(seed: seed, count: 20_000)
        let expected = Self.reference(names)
        #expect(expected > 1_000 && Set(names).count > 5_000)
        for limit in [4 << 10, 64 << 10, 1 << 20, 1 << 30] {
            let counter = RepeatedValues<String>(budget: SpillBudget(limit: limit, directory: scratch.path))
            for n in names { try counter.add(n) }
            #expect(counter.isSpilled == (limit < 1 << 30), "\(limit)")
            #expect(try counter.repeatedCount() == expected, "\(limit)")
            // Only a counter that spilled says it wrote anything, and it wrote every value at least once.
            if limit < 1 << 30 {
                #expect(counter.spilledValues >= Set(names).count && counter.spilledBytes > 0, "\(limit)")
            } else {
                #expect(counter.spilledValues == 0 && counter.spilledBytes == 0)
            }
            #expect(scratch.names().isEmpty, "spill files have no names")
        }
    }

    @Test("strings compare as Swift compares them: canonically equivalent spellings are one name")
    func canonicalEquivalence() throws {
        let scratch = ScratchDirectory()
        let counter = RepeatedValues<String>(budget: SpillBudget(limit: 2 << 10, directory: scratch.path))
        for i in 0..<500 { try counter.add("unique \(i)") }
        try counter.add("Caf\u{E9}")
        try counter.add("Cafe\u{301}")
        try counter.add("")
        try counter.add("")
        #expect(counter.isSpilled)
        #expect(try counter.repeatedCount() == 2)
    }

    @Test("names (what detect counts) compare byte for byte, as deduplication does, spilled or not", arguments: [2 << 10, 1 << 30])
    func names(limit: Int) throws {
        let scratch = ScratchDirectory()
        let counter = RepeatedValues<NameBytes>(budget: SpillBudget(limit: limit, directory: scratch.path))
        for i in 0..<500 { try counter.add(name: "unique \(i)") }
        for name in ["Caf\u{E9}", "Cafe\u{301}", "", "", "Oslo", "Oslo"] { try counter.add(name: name) }
        #expect(counter.isSpilled == (limit == 2 << 10))
        #expect(try counter.repeatedNames() == 2)
    }

    @Test("bytes compare byte for byte, spilled or not", arguments: [1 << 10, 1 << 30])
    func bytes(limit: Int) throws {
        let scratch = ScratchDirectory()
        let values = Self.names(seed: 9, count: 5_000).map { Array($0.utf8) } + [[], [], [0, 255], [0, 255]]
        let counter = RepeatedValues<[UInt8]>(budget: SpillBudget(limit: limit, directory: scratch.path))
        for v in values { try counter.add(v) }
        #expect(counter.isSpilled == (limit == 1 << 10))
        // Café's two spellings are two values here: more distinct values than as strings.
        #expect(try counter.repeatedCount() == Self.reference(values))
    }

    @Test("nothing added: no value repeated, nothing spilled")
    func empty() throws {
        let counter = RepeatedValues<String>(budget: SpillBudget(limit: 1 << 10))
        #expect(try counter.repeatedCount() == 0)
        #expect(!counter.isSpilled)
    }

    @Test("a directory that cannot take the files is an I/O error naming it")
    func unwritable() throws {
        let counter = RepeatedValues<String>(budget: SpillBudget(limit: 1 << 10, directory: "/no/such/dir"))
        let error = #expect(throws: TripError.self) {
            for i in 0..<1_000 { try counter.add("name \(i)") }
        }
        #expect(error?.message.contains("/no/such/dir") == true, "\(String(describing: error))")
    }
}
