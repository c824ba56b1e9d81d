#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// `--model PATH` when PATH is an app's Swift source (a `.swift` file, or a folder holding some),
/// plan JSON or (for `schema`) an Xcode `.xcdatamodeld`: the versions and the migration plan. Swift is read by `tripconv-swift-model`, a program
/// of its own beside tripconv, so that swift-syntax is loaded only by the runs that read Swift
/// (docs/DESIGN-NOTES.md, "A model and plan read from Swift source").
public enum ModelPlanSource {
    /// Whether `path` is Swift source: a `.swift` file, or a folder (not an Xcode model) with a
    /// `.swift` file in it or in a folder below, within `depth` levels.
    public static func isSwiftSource(_ path: String, depth: Int = 6) -> Bool {
        switch FileSystem.kind(path) {
        case .file?: return path.hasSuffix(".swift")
        case .directory?:
            if path.hasSuffix(".xcdatamodeld") || path.hasSuffix(".xcdatamodel") || depth == 0 { return false }
            guard let entries = try? FileSystem.entries(of: path) else { return false }
            return entries.contains { !$0.hasPrefix(".") && isSwiftSource(path + "/" + $0, depth: depth - 1) }
        default: return false
        }
    }

    /// Whether `path` is plan JSON (an object with `"versions"` before any `"entities"`), told by its first MiB.
    public static func isPlanJSON(_ path: String) -> Bool {
        // Plan JSON holds its versions' entities inside `"versions"`; model JSON has `"entities"` at
        // the top and no `"versions"` key. Which key comes first tells them, however long the
        // `"source"` before them (a key cannot be inside a string: a quote there is escaped).
        // A look at 256 bytes first: a store or other file given as --model is not read further.
        guard FileSystem.kind(path) == .file, let start = try? FileSystem.head(of: path, count: 256, failing: .noInput),
              start.first(where: { ![0x20, 0x0A, 0x0D, 0x09, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "{"),
              let head = try? FileSystem.head(of: path, count: 1 << 20, failing: .noInput) else { return false }
        let bytes = Array(head)
        func firstKey(_ key: String) -> Int? {
            let k = Array("\"\(key)\"".utf8)
            guard bytes.count >= k.count else { return nil }
            for i in 0...(bytes.count - k.count) where bytes[i] == k[0] && (i == 0 || bytes[i - 1] != UInt8(ascii: "\\")) {
                if bytes[i..<(i + k.count)].elementsEqual(k) { return i }
            }
            return nil
        }
        guard let versions = firstKey("versions") else { return false }
        return firstKey("entities").map { versions < $0 } ?? true
    }

    /// Whether `path` is an Xcode `.xcdatamodeld` folder (a Core Data model with its versions).
    public static func isXcodeVersions(_ path: String) -> Bool {
        let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        return trimmed.hasSuffix(".xcdatamodeld") && FileSystem.kind(trimmed) == .directory
    }

    /// Every version of the `.xcdatamodeld` at `path`, and one inferred lightweight stage from each
    /// older version straight to the current one, as Core Data migrates (`XcodeModel.plan`).
    public static func readXcodeVersions(_ path: String) throws -> ModelPlan {
        try XcodeModel.plan(path)
    }

    /// The plan at `path`: Swift source read by `tripconv-swift-model`, plan JSON, or an `.xcdatamodeld`'s versions.
    public static func read(_ path: String) throws -> ModelPlan {
        if isXcodeVersions(path) { return try readXcodeVersions(path) }
        return try read(path, isSwift: isSwiftSource(path))
    }

    /// Whether `--model path` names a plan (`versioned` gives one), told without reading it: Swift
    /// source, plan JSON, or an `.xcdatamodeld` with more than one `.xcdatamodel` in it.
    public static func isVersioned(_ path: String) -> Bool {
        if isSwiftSource(path) || isPlanJSON(path) { return true }
        guard isXcodeVersions(path), let entries = try? FileSystem.entries(of: path) else { return false }
        return entries.filter { $0.hasSuffix(".xcdatamodel") }.count > 1
    }

    /// The plan `--model path` gives a run, or nil when `path` is a model of one version: Swift source,
    /// plan JSON, or an `.xcdatamodeld` holding more than one version (a store or export is then read at
    /// its version, told by its `NSStoreModelVersionIdentifiers` or its names, and Core Data's inferred
    /// stage runs from it to the current one). An `.xcdatamodeld` of one version is the model it holds,
    /// as before: its store is read with that model, no version told. `isSwift` is `isSwiftSource(path)`.
    public static func versioned(_ path: String, isSwift: Bool) throws -> ModelPlan? {
        if isSwift || isPlanJSON(path) { return try read(path, isSwift: isSwift) }
        guard isXcodeVersions(path) else { return nil }
        let plan = try readXcodeVersions(path)
        return plan.versions.count > 1 ? plan : nil
    }

    /// The plan at `path`, already told to be Swift source or not (telling walks a folder).
    public static func read(_ path: String, isSwift: Bool) throws -> ModelPlan {
        if !isSwift { return try ObjectModelJSON.readPlan(path) }
        let program = try swiftModelProgram()
        let (status, output, errors) = try run(program, [path])
        guard status == 0 else {
            let message = errors.hasPrefix("tripconv-swift-model: ") ? String(errors.dropFirst("tripconv-swift-model: ".count)) : errors
            let kind: TripError.Kind = status == 66 ? .noInput : (status == 64 ? .usage : .data)
            throw TripError(kind, message.isEmpty ? "\(program) exited with status \(status)" : message)
        }
        return try ObjectModelJSON.readPlan(bytes: output, name: "\(program) \(path)")
    }

    /// `tripconv-swift-model` beside the running program (as `swift build` and an install put it),
    /// else `$TRIPCONV_SWIFT_MODEL`, else on `$PATH`.
    static func swiftModelProgram() throws -> String {
        if let given = getenv("TRIPCONV_SWIFT_MODEL").map({ String(cString: $0) }), !given.isEmpty { return given }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 {
            let me = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let beside = FileSystem.split(me).directory + "/tripconv-swift-model"
            if FileSystem.kind(beside) == .file { return beside }
        }
        for folder in (getenv("PATH").map { String(cString: $0) } ?? "").split(separator: ":") {
            let candidate = "\(folder)/tripconv-swift-model"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw TripError(.unavailable, "reading a model from Swift source needs tripconv-swift-model beside tripconv or on PATH "
                        + "(swift build --product tripconv-swift-model)")
    }

    /// Runs `program` with `arguments`, its standard output and error collected, and waits for it.
    private static func run(_ program: String, _ arguments: [String]) throws -> (Int32, [UInt8], String) {
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw FileSystem.failure(.io, program, "cannot start") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for fd in outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let started = posix_spawn(&pid, program, &actions, nil, argv, environ)
        close(outPipe[1]); close(errPipe[1])
        defer { close(outPipe[0]); close(errPipe[0]) }
        guard started == 0 else { throw FileSystem.failure(.unavailable, program, "cannot start", code: started) }
        // Standard error is small (one message); read standard output to its end first, then it.
        let output = readAll(outPipe[0]), errors = readAll(errPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        var text = String(decoding: errors, as: UTF8.self)
        while text.hasSuffix("\n") { text.removeLast() }
        return (code, output, text)
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }
}
