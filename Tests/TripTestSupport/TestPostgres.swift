import Foundation

/// The test PostgreSQL server (`.ci/postgres start` makes one, `TRIPCONV_TEST_PG` addresses it) and
/// psql, the independent writer and reader the store tests check tripconv against.
public enum TestPostgres {
    /// The server's libpq address, nil when `TRIPCONV_TEST_PG` is unset (a user's `swift test`).
    public static var address: String? {
        guard let s = ProcessInfo.processInfo.environment["TRIPCONV_TEST_PG"], !s.isEmpty else { return nil }
        return s
    }

    /// Whether a missing server fails the tests rather than skipping them (under CI=true).
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The one line a run without a server prints, once per process.
    public static let skipNote: Void = {
        print("note: TRIPCONV_TEST_PG not set; the tests that need a PostgreSQL server skip (.ci/run starts one)")
    }()

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
