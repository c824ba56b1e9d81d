// The reader targets: one per reader, a table of (name, format, layout, read options).
//
// Each input's bytes go to a scratch file (the readers read files through ByteInput; SQLite needs a
// file), the reader comes from FormatFactory.makeReader exactly as the CLI makes it, and next() is
// drained. A thrown TripError is a clean rejection; a trap, an ASan report, a hang (libFuzzer's
// -timeout) or any other error type is a finding.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

/// What a reader target reads: a file, or a tables-layout directory.
enum FuzzInputShape {
    /// The input is the file.
    case file
    /// The input is split at "\n%%\n" lines into trips.csv, bucket_list_items.csv and
    /// living_accommodations.csv (a missing part is an absent file), and the reader reads the directory.
    case tables
}

/// Where a reader target's read options come from.
enum FuzzOptionSource {
    /// The same options for every input: the defaults, or those TRIPFUZZ_OPTIONS names.
    case fixed
    /// The input's first byte picks them (`fuzzOptions(byte:)`); the rest is the input.
    case firstByte
}

/// One reader target.
struct FuzzReaderTarget {
    let name: String
    let format: Format
    let shape: FuzzInputShape
    let options: FuzzOptionSource

    var target: FuzzTarget { FuzzTarget(name: name) { fuzzRead($0, self) } }
}

/// The readers: every format's reader, as the CLI makes it.
let fuzzReaders: [(name: String, format: Format, shape: FuzzInputShape)] = [
    ("csv", .csv, .file), ("tsv", .tsv, .file), ("json", .json, .file), ("jsonl", .jsonl, .file),
    ("xml", .xml, .file), ("yaml", .yaml, .file), ("sqlite", .sqlite, .file), ("coredata", .coredata, .file),
    ("csv-tables", .csv, .tables),
]

/// Each reader twice: `NAME` with the fixed options, `NAME-options` with options the input picks.
let fuzzReaderTargets: [FuzzReaderTarget] =
    fuzzReaders.map { FuzzReaderTarget(name: $0.name, format: $0.format, shape: $0.shape, options: .fixed) }
    + fuzzReaders.map { FuzzReaderTarget(name: $0.name + "-options", format: $0.format, shape: $0.shape, options: .firstByte) }

/// The read options one byte picks, every non-default value of every option the CLI has:
/// bit 0 `--input-encoding latin1`; bit 1 `--ignore-unknown`; bits 2-3 `--source-version` (none,
/// 1.0.0, 2.0.0, 3.0.0); bits 4-5 `--date-epoch` (reference, unix, unix-ms, reference). Bits 6-7 are
/// not used.
func fuzzOptions(byte: UInt8) -> ReadOptions {
    var options = ReadOptions()
    if byte & 1 != 0 { options.inputEncoding = "latin1" }
    options.ignoreUnknown = byte & 2 != 0
    let versions: [SchemaVersion?] = [nil] + TripMigrationPlan.versions.map { Optional($0) }
    options.sourceVersion = versions[Int(byte >> 2 & 3) % versions.count]
    options.dateEpoch = [DateEpoch.reference, .unix, .unixMilliseconds, .reference][Int(byte >> 4 & 3)]
    return options
}

/// The read options: the defaults, or those TRIPFUZZ_OPTIONS names, comma-separated:
/// `latin1`, `ignore-unknown`, `source=1.0.0` (or 2.0.0, 3.0.0), `epoch=unix` (or `unix-ms`).
let fuzzFixedOptions: ReadOptions = {
    var options = ReadOptions()
    guard let raw = getenv("TRIPFUZZ_OPTIONS") else { return options }
    for word in String(cString: raw).split(separator: ",") {
        switch word {
        case "latin1": options.inputEncoding = "latin1"
        case "ignore-unknown": options.ignoreUnknown = true
        case "epoch=unix": options.dateEpoch = .unix
        case "epoch=unix-ms": options.dateEpoch = .unixMilliseconds
        case _ where word.hasPrefix("source="):
            guard let v = SchemaVersion(String(word.dropFirst(7))) else { fuzzFinding("TRIPFUZZ_OPTIONS: bad \(word)") }
            options.sourceVersion = v
        default: fuzzFinding("TRIPFUZZ_OPTIONS: unknown option \(word)")
        }
    }
    return options
}()

/// The tables-layout files, in the order the input's parts fill them.
let fuzzTableFiles = ["trips.csv", "bucket_list_items.csv", "living_accommodations.csv"]

/// Puts an input where a reader of `shape` reads it: a scratch file, or a scratch tables directory.
func fuzzPlace(_ bytes: UnsafeBufferPointer<UInt8>, format: Format, shape: FuzzInputShape) -> String {
    switch shape {
    case .file:
        let path = fuzzScratch("input.\(format.extensions.first ?? format.rawValue)")
        fuzzWrite(path, bytes)
        return path
    case .tables:
        let dir = fuzzScratch("input-tables")
        mkdir(dir, 0o700)
        for name in fuzzTableFiles { unlink("\(dir)/\(name)") }
        for (part, name) in zip(fuzzParts(bytes, limit: fuzzTableFiles.count), fuzzTableFiles) {
            fuzzWrite("\(dir)/\(name)", part)
        }
        return dir
    }
}

/// Reads one input with a reader target's reader and drains it.
func fuzzRead(_ input: UnsafeBufferPointer<UInt8>, _ target: FuzzReaderTarget) {
    var input = input
    let options: ReadOptions
    switch target.options {
    case .fixed: options = fuzzFixedOptions
    case .firstByte:
        options = fuzzOptions(byte: input.first ?? 0)
        input = UnsafeBufferPointer(rebasing: input.dropFirst())
    }
    let path = fuzzPlace(input, format: target.format, shape: target.shape)
    do {
        var reader = try FormatFactory.makeReader(.file(path), format: target.format, options: options)
        while let _ = try reader.next() {}
        _ = reader.detection
    } catch is TripError {
        // A clean rejection.
    } catch {
        fuzzFinding("the \(target.name) reader threw a \(type(of: error)), not a TripError: \(error)")
    }
}
