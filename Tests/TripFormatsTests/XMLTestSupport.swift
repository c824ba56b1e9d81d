import Foundation
import TripFormats
import TripKit
import TripTestSupport

// Test support for the XML suites: temporary files, reading and writing through the public API,
// external tools, and a seeded generator of arbitrary trips.

/// What reading an input gave.
typealias XMLReadResult = ReadItems

/// Reads a file to the end through the XML reader.
func xmlRead(_ path: String, options: ReadOptions = ReadOptions()) throws -> XMLReadResult {
    var reader = try FormatFactory.makeReader(.file(path), format: .xml, options: options)
    let result = try ReadItems(reading: &reader)
    // Nil again after the end.
    precondition(result.endsAgain)
    return result
}

/// Reads XML text (UTF-8) through a temporary file.
func xmlRead(text: String, options: ReadOptions = ReadOptions()) throws -> XMLReadResult {
    try xmlRead(bytes: Array(text.utf8), options: options)
}

func xmlRead(bytes: [UInt8], options: ReadOptions = ReadOptions()) throws -> XMLReadResult {
    let dir = ScratchDirectory()
    return try withExtendedLifetime(dir) { try xmlRead(dir.file("input.xml", bytes), options: options) }
}

/// The error reading gives, or nil when it reads to the end.
func xmlReadError(text: String) -> TripError? {
    do { _ = try xmlRead(text: text); return nil } catch let e as TripError { return e } catch { return TripError(.io, "\(error)") }
}

/// Writes objects of a schema through the XML writer and returns the text.
func xmlWrite(_ objects: [ModelObject], schema: any VersionedSchema.Type = TripSchemaV3.self) throws -> String {
    let dir = ScratchDirectory()
    let path = dir.path + "/out.xml"
    var writer = try FormatFactory.makeWriter(.file(path), format: .xml, options: WriteOptions(schema: schema))
    for o in objects { try writer.write(o) }
    try writer.finish()
    return dir.contents("out.xml") ?? ""
}

// MARK: - Building trips

/// A 3.0.0 trip (tripViews at its default).
func xmlTripV3(_ name: String, destination: String = "Lisbon", start: Int64 = 1_714_521_600_000, end: Int64 = 1_715_126_400_000,
               items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
    ModelObject(attributes: [.string(name), .string(destination), .date(Timestamp(milliseconds: start)),
                             .date(Timestamp(milliseconds: end)), .int(0)],
                relationships: [.toMany(items), .toOne(accommodation)])
}

/// A 1.0.0 trip.
func xmlTripV1(_ name: String, destination: String = "Lisbon", start: Int64 = 1_714_521_600_000, end: Int64 = 1_715_126_400_000,
               items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
    ModelObject(attributes: [.string(name), .string(destination), .date(Timestamp(milliseconds: start)),
                             .date(Timestamp(milliseconds: end))],
                relationships: [.toMany(items), .toOne(accommodation)])
}

func xmlItem(_ title: String, _ details: String = "", reserved: Bool = false, planned: Bool = false) -> ModelObject {
    ModelObject(attributes: [.string(title), .string(details), .bool(reserved), .bool(planned)])
}

func xmlPlace(_ address: String, _ placeName: String) -> ModelObject {
    ModelObject(attributes: [.string(address), .string(placeName)])
}

// MARK: - Arbitrary trips

extension TripText {
    /// XML's hard text: quotes, markup characters, CR, LF, CRLF, tabs, spaces at the ends, words that
    /// look like other types; only the scalars XML 1.0 can carry.
    static let xml = TripText(pieces: [
        " ", "  ", "\t", "\n", "\r", "\r\n", "<", ">", "&", "\"", "'", "]]>", "<!--", "&amp;", "&#13;",
        "true", "false", "null", "~", "0", "1e3", "2024-05-01", "yes", "no", "é", "ß", "€", "日本",
        "🧳", "👩‍👩‍👧", "e\u{301}", "\u{00A0}", "\u{0085}", "\u{2028}", "\u{200B}", "\u{FEFF}", "\u{7F}",
        "\u{9F}", "\u{FFFD}", "\u{10FFFF}", "Paris", "Lisbon", "CDATA", "<trip>", "</name>",
    ], allows: { v in
        v.value >= 0x20 ? v.value != 0xFFFE && v.value != 0xFFFF : v == "\t" || v == "\n" || v == "\r"
    })
}

extension ArbitraryTrips {
    /// Arbitrary trips of a schema for the XML tests (an accommodation of nothing but defaults is kept, to
    /// be read back as none: `expected`).
    static func xml(seed: UInt64, schema: any VersionedSchema.Type = TripSchemaV3.self) -> ArbitraryTrips {
        ArbitraryTrips(seed: seed, text: .xml, schema: schema, keepsDefaultToOne: true)
    }
}
