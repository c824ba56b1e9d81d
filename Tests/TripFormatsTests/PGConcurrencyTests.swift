import Foundation
import Synchronization
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Many loaders at once (issue 16): 4 `PGRecordWriter`s on threads of their own load overlapping
/// shards into one store that none of them has created yet, 5 rounds under each policy. Afterwards
/// every name is there once, nothing is orphaned, the unique index and foreign keys hold, the
/// loaders' accounting adds up to their inputs, and the store is what the 4 loads give run one
/// after another in some order (the 24 orders computed with the SQLite store's writer).
@Suite("PostgreSQL writer: loaders at once", .serialized, .needsPostgres)
struct PGConcurrencyTests {
    static let loaders = 4
    static let shardTrips = 200
    static let rounds = 5

    /// Four shards of generated trips: each holds 40 names (20 %) drawn from a pool of 60 shared
    /// ones, with values and items of its own (item titles from a short list, so merge unites
    /// lists), and 160 names no other shard has.
    struct Shards {
        var shards: [[ModelObject]] = []
        var shared: Set<Value> = []

        init(seed: UInt64, pairs: Bool = false) {
            var g = ArbitraryTrips(seed: seed, text: .postgreSQL, dates: ArbitraryTrips.allDates, uniqueNames: true)
            let pool = (0..<60).map { _ in g.trip().attributes[0] }
            shared = Set(pool)
            let titles = ["Museum", "Opera", "Harbour", "Market", "Old town"]
            for s in 0..<PGConcurrencyTests.loaders {
                var trips = g.trips(PGConcurrencyTests.shardTrips)
                // With pairs, shards 0 and 1 hold the same 20 names of the pool, 2 and 3 another 20.
                var names = pairs ? Array(pool[(s / 2 * 30)..<(s / 2 * 30 + 20)]) : pool
                if !pairs { names.shuffle(using: &g.random) }
                for (i, name) in names.prefix(40).enumerated() {
                    trips[i].attributes[0] = name
                    trips[i].relationships[0] = .toMany(trips[i].relationships[0].objects.map { item in
                        var o = item
                        o.attributes[0] = .string(g.random.pick(titles))
                        return o
                    })
                }
                trips.shuffle(using: &g.random)
                shards.append(trips)
            }
        }

