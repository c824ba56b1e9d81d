import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// Text that another tool stored in a store, as SQLite hands it over: U+0000 inside a value is kept;
/// bytes that are not UTF-8, stored as TEXT, and a BLOB where text is expected reject their trip with
/// the reason, never read as characters they are not (SQLite converts a BLOB to text byte for byte,
/// and decoding invalid UTF-8 would repair it into U+FFFD, silently). The stores are the samples,
/// changed by the sqlite3 tool; a tripconv store and a Core Data store read through the same cursor,
/// and both are checked.
@Suite("Store text written by other tools")
struct StoreForeignTextTests {
    let scratch = ScratchDirectory()

    /// A store kind: its sample, the tables and columns a trip's name, destination and start date
    /// and an item's title are in, and its reader.
    struct Kind: CustomStringConvertible, Sendable {
        var sample: String
        var trips: String, key: String, name: String, destination: String, startDate: String
        var items: String, itemKey: String, title: String
        var format: Format
        var description: String { format == .sqlite ? "a tripconv store" : "a Core Data store" }

        /// The field a column holds, as messages name it (a Core Data column is Z and the name in capitals).
        func field(_ column: String) -> String {
            guard format == .coredata else { return column }
            return ["ZNAME": "name", "ZDESTINATION": "destination", "ZSTART_DATE": "start_date", "ZTITLE": "title"][column] ?? column
        }
    }

    static let kinds = [
        Kind(sample: "trips-v1.sqlite", trips: "trips", key: "id", name: "name", destination: "destination", startDate: "start_date",
             items: "bucket_list_items", itemKey: "id", title: "title", format: .sqlite),
        Kind(sample: "coredata-v1.store", trips: "ZTRIP", key: "Z_PK", name: "ZNAME", destination: "ZDESTINATION",
             startDate: "ZSTART_DATE", items: "ZBUCKETLISTITEM", itemKey: "Z_PK", title: "ZTITLE", format: .coredata),
    ]

    func read(_ kind: Kind, _ sql: String) throws -> (path: String, result: SQLiteReadResult) {
        let path = try scratch.copySample(kind.sample)
        try SQLiteCLI.run(path, sql)
        var reader = try FormatFactory.makeReader(.file(path), format: kind.format, options: ReadOptions())
        return (path, try SQLiteTesting.readAll(&reader))
    }

    @Test("U+0000 and characters beyond the BMP inside TEXT are kept", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote),
          arguments: kinds)
    func nulAndNonBMP(_ kind: Kind) throws {
        let (_, r) = try read(kind, """
            UPDATE \(kind.trips) SET \(kind.name) = 'a' || char(0) || 'b', \(kind.destination) = CAST(X'F09F98802000E282AC' AS TEXT)
              WHERE \(kind.key) = 2;
            UPDATE \(kind.items) SET \(kind.title) = char(0) WHERE \(kind.itemKey) = 1;
            """)
        #expect(r.rejected.isEmpty, "\(r.rejected)")
        let trip = try #require(r.trips.first { $0.attributes[0] == .string("a\u{0}b") })
        #expect(trip.attributes[1] == .string("😀 \u{0}€"))
        #expect(r.trips.contains { $0.relationships[0].objects.first?.attributes[0] == .string("\u{0}") })
    }

    @Test("TEXT that is not UTF-8 rejects its trip, naming the byte, and reading goes on",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote), arguments: kinds)
    func invalidUTF8(_ kind: Kind) throws {
        // Latin-1 "Café" as another tool might store it, a lone continuation byte, a surrogate's
        // encoding, a truncated sequence at the end.
        let (path, r) = try read(kind, """
            UPDATE \(kind.trips) SET \(kind.destination) = CAST(X'436166E9' AS TEXT) WHERE \(kind.key) = 2;
            UPDATE \(kind.trips) SET \(kind.name) = CAST(X'4180' AS TEXT) WHERE \(kind.key) = 4;
            UPDATE \(kind.trips) SET \(kind.name) = CAST(X'EDA080' AS TEXT) WHERE \(kind.key) = 5;
            UPDATE \(kind.items) SET \(kind.title) = CAST(X'4142F09F98' AS TEXT) WHERE \(kind.itemKey) = 1;
            """)
        #expect(r.trips.count == 2)
        #expect(!r.trips.contains { $0.attributes.contains { if case .string(let s) = $0 { s.contains("\u{FFFD}") } else { false } } })
        let reasons = Dictionary(uniqueKeysWithValues: r.rejected.map { ($0.origin.record, $0.reason) })
        #expect(reasons == [
            1: "field '\(kind.field(kind.title))': text is not valid UTF-8: 0xF0 0x9F 0x98 at byte 2 of 5",
            2: "field '\(kind.field(kind.destination))': text is not valid UTF-8: 0xE9 at byte 3 of 4",
            4: "field '\(kind.field(kind.name))': text is not valid UTF-8: 0x80 at byte 1 of 2",
            5: "field '\(kind.field(kind.name))': text is not valid UTF-8: 0xED at byte 0 of 3",
        ], "\(r.rejected)")
        #expect(r.rejected.allSatisfy { $0.origin.source == path })
    }

    @Test("a BLOB where text is expected rejects its trip: in a string and in a date",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote), arguments: kinds)
    func blobs(_ kind: Kind) throws {
        // "Hello" as bytes: SQLite would hand it over as the text "Hello"; it is not text.
        let (path, r) = try read(kind, """
            UPDATE \(kind.trips) SET \(kind.name) = X'48656C6C6F' WHERE \(kind.key) = 1;
            UPDATE \(kind.trips) SET \(kind.startDate) = CAST('2024-05-01T09:30:00Z' AS BLOB) WHERE \(kind.key) = 4;
            UPDATE \(kind.items) SET \(kind.title) = X'' WHERE \(kind.itemKey) = 4;
            """)
        #expect(r.trips.count == 3)
        let reasons = Dictionary(uniqueKeysWithValues: r.rejected.map { ($0.origin.record, $0.reason) })
        let itemTrip = Int(try SQLiteCLI.run(path,
                                               "SELECT \(kind.format == .sqlite ? "trip_id" : "ZTRIP") FROM \(kind.items) WHERE \(kind.itemKey) = 4;")
            .trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(reasons == [
            1: "field '\(kind.field(kind.name))': expected text, found a BLOB of 5 bytes",
            4: "field '\(kind.field(kind.startDate))': expected text, found a BLOB of 20 bytes",
            itemTrip: "field '\(kind.field(kind.title))': expected text, found a BLOB of 0 bytes",
        ], "\(r.rejected)")
    }
}
