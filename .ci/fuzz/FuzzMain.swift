// The libFuzzer entry points of tripfuzz, built by .ci/fuzz/run (not part of Package.swift's build).
//
// One binary holds every target; .ci/fuzz/run links it once as .build-fuzz/bin/tripfuzz and names it
// fuzz-TARGET (a symbolic link) for each target. The target is the binary's name without `fuzz-`, or
// TRIPFUZZ_TARGET when set. `fuzz-json CRASH-FILE` replays one input.
//
// For every target a thrown TripError is a clean rejection; a Swift trap, an ASan report, a hang
// (libFuzzer's -timeout), an error of any other type, or a broken promise the target checks (a trip
// lost in a round trip, the accounting off by one) is a finding, reported with `fuzzFinding`.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

/// One fuzz target: its name and what it does with one input.
struct FuzzTarget: Sendable {
    let name: String
    let test: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
}

/// Every target, by name: the readers, each with fixed and with fuzzed read options, the writers'
/// round trip, the whole pipeline, the YAML scanner against libyaml, files shaped as other tools
/// write them, read back value for value, compressed inputs through their decoders, and a store's
/// model cache through its inflate, property list and keyed archive decoders.
let fuzzTargets: [FuzzTarget] = fuzzReaderTargets.map(\.target) + [fuzzRoundTripTarget, fuzzPipelineTarget, fuzzYAMLScannerTarget]
    + fuzzForeignTargets + [fuzzCompressedTarget, fuzzArchiveTarget, fuzzModelCacheTarget]

nonisolated(unsafe) var fuzzSelected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>,
                           _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    var name = getenv("TRIPFUZZ_TARGET").map { String(cString: $0) } ?? ""
    if name.isEmpty, let args = argv.pointee, let first = args[0] {
        let program = String(cString: first).split(separator: "/").last.map(String.init) ?? ""
        name = program.hasPrefix("fuzz-") ? String(program.dropFirst(5)) : program
    }
    guard let target = fuzzTargets.first(where: { $0.name == name }) else {
        let text = "tripfuzz: no target \(name.isEmpty ? "named" : "'\(name)'"): run this binary as fuzz-TARGET or set TRIPFUZZ_TARGET; targets: "
            + fuzzTargets.map(\.name).joined(separator: " ") + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
    fuzzSelected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = fuzzSelected else { fuzzFinding("LLVMFuzzerInitialize did not run") }
    target.test(UnsafeBufferPointer(start: size > 0 ? data : nil, count: size))
    return 0
}

/// Stops the fuzzer on a finding: the message on standard error, then a trap, so that libFuzzer saves
/// the input (as it does for a crash).
func fuzzFinding(_ message: String) -> Never {
    let text = "tripfuzz: FINDING: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    fatalError(message)
}

/// Whether TRIPFUZZ_VERBOSE is set: targets then say what they did with each input (for replays).
let fuzzVerbose = getenv("TRIPFUZZ_VERBOSE") != nil

/// A line on standard error under TRIPFUZZ_VERBOSE.
func fuzzNote(_ message: @autoclosure () -> String) {
    guard fuzzVerbose else { return }
    let text = "tripfuzz: \(message())\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

// MARK: - Scratch files

/// The directory of this process's scratch files: TRIPFUZZ_DIR (which .ci/fuzz/run makes and
/// removes), else /dev/shm where it exists, else /tmp.
let fuzzScratchDirectory: String = {
    var st = stat()
    let base = getenv("TRIPFUZZ_DIR").map { String(cString: $0) } ?? (stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp")
    let dir = "\(base)/tripfuzz-\(getpid())"
    mkdir(dir, 0o700)
    return dir
}()

/// A path in the scratch directory.
func fuzzScratch(_ name: String) -> String { "\(fuzzScratchDirectory)/\(name)" }

/// Writes bytes to a file, replacing it, and removes any side files a SQLite run left beside it.
func fuzzWrite(_ path: String, _ bytes: UnsafeBufferPointer<UInt8>) {
    for suffix in ["-journal", "-wal", "-shm"] { unlink(path + suffix) }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fuzzFinding("cannot open \(path): \(String(cString: strerror(errno)))") }
    var done = 0
    while done < bytes.count, let base = bytes.baseAddress {
        let n = write(fd, base + done, bytes.count - done)
        if n < 0 {
            if errno == EINTR { continue }
            fuzzFinding("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        done += n
    }
    close(fd)
}

/// Removes a file or a directory with everything under it (the scratch outputs of one input).
func fuzzRemove(_ path: String) {
    var st = stat()
    guard lstat(path, &st) == 0 else { return }
    if (st.st_mode & S_IFMT) == S_IFDIR, let dir = opendir(path) {
        var names: [String] = []
        while let entry = readdir(dir) {
            // In place: copying the declared 256-byte d_name reads past readdir's buffer (RELIABILITY.md, bug 1).
            let name = String(cString: (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
                .assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names { fuzzRemove("\(path)/\(name)") }
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// The parts of an input split at "\n%%\n" lines, at most `limit` of them (the last takes the rest).
/// Each part but the last keeps its final "\n".
func fuzzParts(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> [UnsafeBufferPointer<UInt8>] {
    guard let base = bytes.baseAddress else { return [bytes] }
    let separator: [UInt8] = Array("\n%%\n".utf8)
    var parts: [UnsafeBufferPointer<UInt8>] = []
    var start = 0, i = 0
    while parts.count < limit - 1, i + separator.count <= bytes.count {
        if (0..<separator.count).allSatisfy({ base[i + $0] == separator[$0] }) {
            parts.append(UnsafeBufferPointer(start: base + start, count: i + 1 - start))
            i += separator.count; start = i
        } else {
            i += 1
        }
    }
    parts.append(UnsafeBufferPointer(start: base + start, count: bytes.count - start))
    return parts
}
