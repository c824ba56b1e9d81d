import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// `PGRecordWriter` against the SQLite store's writer (issue 16: the same semantics): the same two
/// runs of generated trips, the second meeting half the first's names with other values and items
/// (and, as a caller may send, two of its own names twice), under every policy and at every version,
/// give the same trips, ledgers and replacements in both stores.
@Suite("PostgreSQL writer: the SQLite store's semantics", .needsPostgres)
struct PGWriterDifferentialTests {
    let scratch = ScratchDirectory()

    /// What two runs left: the trips in id order, each run's ledger (row ids as their rank among
    /// the store's ids, which the two stores number differently), its replacements, the error of a
    /// run that failed.
    struct Outcome: Equatable, CustomStringConvertible {
        var trips: [ModelObject] = []
        var ledgers: [[SetAsideRecord]] = []
        var replaced: [Int] = []
        var failure: String?
        var description: String { "\(trips.count) trips, ledgers \(ledgers), replaced \(replaced), failure \(failure ?? "none")" }
    }

    /// The two runs of a seed, at a version: the second holds new values and items for every other
    /// name of the first (keeping some item titles, with other details, for merge to unite), new
    /// trips, and two of those new names again (one of them twice), in a shuffled order.
    static func runs(seed: UInt64, _ schema: any VersionedSchema.Type) -> [[ModelObject]] {
        var g = ArbitraryTrips(seed: seed, text: .postgreSQL, schema: schema, dates: ArbitraryTrips.allDates, uniqueNames: true)
        let first = g.trips(24)
        let items = schema.entity(schema.rootEntity.relationships[0].destination)!
        var second: [ModelObject] = []
        for (i, stored) in first.enumerated() where i % 2 == 1 {
            var other = g.trip()
            other.attributes[0] = stored.attributes[0]
            var list = other.relationships[0].objects
            for (j, old) in stored.relationships[0].objects.enumerated() where j % 2 == 0 {
                var changed = g.object(items, in: schema)
                changed.attributes[0] = old.attributes[0]
                list.insert(changed, at: min(j, list.count))
            }
            other.relationships[0] = .toMany(list)
            second.append(other)
        }
        second += g.trips(8)
        let n = second.count
        for k in [1, 2, 1] {
            var again = g.trip()
            again.attributes[0] = second[n - k].attributes[0]
            second.append(again)
        }
        second.shuffle(using: &g.random)
        return [first, second]
    }

    static func origins(run: Int, count: Int) -> [RecordOrigin] {
        (1...count).map { RecordOrigin(source: "run\(run).jsonl", record: $0, line: $0 + 1, column: run == 2 ? 3 : nil) }
    }

