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

    /// A run's holdings do not keep what their readers let go of (a required relationship's reread,
    /// an append's store side make new ones per read): a state or an index of keys that ended gives its
    /// share of the budget back then, and is still named in the summary's parts as spilled.
    @Test("a state and an index let go of before the run's end give the budget back and are still named as spilled, in one order")
    func endedHoldingsGiveTheBudgetBack() throws {
        let budget = SpillBudget(limit: 1 << 20, directory: NSTemporaryDirectory())
        let holdings = SpillingObjectHoldings(budget: budget)
        let before = budget.held
        func fill(_ keys: ObjectKeyTable) throws {
            for i in 0..<200_000 { try keys.update(0, Int64(i) * 7919 % 1_000_003, Int64(i)) }
        }
        do {
            let state = holdings.make(1)
            try withExtendedLifetime(state) {
                _ = try Self.run(Self.objects(6000), .merge, state: state)
                #expect(holdings.made.count == 1 && holdings.made.allSatisfy(\.spilled))
                #expect(budget.held > before)
            }
        }
        #expect(holdings.made.isEmpty && budget.held == before)
        do {
            let keys = holdings.keys()
            try withExtendedLifetime(keys) {
                try fill(keys)
                #expect(keys.spilled && holdings.indexes.count == 1 && budget.held > before)
            }
        }
        #expect(holdings.indexes.isEmpty && budget.held == before)
        let parts = holdings.spilledParts
        // The summary's order (indexes, then states), not the order they ended in.
        #expect(parts.map(\.part) == ["the reader's index of keys", "the plan's deduplication"])
        #expect(parts.allSatisfy { $0.entries > 3000 && $0.bytes > 0 })
        // One still held is named once, as it is now, in its place among those made.
        let live = holdings.keys()
        try withExtendedLifetime(live) {
            try fill(live)
            #expect(holdings.spilledParts.map(\.part) == ["the reader's index of keys", "the reader's index of keys", "the plan's deduplication"])
        }
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

    /// Pass 1 asks each object's tuple once (`group(_:_:orAdd:origin:)`), where it asked `group`,
    /// then `add`: the same groups, numbered alike, in memory, spilling, and after the spill.
    @Test("a tuple's group found, or a group of one added, in one call: as group then add, in memory and spilled")
    func groupOrAdd() throws {
        let objects = Self.objects(6000)
        let spilling = SpillingDeduplicationState(deduplications: 2, budget: SpillBudget(limit: 1 << 20, directory: NSTemporaryDirectory()))
        for state in [InMemoryDeduplicationState(deduplications: 2), spilling] as [any ObjectDeduplicationState] {
            // `[ObjectValue]`'s `==` is the states' (NaN equal to nothing, NFC and NFD text equal).
            var expected: [[[ObjectValue]: Int]] = [[:], [:]]
            var first: [ObjectRecord] = []
            for o in objects {
                let d = Int(o.key % 2), values = Array(o.attributes[0...1])
                let found = try state.group(d, values, orAdd: o.reference, origin: o.origin)
                #expect(found == expected[d][values], "\(o.origin)")
                if expected[d][values] == nil {
                    expected[d][values] = first.count
                    first.append(o)
                }
            }
            #expect(first.count > 3000 && first.count < objects.count)
            for (g, o) in first.enumerated() {
                let group = try state.group(at: g)
                #expect(group.survivor == o.reference && group.origin == o.origin && group.deduplication == Int(o.key % 2))
                #expect(try state.survivor(ofGroup: g) == o.reference)
                if !group.values.contains(where: { if case .double(let x) = $0 { x.isNaN } else { false } }) {
                    #expect(try state.group(group.deduplication, Array(o.attributes[0...1])) == g)
                }
            }
        }
        #expect(spilling.spilled)
    }

    /// A deduplication of one attribute asks with its value alone (`group(_:one:orAdd:origin:)`, no
    /// array per object), after room was made for the groups to come (`expect`): the same groups,
    /// numbered alike, as the tuple of that value, in memory, spilling, and after the spill.
    @Test("one value's group found or added, with room made first: as the tuple of that value, in memory and spilled")
    func oneValueGroupOrAdd() throws {
        let objects = Self.objects(6000)
        let spilling = SpillingDeduplicationState(deduplications: 1, budget: SpillBudget(limit: 1 << 20, directory: NSTemporaryDirectory()))
        for state in [InMemoryDeduplicationState(deduplications: 1), spilling] as [any ObjectDeduplicationState] {
            state.expect(0, objects: objects.count)
            state.expect(7, objects: 10)
            var expected: [[ObjectValue]: Int] = [:]
            var first: [ObjectRecord] = []
            for o in objects {
                let value = o.attributes[0]
                #expect(try state.group(0, one: value, orAdd: o.reference, origin: o.origin) == expected[[value]], "\(o.origin)")
                if expected[[value]] == nil {
                    expected[[value]] = first.count
                    first.append(o)
                }
            }
            #expect(first.count > 1000 && first.count < objects.count)
            for (g, o) in first.enumerated() {
                let group = try state.group(at: g)
                let found = try state.group(0, [o.attributes[0]])
                #expect(group.survivor == o.reference && group.values == [o.attributes[0]] && found == g)
            }
        }
        #expect(spilling.spilled)
    }

    /// The room states reserve ahead of their groups comes from one allowance for the run, an eighth
    /// of its share, however many deduplications and states ask; it is not counted as held.
    @Test("room reserved ahead: one allowance for the run, an eighth of its share, not counted as held")
    func roomIsOneAllowancePerRun() {
        let budget = SpillBudget(limit: 1 << 20, directory: NSTemporaryDirectory())
        let share = budget.tripBytes / 8
        #expect(budget.room(share / 2) == share / 2)
        #expect(budget.room(share) == share - share / 2)
        #expect(budget.room(1) == 0 && budget.room(-5) == 0 && budget.held == 0)
        let states = (0..<3).map { _ in SpillingDeduplicationState(deduplications: 4, budget: budget) }
        for state in states { for d in 0..<4 { state.expect(d, objects: 1 << 30) } }
        #expect(budget.room(1) == 0 && budget.held == 0)
    }

    /// Under `first` and `last`, when both sides are written (`cascades`), pass 1 notes per object its
    /// owners and the deduplicated objects that name it (`OwnershipList`): in the state, under the
    /// budget. Recipes (unique by name) own their ingredients (cascade) and name a chef, in an order
    /// where children come before and after their owners.
    static let owning = ObjectModel(entities: [
        EntityDescription("Recipe", attributes: [AttributeDescription("name", .string, isOptional: false)],
                          relationships: [RelationshipDescription("ingredients", to: "Ingredient", inverse: "recipe", toMany: true, deleteRule: .cascade),
                                          RelationshipDescription("chef", to: "Chef", inverse: "recipes")]),
        EntityDescription("Ingredient", attributes: [AttributeDescription("label", .string)],
                          relationships: [RelationshipDescription("recipe", to: "Recipe", inverse: "ingredients")]),
        EntityDescription("Chef", attributes: [AttributeDescription("name", .string)],
                          relationships: [RelationshipDescription("recipes", to: "Recipe", inverse: "chef", toMany: true)]),
    ])

    static func owningObjects(_ recipes: Int) -> [ObjectRecord] {
        var rng = SplitMix64(seed: 5)
        var out: [ObjectRecord] = []
        let chefs = 40
        var byChef = Array(repeating: [ObjectReference](), count: chefs)
        for i in 1...recipes {
            let name = "recipe \(i < recipes / 2 ? i : Int.random(in: 1..<(recipes / 2), using: &rng)) of the pool"
            let chef = Int.random(in: 0..<chefs, using: &rng)
            let keys = (0..<2).map { Int64(2 * i + $0) }
            let recipe = ObjectRecord(entity: 0, key: Int64(i), attributes: [.string(name)],
                                      relationships: [keys.map { ObjectReference(entity: 1, key: $0) }, [ObjectReference(entity: 2, key: Int64(chef + 1))]],
                                      origin: RecordOrigin(source: "recipes.jsonl", record: i, line: i, column: 1))
            let children = keys.map { k in
                ObjectRecord(entity: 1, key: k, attributes: [.string("ingredient \(k)")], relationships: [[ObjectReference(entity: 0, key: Int64(i))]],
                             origin: RecordOrigin(source: "recipes.jsonl", record: recipes + Int(k), line: recipes + Int(k), column: 1))
            }
            // One child before its recipe, one after.
            out += [children[0], recipe, children[1]]
            byChef[chef].append(recipe.reference)
        }
        return out + byChef.enumerated().map { c, list in
            ObjectRecord(entity: 2, key: Int64(c + 1), attributes: [.string("chef \(c)")], relationships: [list],
                         origin: RecordOrigin(source: "recipes.jsonl", record: 4 * recipes + c, line: 4 * recipes + c, column: 1))
        }
    }

    @Test("first and last with owned objects: the same outcomes in memory and spilled, the ownership notes spilled too",
          arguments: [DeduplicationPolicy.first, .last])
    func ownershipSpilled(policy: DeduplicationPolicy) throws {
        let objects = Self.owningObjects(3000)
        let deduplication = ObjectDeduplication(stage: 0, entityName: "Recipe", names: ["name"], entity: 0, attributes: [0], version: "2.0.0")
        func run(_ state: (any ObjectDeduplicationState)?) throws -> [String] {
            let resolver = ObjectDeduplicator([deduplication], model: Self.owning, policy: policy, state: state, cascades: true)
            for o in objects { try resolver.note(o) }
            var counts = ObjectMigration.Counts()
            return try objects.map { String(describing: try resolver.resolve($0, counts: &counts)) } + [String(describing: counts)]
        }
        let memory = try run(nil)
        let state = InMemoryDeduplicationState(deduplications: 1)
        _ = try run(state)
        // Every ingredient's owner noted both ways, every recipe named by its chef.
        #expect(state.lists.count(in: OwnershipList.ownersListing.rawValue) == 6000 && state.lists.count(in: OwnershipList.ownersNamed.rawValue) == 6000)
        let spilling = SpillingDeduplicationState(deduplications: 1, budget: SpillBudget(limit: 1 << 20, directory: NSTemporaryDirectory()))
        let spilled = try run(spilling)
        #expect(spilling.spilled && spilling.spilledEntries > 12_000)
        #expect(memory == spilled)
        // Dropped duplicates' ingredients go with them, references to them are removed.
        #expect(memory.filter { $0.contains("owned (a relationship whose delete rule is cascade)") }.count > 1000)
        #expect(memory.last!.contains("referencesRemoved: ") && !memory.last!.contains("referencesRemoved: 0"))
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
