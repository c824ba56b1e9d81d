import Foundation
import Testing

/// What a test needs from the machine (a program, a PostgreSQL server, `../shared`), as Swift Testing
/// traits: a test or suite whose need is not met is reported as skipped with the reason, never run to
/// a silent pass. Under CI=true (`.ci/run`) the programs CI installs and the server are required:
/// a test that needs a missing one is run (and fails), or, for the server, one test fails for all.
public enum Requirements {
    /// Whether this is CI (`CI=true`), where what `.ci/run` installs must be there.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The reason a test that needs a PostgreSQL server skips.
    public static var postgresNote: Comment {
        isCI ? "TRIPCONV_TEST_PG is not set under CI=true: the test 'a PostgreSQL server is given under CI=true' fails for this one"
            : "needs a PostgreSQL server: TRIPCONV_TEST_PG is not set (eval \"$(.ci/postgres start)\" starts one)"
    }

    /// The reason a test that needs a program skips.
    public static func programNote(_ name: String, _ install: String) -> Comment {
        Comment(rawValue: "needs \(name), which is not on PATH (\(install))")
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs where `TRIPCONV_TEST_PG` names a server; skips, saying so, elsewhere (under CI=true
    /// the test `TestPostgres.checkGivenUnderCI` runs in fails for them all).
    public static var needsPostgres: Self {
        .enabled(if: TestPostgres.address != nil, Requirements.postgresNote)
    }

    /// Runs where `name` is on PATH; skips, saying how to install it, elsewhere. With `requiredInCI`
    /// (a program `.ci/run` installs) it runs under CI=true regardless, so that its absence fails.
    public static func needsProgram(_ name: String, install: String, requiredInCI: Bool = false) -> Self {
        .enabled(if: ExternalTool.path(name) != nil || (requiredInCI && Requirements.isCI), Requirements.programNote(name, install))
    }

    /// Runs where the zstd tool is on PATH, and under CI=true, where `.ci/run` installs it.
    public static var needsZstd: Self { needsProgram("zstd", install: "apt-get install zstd", requiredInCI: true) }

    /// Runs where python3 is on PATH; skips, saying so, elsewhere.
    public static var needsPython3: Self { needsProgram("python3", install: "apt-get install python3") }

    /// Runs where the sqlite3 tool is on PATH; skips, saying so, elsewhere.
    public static var needsSQLite3: Self { needsProgram("sqlite3", install: "apt-get install sqlite3") }

    /// Runs where `../shared/real-stores` (stores apps wrote) is beside the package; skips, saying so, elsewhere.
    public static var needsRealStores: Self {
        .enabled(if: TestPaths.realStores != nil, "needs the stores apps wrote in ../shared/real-stores, which is absent")
    }

    /// Runs where `../shared/conformance` is beside the package; skips, saying so, elsewhere.
    public static var needsConformance: Self {
        .enabled(if: TestPaths.conformance != nil, "needs the conformance suites in ../shared/conformance, which is absent")
    }
}