    /// Row ids in ledger reasons as their rank among the store's ids.
    static func ranked(_ ledger: [SetAsideRecord], ids: [Int64]) -> [SetAsideRecord] {
        let rank = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0 + 1) })
        return ledger.map { entry in
            var e = entry
            e.reason = e.reason.replacing(/row id (\d+)/) { m in "row id #\(rank[Int64(m.output.1)!].map(String.init) ?? "not stored \(m.output.1)")" }
            return e
        }
    }

    /// A failure's message without the store's name, and its exit status.
    static func failure(_ error: Error, store: String) -> String {
        guard let e = error as? TripError else { return "\(error)" }
        return "\(e.kind.rawValue): " + e.message.replacing(store, with: "STORE")
    }

    func sqliteOutcome(_ runs: [[ModelObject]], _ schema: any VersionedSchema.Type, _ policy: DeduplicationPolicy, path: String) throws -> Outcome {
        var out = Outcome()
        var ledgers: [[SetAsideRecord]] = []
        for (n, run) in runs.enumerated() {
            let writer = try SQLiteRecordWriter(path: path, options: WriteOptions(schema: schema, policy: n == 0 ? .merge : policy))
            do {
                for (t, origin) in zip(run, Self.origins(run: n + 1, count: run.count)) { try writer.write(t, origin: origin) }
                try writer.finish()
                ledgers.append(try writer.ledger)
                out.replaced.append(writer.replacedStoredTrips)
            } catch {
                writer.abort()
                out.failure = Self.failure(error, store: path)
            }
        }
        try SQLiteTesting.expectSoundStore(path)
        let c = try SQLiteConnection(path: path, access: .reading)
        let s = try c.prepare("SELECT \"id\" FROM \(quoted(StoreLayout(schema).rootTable)) ORDER BY \"id\"")
        var ids: [Int64] = []
        while try s.step() { ids.append(s.int64(0)) }
        out.ledgers = ledgers.map { Self.ranked($0, ids: ids) }
        out.trips = try SQLiteTesting.readStore(path).trips
        return out
    }

    func postgreSQLOutcome(_ runs: [[ModelObject]], _ schema: any VersionedSchema.Type, _ policy: DeduplicationPolicy, store: PGTestStore) throws -> Outcome {
        var out = Outcome()
        var ledgers: [[SetAsideRecord]] = []
        for (n, run) in runs.enumerated() {
            do {
                let writer = try store.write(run, schema: schema, policy: n == 0 ? .merge : policy, origins: Self.origins(run: n + 1, count: run.count))
                #expect(writer.isUpdatingExistingStore == (n > 0))
                ledgers.append(try writer.ledger)
                out.replaced.append(writer.replacedStoredTrips)
            } catch {
                out.failure = Self.failure(error, store: try store.connection().name)
            }
        }
        try store.expectSound(schema)
        let stored = try store.storedTrips(schema)
        out.ledgers = ledgers.map { Self.ranked($0, ids: stored.map(\.id)) }
        out.trips = stored.map(\.trip)
        return out
    }

    @Test("two runs leave the trips, ledgers and replacements the SQLite store's writer leaves",
          arguments: DeduplicationPolicy.allCases, TripMigrationPlan.versions)
    func sameAsSQLite(policy: DeduplicationPolicy, version: SchemaVersion) throws {
        let schema = SQLiteTesting.schema(version)
        for seed in UInt64(1)...3 {
            let store = try #require(PGTestStore())
            let runs = Self.runs(seed: seed &* 0x51 &+ UInt64(version.major), schema)
            let expected = try sqliteOutcome(runs, schema, policy, path: scratch.path("\(seed).sqlite"))
            let got = try postgreSQLOutcome(runs, schema, policy, store: store)
            if version.major > 1 && policy == .fail {
                // Both refuse the run. The SQLite store's writer counts the 2 names given twice in the
                // run among those "already in the store" (it stores trips one at a time); this one names
                // the 12 the store held before the run (it meets those first, and refuses there).
                #expect(expected.failure?.contains(": 14 names are already in the store (") == true, "seed \(seed)")
                #expect(got.failure?.hasPrefix("65: STORE: 12 names are already in the store (") == true, "seed \(seed)")
                #expect(got.failure?.hasSuffix(" and 7 more); --dedupe fail writes nothing") == true, "seed \(seed)")
            } else {
                #expect(got.failure == expected.failure, "seed \(seed)")
            }
            #expect(got.ledgers == expected.ledgers, "seed \(seed)")
            #expect(got.replaced == expected.replaced, "seed \(seed)")
            #expect(got.trips.count == expected.trips.count, "seed \(seed)")
            if version.major == 1 {
                // Names repeat at 1.0.0: the same trips, as a multiset.
                #expect(got.trips.sorted { "\($0)" < "\($1)" } == expected.trips.sorted { "\($0)" < "\($1)" }, "seed \(seed)")
            } else {
                #expect(got.trips == expected.trips, "seed \(seed)")
            }
            // Every policy has something to do, and the runs are what the test says they are.
            #expect(runs[1].count == 23)
            if version.major > 1 && policy != .fail { #expect(got.ledgers.count == 2 && got.ledgers[1].count + got.replaced[1] == 15, "seed \(seed)") }
        }
    }

    @Test("dates are timestamptz to the exact millisecond, and text comes back byte for byte, as psql reads them",
          arguments: TripMigrationPlan.versions)
    func typesAsPsqlSees(version: SchemaVersion) throws {
        let store = try #require(PGTestStore())
        let schema = SQLiteTesting.schema(version)
        var g = ArbitraryTrips(seed: 99 + UInt64(version.major), text: .postgreSQL, schema: schema, dates: ArbitraryTrips.allDates, uniqueNames: true)
        var trips = g.trips(40)
        trips[0].attributes[2] = .date(Timestamp(milliseconds: 1_714_555_800_007))   // 2024-05-01T09:30:00.007Z
        trips[0].attributes[3] = .date(Timestamp(milliseconds: -62_135_596_800_000 + 999))   // 0001-01-01T00:00:00.999Z
        trips[1].attributes[1] = .string("tab\there\nnewline \\ backslash \\N \\. 'single' \"double\" é 日本 🏔️")
        try store.write(trips, schema: schema)
        let layout = PGLayout(schema)
        let columns = layout.tables.rootColumns
        let types = try TestPostgres.psql(store.server, """
            SELECT column_name || ' ' || data_type || ' ' || coalesce(datetime_precision::text, '-') FROM information_schema.columns
            WHERE table_schema = '\(store.schema)' AND table_name = 'trips' ORDER BY ordinal_position
            """)
        let expectedTypes = ["id bigint -"] + columns.map { c in
            c.attribute.type == .date ? "\(c.name) timestamp with time zone 3" : "\(c.name) text -"
        }
        #expect(types == expectedTypes.joined(separator: "\n") + "\n")
        // Each date as milliseconds since 1970, computed by the server, and each text's UTF-8 bytes in hex.
        let dates = columns.filter { $0.attribute.type == .date }
        let selected = (dates.map { "(extract(epoch FROM \(quoted($0.name))) * 1000)::bigint" }
                        + [quoted("name"), quoted("destination")].map { "encode(convert_to(\($0), 'UTF8'), 'hex')" }).joined(separator: " || ',' || ")
        let rows = try TestPostgres.psql(store.server, "SELECT \(selected) FROM \(quoted(store.schema)).trips ORDER BY id")
        let expectedRows = trips.map { t in
            let millis = dates.map { c -> String in
                guard case .date(let d) = t.attributes[c.slot] else { return "?" }
                return String(d.milliseconds)
            }
            let hex = [0, 1].map { i -> String in
                guard case .string(let s) = t.attributes[i] else { return "?" }
                return s.utf8.map { String(format: "%02x", $0) }.joined()
            }
            return (millis + hex).joined(separator: ",")
        }
        #expect(rows == expectedRows.map { $0 + "\n" }.joined())
        let text = try TestPostgres.psql(store.server, "SELECT \"startDate\" AT TIME ZONE 'UTC' FROM \(quoted(store.schema)).trips ORDER BY id LIMIT 1"
                                      .replacing("startDate", with: dates[0].name))
        #expect(text == "2024-05-01 09:30:00.007\n")
    }

    @Test("a store whose foreign keys cannot be deferred (an earlier tripconv's) is loaded: they are made deferrable, and still hold",
          arguments: [DeduplicationPolicy.merge, .last, .first])
    func undeferrableForeignKeys(policy: DeduplicationPolicy) throws {
        typealias F = SQLiteFixtures
        let store = try #require(PGTestStore())
        try store.write([F.trip("Alpha", items: [F.item("One")], accommodation: F.accommodation("1 Inn Lane", "Inn"))])
        let c = try store.connection()
        let foreignKeys = """
            SELECT k.conname, k.condeferrable FROM pg_constraint k JOIN pg_class r ON r.oid = k.conrelid
            WHERE k.contype = 'f' AND r.relnamespace = current_schema()::regnamespace ORDER BY 1
            """
        let made = try c.query(foreignKeys)
        #expect(made.rowCount == 2)
        for row in 0..<made.rowCount {
            #expect(made.text(row, 1) == "t", "a new store's foreign keys are deferrable")
            try c.execute("ALTER TABLE \(row == 0 ? "bucket_list_items" : "living_accommodations") ALTER CONSTRAINT \(quoted(made.text(row, 0))) NOT DEFERRABLE")
        }
        // Related rows go in before their trips: with keys that cannot wait, that would fail.
        let incoming = [F.trip("Alpha", destination: "Elsewhere", items: [F.item("Two")]),
                        F.trip("Beta", items: [F.item("Three"), F.item("Four")], accommodation: F.accommodation("2 Hut Road", "Hut"))]
        let expected = try sqliteOutcome([[F.trip("Alpha", items: [F.item("One")], accommodation: F.accommodation("1 Inn Lane", "Inn"))], incoming],
                                         TripSchemaV3.self, policy, path: scratch.path("reference.sqlite"))
        try store.write(incoming, policy: policy)
        #expect(try store.trips() == expected.trips)
        let now = try c.query(foreignKeys)
        #expect((0..<now.rowCount).map { now.text($0, 1) } == ["t", "t"])
        try store.expectSound(TripSchemaV3.self)
        // They still hold: a related row naming no trip is refused.
        let orphan = PGTesting.tripError { try c.execute("INSERT INTO bucket_list_items (trip_id, position, title, details, \"hasReservation\", \"isInPlan\") VALUES (999999, 0, 'x', '', false, false)") }
        #expect(orphan != nil)
    }
}

