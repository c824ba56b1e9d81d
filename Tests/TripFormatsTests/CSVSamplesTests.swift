import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

/// The CSV and TSV files of samples/ read as they say.
@Suite("CSV samples")
struct CSVSamplesTests {
    static let samples = TestPaths.samples

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: "\(samples)/\(name)")))
    }

    /// Reads a sample and writes its trips again with the writer at `schema`.
    static func rewritten(_ name: String, format: Format, schema: any VersionedSchema.Type) throws -> String {
        let trips = CSVIO.trips(try CSVIO.read(path: "\(samples)/\(name)", format: format).items)
        return try CSVIO.written(trips, format: format, options: WriteOptions(schema: schema))
    }

    @Test("trips-v1.csv is a 1.0.0 legacy export: BOM, CRLF, old spellings, tripViews, duplicate names with different lists")
    func legacy() throws {
        let raw = try Self.bytes("trips-v1.csv")
        #expect(raw.starts(with: [0xEF, 0xBB, 0xBF]))
        #expect(raw.contains(13))
        let (items, detection) = try CSVIO.read(path: "\(Self.samples)/trips-v1.csv")
        let trips = CSVIO.trips(items)
        #expect(detection.version == SchemaVersion(1, 0, 0))
        #expect(detection.transientIgnored == 5)
        #expect(trips.map { $0.attributes[0] } == ["Family Visit", "Ski Week", "Family Visit", "Conference", "Ski Week"].map(Value.string))
        #expect(trips[0].relationships[0].objects.map { $0.attributes[0] } == [.string("Apple Park Visitor Center"), .string("Stevens Creek Trail")])
        #expect(trips[2].relationships[0].objects.map { $0.attributes[0] } == [.string("Stevens Creek Trail"), .string("Farmers market")])
        #expect(trips[3].relationships[1].objects == [CSVTrip.place("170 S Market St", "Hotel \"Fairmont\"")])
        #expect(trips[3].attributes[2] == .date(Timestamp(iso8601: "2024-06-10T15:00:00.250Z")!))
    }

    @Test("trips-v3.csv and trips-v2.tsv are exactly what the writer writes for the trips they hold")
    func writerOutput() throws {
        #expect(try Self.rewritten("trips-v3.csv", format: .csv, schema: TripSchemaV3.self) == String(decoding: try Self.bytes("trips-v3.csv"), as: UTF8.self))
        #expect(try Self.rewritten("trips-v2.tsv", format: .tsv, schema: TripSchemaV2.self) == String(decoding: try Self.bytes("trips-v2.tsv"), as: UTF8.self))
    }

    @Test("tables-v3 holds the trips of trips-v3.csv")
    func tables() throws {
        let tables = CSVIO.trips(try CSVIO.read(path: "\(Self.samples)/tables-v3").items)
        let rows = CSVIO.trips(try CSVIO.read(path: "\(Self.samples)/trips-v3.csv").items)
        #expect(tables.count == 2)
        #expect(tables == rows)
    }

    @Test("broken-quote.csv stops at its unterminated quote")
    func broken() throws {
        let path = "\(Self.samples)/broken-quote.csv"
        let error = CSVIO.error { _ = try CSVIO.read(path: path) }
        #expect(error?.message == "\(path):5:1: unterminated quoted field (opened at 3:1)")
    }

    @Test("legacy-latin1.csv needs the latin1 input encoding")
    func latin1() throws {
        let path = "\(Self.samples)/legacy-latin1.csv"
        #expect(CSVIO.error { _ = try CSVIO.read(path: path) }?.message == "\(path):2:2: invalid UTF-8 bytes 0xE3")
        let trips = CSVIO.trips(try CSVIO.read(path: path, options: ReadOptions(inputEncoding: "latin1")).items)
        #expect(trips.map { $0.attributes[0] } == [.string("São Paulo"), .string("Zürich")])
        #expect(trips[0].relationships[0].objects == [CSVTrip.item("Café da manhã")])
    }
}
