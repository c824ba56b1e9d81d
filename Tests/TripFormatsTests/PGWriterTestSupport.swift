import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

// Test support for the PostgreSQL writer's suites: a store of its own per test (a random schema in
// the test server, dropped when released), loads through `PGRecordWriter`, the trips read back
// with SQL, and the store's soundness checked by the server.

/// A store of one test's own: the schema `t_<random>` in the test server (`TRIPCONV_TEST_PG`),
/// not created until a writer creates it, dropped with everything in it when released.
final class PGTestStore {
    let server: String
    let schema: String

    /// A fresh store, or nil when there is no test server (after saying so, or failing under CI).
    init?() {
        guard let server = try? PGConnectionTests.server() else { return nil }
        self.server = server
        schema = TestPostgres.uniqueName()
    }

    deinit {
        // The writers of the test are done (finished, aborted or terminated): nothing holds locks.
        if let c = try? PGConnection(server) { try? c.execute("SET lock_timeout = '10s'; DROP SCHEMA IF EXISTS \(quoted(schema)) CASCADE") }
    }

    /// A connection whose unqualified names resolve in the store's schema.
    func connection() throws -> PGConnection { try PGConnection(server, schema: schema) }

    /// Write options for this store.
    func options(_ schema: any VersionedSchema.Type, _ policy: DeduplicationPolicy = .merge) -> WriteOptions {
        var o = WriteOptions(schema: schema, policy: policy)
        o.pgSchema = self.schema
        return o
    }

    /// Writes trips in one run (each under its origin when given), and returns the finished writer.
    @discardableResult
    func write(_ trips: [ModelObject], schema: any VersionedSchema.Type = TripSchemaV3.self, policy: DeduplicationPolicy = .merge,
               origins: [RecordOrigin]? = nil) throws -> PGRecordWriter {
        let writer = try PGRecordWriter(address: server, options: options(schema, policy))
        do {
            for (i, t) in trips.enumerated() {
                if let origins { try writer.write(t, origin: origins[i]) } else { try writer.write(t) }
            }
            try writer.finish()
        } catch {
            writer.abort()
            throw error
        }
        return writer
    }

    /// The store's trips in id order, as objects of `schema`, with their ids.
    func storedTrips(_ schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> [(id: Int64, trip: ModelObject)] {
        let c = try connection()
        let layout = PGLayout(schema)
        let ids = try c.column("SELECT \"id\" FROM \(quoted(layout.rootTable)) ORDER BY \"id\"").map { Int64($0!)! }
        var out: [(id: Int64, trip: ModelObject)] = []
        let loader = PGTripLoader(layout: layout, place: schema.versionIdentifier.description)
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let some = Array(ids[chunk..<min(chunk + 500, ids.count)])
            let loaded = try loader.load(c, ids: some, root: layout.rootTable, children: { $0.name })
            out += some.map { ($0, loaded[$0]!) }
        }
        return out
    }

