import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

@Suite("JSON round trips")
struct JSONRoundTripTests {
    typealias S = JSONTestSupport

    static let schemas: [any VersionedSchema.Type] = [TripSchemaV1.self, TripSchemaV2.self, TripSchemaV3.self]

    @Test("a written trip reads back equal, by example", arguments: [Format.json, .jsonl])
    func byExample(format: Format) throws {
        let trips = [JSONWriterTests.paris, JSONWriterTests.rome,
                     S.trip("Tab\there \"quoted\" \\ \u{0} \u{2028} 😀", destination: " spaced ",
                            items: [S.item("", details: "line\nbreak", reserved: true, inPlan: true)],
                            accommodation: S.accommodation("", "x"))]
        let path = try S.writeFile(trips, format: format)
        var reader = try JSONRecordReader(.file(path), format: format)
        var read: [ModelObject] = []
        while let item = try reader.next() {
            guard case .trip(let t) = item else { Issue.record("rejected: \(item)"); continue }
            read.append(t.object)
        }
        #expect(read == trips)
        #expect(reader.detection.version == SchemaVersion(3, 0, 0))
    }

    @Test("generated trips written then read are equal, at every version and chunk size",
          arguments: [Format.json, .jsonl], 0..<3)
    func byProperty(format: Format, schemaIndex: Int) throws {
        let schema = Self.schemas[schemaIndex]
        var generator = ArbitraryTrips.json(seed: 0x5EED_0000 + UInt64(schemaIndex * 2 + (format == .json ? 0 : 1)))
        // 60 batches of 0 to 8 trips: a few hundred trips per format and version.
        for batch in 0..<60 {
            let trips = generator.trips(generator.random.int(0...8), in: schema)
            let text = try S.write(trips, format: format, schema: schema)
            let chunkSize = batch % 3 == 0 ? 1 << 16 : generator.random.int(1...40)
            let result = try S.read(text, format: format, chunkSize: chunkSize)
            #expect(result.rejections.isEmpty, "batch \(batch): \(result.rejections.map(\.reason))")
            #expect(result.objects == trips, "batch \(batch) at \(schema.versionIdentifier), chunks of \(chunkSize)")
            if format == .json {
                #expect(result.detection.version == schema.versionIdentifier)
            }
        }
    }

    @Test("every JSON text the writer makes is valid JSON to the generic parser")
    func writerOutputIsValidJSON() throws {
        var generator = ArbitraryTrips.json(seed: 42)
        for _ in 0..<20 {
            let text = try S.write(generator.trips(generator.random.int(0...5), in: TripSchemaV3.self), format: .json)
            #expect(throws: Never.self) { try JSONSyntax.validate(Array(text.utf8)) }
        }
    }
}
