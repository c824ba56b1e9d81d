import Testing
import TripKit
import TripTestSupport

/// The migration context holds its trips encoded in byte chunks (`ObjectArena`); what goes in must
/// come out, in order, with its origin, through every operation.
@Suite("Compact trip storage")
struct CompactStorageTests {
    /// A seeded generator of arbitrary objects: any Unicode, empty and long strings, every value kind.
    struct Gen {
        var random: SplitMix64
        init(state: UInt64) { random = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { random.next() }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func string() -> String {
            let pool: [Character] = ["a", "Z", " ", "\"", ",", "\n", "\r\n", "é", "e\u{301}", "日", "🧳", "\u{0}", "\u{2028}"]
            let length = below(8) == 0 ? 300 + below(2000) : below(24)
            return String((0..<length).map { _ in pool[below(pool.count)] })
        }
        mutating func value() -> Value {
            switch below(6) {
            case 0: return .null
            case 1: return .date(Timestamp(milliseconds: Int64(bitPattern: next()) >> 8))
            case 2: return .bool(below(2) == 0)
            case 3: return .int(Int64(bitPattern: next()))
            default: return .string(string())
            }
        }
        mutating func object(depth: Int = 0) -> ModelObject {
            let attributes = (0..<(1 + below(5))).map { _ in value() }
            guard depth < 2 else { return ModelObject(attributes: attributes) }
            let items = (0..<below(6)).map { _ in object(depth: depth + 1) }
            let one: ModelObject? = below(2) == 0 ? nil : object(depth: depth + 1)
            return ModelObject(attributes: attributes, relationships: [.toMany(items), .toOne(one)])
        }
    }

    func origins(_ n: Int) -> [RecordOrigin] {
        (0..<n).map { i in
            RecordOrigin(source: i % 3 == 0 ? "a.json" : "dir/b.csv", record: i + 1,
                         line: i % 2 == 0 ? i * 7 : nil, column: i % 4 == 0 ? 3 : nil)
        }
    }

    @Test("objects and origins come back exactly, over many chunks", arguments: [1 as UInt64, 2, 3])
    func roundTrip(seed: UInt64) throws {
        var g = Gen(state: seed)
        // Enough bytes to span several 1 MiB chunks.
        let objects = (0..<3000).map { _ in g.object() }
        let context = MigrationContext(schema: TripSchemaV3.self, objects: objects, origins: origins(objects.count))
        #expect(context.count == objects.count)
        #expect(try context.objects == objects)
        #expect(try context.origins == origins(objects.count))
    }

    @Test("transform maps every object in order and keeps origins, freeing old chunks as it goes")
    func transform() throws {
        var g = Gen(state: 9)
        let objects = (0..<3000).map { _ in g.object() }
        let context = MigrationContext(schema: TripSchemaV3.self, objects: objects, origins: origins(objects.count))
        let change: (ModelObject) -> ModelObject = { o in
            var o = o
            o.attributes.append(.string("mapped"))
            o.attributes.swapAt(0, o.attributes.count - 1)
            return o
        }
        try context.transform(change)
        #expect(try context.objects == objects.map(change))
        #expect(try context.origins == origins(objects.count))
        // A second pass works on the new encoding.
        try context.transform { $0 }
        #expect(try context.objects == objects.map(change))
    }

    @Test("absorb appends another context's objects, origins and sources, and empties it")
    func absorb() throws {
        var g = Gen(state: 5)
        let a = (0..<50).map { _ in g.object() }, b = (0..<70).map { _ in g.object() }
        let ob = (0..<70).map { RecordOrigin(source: $0 % 2 == 0 ? "other.yaml" : "a.json", record: $0 + 1, line: $0) }
        let first = MigrationContext(schema: TripSchemaV3.self, objects: a, origins: origins(50))
        let second = MigrationContext(schema: TripSchemaV3.self, objects: b, origins: ob)
        try first.absorb(second)
        #expect(try first.objects == a + b)
        #expect(try first.origins == origins(50) + ob)
        #expect(second.count == 0)
    }

    @Test("the longest relationships are those of the kept trips only")
    func longest() throws {
        let trips = [
            object(TestTrip(name: "A", items: Array(repeating: ("t", "", false, false), count: 5))),
            object(TestTrip(name: "B", items: [("x", "", true, true)], accommodation: ("1 Main St", "Inn"))),
            object(TestTrip(name: "A", items: [("y", "", false, false)])),
        ]
        let context = MigrationContext(schema: TripSchemaV3.self, policy: .last, objects: trips)
        #expect(try context.longestRelationships() == [5, 1])
        try context.deduplicate("Trip", by: "name")
        #expect(try context.longestRelationships() == [1, 1])
    }

