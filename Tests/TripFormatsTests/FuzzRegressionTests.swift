#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import TripKit
@testable import TripFormats

/// Regressions for what fuzzing and the sanitizer runs found (docs/RELIABILITY.md lists each).
///
/// `swift test --sanitize=address` (`.ci/sanitizers`) found two bugs in the output plumbing:
/// - reading a directory entry's name by copying the declared 256-byte `d_name` field reads past
///   readdir's buffer when the last entry of a batch is shorter than that. The directory tests list
///   directories big enough that readdir's 32 KiB buffer fills, so its last entry sits at the
///   buffer's end: under AddressSanitizer the old code fails them with a heap-buffer-overflow;
///   without it they check that every name is read exactly.
/// - the table of temporary paths was changed from several threads without a lock, so one thread
///   could compare a path another had just freed (heap-use-after-free) or two could claim one slot.
///   The concurrent-outputs test commits many outputs from several threads at once.
@Suite("Fuzzing and sanitizer findings")
struct FuzzRegressionTests {
    /// A fresh directory holding `count` empty files with short names (`f00000` ...), and one whose
    /// name is as long as a name can be (255 bytes).
    static func crowdedDirectory(count: Int) throws -> (path: String, names: Set<String>) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-fuzz-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        var names = Set<String>()
        for i in 0..<count { names.insert(String(format: "f%05d", i)) }
        names.insert(String(repeating: "n", count: 250) + "-long")
        for name in names {
            #expect(FileManager.default.createFile(atPath: "\(dir)/\(name)", contents: nil), "creating \(name)")
        }
        return (dir, names)
    }

    /// A process ID that no process has.
    static func deadPID() throws -> Int32 {
        var pid: Int32 = 4_000_000
        while pid > 1 {
            if kill(pid, 0) != 0 && errno == ESRCH { return pid }
            pid -= 1
        }
        throw TripError.usage("no free process ID found")
    }

    @Test("the file system layer lists a directory of 1,500 entries by name, each exactly once")
    func directoryEntries() throws {
        let (dir, names) = try Self.crowdedDirectory(count: 1_500)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let listed = try FileSystem.entries(of: dir)
        #expect(listed.count == names.count)
        #expect(Set(listed) == names)
    }

    @Test("a dead run's temporary file is removed from a directory of 1,500 entries, and nothing else is")
    func staleTemporaryFileAmongMany() throws {
        let (dir, names) = try Self.crowdedDirectory(count: 1_500)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (_, prefix) = TemporaryPaths.prefix(for: "\(dir)/trips.json")
        let stale = "\(prefix)\(try Self.deadPID())-AbC123"
        let live = "\(prefix)\(getpid())-XyZ789"
        #expect(FileManager.default.createFile(atPath: "\(dir)/\(stale)", contents: Data("half".utf8)))
        #expect(FileManager.default.createFile(atPath: "\(dir)/\(live)", contents: Data("mine".utf8)))

        TemporaryPaths.removeStale(in: dir, prefix: prefix)

        let left = Set(try FileManager.default.contentsOfDirectory(atPath: dir))
        #expect(left == names.union([live]), "only the dead run's file is gone")
    }

    @Test("400 outputs opened and committed from 8 threads at once are all complete, with no temporary file left")
    func concurrentOutputs() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-fuzz-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let threads = 8, perThread = 50
        let failures = FuzzFailureLog()
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                do {
                    let output = try ByteOutput(.file("\(dir)/out-\(t)-\(i).txt"))
                    try output.write("thread \(t) output \(i)\n")
                    try output.commit()
                } catch {
                    failures.add("thread \(t) output \(i): \(error)")
                }
            }
        }
        #expect(failures.messages.isEmpty, "\(failures.messages.prefix(3))")
        var expected = Set<String>()
        for t in 0..<threads { for i in 0..<perThread { expected.insert("out-\(t)-\(i).txt") } }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == expected)
        for t in 0..<threads {
            for i in 0..<perThread {
                let text = try String(contentsOfFile: "\(dir)/out-\(t)-\(i).txt", encoding: .utf8)
                #expect(text == "thread \(t) output \(i)\n")
            }
        }
    }
}

/// Messages collected from several threads.
final class FuzzFailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ message: String) { lock.lock(); list.append(message); lock.unlock() }
    var messages: [String] { lock.lock(); defer { lock.unlock() }; return list }
}
