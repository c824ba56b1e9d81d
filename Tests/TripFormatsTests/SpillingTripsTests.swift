import Testing
import TripFormats
import TripKit
import TripTestSupport

/// A holding that spills gives the pipeline's output, accounting and messages, byte for byte, whether
/// its trips stay in memory or go to temporary files: the same runs with a budget too small for
/// anything (every holding spills, deduplication makes dozens of partitions) and in memory.
@Suite("Trips spilled to temporary files")
struct SpillingTripsTests {
    final class Collector: RecordWriter {
        var objects: [ModelObject] = []
        var shape: OutputShape?
        var needsShape: Bool { true }
        func expect(_ shape: OutputShape) { self.shape = shape }
        func write(_ object: ModelObject) throws { objects.append(object) }
        func finish() throws {}
    }

    /// Inputs of 1.0.0 (deduplicated in their own stage, then across) and 3.0.0 trips, names from a
    /// small pool (many duplicates), some records rejected.
    func inputs(seed: UInt64, trips: Int) -> [PipelineInput] {
        var rng = SplitMix64(seed: seed)
        return (0..<3).map { n in
            let schema: any VersionedSchema.Type = n == 1 ? TripSchemaV3.self : TripSchemaV1.self
            var arbitrary = ArbitraryTrips(seed: seed &+ UInt64(n), text: .init(pieces: ["a", "é", " ", "\""]), schema: schema)
            var items: [ReadItem] = []
            for i in 0..<Int(rng.next() % UInt64(trips)) {
                let origin = RecordOrigin(source: "in\(n).json", record: i + 1, line: i + 2, column: 3)
                if rng.next() % 13 == 0 {
                    items.append(.rejected(SetAsideRecord(origin: origin, reason: "bad \(i)", text: i % 2 == 0 ? "{\"x\": \(i)}" : nil)))
                    continue
                }
                var trip = arbitrary.trip()
                trip.attributes[0] = .string("name \(rng.next() % 40)")
                items.append(.trip(TripRecord(object: trip, origin: origin)))
            }
            let detection = Detection(format: "test", version: schema.versionIdentifier, evidence: .fields(["x"]))
            return PipelineInput(name: "in\(n).json") { ArrayReader(items: items, detection: detection) }
        }
    }

    struct Outcome: Equatable {
        var objects: [ModelObject]
        var shape: [Int]?
        var setAside: [SetAsideRecord]
        var error: String?
        var counts: [Int]
    }

    func run(_ policy: DeduplicationPolicy, seed: UInt64, trips: Int, threads: Int = 1,
             holding: @escaping () -> any TripHolding) -> Outcome {
        var p = Pipeline()
        p.encodingThreads = threads
        p.decodesAhead = threads > 1
        p.policy = policy
        p.keepsGoing = true
        p.holding = holding
        let writer = Collector()
        var setAside: [SetAsideRecord] = []
        do {
            let s = try p.run(inputs(seed: seed, trips: trips), into: { writer }, setAside: { setAside.append($0) })
            return Outcome(objects: writer.objects, shape: writer.shape?.longestRelationships, setAside: setAside, error: nil,
                           counts: [s.read, s.written, s.merged, s.dropped, s.rejected, s.deduplicatedAcrossInputs]
                               + s.inputs.map(\.deduplicatedInStages))
        } catch {
            return Outcome(objects: [], shape: nil, setAside: setAside, error: "\(error)", counts: [])
        }
    }

