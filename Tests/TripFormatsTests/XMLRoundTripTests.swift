import Foundation
import Testing
import TripFormats
import TripKit
import TripTestSupport

@Suite("XMLRoundTrip")
struct XMLRoundTripTests {
    @Test("the 3.0.0 sample is read and written back byte for byte")
    func sampleThree() throws {
        let path = TestPaths.samples + "/trips-v3.xml"
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let read = try xmlRead(path)
        #expect(read.rejections.isEmpty)
        #expect(read.objects.count == 3)
        #expect(try xmlWrite(read.objects) == original)
    }

    @Test("the 1.0.0 sample written at 1.0.0 reads back to the same trips, duplicates included")
    func sampleOne() throws {
        let read = try xmlRead(TestPaths.samples + "/trips-v1.xml")
        let text = try xmlWrite(read.objects, schema: TripSchemaV1.self)
        #expect(text.contains("<start_date>2024-05-01T09:30:00Z</start_date>"))
        #expect(!text.contains("tripViews"))
        let again = try xmlRead(text: text)
        #expect(again.objects == read.objects)
        #expect(again.detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("a trip of awkward strings round-trips", arguments: [
        " leading and trailing ", "tab\there", "lines\nand\r\nreturns\r", "<&>\"'", "]]>", "", "\u{00A0}\u{2028}\u{0085}",
        "🧳 e\u{301} 日本", "true", "  ", "\r", "&amp;#13;",
    ])
    func awkwardStrings(value: String) throws {
        let trip = xmlTripV3(value, destination: value, items: [xmlItem(value, value), xmlItem("x")],
                             accommodation: xmlPlace(value, "p"))
        #expect(try xmlRead(text: xmlWrite([trip])).objects == [trip])
    }

    @Test("arbitrary 3.0.0 trips round-trip", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func propertyThree(seed: UInt64) throws {
        try roundTrip(seed: seed, schema: TripSchemaV3.self, count: 150)
    }

    @Test("arbitrary 1.0.0 trips round-trip", arguments: [11, 12, 13, 14] as [UInt64])
    func propertyOne(seed: UInt64) throws {
        try roundTrip(seed: seed, schema: TripSchemaV1.self, count: 150)
    }

    @Test("a document of many chunks round-trips, values split across chunk boundaries included")
    func manyChunks() throws {
        try roundTrip(seed: 99, schema: TripSchemaV3.self, count: 3000)
    }

    private func roundTrip(seed: UInt64, schema: any VersionedSchema.Type, count: Int) throws {
        var generator = ArbitraryTrips.xml(seed: seed, schema: schema)
        let trips = (0..<count).map { _ in generator.trip() }
        let text = try xmlWrite(trips, schema: schema)
        let read = try xmlRead(text: text)
        #expect(read.rejections.isEmpty, "seed \(seed): \(read.rejections.first?.reason ?? "")")
        #expect(read.detection.version == schema.versionIdentifier)
        let expected = trips.map(generator.expected)
        #expect(read.objects.count == expected.count)
        for (i, (got, want)) in zip(read.objects, expected).enumerated() where got != want {
            Issue.record("seed \(seed), trip \(i + 1): read \(got), wrote \(want)")
            break
        }
    }
}
