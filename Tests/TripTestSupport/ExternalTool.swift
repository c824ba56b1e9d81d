import Foundation

/// Independent programs the tests check our output with (python3, sqlite3, xmllint) and the built
/// tools: found on PATH, run to the end with both pipes read.
public enum ExternalTool {
    /// What a run gave.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
        /// Standard output as UTF-8 text.
        public var out: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The path of an executable on PATH, or nil when it is not installed.
    public static func path(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Runs a program to the end. Standard input is `stdin` (or nothing); `environment` is added to
    /// this process's; `directory` is the working directory (this process's when nil).
    public static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil, directory: URL? = nil,
                           environment: [String: String]? = nil) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = directory }
        if let environment { p.environment = environment }
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
        // Read both pipes before waiting, so a large output cannot block the program.
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

    /// python3 on PATH, or nil.
    public static var python3: String? { path("python3") }

    /// Runs a python3 script with arguments, python3 from PATH: a test that calls this has the
    /// `.needsPython3` trait, which skips it where python3 is not on PATH.
    public static func python(_ script: String, _ arguments: [String] = [], stdin: Data? = nil) throws -> Result {
        try run(try program("python3"), ["-c", script] + arguments, stdin: stdin)
    }

    /// The path of `name` on PATH; fails, naming it, where it is not (a test without its trait).
    public static func program(_ name: String) throws -> String {
        guard let found = path(name) else { throw Missing(name: name) }
        return found
    }

    /// A program a test runs is not on PATH.
    public struct Missing: Error, CustomStringConvertible {
        public let name: String
        public var description: String { "\(name) is not on PATH: the test lacks the trait that says it needs it" }
    }
}
