import Foundation
import Synchronization
import TripTestSupport

/// The directories `CLI.temporaryDirectory()` made, removed at exit.
private let madeDirectories = Mutex<[String]>([])
private let registerForRemovalAtExit: Void = {
    atexit {
        for path in madeDirectories.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}()

/// Runs the built `tripconv` binary and other programs for the CLI tests.
enum CLI {
    /// The package root, from this file's path.
    static let root: URL = TestPaths.root

    /// The built binary: `TRIPCONV_BIN`, else beside the test bundle, else `.build/debug`.
    static let binary: String = {
        if let b = ProcessInfo.processInfo.environment["TRIPCONV_BIN"] { return b }
        var candidates: [String] = []
        var bundle = URL(fileURLWithPath: CommandLine.arguments[0])
        for _ in 0..<4 {
            bundle = bundle.deletingLastPathComponent()
            candidates.append(bundle.appendingPathComponent("tripconv").path)
        }
        candidates.append(root.appendingPathComponent(".build/debug/tripconv").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }()

    typealias Result = ExternalTool.Result

    /// Runs a program with arguments in the package root (or `directory`), with optional standard input;
    /// the built binaries come first on its PATH.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil, directory: URL? = nil,
                    environment: [String: String] = [:]) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = URL(fileURLWithPath: binary).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        for (k, v) in environment { env[k] = v }
        return try ExternalTool.run(executable, arguments, stdin: stdin, directory: directory ?? root, environment: env)
    }

    /// Runs tripconv.
    @discardableResult
    static func tripconv(_ arguments: String..., stdin: Data? = nil) throws -> Result {
        try run(binary, arguments, stdin: stdin)
    }

    /// The path of a tool on PATH, if installed.
    static func tool(_ name: String) -> String? { ExternalTool.path(name) }

    /// A fresh empty directory for one test, removed when the test process exits if the test did
    /// not remove it (most CLI tests leave theirs: 1,100 of them had piled up in /tmp).
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        registerForRemovalAtExit
        madeDirectories.withLock { $0.append(url.path) }
        return url
    }

    /// Python 3 code run on a file, printing what the test compares.
    static func python(_ code: String, _ arguments: [String] = []) throws -> Result {
        try run(try ExternalTool.program("python3"), ["-c", code] + arguments)
    }
}
