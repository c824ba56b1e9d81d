import Foundation
import Testing
import TripKit
import TripFormats
import TripTestSupport

/// The writers that take formatted bytes (JSON, JSON Lines, CSV rows) write the same file whether the
/// pipeline formats trips on one thread or on several.
@Suite("Writers formatting on several threads")
struct ThreadedWritingTests {
    struct ArrayReader: RecordReader {
        var records: [TripRecord]
        var position = 0
        var detection = Detection(format: "test", version: SchemaVersion(3, 0, 0))
        mutating func next() throws -> ReadItem? {
            guard position < records.count else { return nil }
            defer { position += 1 }
            return .trip(records[position])
        }
    }

    func convert(_ trips: [ModelObject], to format: Format, threads: Int) throws -> [UInt8] {
        let dir = try JSONTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.\(format.rawValue)").path
        var pipeline = Pipeline()
        pipeline.encodingThreads = threads
        let records = trips.enumerated().map { TripRecord(object: $1, origin: RecordOrigin(source: "gen", record: $0 + 1)) }
        _ = try pipeline.run([PipelineInput(name: "gen") { ArrayReader(records: records) }],
                             into: { try FormatFactory.makeWriter(.file(path), format: format, options: WriteOptions()) })
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("JSON, JSON Lines, CSV and TSV come out byte for byte the same on 1, 2 and 5 threads",
          arguments: [Format.json, .jsonl, .csv, .tsv])
    func sameFile(format: Format) throws {
        for (seed, count) in [(1 as UInt64, 0), (2, 1), (3, 257), (4, 1500)] {
            var generator = ArbitraryTrips.json(seed: seed)
            // Distinct names, so that deduplication keeps every generated trip.
            let trips = generator.trips(count, in: TripSchemaV3.self).enumerated().map { i, trip -> ModelObject in
                var trip = trip
                trip.attributes[0] = .string("\(i) \(trip.attributes[0].stringValue ?? "")")
                return trip
            }
            let one = try convert(trips, to: format, threads: 1)
            #expect(try convert(trips, to: format, threads: 2) == one, "\(format) \(count) trips")
            #expect(try convert(trips, to: format, threads: 5) == one, "\(format) \(count) trips")
        }
    }
}
