import Testing
@testable import TripKit
import TripTestSupport

/// The spine sees trips only through `TripHolding`: any holding that keeps the interface's promises
/// gives the same output and accounting. `PlainTrips` is the plainest one (an array, a dictionary by
/// name); the pipeline's own (`InMemoryTrips`, an arena) must agree with it under every policy.
@Suite("Where trips are held: one interface, any implementation")
struct TripHoldingTests {
    /// An array of trips and a dictionary from name bytes to position: the interface's meaning, plainly.
    final class PlainTrips: TripHolding {
        var trips: [(ModelObject, RecordOrigin)] = []
        var setAside: [SetAsideRecord] = []
        var count: Int { trips.count }
        func put(_ trip: ModelObject, origin: RecordOrigin) { trips.append((trip, origin)) }
        var setAsideCount: Int { setAside.count }
        func appendSetAside(_ records: [SetAsideRecord]) { setAside += records }
        func forEachSetAside(_ body: (SetAsideRecord) throws -> Void) rethrows { try setAside.forEach(body) }
        func absorb(_ other: any TripHolding) throws {
            try other.forEach { put($0, origin: $1) }
            try other.forEachSetAside { setAside.append($0) }
        }
        func origin(at index: Int) -> RecordOrigin { trips[index].1 }
        func origins(at positions: Set<Int>) -> [Int: RecordOrigin] {
            Dictionary(uniqueKeysWithValues: positions.filter { trips.indices.contains($0) }.map { ($0, trips[$0].1) })
        }
        func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) rethrows { for (t, o) in trips { try body(t, o) } }
        func transform(_ transform: (ModelObject) throws -> ModelObject) rethrows {
            trips = try trips.map { (try transform($0.0), $0.1) }
        }
        /// Resolves one name at a time, the names whose first trip comes last first (as a holding
        /// that partitions by name may), and sets records aside in the duplicates' order.
        func deduplicate(attribute: Int,
                         resolve: (DuplicateTrip, (DuplicateTrip.Side) -> ModelObject) throws -> (DuplicateResolution, SetAsideRecord?),
                         check: () throws -> Void) throws {
            var groups: [[UInt8]: [Int]] = [:]
            var firsts: [[UInt8]] = []
            for (i, (trip, _)) in trips.enumerated() {
                let key = ObjectArena.key(trip.attributes[attribute])
                if groups[key] == nil { firsts.append(key) }
                groups[key, default: []].append(i)
            }
            var kept: [Int: (trip: ModelObject, first: RecordOrigin)] = [:]
            var entries: [(Int, SetAsideRecord)] = []
            for key in firsts.reversed() {
                let members = groups[key]!
                var (keptTrip, first) = trips[members[0]]
                var standing = first
                for (n, i) in members.dropFirst().enumerated() {
                    let (trip, origin) = trips[i]
                    let d = DuplicateTrip(key: trip.attributes[attribute], origin: origin, position: i, isFirstDuplicate: n == 0,
                                          keptOrigin: first, standingOrigin: standing)
                    let current = keptTrip
                    let (resolution, aside) = try resolve(d, { $0 == .kept ? current : trip })
                    if let aside { entries.append((i, aside)) }
                    switch resolution {
                    case .keepKept: break
                    case .takeDuplicate: keptTrip = trip; standing = origin
                    case .replaceKept(let object): keptTrip = object
                    }
                }
                kept[members[0]] = (keptTrip, first)
            }
            try check()
            trips = kept.keys.sorted().map { (kept[$0]!.trip, kept[$0]!.first) }
            setAside += entries.sorted { $0.0 < $1.0 }.map(\.1)
        }
        func repeatedValues(attribute: Int) -> Int {
            var n: [[UInt8]: Int] = [:]
            for (t, _) in trips { n[ObjectArena.key(t.attributes[attribute]), default: 0] += 1 }
            return n.values.filter { $0 > 1 }.count
        }
        func longestRelationships() -> [Int] {
            var longest: [Int] = []
            for (t, _) in trips {
                let counts = t.relationships.map { r -> Int in
                    switch r { case .toMany(let l): return l.count; case .toOne(let o): return o == nil ? 0 : 1 }
                }
                if longest.count < counts.count { longest += [Int](repeating: 0, count: counts.count - longest.count) }
                for (i, c) in counts.enumerated() where c > longest[i] { longest[i] = c }
            }
            return longest
        }
        func write(into writer: any RecordWriter, speed: WritingSpeed) throws -> any RecordWriter {
            var writer = writer
            for (t, _) in trips { try writer.write(t) }
            return writer
        }
    }

    /// Three inputs of 1.0.0 trips from a small pool of names (many duplicates), with some rejected records.
    func inputs(seed: UInt64) -> [PipelineInput] {
        var rng = SplitMix64(seed: seed)
        var arbitrary = ArbitraryTrips(seed: seed, text: .init(pieces: ["a", "b", " "]), schema: TripSchemaV1.self)
        return (0..<3).map { n in
            var items: [ReadItem] = []
            for i in 0..<Int(rng.next() % 60) {
                let origin = RecordOrigin(source: "in\(n)", record: i + 1, line: i + 2)
                if rng.next() % 11 == 0 {
                    items.append(.rejected(SetAsideRecord(origin: origin, reason: "bad")))
                    continue
                }
                var trip = arbitrary.trip(schema: TripSchemaV1.self)
                trip.attributes[0] = .string(["Paris", "Oslo", "Lima", "Kyiv", "e\u{301}", "é"][Int(rng.next() % 6)])
                items.append(.trip(TripRecord(object: trip, origin: origin)))
            }
            let version = SchemaVersion(1, 0, 0)
            return PipelineInput(name: "in\(n)") {
                ArrayReader(items: items, detection: Detection(format: "test", version: version, evidence: .fields(["x"])))
            }
        }
    }

    func run(_ policy: DeduplicationPolicy, seed: UInt64, holding: @escaping () -> any TripHolding)
        -> (objects: [ModelObject], setAside: [SetAsideRecord], summary: ConversionSummary?, error: String?) {
        var p = Pipeline()
        p.policy = policy
        p.keepsGoing = true
        p.holding = holding
        let writer = CollectingWriter()
        var setAside: [SetAsideRecord] = []
        do {
            let s = try p.run(inputs(seed: seed), into: { writer }, setAside: { setAside.append($0) })
            return (writer.objects, setAside, s, nil)
        } catch {
            return (writer.objects, setAside, nil, "\(error)")
        }
    }

    @Test("the arena and a plain array give the same trips, order, set-aside records and summary",
          arguments: DeduplicationPolicy.allCases)
    func sameAsPlain(policy: DeduplicationPolicy) {
        for seed in UInt64(1)...20 {
            let plain = run(policy, seed: seed, holding: { PlainTrips() })
            let arena = run(policy, seed: seed, holding: { InMemoryTrips() })
            #expect(arena.objects == plain.objects, "seed \(seed)")
            #expect(arena.setAside == plain.setAside, "seed \(seed)")
            #expect(arena.error == plain.error, "seed \(seed)")
            #expect(arena.summary?.written == plain.summary?.written && arena.summary?.merged == plain.summary?.merged
                    && arena.summary?.dropped == plain.summary?.dropped, "seed \(seed)")
            if let s = arena.summary { #expect(s.read == s.written + s.merged + s.dropped + s.rejected) }
            if policy == .fail { #expect(arena.error != nil || arena.objects.count == Set(arena.objects.map { $0.attributes[0] }).count) }
        }
    }

    @Test("under fail, a holding is unchanged when the check throws")
    func failLeavesHoldingUnchanged() throws {
        for holding in [InMemoryTrips() as any TripHolding, PlainTrips()] {
            let c = MigrationContext(schema: TripSchemaV3.self, policy: .fail, holding: holding)
            for (i, n) in ["A", "B", "A", "C", "B"].enumerated() {
                try c.insert(object(TestTrip(name: n)), origin: RecordOrigin(source: "x", record: i + 1))
            }
            #expect(throws: TripError.self) { try c.deduplicate("Trip", by: "name") }
            #expect(try c.count == 5 && c.ledger.isEmpty && c.trips.setAsideCount == 0)
            #expect(try c.objects.map { $0.attributes[0] } == ["A", "B", "A", "C", "B"].map { Value.string($0) })
        }
    }
}
