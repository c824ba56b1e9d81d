import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

@Suite("SQLite reading")
struct SQLiteReaderTests {
    let scratch = ScratchDirectory()
    typealias F = SQLiteFixtures

    @Test("the sample reads as 1.0.0 by its metadata, duplicates and all, without the orphaned item")
    func sample() throws {
        let path = TestPaths.samples + "/trips-v1.sqlite"
        let result = try SQLiteTesting.readStore(path)
        #expect(result.detection == Detection(format: "sqlite", version: SchemaVersion(1, 0, 0), evidence: .marker("metadata schemaVersion 1.0.0")))
        #expect(result.rejected == [])
        #expect(result.trips.map { $0.attributes[0] } == ["Paris Getaway", "Tokyo Food Tour", "Paris Getaway", "Hiking the Dolomites",
                                                          "Tokyo Food Tour", "Weekend in Lisbon"].map(Value.string))
        #expect(result.origins == (1...6).map { RecordOrigin(source: path, record: $0) })
        let v1 = TripSchemaV1.self
        #expect(result.trips[5] == F.trip("Weekend in Lisbon", destination: "Lisbon, Portugal", start: "2024-10-04T17:45:00.250Z",
                                          end: "2024-10-06T21:10:00Z",
                                          items: [F.item("Tram 28", details: "Board at Martim Moniz", inPlan: true),
                                                  F.item("Pastéis de Belém", inPlan: true)], schema: v1))
        #expect(result.trips[3] == F.trip("Hiking the Dolomites", destination: "Cortina d'Ampezzo, Italy", start: "2024-07-06T07:00:00Z",
                                          end: "2024-07-13T16:00:00Z",
                                          accommodation: F.accommodation("Località Passo Falzarego", "Rifugio Lagazuoi"), schema: v1))
    }

    @Test("a store without tripconv's metadata is told by its columns and indexes",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote), arguments: TripMigrationPlan.versions)
    func structure(version: SchemaVersion) throws {
        let schema = SQLiteTesting.schema(version)
        let path = scratch.path("bare.sqlite")
        let trips = [F.trip("Paris Getaway", items: [F.item("Louvre"), F.item("Orsay")], schema: schema),
                     F.trip("Weekend in Lisbon", accommodation: F.accommodation("Rua Augusta 1", "Casa"), schema: schema)]
        try SQLiteTesting.writeStore(trips, to: path, schema: schema)
        try SQLiteCLI.run(path, "DROP TABLE tripconv_metadata; DROP TABLE tripconv_migrations; PRAGMA user_version = 0;")
        let result = try SQLiteTesting.readStore(path)
        let expected = [
            "columns start_date, end_date; no unique index on name",
            "columns start_date, end_date; unique index on name",
            "columns startDate, endDate; unique index on name",
        ][version.major - 1]
        #expect(result.detection.version == version)
        #expect(result.detection.evidence == .structure(expected))
        #expect(result.trips == trips)
        #expect(try SQLiteStore.open(path: path).hasMetadata == false)
    }

    @Test("metadata that contradicts the columns is a data error", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func contradictingMetadata() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        try SQLiteCLI.run(path, "UPDATE tripconv_metadata SET value = '3.0.0' WHERE key = 'schemaVersion';")
        let error = SQLiteTesting.tripError { _ = try SQLiteRecordReader(path: path) }
        #expect(error == TripError.data("\(path): metadata says 3.0.0, but the trips table has columns start_date, end_date; no unique index on name",
                                        notes: ["its columns fit 1.0.0, 2.0.0"]))
    }

    @Test("a file that is not SQLite is a data error")
    func notSQLite() throws {
        let path = scratch.path("trips.sqlite")
        try Data("name,destination\nParis Getaway,Paris\n".utf8).write(to: URL(fileURLWithPath: path))
        let error = SQLiteTesting.tripError { _ = try SQLiteRecordReader(path: path) }
        #expect(error == TripError.data("\(path): not a SQLite store (file is not a database)"))
    }

    @Test("an empty file is a data error: it has no trips table")
    func emptyFile() throws {
        let path = scratch.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let error = SQLiteTesting.tripError { _ = try SQLiteRecordReader(path: path) }
        #expect(error == TripError.data("\(path): not a trip store: it has no trips table", notes: ["the database has no tables"]))
    }

    @Test("a missing file is no input")
    func missing() {
        let path = scratch.path("absent.sqlite")
        let error = SQLiteTesting.tripError { _ = try SQLiteRecordReader(path: path) }
        #expect(error == TripError(.noInput, "\(path): cannot open: No such file or directory"))
    }

    @Test("a store locked by a writer is busy once the timeout passes", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func busy() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        // The sqlite3 tool takes an exclusive lock and holds it until its input ends.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SQLiteCLI.path)
        process.arguments = ["-batch", path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("BEGIN EXCLUSIVE;\nSELECT 'locked';\n".utf8))
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("locked") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        let error = SQLiteTesting.tripError { _ = try SQLiteRecordReader(path: path, busyTimeoutMilliseconds: 100) }
        input.fileHandleForWriting.write(Data("ROLLBACK;\n".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(error?.kind == .busy)
        #expect(error?.kind.rawValue == 75)
        #expect(error?.message == "\(path): store is busy: another process holds its lock (database is locked)")
    }

    @Test("a bad row is a rejection with its place, and reading goes on", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func badRow() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        try SQLiteCLI.run(path, "UPDATE trips SET start_date = 'soon' WHERE id = 2;")
        let result = try SQLiteTesting.readStore(path)
        #expect(result.trips.count == 5)
        #expect(result.rejected == [SetAsideRecord(origin: RecordOrigin(source: path, record: 2),
                                                   reason: "field 'start_date': expected an ISO 8601 date, found 'soon'")])
    }

    @Test("a value longer than the limit rejects its trip", .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func longValue() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        try SQLiteCLI.run(path, "UPDATE trips SET destination = replace(hex(zeroblob(8400000)), '0', 'x') WHERE id = 4;")
        let result = try SQLiteTesting.readStore(path)
        #expect(result.trips.count == 5)
        #expect(result.rejected == [SetAsideRecord(origin: RecordOrigin(source: path, record: 4),
                                                   reason: "field 'destination': a value of 16800000 bytes is longer than the limit of 16 MiB")])
    }

    @Test("a column no version declares rejects the trip, unless unknown fields are ignored",
          .enabled(if: SQLiteCLI.isAvailable, SQLiteCLI.absentNote))
    func unknownColumn() throws {
        let path = try scratch.copySample("trips-v1.sqlite")
        try SQLiteCLI.run(path, "ALTER TABLE trips ADD COLUMN rider TEXT;")
        let strict = try SQLiteTesting.readStore(path)
        #expect(strict.trips.isEmpty)
        #expect(strict.rejected.first?.reason == "unknown field 'rider' matches no schema version")
        let lenient = try SQLiteTesting.readStore(path, options: ReadOptions(ignoreUnknown: true))
        #expect(lenient.trips.count == 6)
        #expect(lenient.detection.unknownIgnored == 6)
    }

    @Test("the factory reads a store and refuses standard input")
    func factory() throws {
        let path = TestPaths.samples + "/trips-v1.sqlite"
        var reader = try FormatFactory.makeReader(.file(path), format: .sqlite, options: ReadOptions())
        var count = 0
        while case .trip? = try reader.next() { count += 1 }
        #expect(count == 6)
        let error = SQLiteTesting.tripError { _ = try FormatFactory.makeReader(.standardInput, format: .sqlite, options: ReadOptions()) }
        #expect(error?.kind == .usage)
    }
}