        /// Name → trip of the trips whose name more than one shard may hold.
        func sharedOnly(_ trips: [ModelObject]) -> [Value: ModelObject] {
            Dictionary(trips.filter { shared.contains($0.attributes[0]) }.map { ($0.attributes[0], $0) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// What one loader did.
    struct Loaded: Sendable {
        var shard: Int
        var error: TripError?
        var ledger: [SetAsideRecord] = []
        var replaced = 0
        var retries = 0
        var isUpdatingExistingStore = false
        var given = 0
        /// Trips written as given (replacing ones included).
        var written: Int { error == nil ? given - ledger.count : 0 }
    }

    /// Loads each shard into the store on a thread of its own: each opens its writer, waits until
    /// all are open (`openedTogether`; at most `openWithin` seconds), and loads.
    static func loadAtOnce(_ shards: [[ModelObject]], store: PGTestStore, policy: DeduplicationPolicy,
                           openWithin: Double = 20) -> (loaded: [Loaded], openedTogether: Bool) {
        final class Results: Sendable { let all = Mutex<[Loaded]>([]) }
        let results = Results()
        let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0), done = DispatchGroup()
        let server = store.server, schema = store.schema
        for (s, shard) in shards.enumerated() {
            done.enter()
            Thread {
                var loaded = Loaded(shard: s, given: shard.count)
                var writer: PGRecordWriter?
                var options = WriteOptions(schema: TripSchemaV3.self, policy: policy)
                options.pgSchema = schema
                do {
                    writer = try PGRecordWriter(address: server, options: options)
                } catch {
                    loaded.error = error as? TripError ?? TripError.data("\(error)")
                }
                ready.signal()
                go.wait()
                if let writer {
                    do {
                        for (i, t) in shard.enumerated() { try writer.write(t, origin: RecordOrigin(source: "shard\(s)", record: i + 1)) }
                        try writer.finish()
                        loaded.ledger = try writer.ledger
                        loaded.replaced = writer.replacedStoredTrips
                        loaded.isUpdatingExistingStore = writer.isUpdatingExistingStore
                    } catch {
                        writer.abort()
                        loaded.error = error as? TripError ?? TripError.data("\(error)")
                    }
                    loaded.retries = writer.retries
                }
                results.all.withLock { $0.append(loaded) }
                done.leave()
            }.start()
        }
        let deadline = DispatchTime.now() + openWithin
        let openedTogether = shards.allSatisfy { _ in ready.wait(timeout: deadline) == .success }
        for _ in shards { go.signal() }
        done.wait()
        return (results.all.withLock { $0 }.sorted { $0.shard < $1.shard }, openedTogether)
    }

    /// The shared names' trips after loading the shards one after another in each order, with the
    /// SQLite store's writer; the other names' trips are the same in every order.
    static func serialResults(_ data: Shards, policy: DeduplicationPolicy, scratch: ScratchDirectory) throws -> [[Int]: [Value: ModelObject]] {
        var out: [[Int]: [Value: ModelObject]] = [:]
        for order in permutations(Array(0..<data.shards.count)) {
            let path = scratch.path("serial-\(policy)-\(order.map(String.init).joined()).sqlite")
            for s in order {
                let trips = data.shards[s].filter { data.shared.contains($0.attributes[0]) }
                try SQLiteTesting.writeStore(trips, to: path, policy: policy)
            }
            out[order] = data.sharedOnly(try SQLiteTesting.readStore(path).trips)
        }
        return out
    }

    static func permutations(_ xs: [Int]) -> [[Int]] {
        guard xs.count > 1 else { return [xs] }
        return xs.indices.flatMap { i in
            var rest = xs
            let x = rest.remove(at: i)
            return permutations(rest).map { [x] + $0 }
        }
    }

    @Test("4 loaders at once on overlapping shards: each name once, nothing orphaned, the accounting adds up, the result of some order",
          arguments: [DeduplicationPolicy.merge, .first, .last])
    func overlapping(policy: DeduplicationPolicy) throws {
        _ = try PGConnectionTests.server()
        let scratch = ScratchDirectory()
        let data = Shards(seed: 16 + UInt64(policy.rawValue.count))
        let serial = try Self.serialResults(data, policy: policy, scratch: scratch)
        let all = data.shards.flatMap { $0 }
        let distinct = Set(all.map { $0.attributes[0] }).count
        var retries = 0
        var orders: [String] = []
        for round in 1...Self.rounds {
            let store = try #require(PGTestStore())
            let (loaded, together) = Self.loadAtOnce(data.shards, store: store, policy: policy)
            #expect(together, "round \(round): a loader waited for another's load to open the store")
            for l in loaded { #expect(l.error == nil, "round \(round), loader \(l.shard): \(l.error?.message ?? "")") }
            retries += loaded.reduce(0) { $0 + $1.retries }
            try store.expectSound(TripSchemaV3.self)
            let stored = try store.trips()
            #expect(stored.count == distinct, "round \(round)")
            // The accounting: every trip given is written, merged or dropped, and the trips written
            // but for those that replaced a stored one are the store's.
            #expect(loaded.reduce(0) { $0 + $1.given } == all.count)
            #expect(loaded.reduce(0) { $0 + $1.written - $1.replaced } == stored.count, "round \(round)")
            for l in loaded {
                let kinds: Set<SetAsideRecord.Kind> = policy == .merge ? [.merged] : policy == .first ? [.dropped] : []
                #expect(Set(l.ledger.map(\.kind)).isSubset(of: kinds), "round \(round), loader \(l.shard)")
                // Each entry is one of the loader's own trips, of a shared name.
                let names = l.ledger.map { data.shards[l.shard][$0.origin.record - 1].attributes[0] }
                #expect(l.ledger.allSatisfy { $0.origin.source == "shard\(l.shard)" } && names.allSatisfy(data.shared.contains))
            }
            // Names of one shard only: as given. Shared names: as in one of the serial orders.
            let unshared = stored.filter { !data.shared.contains($0.attributes[0]) }
            let given = Set(all.filter { !data.shared.contains($0.attributes[0]) })
            #expect(unshared.count == given.count && unshared.allSatisfy(given.contains), "round \(round)")
            let result = data.sharedOnly(stored)
            let matching = serial.filter { $0.value == result }.keys.map { $0.map(String.init).joined() }.sorted()
            #expect(!matching.isEmpty, "round \(round): the store is the result of no order of the loads")
            orders.append(matching.first ?? "none")
        }
        print("note: \(policy), \(Self.rounds) rounds of \(Self.loaders) loaders at once: \(retries) retries; "
              + "results of the orders \(orders) (of \(Set(serial.values).count) distinct results of the 24 orders)")
    }

    @Test("under fail, of two loaders meeting the same names exactly one commits, the other fails with 65 and leaves nothing")
    func failing() throws {
        _ = try PGConnectionTests.server()
        let data = Shards(seed: 61, pairs: true)
        var retries = 0
        for round in 1...Self.rounds {
            let store = try #require(PGTestStore())
            let (loaded, together) = Self.loadAtOnce(data.shards, store: store, policy: .fail)
            #expect(together, "round \(round): a loader waited for another's load to open the store")
            retries += loaded.reduce(0) { $0 + $1.retries }
            let failed = loaded.filter { $0.error != nil }.map(\.shard)
            #expect(failed.count == 2 && Set(failed.map { $0 / 2 }) == [0, 1], "round \(round): failed \(failed)")
            for l in loaded where l.error != nil {
                #expect(l.error?.kind == .data && l.error?.kind.rawValue == 65)
                #expect(l.error?.message.contains("20 names are already in the store") == true, "\(l.error?.message ?? "")")
            }
            try store.expectSound(TripSchemaV3.self)
            // The store holds the trips of the loaders that committed, as given, and nothing else.
            let committed = loaded.filter { $0.error == nil }.flatMap { data.shards[$0.shard] }
            let stored = try store.trips()
            #expect(stored.count == committed.count && Set(stored) == Set(committed), "round \(round)")
            #expect(loaded.allSatisfy { $0.ledger.isEmpty && $0.replaced == 0 })
        }
        print("note: fail, \(Self.rounds) rounds of \(Self.loaders) loaders at once: \(retries) retries")
    }

    @Test("loaders starting together on a new store all open at once: none waits for the load of the one that created it")
    func openTogether() throws {
        _ = try PGConnectionTests.server()
        var g = ArbitraryTrips(seed: 4, text: .postgreSQL, uniqueNames: true)
        let shards = (0..<Self.loaders).map { _ in g.trips(3) }
        for trial in 1...10 {
            let store = try #require(PGTestStore())
            let (loaded, together) = Self.loadAtOnce(shards, store: store, policy: .merge, openWithin: 10)
            #expect(together, "trial \(trial): a loader waited for another's load to open the store")
            #expect(loaded.allSatisfy { $0.error == nil }, "trial \(trial): \(loaded.compactMap { $0.error?.message })")
            #expect(loaded.filter { $0.error == nil && !$0.isUpdatingExistingStore }.count == 1, "trial \(trial): one loader creates the store")
            #expect(try store.tripCount() == 12)
        }
    }

    /// A store holding "Stored"; a writer given "New" and another "Stored" under merge; another
    /// transaction that has inserted "New" and not committed: the writer, having locked "Stored",
    /// meets the other's "New" when it inserts its own.
    private static func meetingOther(_ store: PGTestStore, yieldLimit: Int? = nil) throws -> (PGRecordWriter, PGConnection) {
        typealias F = SQLiteFixtures
        try store.write([F.trip("Stored", items: [F.item("Old")])])
        let writer = try PGRecordWriter(address: store.server, options: store.options(TripSchemaV3.self, .merge))
        if let yieldLimit { writer.yieldLimit = yieldLimit }
        for t in [F.trip("New"), F.trip("Stored", destination: "Elsewhere", items: [F.item("New item")])] { try writer.write(t) }
        let other = try store.connection()
        return (writer, other)
    }

    /// The store after `meetingOther`'s writer finished: the trips merged, whatever the other did.
    private static func expectMerged(_ store: PGTestStore, _ writer: PGRecordWriter, _ finishing: PGBackgroundFinish) throws {
        typealias F = SQLiteFixtures
        #expect(finishing.wait())
        #expect(finishing.error == nil, "\(finishing.error?.message ?? "")")
        let merged = F.trip("Stored", destination: "Elsewhere", items: [F.item("Old"), F.item("New item")])
        #expect(try store.trips() == [merged, F.trip("New")])
        #expect(try writer.ledger.map(\.kind) == [.merged])
        try store.expectSound(TripSchemaV3.self)
    }

    static let insertNew = "BEGIN; INSERT INTO trips (name, destination, \"startDate\", \"endDate\") VALUES ('New', 'x', now(), now())"

    @Test("a deadlock with another transaction is retried from the savepoint, and the run completes as if after it")
    func deadlockRetried() throws {
        let store = try #require(PGTestStore())
        // A writer that has given way as often as it may waits in line: a deadlock there is retried.
        let (writer, other) = try Self.meetingOther(store, yieldLimit: 0)
        // It looks for deadlocks after a minute (a superuser's setting; the test server's role is one),
        // so the writer, looking after a second, is the one that finds the deadlock below.
        let patient = (try? other.execute("SET deadlock_timeout = '60s'")) != nil
        try other.execute(Self.insertNew)
        let finishing = PGBackgroundFinish(writer)
        #expect(try finishing.waitsForLock(server: store.server), "the writer never waited for the other's \"New\"")
        // Now the other transaction waits for the writer's lock on "Stored": a deadlock, which the
        // writer detects; it rolls back to its savepoint, and the other's lock goes through.
        var otherWasChosen = false
        do {
            try other.execute("SELECT 1 FROM trips WHERE name = 'Stored' FOR UPDATE")
        } catch {
            otherWasChosen = true
        }
        #expect(!(patient && otherWasChosen), "the other transaction, not the writer, was chosen to fail")
        try other.execute("ROLLBACK")
        try Self.expectMerged(store, writer, finishing)
        #expect(writer.retries == (otherWasChosen ? 0 : 1))
    }

    @Test("a loader meeting a name another holds gives way: it rolls back what it locked and inserted, so the other never deadlocks with it")
    func givesWay() throws {
        let store = try #require(PGTestStore())
        let (writer, other) = try Self.meetingOther(store)
        try other.execute("SET deadlock_timeout = '60s'")
        try other.execute(Self.insertNew)
        let finishing = PGBackgroundFinish(writer)
        #expect(try finishing.waitsForLock(server: store.server), "the writer never waited for the other's \"New\"")
        // The other now locks "Stored", which the writer had locked: the writer has given way (or
        // will within its short lock timeout), so this goes through, and there is no deadlock.
        try other.execute("SELECT 1 FROM trips WHERE name = 'Stored' FOR UPDATE")
        try other.execute("ROLLBACK")
        try Self.expectMerged(store, writer, finishing)
        #expect(writer.retries == 0, "a deadlock was met and retried: the writer did not give way")
        #expect(writer.yields >= 1)
    }

    @Test("a loader gives way to the one loader holding the name it met, not to every loader holding names")
    func givesWayToTheHolder() throws {
        let store = try #require(PGTestStore())
        typealias F = SQLiteFixtures
        try store.write([F.trip("Stored")])
        // Two other loaders hold names (the lock every loader holds from its first insert to its
        // commit, and an uncommitted trip): one holds "Shared", which the writer brings too; the
        // other holds "Other", which it does not.
        let holding = "SELECT pg_advisory_xact_lock(\(PGRecordWriter.holdingKey), pg_backend_pid())"
        let (shared, other) = (try store.connection(), try store.connection())
        for (c, name) in [(shared, "Shared"), (other, "Other")] {
            try c.execute("BEGIN; \(holding); INSERT INTO trips (name, destination, \"startDate\", \"endDate\") VALUES ('\(name)', 'x', now(), now())")
        }
        let writer = try PGRecordWriter(address: store.server, options: store.options(TripSchemaV3.self, .merge))
        for t in [F.trip("Shared", destination: "Elsewhere"), F.trip("Mine")] { try writer.write(t) }
        let finishing = PGBackgroundFinish(writer)
        // It gives way: it waits for a loader's lock (advisory), no longer for a name.
        #expect(try finishing.waitsForLock(server: store.server, event: "advisory"), "the writer never gave way")
        try shared.execute("COMMIT")
        // The writer waits for the loader holding "Shared" alone: it ends while "Other" is still held.
        let ended = finishing.wait(seconds: 20)
        #expect(ended, "the writer waited for a loader whose names it never met")
        try other.execute("ROLLBACK")
        #expect(ended || finishing.wait())
        #expect(finishing.error == nil, "\(finishing.error?.message ?? "")")
        #expect(writer.yields >= 1)
        #expect(try store.trips().map { $0.attributes[0] } == [.string("Stored"), .string("Shared"), .string("Mine")])
        try store.expectSound(TripSchemaV3.self)
    }
}
