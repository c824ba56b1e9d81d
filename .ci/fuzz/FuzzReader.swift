// A libFuzzer target over one reader, built by .ci/fuzz/run (not part of Package.swift's build).
//
// The format is fixed at compile time by one of -D FUZZ_CSV, FUZZ_TSV, FUZZ_JSON, FUZZ_JSONL,
// FUZZ_XML, FUZZ_YAML, FUZZ_SQLITE, FUZZ_COREDATA, FUZZ_CSV_TABLES. Each input's bytes go to a file (the readers read files through
// ByteInput; SQLite needs a file), the reader comes from FormatFactory.makeReader exactly as the CLI
// makes it, and next() is drained. A thrown TripError is a clean rejection; a trap, an ASan report,
// a hang (libFuzzer's -timeout) or any other error type is a finding.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

#if FUZZ_CSV_TABLES
// The tables layout: the input is split at "\n%%\n" lines into trips.csv, bucket_list_items.csv and
// living_accommodations.csv (a missing part is an absent file), and the reader reads the directory.
let fuzzFormat = Format.csv
let fuzzTables = true
#elseif FUZZ_CSV
let fuzzFormat = Format.csv
#elseif FUZZ_TSV
let fuzzFormat = Format.tsv
#elseif FUZZ_JSON
let fuzzFormat = Format.json
#elseif FUZZ_JSONL
let fuzzFormat = Format.jsonl
#elseif FUZZ_XML
let fuzzFormat = Format.xml
#elseif FUZZ_YAML
let fuzzFormat = Format.yaml
#elseif FUZZ_SQLITE
let fuzzFormat = Format.sqlite
#elseif FUZZ_COREDATA
let fuzzFormat = Format.coredata
#else
#error("build with one of -D FUZZ_CSV, FUZZ_TSV, FUZZ_JSON, FUZZ_JSONL, FUZZ_XML, FUZZ_YAML, FUZZ_SQLITE, FUZZ_COREDATA, FUZZ_CSV_TABLES")
#endif
#if !FUZZ_CSV_TABLES
let fuzzTables = false
#endif

/// The read options: the defaults, or those TRIPFUZZ_OPTIONS names, comma-separated:
/// `latin1`, `ignore-unknown`, `source=1.0.0` (or 2.0.0, 3.0.0), `epoch=unix` (or `unix-ms`).
let fuzzOptions: ReadOptions = {
    var options = ReadOptions()
    guard let raw = getenv("TRIPFUZZ_OPTIONS") else { return options }
    for word in String(cString: raw).split(separator: ",") {
        switch word {
        case "latin1": options.inputEncoding = "latin1"
        case "ignore-unknown": options.ignoreUnknown = true
        case "epoch=unix": options.dateEpoch = .unix
        case "epoch=unix-ms": options.dateEpoch = .unixMilliseconds
        case _ where word.hasPrefix("source="):
            guard let v = SchemaVersion(String(word.dropFirst(7))) else { fatalError("TRIPFUZZ_OPTIONS: bad \(word)") }
            options.sourceVersion = v
        default: fatalError("TRIPFUZZ_OPTIONS: unknown option \(word)")
        }
    }
    return options
}()

/// One scratch file per fuzzing process, in TRIPFUZZ_DIR (which .ci/fuzz/run makes and removes), else
/// in memory where /dev/shm exists.
let fuzzPath: String = {
    var st = stat()
    let dir = getenv("TRIPFUZZ_DIR").map { String(cString: $0) } ?? (stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp")
    return "\(dir)/tripfuzz-\(getpid())" + (fuzzTables ? "-tables" : ".\(fuzzFormat.extensions.first ?? fuzzFormat.rawValue)")
}()

/// The tables-layout files, in the order the input's parts fill them.
let fuzzTableFiles = ["trips.csv", "bucket_list_items.csv", "living_accommodations.csv"]

/// Writes the input to the scratch file (the tables target: to the files of a scratch directory).
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> String {
    guard fuzzTables else {
        // Remove any side files a SQLite run left beside the scratch file.
        for suffix in ["-journal", "-wal", "-shm"] { unlink(fuzzPath + suffix) }
        fuzzWrite(fuzzPath, data, size)
        return fuzzPath
    }
    mkdir(fuzzPath, 0o700)
    for name in fuzzTableFiles { unlink("\(fuzzPath)/\(name)") }
    let separator: [UInt8] = Array("\n%%\n".utf8)
    var start = 0, part = 0, i = 0
    while let base = data, part < fuzzTableFiles.count - 1, i + separator.count <= size {
        if (0..<separator.count).allSatisfy({ base[i + $0] == separator[$0] }) {
            fuzzWrite("\(fuzzPath)/\(fuzzTableFiles[part])", base + start, i + 1 - start)
            part += 1; i += separator.count; start = i
        } else {
            i += 1
        }
    }
    fuzzWrite("\(fuzzPath)/\(fuzzTableFiles[part])", data.map { $0 + start }, size - start)
    return fuzzPath
}

/// Writes bytes to a file, replacing it.
func fuzzWrite(_ path: String, _ data: UnsafePointer<UInt8>?, _ size: Int) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot open \(path): \(String(cString: strerror(errno)))") }
    var done = 0
    while done < size, let base = data {
        let n = write(fd, base + done, size - done)
        if n < 0 {
            if errno == EINTR { continue }
            fatalError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        done += n
    }
    close(fd)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = fuzzInput(data, size)
    do {
        var reader = try FormatFactory.makeReader(.file(path), format: fuzzFormat, options: fuzzOptions)
        while let _ = try reader.next() {}
        _ = reader.detection
    } catch is TripError {
        // A clean rejection.
    } catch {
        fatalError("the \(fuzzFormat.rawValue) reader threw a \(type(of: error)), not a TripError: \(error)")
    }
    return 0
}