@Suite("SQLite error mapping")
struct SQLiteErrorMappingTests {
    // Primary and extended result codes of SQLite, by number, and the exit status each must give.
    @Test("each SQLite result code maps to its exit status", arguments: [
        (5, SQLiteAccess.reading, TripError.Kind.busy),          // SQLITE_BUSY
        (5 | (2 << 8), .writing, .busy),                         // SQLITE_BUSY_SNAPSHOT
        (6, .writing, .busy),                                    // SQLITE_LOCKED
        (14, .writing, .cantCreate),                             // SQLITE_CANTOPEN
        (14, .reading, .noInput),
        (26, .reading, .data),                                   // SQLITE_NOTADB
        (11, .reading, .data),                                   // SQLITE_CORRUPT
        (13, .writing, .io),                                     // SQLITE_FULL
        (10, .writing, .io),                                     // SQLITE_IOERR
        (10 | (4 << 8), .writing, .io),                          // SQLITE_IOERR_FSYNC
        (19 | (8 << 8), .writing, .data),                        // SQLITE_CONSTRAINT_UNIQUE
    ])
    func mapping(code: Int, access: SQLiteAccess, kind: TripError.Kind) {
        let error = TripError(sqliteCode: Int32(code), message: "what SQLite said", path: "t.sqlite", access: access, doing: "cannot open")
        #expect(error.kind == kind)
        #expect(error.message.hasPrefix("t.sqlite: "))
    }
}
