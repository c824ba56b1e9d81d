import Foundation
import Testing
import TripTestSupport

/// Four `tripconv` processes at once loading overlapping shards into one PostgreSQL store that
/// none of them created (issue 16), checked with psql and their `--report`s. (The in-process
/// suite "PostgreSQL writer: loaders at once" also checks the result against every serial order.)
@Suite("tripconv: loaders at once into one PostgreSQL store", .serialized, .needsPostgres)
struct PGCLIConcurrencyTests {
    static let shardTrips = 150

    /// Four JSON Lines shards of 150 trips: 30 of each shard's names (20 %) are drawn from 40
    /// shared ones, with a destination, dates and items of the shard's own; with `pairs`, shards 0
    /// and 1 hold the same 20 shared names, and 2 and 3 another 20.
    static func shards(in dir: URL, pairs: Bool = false) throws -> (paths: [String], given: [String: Set<String>]) {
        var rng = SystemRandomNumberGenerator()
        let pool = (0..<40).map { "Shared \($0) \"q\" \\ \t" }
        var given: [String: Set<String>] = [:]
        var paths: [String] = []
        for s in 0..<4 {
            let names = pairs ? Array(pool[(s / 2 * 20)..<(s / 2 * 20 + 20)]) : Array(pool.shuffled(using: &rng).prefix(30))
            var lines: [String] = []
            for i in 0..<shardTrips {
                let name = i < names.count ? names[i] : "Shard \(s) trip \(i)"
                let destination = "Destination \(s)-\(i) ünï\ncode"
                given[name, default: []].insert(destination)
                let trip: [String: Any] = [
                    "name": name, "destination": destination,
                    "startDate": "2024-05-0\(s + 1)T09:30:00.\(100 + i % 900)Z", "endDate": "2024-06-01T00:00:00Z",
                    "bucketList": (0..<(i % 4)).map { ["title": ["Museum", "Opera", "Harbour"][$0 % 3], "details": "shard \(s)", "hasReservation": s % 2 == 0, "isInPlan": true] },
                    "livingAccommodation": i % 3 == 0 ? ["address": "\(s) Main St", "placeName": "Inn \(s)"] : NSNull(),
                ]
                lines.append(String(decoding: try JSONSerialization.data(withJSONObject: trip, options: [.sortedKeys]), as: UTF8.self))
            }
            let path = dir.appendingPathComponent("shard\(s).jsonl").path
            try (lines.shuffled(using: &rng).joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        return (paths, given)
    }

    /// Runs tripconv on each shard at once, each with a report; returns the exit statuses and reports' totals.
    static func loadAtOnce(_ paths: [String], store: PGCLIStore, policy: String, dir: URL) throws -> [(status: Int32, stderr: String, totals: [Int])] {
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var all: [Int: CLI.Result] = [:]
        }
        let results = Results()
        let group = DispatchGroup()
        for (s, path) in paths.enumerated() {
            let arguments = [path, "-o", store.server, "--pg-schema", store.schema, "--dedupe", policy, "-q",
                             "--report", dir.appendingPathComponent("report\(s).json").path]
            group.enter()
            Thread {
                if let r = try? CLI.run(CLI.binary, arguments) { results.lock.withLock { results.all[s] = r } }
                group.leave()
            }.start()
        }
        group.wait()
        return try paths.indices.map { s in
            let r = try #require(results.all[s])
            return (r.status, r.stderr, r.status == 0 ? try PGWriterCLITests.totals(dir.appendingPathComponent("report\(s).json").path) : [0, 0, 0, 0, 0, 0])
        }
    }

    @Test("4 processes at once on overlapping shards: each name once, nothing orphaned, the reports add up to the inputs",
          arguments: ["merge", "last", "first"])
    func overlapping(policy: String) throws {
        for round in 1...2 {
            let store = try #require(PGCLIStore())
            let dir = try CLI.temporaryDirectory()
            let (paths, given) = try Self.shards(in: dir)
            let runs = try Self.loadAtOnce(paths, store: store, policy: policy, dir: dir)
            for r in runs { #expect(r.status == 0, "round \(round): \(r.stderr)") }
            try store.expectSound()
            let count = Int(try store.psql("SELECT count(*) FROM trips").dropLast()) ?? -1
            #expect(count == given.count, "round \(round)")
            // read = written + merged + dropped + rejected for each; the trips written but for those
            // that replaced a stored one are the store's.
            let totals = runs.map(\.totals)
            #expect(totals.allSatisfy { $0.count == 6 && $0[0] == Self.shardTrips && $0[0] == $0[1] + $0[2] + $0[3] + $0[4] })
            #expect(totals.reduce(0) { $0 + $1[0] } == 4 * Self.shardTrips)
            #expect(totals.reduce(0) { $0 + $1[1] - $1[5] } == count, "round \(round): \(totals)")
            // Under first and last, each name's trip is one a shard gave.
            let pairs = try store.psql("SELECT json_agg(json_build_array(name, destination)) FROM trips")
            let rows = try JSONSerialization.jsonObject(with: Data(pairs.utf8)) as? [[String]] ?? []
            #expect(rows.count == count)
            #expect(rows.allSatisfy { given[$0[0]]?.contains($0[1]) == true }, "round \(round)")
        }
    }

    @Test("under fail, of two processes meeting the same names exactly one commits, the other exits 65 leaving nothing")
    func failing() throws {
        for round in 1...2 {
            let store = try #require(PGCLIStore())
            let dir = try CLI.temporaryDirectory()
            let (paths, _) = try Self.shards(in: dir, pairs: true)
            let runs = try Self.loadAtOnce(paths, store: store, policy: "fail", dir: dir)
            let failed = runs.indices.filter { runs[$0].status != 0 }
            #expect(failed.count == 2 && Set(failed.map { $0 / 2 }) == [0, 1], "round \(round): \(runs.map(\.stderr))")
            for s in failed {
                #expect(runs[s].status == 65)
                #expect(runs[s].stderr.contains("20 names are already in the store"), "\(runs[s].stderr)")
            }
            try store.expectSound()
            #expect(try store.psql("SELECT count(*) FROM trips") == "\(2 * Self.shardTrips)\n")
            let committed = runs.indices.filter { runs[$0].status == 0 }
            let mine = try store.psql("SELECT count(*) FROM trips WHERE " + committed.map { "destination LIKE 'Destination \($0)-%'" }.joined(separator: " OR "))
            #expect(mine == "\(2 * Self.shardTrips)\n")
        }
    }
}
