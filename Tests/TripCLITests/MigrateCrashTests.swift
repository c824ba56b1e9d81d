import Foundation
import Testing
#if canImport(Glibc)
import Glibc
import TripTestSupport
#endif

/// The migration is one transaction in SQLite's ordinary safe journal: a process killed at any
/// moment leaves a store that is whole, at the old version with all its rows or at the new one.
@Suite("tripconv migrate killed with SIGKILL")
struct MigrateCrashTests {
    typealias S = MigrateSupport

    /// Kills that must land while a migration runs, and the most rounds to get them in.
    static let wantedKills = 16
    static let maximumRounds = 40

    static let tripgen = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent("tripgen").path
    static var isRunnable: Bool { S.sqlite3 != nil && FileManager.default.isExecutableFile(atPath: tripgen) }

    /// A digest of everything the trip tables hold, rows and ids, and the version the store says.
    static func contents(_ db: String) throws -> String {
        try S.sqlite(db, """
            SELECT hex(sha3_query('SELECT * FROM trips ORDER BY id; SELECT * FROM bucket_list_items ORDER BY id; \
            SELECT * FROM living_accommodations ORDER BY id'));
            PRAGMA user_version;
            SELECT value FROM tripconv_metadata WHERE key = 'schemaVersion';
            """)
    }

    /// Starts `tripconv migrate` on a store, its output thrown away.
    static func start(_ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = ["migrate"] + arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    @Test("killed at random moments, a migration of 20000 trips leaves the store whole, at the old version or the new",
          .enabled(if: isRunnable, "needs the sqlite3 tool and the built tripgen"))
    func killed() throws {
        let tmp = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let original = tmp.appendingPathComponent("big-original.sqlite").path
        let made = try CLI.run(Self.tripgen, ["--trips", "20000", "--version", "1.0.0", "--seed", "7", "-o", original])
        #expect(made.status == 0, "\(made.stderr)")
        let old = try Self.contents(original)
        #expect(old.hasSuffix("\n1\n1.0.0\n"))

        // The whole migration once, to know what the new version holds and how long it takes.
        let reference = tmp.appendingPathComponent("big-reference.sqlite").path
        try FileManager.default.copyItem(atPath: original, toPath: reference)
        let started = Date()
        let p = try Self.start([reference, "--no-backup", "-q"])
        p.waitUntilExit()
        let duration = Date().timeIntervalSince(started)
        #expect(p.terminationStatus == 0)
        let new = try Self.contents(reference)
        #expect(new.hasSuffix("\n3\n3.0.0\n"))

        var random = SplitMix64(seed: 2026)
        var killedMidway = 0, foundOld = 0, foundNew = 0, rounds = 0
        var resumed = false
        // Kills land uniformly within the time a migration takes; when a run finished before its
        // kill (a loaded machine makes the first measure long), the window shrinks.
        var window = duration * 1.15
        let target = tmp.appendingPathComponent("big.sqlite").path
        while killedMidway < Self.wantedKills && rounds < Self.maximumRounds {
            let round = rounds
            rounds += 1
            for name in try FileManager.default.contentsOfDirectory(atPath: tmp.path) where name.hasPrefix("big.sqlite") || name.hasPrefix(".big.sqlite") {
                try FileManager.default.removeItem(atPath: tmp.appendingPathComponent(name).path)
            }
            try FileManager.default.copyItem(atPath: original, toPath: target)
            let withBackup = round % 2 == 0
            let process = try Self.start([target, "-q"] + (withBackup ? ["--backup", target + ".bak"] : ["--no-backup"]))
            usleep(useconds_t(random.unit() * window * 1_000_000))
            let wasRunning = process.isRunning
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if wasRunning && process.terminationReason == .uncaughtSignal { killedMidway += 1 } else { window *= 0.85 }

            // Whatever the moment, the store opens, is sound, and is all old or all new.
            try S.expectSound(target)
            let now = try Self.contents(target)
            if now == old {
                foundOld += 1
            } else if now == new {
                foundNew += 1
            } else {
                Issue.record("round \(round): the store is neither the old one nor the migrated one: \(now)")
            }
            // A backup, where one was made, is the whole old store; a half-made one is never under its name.
            if withBackup, FileManager.default.fileExists(atPath: target + ".bak") {
                try S.expectSound(target + ".bak")
                #expect(try Self.contents(target + ".bak") == old, "round \(round): the backup")
            }
            // A migration cut short is done by running it again.
            if now == old, wasRunning, !resumed {
                resumed = true
                let again = try Self.start([target, "--no-backup", "-q"])
                again.waitUntilExit()
                #expect(again.terminationStatus == 0)
                #expect(try Self.contents(target) == new)
            }
        }
        // Killed halfway, then run again at once: the run rolls back what the killed one left and migrates.
        for name in try FileManager.default.contentsOfDirectory(atPath: tmp.path) where name.hasPrefix("big.sqlite") || name.hasPrefix(".big.sqlite") {
            try FileManager.default.removeItem(atPath: tmp.appendingPathComponent(name).path)
        }
        try FileManager.default.copyItem(atPath: original, toPath: target)
        let cut = try Self.start([target, "--no-backup", "-q"])
        usleep(useconds_t(window * 0.6 * 1_000_000))
        kill(cut.processIdentifier, SIGKILL)
        cut.waitUntilExit()
        if FileManager.default.fileExists(atPath: target + "-journal") {
            // Readers open stores read-only, and say what to do about the unfinished transaction.
            // A journal is "hot" (to be rolled back) only if the kill left it mid-transaction; an
            // empty or finished one is ignored by SQLite, and the store reads as it is.
            let detect = try CLI.tripconv("detect", target)
            if detect.status != 0 {
                #expect(detect.status == 75)
                #expect(detect.stderr.hasPrefix("tripconv: \(target): store is busy: a transaction that did not finish must be rolled back first"))
            }
        }
        let rerun = try CLI.tripconv("migrate", target, "--no-backup", "-q")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        try S.expectSound(target)
        #expect(try Self.contents(target) == new)

        print("migrate killed with SIGKILL: \(rounds) rounds of a \(String(format: "%.2f", duration)) s migration; \(killedMidway) killed while running; found \(foundOld) at 1.0.0 and \(foundNew) at 3.0.0")
        #expect(foundOld + foundNew == rounds)
        #expect(killedMidway >= Self.wantedKills, "kills that land while the migration runs")
        #expect(foundOld > 0, "some kills land before the commit")
    }
}
