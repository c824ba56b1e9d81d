import Foundation
import Testing

/// The test PostgreSQL server (`.ci/postgres start` makes one, `TRIPCONV_TEST_PG` addresses it) and
/// psql, the independent writer and reader the store tests check tripconv against.
public enum TestPostgres {
    /// The server's libpq address, nil when `TRIPCONV_TEST_PG` is unset (a user's `swift test`).
    public static var address: String? {
        guard let s = ProcessInfo.processInfo.environment["TRIPCONV_TEST_PG"], !s.isEmpty else { return nil }
        return s
    }

    /// Whether a missing server fails the run rather than only skipping the tests (under CI=true).
    public static var isRequired: Bool { Requirements.isCI }

    /// The server's address, for a test that runs with the `.needsPostgres` trait; where there is no
    /// server (a test without that trait), a failure naming the trait, and an error that ends the test.
    public static func requiredAddress(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(address, "no PostgreSQL server (TRIPCONV_TEST_PG): a test that needs one has the .needsPostgres trait",
                     sourceLocation: sourceLocation)
    }

    /// The test that fails, once for all the tests that need a server, when CI runs without one.
    public static func checkGivenUnderCI(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(address != nil, "TRIPCONV_TEST_PG is not set: CI must start a server (eval \"$(.ci/postgres start)\"); the tests that need one skipped",
                sourceLocation: sourceLocation)
    }

    /// A fresh name for a test's own schema or database, `t_` and 16 hex digits.
    public static func uniqueName() -> String {
        "t_" + String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded(to: 16)
    }

    /// Runs SQL with psql (stopping at the first error, which throws) and returns what it prints,
    /// unaligned, tuples only.
    @discardableResult
    public static func psql(_ address: String, _ sql: String) throws -> String {
        guard let tool = ExternalTool.path("psql") else { throw Failure(message: "psql is not installed") }
        let r = try ExternalTool.run(tool, ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", address, "-f", "-"],
                                     stdin: Data(sql.utf8))
        guard r.status == 0 else { throw Failure(message: "psql exited \(r.status): \(r.stderr)") }
        return r.out
    }

    /// A psql failure.
    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
