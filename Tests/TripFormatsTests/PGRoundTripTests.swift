import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// tripconv's PostgreSQL writer and reader together: generated trips with a store's hard text
/// (quotes, SQL, separators, every kind of Unicode scalar but NUL, which PostgreSQL's text cannot
/// hold) and dates across years 1 to 9999 come back exactly, at every version. The independent
/// checks are `PGReaderTests` (stores psql wrote) and the writer's tests (read with psql).
@Suite("PostgreSQL store round trip", .needsPostgres)
struct PGRoundTripTests {
    @Test("generated trips written by PGRecordWriter read back equal through PGRecordReader", arguments: TripMigrationPlan.versions)
    func property(version: SchemaVersion) throws {
        let text = TripText(pieces: TripText.sqlite.pieces.filter { !$0.contains("\u{0}") }, allows: { $0 != "\u{0}" })
        for seed in UInt64(1)...6 {
            try PGTestSchema.with { s in
                let schema = TripMigrationPlan.schema(for: version)!
                var generator = ArbitraryTrips(seed: seed &* 0x9E37_79B9 &+ UInt64(version.major), text: text, schema: schema,
                                               dates: ArbitraryTrips.allDates, uniqueNames: true)
                let trips = (0..<(5 + generator.random.below(40))).map { _ in generator.trip(schema: schema) }
                var options = WriteOptions(schema: schema)
                options.pgSchema = s.name
                let writer = try PGRecordWriter(address: s.address, options: options)
                for t in trips { try writer.write(t) }
                try writer.finish()
                let result = try s.read()
                #expect(result.rejected == [], "seed \(seed)")
                #expect(result.detection.version == version && result.detection.evidence == .marker("metadata schemaVersion \(version)"))
                #expect(result.trips == trips.map(generator.expected), "seed \(seed)")
            }
        }
    }
}