    @Test("names are equal when their bytes are: canonically equivalent spellings stay two trips, as in a store's UNIQUE index")
    func byteEquality() throws {
        let composed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
        #expect(composed == decomposed)  // Swift's String equality says these are one name
        let context = MigrationContext(schema: TripSchemaV3.self, policy: .merge,
                                       objects: [object(TestTrip(name: composed)), object(TestTrip(name: decomposed)),
                                                 object(TestTrip(name: composed))])
        try context.deduplicate("Trip", by: "name")
        #expect(context.count == 2)
        #expect(try context.ledger.count == 1)
        #expect(try context.objects.map { $0.attributes[0].stringValue!.unicodeScalars.count } == [4, 5])
    }

    @Test("merged bucket lists unite by title byte for byte, short lists and long ones alike",
          arguments: [(3, 4), (16, 16), (17, 16), (30, 30)])
    func uniteByBytes(earlier: Int, later: Int) throws {
        // Titles repeat across the two lists; "Caf\u{E9}" and "Cafe\u{301}" are two titles.
        func titles(_ n: Int, _ tag: String) -> [String] {
            (0..<n).map { i in i % 5 == 0 ? "Caf\u{E9}" : i % 5 == 1 ? "Cafe\u{301}" : "item \(i % 11)" }
        }
        var a = TestTrip(name: "T"), b = TestTrip(name: "T")
        a.items = titles(earlier, "a").enumerated().map { ($1, "a\($0)", false, false) }
        b.items = titles(later, "b").enumerated().map { ($1, "b\($0)", true, true) }
        let context = MigrationContext(schema: TripSchemaV3.self, policy: .merge, objects: [object(a), object(b)])
        try context.deduplicate("Trip", by: "name")
        #expect(context.count == 1)
        // The model: first-seen order of titles by their bytes, the later item of a title winning.
        var order: [[UInt8]] = [], last: [[UInt8]: String] = [:]
        for (title, details, _, _) in a.items + b.items {
            let key = Array(title.utf8)
            if last[key] == nil { order.append(key) }
            last[key] = details
        }
        guard case .toMany(let items) = try context.objects[0].relationships[0] else {
            Issue.record("the bucket list is not a to-many relationship"); return
        }
        #expect(items.map { Array($0.attributes[0].stringValue!.utf8) } == order)
        #expect(items.map { $0.attributes[1].stringValue! } == order.map { last[$0]! })
    }

    @Test("deduplicating many generated trips agrees with a dictionary of names, for every policy",
          arguments: [DeduplicationPolicy.merge, .last, .first])
    func agreesWithDictionary(policy: DeduplicationPolicy) throws {
        var g = Gen(state: 77)
        let names = (0..<400).map { _ in g.string() }
        let trips = (0..<4000).map { i -> ModelObject in
            var t = TestTrip(name: names[g.below(names.count)])
            t.destination = "d\(i)"
            t.items = (0..<g.below(4)).map { _ in ("item \(g.below(6))", "n\(i)", false, true) }
            return object(t)
        }
        let context = MigrationContext(schema: TripSchemaV3.self, policy: policy, objects: trips, origins: origins(trips.count))
        try context.deduplicate("Trip", by: "name")
        // The model: first-seen order of names, keyed by UTF-8 bytes.
        var order: [[UInt8]] = [], seen = Set<[UInt8]>()
        for t in trips {
            let key = Array(t.attributes[0].stringValue!.utf8)
            if seen.insert(key).inserted { order.append(key) }
        }
        #expect(try context.objects.map { Array($0.attributes[0].stringValue!.utf8) } == order)
        #expect(try context.count + context.ledger.count == trips.count)
        let byName = Dictionary(grouping: trips, by: { Array($0.attributes[0].stringValue!.utf8) })
        for (kept, key) in zip(try context.objects, order) {
            let group = byName[key]!
            switch policy {
            case .first: #expect(kept == group.first!)
            case .last: #expect(kept == group.last!)
            default:
                #expect(kept.attributes == group.last!.attributes)
                var titles: [Value] = []
                for o in group { for item in o.relationships[0].objects where !titles.contains(item.attributes[0]) { titles.append(item.attributes[0]) } }
                #expect(kept.relationships[0].objects.map { $0.attributes[0] } == titles)
            }
        }
    }
}
