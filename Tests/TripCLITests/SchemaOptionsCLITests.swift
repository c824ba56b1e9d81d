import Foundation
import Testing

/// `schema`'s options that go together, and those that do not.
@Suite("schema's options")
struct SchemaOptionsCLITests {
    @Test("--pg-schema without --model naming a PostgreSQL store is a usage error (64), not ignored")
    func pgSchemaNeedsPostgreSQLModel() throws {
        let r = try CLI.tripconv("schema", "--model", CLI.root.appendingPathComponent("samples/coredata-v3.store").path, "--pg-schema", "shop")
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("--pg-schema goes with --model naming a PostgreSQL store"), "\(r.stderr)")
        #expect(r.out.isEmpty)
    }
}