    /// The store's trips in id order.
    func trips(_ schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> [ModelObject] {
        try storedTrips(schema).map(\.trip)
    }

    /// How many trips the store holds; nil when it has no trips table.
    func tripCount() throws -> Int? {
        let c = try connection()
        guard try c.column("SELECT to_regclass('trips') IS NOT NULL") == ["t"] else { return nil }
        return Int(try c.column("SELECT count(*) FROM trips")[0]!)
    }

    /// Expects the store sound, as the server sees it: each name once where the version says names
    /// are unique (and its unique index there and valid), no related row naming a trip that is not
    /// there, every foreign key in place and validated.
    func expectSound(_ schema: any VersionedSchema.Type, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let c = try connection()
        let layout = PGLayout(schema)
        let root = quoted(layout.rootTable), key = quoted(layout.foreignKey)
        if let unique = layout.uniqueColumn, let index = layout.tables.uniqueIndexName {
            let repeated = try c.column("SELECT count(*) - count(DISTINCT \(quoted(unique.name))) FROM \(root)")
            #expect(repeated == ["0"], "names stored more than once", sourceLocation: sourceLocation)
            let valid = try c.column("SELECT i.indisunique AND i.indisvalid FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid "
                                     + "WHERE x.relname = \(PGStoreVersion.literal(index)) AND x.relnamespace = current_schema()::regnamespace")
            #expect(valid == ["t"], "the unique index \(index)", sourceLocation: sourceLocation)
        }
        for child in layout.children {
            let table = quoted(child.name)
            let orphans = try c.column("SELECT count(*) FROM \(table) c WHERE c.\(key) IS NOT NULL "
                                       + "AND NOT EXISTS (SELECT 1 FROM \(root) t WHERE t.\"id\" = c.\(key))")
            #expect(orphans == ["0"], "\(child.name): rows naming no trip", sourceLocation: sourceLocation)
            let unattached = try c.column("SELECT count(*) FROM \(table) WHERE \(key) IS NULL")
            #expect(unattached == ["0"], "\(child.name): rows of no trip", sourceLocation: sourceLocation)
            let keys = try c.column("SELECT convalidated FROM pg_constraint WHERE contype = 'f' "
                                    + "AND conrelid = to_regclass(\(PGStoreVersion.literal(table)))")
            #expect(keys == ["t"], "\(child.name): its foreign key", sourceLocation: sourceLocation)
        }
    }
}

/// A writer's `finish()` on a thread of its own, for a test that acts on the server while it waits.
final class PGBackgroundFinish: @unchecked Sendable {
    let writer: PGRecordWriter
    /// The writer's backend process.
    let pid: Int
    /// What `finish()` threw, once it has returned.
    private(set) var error: TripError?
    private let done = DispatchSemaphore(value: 0)

    init(_ writer: PGRecordWriter) {
        self.writer = writer
        pid = writer.connection.backendPID
        Thread { [self] in
            do { try self.writer.finish() } catch { self.error = error as? TripError ?? TripError.data("\(error)") }
            done.signal()
        }.start()
    }

    /// Waits until the writer's backend waits for a lock another transaction holds (of the kind `event`
    /// names, `advisory` or `transactionid`, when one is given; at most 30 s).
    func waitsForLock(server: String, event: String? = nil) throws -> Bool {
        let watcher = try PGConnection(server)
        for _ in 0..<3000 {
            let waiting = try watcher.query("SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE pid = \(pid)")
            if waiting.rowCount == 1, waiting.textIfAny == "Lock", event == nil || waiting.text(0, 1) == event { return true }
            usleep(10_000)
        }
        return false
    }

    /// Waits for `finish()` to return; false when it has not in `seconds`.
    func wait(seconds: Double = 60) -> Bool { done.wait(timeout: .now() + seconds) == .success }
}

/// The PostgreSQL suites' helpers.
enum PGTesting {
    /// The error a throwing call throws, as a `TripError`.
    static func tripError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> TripError? {
        SQLiteTesting.tripError(sourceLocation: sourceLocation, body)
    }
}

extension TripText {
    /// What COPY's text format escapes, and what SQL and libpq might trip on: tabs, newlines,
    /// carriage returns, backslashes (and the `\N` and `\.` COPY gives meaning to), quotes; any
    /// scalar but NUL, which PostgreSQL's text cannot hold (`PGRecordWriter` sets such trips aside).
    static let postgreSQL = TripText(pieces: [
        "\t", "\n", "\r\n", "\r", "\\", "\\N", "\\.", "\\t", "\\\\", "'", "\"", "''", "$1", "$$", "E'\\x'", ";", ",",
        "'); DROP TABLE trips; --", "NULL", "null", "\\N\t\\N", " ", "  leading", "trailing  ", "é", "ß", "日本語",
        "🏔️", "👩‍👩‍👧", "\u{202E}", "\u{FEFF}", "\u{7F}", "%", "_", "COPY", "Paris",
    ], allows: { $0.value != 0 })
}