/// Trips that PostgreSQL cannot hold, and stores the writer must not write into.
@Suite("PostgreSQL writer: refusals", .needsPostgres)
struct PGWriterRefusalTests {
    typealias F = SQLiteFixtures

    @Test("a trip with NUL in a text field is set aside as rejected, with its origin; the others are written",
          arguments: TripMigrationPlan.versions)
    func nul(version: SchemaVersion) throws {
        let store = try #require(PGTestStore())
        let schema = SQLiteTesting.schema(version)
        let trips = [
            F.trip("Alpha", schema: schema),
            F.trip("Nul\u{0}name", schema: schema),
            F.trip("Beta", items: [F.item("Louvre", details: "at \u{0} noon")], schema: schema),
            F.trip("Gamma", accommodation: F.accommodation("Rue 1", "Hotel\u{0}"), schema: schema),
            F.trip("Delta", items: [F.item("Colosseum", details: "tab\tnewline\n")], schema: schema),
        ]
        let origins = (1...5).map { RecordOrigin(source: "in.jsonl", record: $0, line: $0) }
        let writer = try store.write(trips, schema: schema, origins: origins)
        let ledger = try writer.ledger
        #expect(ledger.map(\.kind) == [.rejected, .rejected, .rejected])
        #expect(ledger.map(\.origin) == [origins[1], origins[2], origins[3]])
        #expect(ledger.map(\.reason) == [
            "field 'name': PostgreSQL text cannot hold a NUL character (U+0000)",
            "bucketList: field 'details': PostgreSQL text cannot hold a NUL character (U+0000)",
            "livingAccommodation: field 'placeName': PostgreSQL text cannot hold a NUL character (U+0000)",
        ])
        #expect(try store.trips(schema) == [trips[0], trips[4]])
        try store.expectSound(schema)
    }

    @Test("a store at a version tripconv does not know is refused, and left as it was")
    func newerStore() throws {
        let store = try #require(PGTestStore())
        try store.write([F.trip("Alpha")])
        try store.connection().execute("UPDATE tripconv_metadata SET \"value\" = '9.0.0' WHERE \"key\" = 'schemaVersion'")
        let error = PGTesting.tripError { try store.write([F.trip("Beta")]) }
        // As the SQLite store's writer: a version it does not know is the store's fault (65).
        #expect(error?.kind == .data)
        #expect(error?.message == "\(try store.connection().name): metadata schemaVersion '9.0.0' is not a known version", "\(error?.message ?? "")")
        #expect(error?.notes == ["known versions: 1.0.0, 2.0.0, 3.0.0"])
        #expect(try store.trips() == [F.trip("Alpha")])
    }

    @Test("a store older than the target is not written without migrate, naming --migrate")
    func olderStore() throws {
        let store = try #require(PGTestStore())
        try store.write([F.trip("Alpha", schema: TripSchemaV1.self)], schema: TripSchemaV1.self)
        let error = PGTesting.tripError { try store.write([F.trip("Beta")]) }
        #expect(error?.kind == .usage)
        #expect(error?.message.hasSuffix("store is at 1.0.0, target is 3.0.0; pass --migrate to migrate it in place") == true, "\(error?.message ?? "")")
        #expect(try store.trips(TripSchemaV1.self) == [F.trip("Alpha", schema: TripSchemaV1.self)])
    }
}
