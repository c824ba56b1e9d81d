import Foundation
import Testing

/// Core Data (SwiftData) stores through the command line: detected, read, never written.
@Suite("tripconv with Core Data stores")
struct MigrateCoreDataTests {
    typealias S = MigrateSupport

    @Test("detect reports each sample as coredata with its version and the evidence")
    func detect() throws {
        let r = try CLI.tripconv("detect", "samples/coredata-v1.store", "samples/coredata-v2.store", "samples/coredata-v3.store")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == """
            samples/coredata-v1.store: coredata 1.0.0 (columns ZSTART_DATE, ZEND_DATE; no unique index on ZNAME), 6 trips, 2 names repeated
            samples/coredata-v2.store: coredata 2.0.0 (marker Z_METADATA NSStoreModelVersionIdentifiers 2.0.0), 4 trips, 0 names repeated
            samples/coredata-v3.store: coredata 3.0.0 (marker Z_METADATA NSStoreModelVersionIdentifiers 3.0.0), 3 trips, 0 names repeated

            """)
        let json = try CLI.tripconv("detect", "--json", "samples/coredata-v3.store")
        #expect(json.out.contains("\"format\": \"coredata\""))
    }

    @Test("the 1.0.0 Core Data sample converts to the same trips as the SQLite sample that holds them")
    func sameAsSQLiteSample() throws {
        let coreData = try CLI.tripconv("samples/coredata-v1.store", "--to", "jsonl")
        let sqlite = try CLI.tripconv("samples/trips-v1.sqlite", "--to", "jsonl", "-q")
        #expect(coreData.status == 0, "\(coreData.stderr)")
        #expect(coreData.out == sqlite.out)
        #expect(S.withoutTime(coreData.stderr) == "tripconv: read 6 trips from 1 input; coredata 1.0.0 by columns ZSTART_DATE, ZEND_DATE; no unique index on ZNAME; stages 1.0.0 -> 2.0.0 (custom), 2.0.0 -> 3.0.0 (lightweight); merged 2; dropped 0; rejected 0; wrote 4 at 3.0.0")
    }

    @Test("a Core Data store converts into a new SQLite store, and is left exactly as it was",
          .enabled(if: MigrateSupport.sqlite3 != nil, MigrateSupport.absent))
    func convertsIntoStore() throws {
        let (tmp, store) = try S.copy("coredata-v3.store", as: "default.store")
        let before = S.bytes(store)
        let db = tmp.appendingPathComponent("trips.sqlite").path
        let r = try CLI.tripconv(store, "-o", db, "-q")
        #expect(r.status == 0, "\(r.stderr)")
        try S.expectSound(db)
        #expect(try S.sqlite(db, "SELECT name, startDate FROM trips ORDER BY id;")
                == "Reykjavík|2025-02-20T10:00:00Z\nWeekend in Portland|2024-09-06T17:00:00Z\nKyoto|2025-04-02T00:00:00Z\n")
        #expect(S.bytes(store) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).sorted() == ["default.store", "trips.sqlite"])
    }

    @Test("migrate and -o refuse a Core Data store and leave it alone")
    func neverWritten() throws {
        let (tmp, store) = try S.copy("coredata-v1.store", as: "default.store")
        let before = S.bytes(store)
        let migrate = try CLI.tripconv("migrate", store)
        #expect(migrate.status == 65)
        #expect(migrate.stderr == """
            tripconv: \(store): a Core Data (SwiftData) store, which tripconv reads but never writes or migrates
            note: convert it into a new store: `tripconv \(store) -o trips.sqlite`

            """)
        let into = try CLI.tripconv("samples/trips-v3.json", "-o", store, "--migrate")
        #expect(into.status == 65)
        let to = try CLI.tripconv("samples/trips-v3.json", "--to", "coredata", "-o", tmp.appendingPathComponent("new.store").path)
        #expect(to.status == 64)
        #expect(S.bytes(store) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == ["default.store"])
    }
}
