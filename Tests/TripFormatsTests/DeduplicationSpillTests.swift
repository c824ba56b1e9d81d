import Foundation
import Testing
@testable import TripFormats
@testable import TripKit
import TripTestSupport

/// An app's plan's deduplication under a budget too small for its state (`SpillingDeduplicationState`
/// with `--memory-limit 1M`): it goes to a temporary database part way through the first pass, and
/// resolves every object exactly as the in-memory state does, under every policy, with tuples that are
/// equal in Swift but not byte for byte (NFC and NFD text, 0.0 and -0.0) and values equal to nothing (NaN).
@Suite("A plan's deduplication spilled to a temporary database")
struct DeduplicationSpillTests {
    static let model = ObjectModel(entities: [
        EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false),
                                               AttributeDescription("score", .double), AttributeDescription("notes", .string)],
                          relationships: [RelationshipDescription("links", to: "Item", toMany: true)]),
    ])
    static let deduplication = ObjectDeduplication(stage: 0, entityName: "Item", names: ["name", "score"], entity: 0,
                                                   attributes: [0, 1], version: "2.0.0")

    /// `count` items: names from a pool (with "café" written both ways late in the input, so that they
    /// meet after the spill), scores among 0.0, -0.0, NaN and a few others, links to any item.
    static func objects(_ count: Int) -> [ObjectRecord] {
        var rng = SplitMix64(seed: 11)
        return (1...count).map { i in
            let pool = i < count / 2 ? i : Int.random(in: 1..<(count / 2), using: &rng)
            let name = i > count - 50 ? (i % 2 == 0 ? "caf\u{E9}" : "cafe\u{301}") : "item number \(pool) of the pool"
            let score: ObjectValue = [.double(0.0), .double(-0.0), .double(.nan), .double(1.5), .null][i % 5]
            let notes: ObjectValue = i % 3 == 0 ? .null : .string("notes \(i)")
            let links = (0..<(i % 4)).map { _ in ObjectReference(entity: 0, key: Int64.random(in: 1...Int64(count), using: &rng)) }
            return ObjectRecord(entity: 0, key: Int64(i), attributes: [.string(name), score, notes], relationships: [links],
                                origin: RecordOrigin(source: "items.jsonl", record: i, line: i, column: 1))
        }
    }

    /// Both passes over `objects` with `state`: every outcome, as text (NaN compares unequal to itself).
    static func run(_ objects: [ObjectRecord], _ policy: DeduplicationPolicy, state: (any ObjectDeduplicationState)?) throws -> [String] {
        let resolver = ObjectDeduplicator([deduplication], model: model, policy: policy, state: state)
        for o in objects { try resolver.note(o) }
        var counts = ObjectMigration.Counts()
        return try objects.map { String(describing: try resolver.resolve($0, counts: &counts)) } + [String(describing: counts)]
    }

    @Test("merge, first and last: the same outcomes in memory and spilled, and the spill happened", arguments: [
        DeduplicationPolicy.merge, .first, .last,
    ])
    func sameOutcomes(policy: DeduplicationPolicy) throws {
        let objects = Self.objects(6000)
        let memory = try Self.run(objects, policy, state: nil)
        let budget = SpillBudget(limit: 1 << 20, directory: NSTemporaryDirectory())
        let spilling = SpillingDeduplicationState(deduplications: 1, budget: budget)
        let spilled = try Self.run(objects, policy, state: spilling)
        #expect(spilling.spilled && spilling.spilledEntries > 3000 && spilling.spilledBytes > 0)
        #expect(memory.count == spilled.count)
        for (i, (a, b)) in zip(memory, spilled).enumerated() where a != b {
            Issue.record("object \(i + 1): \(a) / \(b)")
            break
        }
        // The set-aside records, NFC and NFD "café" merged (or dropped) into one another after the spill.
        #expect(memory.filter { $0.contains("setAside") }.count > 500)
        #expect(memory.contains { $0.contains("caf") && $0.contains("setAside") })
    }

    @Test("fail: the first duplicate, met after the spill, is named as in memory")
    func failAfterSpill() throws {
        var objects = Self.objects(6000).map { o in
            var o = o
            o.attributes[0] = .string("unique \(o.key)")
            return o
        }
        objects[5500].attributes = objects[4000].attributes
        objects[5800].attributes = objects[10].attributes
        func message(_ state: (any ObjectDeduplicationState)?) -> String {
            do { _ = try Self.run(objects, .fail, state: state); return "" } catch { return "\(error)" }
        }
        let spilling = SpillingDeduplicationState(deduplications: 1, budget: SpillBudget(limit: 1 << 20, directory: NSTemporaryDirectory()))
        let spilled = message(spilling)
        #expect(spilling.spilled)
        #expect(spilled == message(nil))
        #expect(spilled.hasPrefix("items.jsonl:5501:1: a second Item with name \"unique 4001\""), "\(spilled)")
    }

    @Test("a --temp-dir where no file can be made is the trips' spill's error (cannot create, 73), before any output")
    func unwritableDirectory() throws {
        let spilling = SpillingDeduplicationState(deduplications: 1, budget: SpillBudget(limit: 1 << 20, directory: "/proc"))
        #expect { _ = try Self.run(Self.objects(6000), .merge, state: spilling) } throws: { error in
            guard let e = error as? TripError else { return false }
            return e.kind == .cantCreate && e.message.hasPrefix("/proc: cannot create")
        }
    }
}
