import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// `CoreDataKeyCheck` (a bitmap of the destination's keys, one scan of the references) must name the
/// row SQLite's `NOT IN` names, or none when it names none: SQLite is the reference here.
@Suite("Core Data: the check that every key names a row")
struct CoreDataKeyCheckTests {
    let scratch = ScratchDirectory()

    /// A destination table `ZD` with `keys` (and `Z_ENT` 1, or 2 for `otherEntity`), and owners `ZO` whose `ZREF`s are `references`.
    func store(keys: [String], otherEntity: [String] = [], references: [String]) throws -> SQLiteConnection {
        let c = try SQLiteConnection(path: scratch.path("check-\(UInt64.random(in: 0...UInt64.max)).sqlite"), access: .writing, create: true)
        try c.execute("CREATE TABLE ZD (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER); CREATE TABLE ZO (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZREF);")
        for k in keys { try c.execute("INSERT INTO ZD VALUES (\(k), 1)") }
        for k in otherEntity { try c.execute("INSERT INTO ZD VALUES (\(k), 2)") }
        for (n, r) in references.enumerated() { try c.execute("INSERT INTO ZO VALUES (\(n + 1), 1, \(r))") }
        return c
    }

    /// The queries the layout makes for a to-one `ZO.ZREF` to the entity numbered 1 in `ZD`.
    let queries: CoreDataObjectLayout.CheckQueries = {
        let keys = "SELECT \"Z_PK\" FROM \"ZD\" WHERE \"Z_ENT\" IN (1)"
        return .init(first: "SELECT o.Z_PK, o.ZREF FROM ZO AS o WHERE o.Z_ENT = 1 AND o.ZREF IS NOT NULL AND o.ZREF NOT IN (\(keys)) "
                         + "ORDER BY o.Z_PK, o.ZREF LIMIT 1",
                     references: "SELECT o.ZREF FROM ZO AS o WHERE o.Z_ENT = 1 AND +o.ZREF IS NOT NULL", keys: keys,
                     range: "SELECT (SELECT min(Z_PK) FROM ZD), (SELECT max(Z_PK) FROM ZD)")
    }()

    func notIn(_ c: SQLiteConnection) throws -> [Int64] {
        let s = try c.prepare(queries.first)
        return try s.step() ? [s.int64(0), s.int64(1)] : []
    }

    func check(_ c: SQLiteConnection) throws -> [Int64] {
        try CoreDataKeyCheck.firstDangling(c, queries).map { [$0.owner, $0.key] } ?? []
    }

    @Test("as NOT IN: every key found, a missing one, a row of another entity, NULLs, an empty destination, a text key",
          arguments: [(["1", "2", "3", "70"], [String](), ["3", "NULL", "70", "1", "1"], [Int64]()),
                      (["1", "2", "3"], [], ["3", "4", "2", "9"], [2, 4]),
                      (["1", "2"], ["3"], ["1", "3"], [2, 3]),
                      (["5", "6"], [], ["4"], [1, 4]),
                      (["5", "6"], [], ["7"], [1, 7]),
                      ([], [], ["1"], [1, 1]),
                      ([], [], ["NULL"], []),
                      (["-3", "0", "2"], [], ["-3", "0", "2"], []),
                      (["1", "2"], [], ["'2'", "1"], [])])
    func agreesWithNotIn(keys: [String], other: [String], references: [String], expected: [Int64]) throws {
        let c = try store(keys: keys, otherEntity: other, references: references)
        #expect(try notIn(c) == expected)
        #expect(try check(c) == expected)
    }

    @Test("keys spanning more than the bitmap holds are checked by NOT IN itself")
    func wideKeys() throws {
        let far = CoreDataKeyCheck.maximumBits * 4
        let found = try store(keys: ["1", "\(far)"], references: ["\(far)", "1"])
        #expect(try check(found) == [])
        let missing = try store(keys: ["1", "\(far)"], references: ["\(far)", "\(far - 1)"])
        #expect(try check(missing) == [2, far - 1])
        let extreme = try store(keys: ["\(Int64.min)", "\(Int64.max)"], references: ["\(Int64.max)", "0"])
        #expect(try check(extreme) == [2, 0])
    }

    @Test("random keys and references: the same row as NOT IN", arguments: 0..<8)
    func random(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed))
        let keys = Set((0..<40).map { _ in Int64(rng.next() % 120) })
        let references = (0..<60).map { _ in rng.next() % 10 == 0 ? "NULL" : String(Int64(rng.next() % 130)) }
        let c = try store(keys: keys.map(String.init), references: references)
        #expect(try check(c) == (try notIn(c)))
    }
}
