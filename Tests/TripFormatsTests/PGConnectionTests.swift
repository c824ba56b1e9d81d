import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The PostgreSQL connection (issue 16): faults are named by the server's place and map to their exit
/// statuses, no message carries a password, and a server `.ci/postgres start` made is reachable
/// through the one variable `TRIPCONV_TEST_PG`. Without it (a user's `swift test`) the tests that
/// need a server skip through the `.needsPostgres` trait, saying so; under CI=true its absence fails
/// one test, `givenUnderCI`.
@Suite("PostgreSQL connection")
struct PGConnectionTests {
    /// The test server's connection string, for a test with the `.needsPostgres` trait.
    static func server(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try TestPostgres.requiredAddress(sourceLocation: sourceLocation)
    }

    @Test("a PostgreSQL server is given under CI=true", .enabled(if: TestPostgres.isRequired, "only CI=true requires a server"))
    func givenUnderCI() {
        TestPostgres.checkGivenUnderCI()
    }

    @Test("a server that is not there is exit 69, naming the host and port")
    func unreachable() {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("no-server-\(UUID().uuidString)").path
        #expect(throws: TripError.self) { try PGConnection("host=\(dir) port=5 connect_timeout=2") }
        do {
            _ = try PGConnection("host=\(dir) port=5 connect_timeout=2")
        } catch let e as TripError {
            #expect(e.kind == .unavailable && e.kind.rawValue == 69)
            #expect(e.message.hasPrefix("\(dir):5: cannot connect to PostgreSQL: "), "\(e.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("no message carries the password of the address")
    func noPassword() {
        do {
            _ = try PGConnection("postgresql://someone:s3cret-pass@127.0.0.1:1/trips?connect_timeout=2")
            Issue.record("connected to port 1")
        } catch let e as TripError {
            #expect(e.kind == .unavailable)
            #expect(!e.message.contains("s3cret") && !e.notes.joined().contains("s3cret"), "\(e.message)")
            #expect(e.message.hasPrefix("127.0.0.1:1: "), "\(e.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("the test server answers", .needsPostgres)
    func answers() throws {
        let address = try Self.server()
        let c = try PGConnection(address)
        #expect(c.serverVersion >= 100000)
        #expect(try c.column("SELECT 1 + 1") == ["2"])
        #expect(try c.column("SELECT NULL::text") == [nil])
    }

    @Test("a role that does not exist is refused: exit 77", .needsPostgres)
    func refused() throws {
        let address = try Self.server()
        do {
            _ = try PGConnection(address + " user=nobody_here")
            Issue.record("a role that does not exist connected")
        } catch let e as TripError {
            #expect(e.kind == .permission && e.kind.rawValue == 77, "\(e.kind): \(e.message)")
        }
    }
}
