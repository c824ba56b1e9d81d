import Foundation

/// Runs the built `tripconv` binary and other programs for the CLI tests.
enum CLI {
    /// The package root, from this file's path.
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

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

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var out: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs a program with arguments in the package root (or `directory`), with optional standard input.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil, directory: URL? = nil,
                    environment: [String: String] = [:]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.currentDirectoryURL = directory ?? root
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = URL(fileURLWithPath: binary).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
        p.standardOutput = outPipe
        p.standardError = errPipe
        p.standardInput = stdin == nil ? FileHandle.nullDevice : inPipe
        try p.run()
        if let stdin {
            DispatchQueue.global().async {
                try? inPipe.fileHandleForWriting.write(contentsOf: stdin)
                try? inPipe.fileHandleForWriting.close()
            }
        }
        final class Box: @unchecked Sendable { var data = Data() }
        let out = Box()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { out.data = outPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let err = errPipe.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: out.data, stderr: String(decoding: err, as: UTF8.self))
    }

    /// Runs tripconv.
    @discardableResult
    static func tripconv(_ arguments: String..., stdin: Data? = nil) throws -> Result {
        try run(binary, arguments, stdin: stdin)
    }

    /// The path of a tool on PATH, if installed.
    static func tool(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// A fresh empty directory for one test.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Python 3 code run on a file, printing what the test compares.
    static func python(_ code: String, _ arguments: [String] = []) throws -> Result {
        try run(tool("python3") ?? "/usr/bin/python3", ["-c", code] + arguments)
    }
}
