import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// A connection to the server cut in the middle of a load (issue 16): the run fails as an I/O
/// failure (exit 74), nothing of it is committed, and the same load run again completes.
@Suite("PostgreSQL writer: a connection cut mid-load", .needsPostgres)
struct PGFaultTests {
    typealias F = SQLiteFixtures

    @Test("terminated after a COPY batch: finish fails with 74, nothing of the run is stored, and the load again completes",
          arguments: TripMigrationPlan.versions)
    func terminated(version: SchemaVersion) throws {
        let store = try #require(PGTestStore())
        let schema = SQLiteTesting.schema(version)
        let before = [F.trip("Stored before", items: [F.item("Kept")], schema: schema)]
        try store.write(before, schema: schema)
        // 20,000 trips: the connection is cut after at least 9,000, sent in COPY batches (staged ones
        // in one COPY of 256 KiB sends, ended to reserve ids), once the server is in the middle of a COPY.
        let trips = (0..<20_000).map { i in
            F.trip("Trip \(i)", items: [F.item("Item \(i)")], accommodation: i % 2 == 0 ? F.accommodation("\(i) Main St", "Inn") : nil, schema: schema)
        }
        let writer = try PGRecordWriter(address: store.server, options: store.options(schema))
        let other = try PGConnection(store.server)
        let pid = writer.connection.backendPID
        func lastStatement() throws -> String { try other.column("SELECT query FROM pg_stat_activity WHERE pid = \(pid)").first.flatMap { $0 } ?? "" }
        var written = 0
        while written < 19_900 {
            if written >= 9000, try lastStatement().hasPrefix("COPY ") { break }
            for t in trips[written..<(written + 100)] { try writer.write(t) }
            written += 100
        }
        let statement = try lastStatement()
        #expect(statement.hasPrefix("COPY "), "the writer's last statement: \(statement)")
        #expect(try other.column("SELECT pg_terminate_backend(\(pid))") == ["t"])
        let error = PGTesting.tripError {
            for t in trips[written...] { try writer.write(t) }
            try writer.finish()
        }
        #expect(error?.kind == .io && error?.kind.rawValue == 74, "\(error?.kind.rawValue ?? 0): \(error?.message ?? "")")
        #expect(error?.message.contains("the connection to PostgreSQL was lost") == true, "\(error?.message ?? "")")
        #expect(error?.notes == ["nothing of this input was committed; run it again"])
        #expect(try store.trips(schema) == before)
        try store.expectSound(schema)
        // The same load again completes.
        try store.write(trips, schema: schema)
        #expect(try store.tripCount() == trips.count + 1)
        #expect(try store.trips(schema) == before + trips)
        try store.expectSound(schema)
    }

    @Test("terminated while moving staged trips under the policy: the same, with the stored trips as they were")
    func terminatedWhileResolving() throws {
        let store = try #require(PGTestStore())
        let stored = (0..<300).map { F.trip("Trip \($0)", items: [F.item("Old \($0)")]) }
        try store.write(stored)
        let incoming = (0..<600).map { F.trip("Trip \($0)", destination: "Elsewhere", items: [F.item("New \($0)")]) }
        let writer = try PGRecordWriter(address: store.server, options: store.options(TripSchemaV3.self, .merge))
        for t in incoming { try writer.write(t) }
        // A second loader holds one of the names, so finish() waits in the middle of its moves.
        let blocker = try store.connection()
        try blocker.execute("BEGIN; SELECT 1 FROM trips WHERE name = 'Trip 150' FOR UPDATE")
        let finishing = PGBackgroundFinish(writer)
        #expect(try finishing.waitsForLock(server: store.server), "the writer never waited for the name another transaction holds")
        #expect(try PGConnection(store.server).column("SELECT pg_terminate_backend(\(finishing.pid))") == ["t"])
        #expect(finishing.wait(seconds: 30))
        try blocker.execute("ROLLBACK")
        #expect(finishing.error?.kind == .io, "\(finishing.error?.message ?? "")")
        #expect(try store.trips() == stored)
        let writer2 = try store.write(incoming)
        #expect(try writer2.ledger.count == 300)
        #expect(try store.tripCount() == 600)
        try store.expectSound(TripSchemaV3.self)
    }
}
