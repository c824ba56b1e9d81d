import Foundation
import Testing
import TripKit
import TripTestSupport
import TripFormats

// Test support for the SQLite suites: scratch directories, the sqlite3 tool as an independent
// checker, small trip builders, and a seeded generator of arbitrary trips.

/// The sqlite3 command-line tool: an independent reader of what we write.
enum SQLiteCLI {
    static let path = "/usr/bin/sqlite3"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }
    static let absentNote: Comment = "needs the sqlite3 tool at /usr/bin/sqlite3 (apt-get install sqlite3)"

    /// Runs SQL on a database with the tool and returns what it prints.
    @discardableResult
    static func run(_ database: String, _ sql: String) throws -> String {
        let result = try ExternalTool.run(path, ["-batch", database], stdin: Data(sql.utf8))
        if result.status != 0 || !result.stderr.isEmpty {
            throw SQLiteCLIFailure(message: result.stderr, status: result.status)
        }
        return result.out
    }

    struct SQLiteCLIFailure: Error, CustomStringConvertible {
        let message: String
        let status: Int32
        var description: String { "sqlite3 exited \(status): \(message)" }
    }
}

/// The SQLite suites' helpers, in one namespace so they cannot clash with other formats' tests.
enum SQLiteTesting {
    /// Expects the store to be sound: the sqlite3 tool's `PRAGMA integrity_check` says ok and
    /// `PRAGMA foreign_key_check` finds nothing. Without the tool, SQLite's own checks through our
    /// connection stand in, and the test says so.
    static func expectSoundStore(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if SQLiteCLI.isAvailable {
            let integrity = try SQLiteCLI.run(path, "PRAGMA integrity_check;")
            #expect(integrity == "ok\n", "integrity_check of \(path)", sourceLocation: sourceLocation)
            let keys = try SQLiteCLI.run(path, "PRAGMA foreign_key_check;")
            #expect(keys == "", "foreign_key_check of \(path)", sourceLocation: sourceLocation)
        } else {
            print("note: sqlite3 tool absent; checking \(path) through tripconv's own connection instead")
            #expect(try SQLiteStore.open(path: path).problems() == [], sourceLocation: sourceLocation)
        }
    }

    /// Writes trips into a store (new or existing), then checks it with the sqlite3 tool.
    @discardableResult
    static func writeStore(_ trips: [ModelObject], to path: String, schema: any VersionedSchema.Type = TripSchemaV3.self,
                           policy: DeduplicationPolicy = .merge, migrate: Bool = false,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> SQLiteRecordWriter {
        let writer = try SQLiteRecordWriter(path: path, options: WriteOptions(schema: schema, policy: policy, migrate: migrate))
        do {
            for t in trips { try writer.write(t) }
            try writer.finish()
        } catch {
            writer.abort()
            throw error
        }
        try expectSoundStore(path, sourceLocation: sourceLocation)
        return writer
    }

    /// Reads a store to the end, and checks the reader says nil again after it.
    static func readStore(_ path: String, options: ReadOptions = ReadOptions()) throws -> SQLiteReadResult {
        var reader: any RecordReader = try SQLiteRecordReader(path: path, options: options)
        return try readAll(&reader)
    }

    /// Reads what a store reader gives to the end, and checks it says nil again after it.
    static func readAll(_ reader: inout any RecordReader) throws -> SQLiteReadResult {
        let items = try ReadItems(reading: &reader)
        #expect(items.endsAgain, "nil again after the end")
        return SQLiteReadResult(trips: items.objects, origins: items.trips.map(\.origin), rejected: items.rejections,
                                detection: items.detection)
    }

    /// The error a throwing call throws, as a `TripError` (the test fails when it throws something else).
    static func tripError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> TripError? {
        do {
            try body()
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return nil
        } catch let error as TripError {
            return error
        } catch {
            Issue.record("expected a TripError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    static func schema(_ version: SchemaVersion) -> any VersionedSchema.Type { TripMigrationPlan.schema(for: version)! }
}

/// Everything a reader yields from a store.
struct SQLiteReadResult {
    var trips: [ModelObject] = []
    var origins: [RecordOrigin] = []
    var rejected: [SetAsideRecord] = []
    var detection: Detection
}

// MARK: - Trips

/// Builders of small trips in any version's layout.
enum SQLiteFixtures {
    static func item(_ title: String, details: String = "", reservation: Bool = false, inPlan: Bool = false) -> ModelObject {
        ModelObject(attributes: [.string(title), .string(details), .bool(reservation), .bool(inPlan)])
    }

    static func accommodation(_ address: String, _ placeName: String) -> ModelObject {
        ModelObject(attributes: [.string(address), .string(placeName)])
    }

    static func date(_ text: String) -> Value { .date(Timestamp(iso8601: text)!) }

    /// A trip of the schema's root entity: name, destination, the two dates, the transient count at its default.
    static func trip(_ name: String, destination: String = "Lisbon, Portugal",
                     start: String = "2024-05-01T09:30:00Z", end: String = "2024-05-08T18:00:00Z",
                     items: [ModelObject] = [], accommodation: ModelObject? = nil,
                     schema: any VersionedSchema.Type = TripSchemaV3.self) -> ModelObject {
        let values: [Value] = [.string(name), .string(destination), date(start), date(end)]
        var attributes: [Value] = []
        for (i, a) in schema.rootEntity.attributes.enumerated() {
            attributes.append(a.isTransient ? (a.defaultValue ?? .null) : values[i])
        }
        return ModelObject(attributes: attributes, relationships: [.toMany(items), .toOne(accommodation)])
    }
}

// MARK: - Generated trips

extension TripText {
    /// A store's hard text: quotes, SQL and its comments and parameters, NUL, separators, newlines,
    /// words other formats read as types, leading and trailing spaces; any scalar.
    static let sqlite = TripText(pieces: [
        "'", "\"", "''", ";", ",", "\t", "\n", "\r\n", "\r", " ", "  leading", "trailing  ", "\u{0}",
        "'); DROP TABLE trips; --", "SELECT", "NULL", "null", "~", "no", "yes", "true", "0", "1e3", "0x1F",
        "2024-05-01", "é", "ß", "日本語", "🏔️", "👩‍👩‍👧", "\u{202E}", "\\", "%", "_", "?1", ":name", "@x", "$y",
        "--", "/*", "*/", "x'00'", "Paris", "&amp;", "<b>",
    ])
}

extension ArbitraryTrips {
    /// Arbitrary trips for the store tests, as a reader gives them back: names unique within one
    /// generator (a store keeps one trip per name), dates across years 1 to 9999.
    static func sqlite(seed: UInt64) -> ArbitraryTrips {
        ArbitraryTrips(seed: seed, text: .sqlite, dates: ArbitraryTrips.allDates, uniqueNames: true)
    }
}
