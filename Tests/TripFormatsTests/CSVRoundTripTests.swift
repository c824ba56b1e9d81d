import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

@Suite("CSV round trip")
struct CSVRoundTripTests {
    /// Writes trips and reads them back, through files and the public factory entry points.
    static func roundTrip(_ trips: [ModelObject], format: Format,
                          schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> (trips: [ModelObject], detection: Detection) {
        let (items, detection) = try roundTripItems(trips, format: format, schema: schema)
        return (CSVIO.trips(items), detection)
    }

    static func roundTripItems(_ trips: [ModelObject], format: Format,
                               schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> (items: [ReadItem], detection: Detection) {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("trips.\(format.rawValue)")
        var writer = try FormatFactory.makeWriter(.file(path), format: format, options: WriteOptions(schema: schema))
        for t in trips { try writer.write(t) }
        try writer.finish()
        return try CSVIO.read(path: path, format: format)
    }

    static let examples: [ModelObject] = [
        CSVTrip.trip("Paris, \"la ville\"", "France\nEurope", start: 1_714_555_800_123, end: 1_714_815_000_000,
                     items: [CSVTrip.item("=1+1", details: " padded ", reservation: true),
                             CSVTrip.item("tab\there", details: "back\\slash \\t", inPlan: true),
                             CSVTrip.item("", details: "cr\ronly")],
                     place: CSVTrip.place("1 Main St\r\nFloor 2", "")),
        CSVTrip.trip("", "", items: [], place: nil),
        CSVTrip.trip("日本 🚀", "\u{FEFF}bom", place: CSVTrip.place("", "Ryokan")),
    ]

    @Test("examples with every quirk come back equal; an empty name or destination is a bad record", arguments: [Format.csv, .tsv])
    func examples(format: Format) throws {
        CSVTrip.expectRead(try Self.roundTripItems(Self.examples, format: format).items, wrote: Self.examples)
    }

    @Test("1.0.0 trips come back as 1.0.0", arguments: [Format.csv, .tsv])
    func oldVersion(format: Format) throws {
        let trips = [CSVTrip.trip("A", "B", items: [CSVTrip.item("x")], schema: TripSchemaV1.self),
                     CSVTrip.trip("A", "C", schema: TripSchemaV1.self)]
        let (read, detection) = try Self.roundTrip(trips, format: format, schema: TripSchemaV1.self)
        #expect(read == trips)
        #expect(detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("generated trips come back equal", arguments: [Format.csv, .tsv], [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func property(format: Format, seed: UInt64) throws {
        var generator = ArbitraryTrips.csv(seed: seed)
        let trips = (0..<40).map { _ in generator.trip() }
        CSVTrip.expectRead(try Self.roundTripItems(trips, format: format).items, wrote: trips)
    }
}
