import Foundation
import Testing
import TripFormats
import TripKit
import TripTestSupport

/// The examples the public API's documentation shows, run: an example that no longer compiles or
/// no longer does what its comment says fails here.
@Suite("Documented examples")
struct LibraryExampleTests {
    @Test("Pipeline's example: old.json to trips.csv under --dedupe last, bad records set aside")
    func pipelineExample() throws {
        let dir = ScratchDirectory()
        let old = dir.file("old.json", """
            {"schemaVersion": "1.0.0", "trips": [
              {"name": "Oslo", "destination": "Norway", "start_date": "2024-05-01T09:30:00Z", "end_date": "2024-05-02T09:30:00Z"},
              {"name": "Oslo", "destination": "Norway, again", "start_date": "2024-06-01T09:30:00Z", "end_date": "2024-06-02T09:30:00Z"},
              {"name": "Lima"}
            ]}
            """)
        let csv = dir.path("trips.csv")
        var printed: [String] = []
        // As in Pipeline's documentation, with the paths of this test.
        var pipeline = Pipeline()
        pipeline.policy = .last
        pipeline.keepsGoing = true
        let input = PipelineInput(name: old) {
            try FormatFactory.makeReader(.file(old), format: .json, options: ReadOptions())
        }
        let summary = try pipeline.run([input], into: {
            try FormatFactory.makeWriter(.file(csv), format: .csv, options: WriteOptions(policy: .last))
        }, setAside: { record in printed.append("\(record.origin): \(record.kind): \(record.reason)") })
        #expect(summary.read == 3 && summary.written == 1 && summary.dropped == 1 && summary.rejected == 1)
        #expect(summary.read == summary.written + summary.merged + summary.dropped + summary.rejected)
        #expect(printed.count == 2)
        let text = try #require(dir.contents("trips.csv"))
        #expect(text.contains("Norway, again") && !text.contains("Lima"))
    }

    @Test("StoreBackup's example: a migration's backup is named by the version it holds, and numbered rather than replace one")
    func storeBackupExample() throws {
        let dir = ScratchDirectory()
        let path = dir.path("trips.sqlite")
        for round in 1...2 {
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: TestPaths.root.appendingPathComponent("samples/trips-v1.sqlite").path, toPath: path)
            // As in StoreBackup's documentation.
            let store = try SQLiteStore.open(path: path, readOnly: false)
            let report = try store.migrate(to: TripSchemaV3.self, backup: .besideStore)
            #expect(report?.backup == path + (round == 1 ? ".1.0.0.bak" : ".1.0.0.bak.2"))
            #expect(report?.merged == 2)
        }
        #expect(try SQLiteStore.open(path: path + ".1.0.0.bak").version == SchemaVersion(1, 0, 0))
        #expect(try SQLiteStore.open(path: path + ".1.0.0.bak.2").version == SchemaVersion(1, 0, 0))
    }

    @Test("FormatSniffer's example: a CSV header told by its bytes")
    func formatSnifferExample() {
        let sniffed = FormatSniffer.sniff(Array("name,destination\nParis,France\n".utf8), atEnd: true)
        #expect(sniffed.told?.format == .csv)
        #expect(sniffed.told?.phrase == "told by its bytes (a header split by ',' into 2 trip columns)")
    }
}