    @Test("every policy: the same trips, order, shape, set-aside records, summary and errors as in memory",
          arguments: DeduplicationPolicy.allCases)
    func sameAsInMemory(policy: DeduplicationPolicy) throws {
        let dir = ScratchDirectory()
        for seed in UInt64(1)...6 {
            let budget = SpillBudget(limit: 60_000, directory: dir.path, setAsideInMemory: 7)
            let spilled = run(policy, seed: seed, trips: 300, holding: { SpillingTrips(budget: budget) })
            let memory = run(policy, seed: seed, trips: 300, holding: { InMemoryTrips() })
            #expect(spilled == memory, "seed \(seed)")
            // Written in slices of the spill file, decoded ahead on a thread of their own.
            let threaded = run(policy, seed: seed, trips: 300, threads: 2, holding: { SpillingTrips(budget: budget) })
            #expect(threaded == memory, "seed \(seed), threads")
            #expect(budget.spilled.trips > 0, "seed \(seed): nothing spilled")
            if policy != .fail { #expect(!memory.objects.isEmpty && memory.setAside.contains { $0.kind != .rejected }) }
            // Spill files have no names: nothing is left, or ever seen, in the directory.
            #expect(dir.names().isEmpty)
        }
    }

    @Test("a budget the trips fit in never spills, and gives the same as the arena")
    func fitsInMemory() {
        let budget = SpillBudget(limit: 1 << 30)
        let held = run(.merge, seed: 9, trips: 200, holding: { SpillingTrips(budget: budget) })
        #expect(held == run(.merge, seed: 9, trips: 200, holding: { InMemoryTrips() }))
        #expect(budget.spilled.trips == 0)
    }

    @Test("spilled trips come back in order through every operation of the holding")
    func operations() throws {
        let dir = ScratchDirectory()
        let holding = SpillingTrips(budget: SpillBudget(limit: 100, directory: dir.path))  // as many partitions as allowed
        var arbitrary = ArbitraryTrips(seed: 3, text: .init(pieces: ["x", "y"]))
        let trips = arbitrary.trips(500, in: TripSchemaV3.self)
        for (i, t) in trips.enumerated() { try holding.put(t, origin: RecordOrigin(source: i % 3 == 0 ? "a" : "b", record: i + 1)) }
        #expect(holding.isSpilled && holding.count == 500)
        var seen: [ModelObject] = []
        try holding.forEach { t, _ in seen.append(t) }
        #expect(seen == trips)
        #expect(try holding.origin(at: 299) == RecordOrigin(source: "b", record: 300))
        #expect(try holding.origins(at: [0, 3, 499]) == [0: RecordOrigin(source: "a", record: 1), 3: RecordOrigin(source: "a", record: 4),
                                                          499: RecordOrigin(source: "b", record: 500)])
        try holding.transform { t in var t = t; t.attributes[1] = .string("changed"); return t }
        seen = []
        try holding.forEach { t, _ in seen.append(t) }
        #expect(seen.allSatisfy { $0.attributes[1] == .string("changed") } && seen.count == 500)
        let memory = InMemoryTrips()
        for (i, t) in seen.enumerated() { memory.put(t, origin: RecordOrigin(source: "b", record: i + 1)) }
        #expect(try holding.longestRelationships() == memory.longestRelationships())
        #expect(try holding.repeatedValues(attribute: 0) == memory.repeatedValues(attribute: 0))
    }

    @Test("after a deduplication (trips in one file per partition): put, transform, absorb and adopt see them in order")
    func afterDeduplication() throws {
        let dir = ScratchDirectory()
        let budget = SpillBudget(limit: 100, directory: dir.path)
        var arbitrary = ArbitraryTrips(seed: 4, text: .init(pieces: ["x", "y"]))
        var trips = arbitrary.trips(400, in: TripSchemaV3.self)
        for i in trips.indices { trips[i].attributes[0] = .string("n\(i % 150)") }
        func deduplicated() throws -> SpillingTrips {
            let holding = SpillingTrips(budget: budget)
            for (i, t) in trips.enumerated() { try holding.put(t, origin: RecordOrigin(source: "a", record: i + 1)) }
            try holding.deduplicate(attribute: 0, resolve: { _, _ in (.keepKept, nil) }, check: {})
            #expect(holding.isPartitioned && holding.count == 150)
            return holding
        }
        let firsts = Array(trips.prefix(150))
        func all(_ h: SpillingTrips) throws -> [ModelObject] {
            var seen: [ModelObject] = []
            try h.forEach { t, _ in seen.append(t) }
            return seen
        }
        #expect(try all(deduplicated()) == firsts)
        let put = try deduplicated()
        try put.put(trips[0], origin: RecordOrigin(source: "b", record: 1))
        #expect(try all(put) == firsts + [trips[0]] && !put.isPartitioned)
        let changed = try deduplicated()
        try changed.transform { t in var t = t; t.attributes[1] = .string("changed"); return t }
        #expect(try all(changed).map(\.attributes[0]) == firsts.map(\.attributes[0]))
        let adopter = SpillingTrips(budget: budget), adopted = try deduplicated()
        try adopter.absorb(adopted)
        #expect(try all(adopter) == firsts && adopted.count == 0)
        try adopter.absorb(try deduplicated())
        #expect(try all(adopter) == firsts + firsts && adopter.count == 300)
        #expect(try adopter.origins(at: [0, 150]) == [0: RecordOrigin(source: "a", record: 1), 150: RecordOrigin(source: "a", record: 1)])
    }

    @Test("--memory-limit sizes: bytes, K, M, G, T; less than 1M and nonsense are usage errors")
    func sizes() throws {
        #expect(try SpillBudget.parseSize("256M") == 256 << 20)
        #expect(try SpillBudget.parseSize("2g") == 2 << 30)
        #expect(try SpillBudget.parseSize("1GiB") == 1 << 30)
        #expect(try SpillBudget.parseSize("1048576") == 1 << 20)
        for bad in ["", "M", "12Q", "-5M", "1.5G", "512K", "99999999999999999999T"] {
            #expect(throws: TripError.self) { try SpillBudget.parseSize(bad) }
        }
    }
}
