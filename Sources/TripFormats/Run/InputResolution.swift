#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// The inputs of a run as tripconv's command line names them, each with its format: what
/// `tripconv convert a.csv exports/ backup.zip` reads, for a program that names its inputs the same way.
///
/// ```swift
/// let inputs = try RunInput.resolve(["samples/trips-v1.csv", "exports/"]) { directory, passedOver in
///     print("\(directory): nothing to read (\(passedOver) files with no format's extension)")
/// }
/// let summary = try RunOptions().conversion(to: .file("trips.jsonl")).run(inputs)
/// ```
extension RunInput {
    /// The format of `path` as the objects of another app's model, when it is a CSV or TSV tables
    /// directory (one file per entity): `from` (csv or tsv) for any directory, else a directory with a
    /// `.csv` file directly in it (or, with none, a `.tsv` one). Nil otherwise: its files are inputs each.
    public static func objectTablesFormat(_ path: String, from: Format?) -> Format? {
        guard FileSystem.kind(path) == .directory else { return nil }
        if from == .csv || from == .tsv { return from }
        guard from == nil else { return nil }
        let names = (try? FileSystem.entries(of: path)) ?? []
        if names.contains(where: { $0.hasSuffix(".csv") }) { return .csv }
        return names.contains { $0.hasSuffix(".tsv") } ? .tsv : nil
    }

    /// The inputs of a run over another app's objects, as `resolve` finds them, but for CSV and TSV: a
    /// directory that is a tables directory (`objectTablesFormat`) is one input, and under a directory
    /// of inputs the CSV or TSV files of one directory are that directory, one tables input (named as
    /// it, under its parent's `subdirectory`), since a table alone is no input of a model. A table file
    /// given itself stays a file (and is refused as one when read).
    public static func resolveObjects(_ arguments: [String], from: Format? = nil, options: ReadOptions = ReadOptions(),
                                      foundNothing: (_ directory: String, _ passedOver: Int) -> Void = { _, _ in }) throws -> [RunInput] {
        try (arguments.isEmpty ? ["-"] : arguments).flatMap { argument in
            if let format = objectTablesFormat(argument, from: from) { return [RunInput(.file(argument), format: format)] }
            let found = try resolve([argument], from: from, options: options, foundNothing: foundNothing)
            return FileSystem.kind(argument) == .directory ? groupingTables(found) : found
        }
    }

    private static func groupingTables(_ inputs: [RunInput]) -> [RunInput] {
        var out: [RunInput] = [], grouped: Set<String> = []
        for input in inputs {
            guard case .file(let path) = input.location, input.format == .csv || input.format == .tsv,
                  let slash = path.lastIndex(of: "/"), slash != path.startIndex, let format = input.format else {
                out.append(input)
                continue
            }
            let directory = String(path[..<slash])
            guard grouped.insert(directory).inserted else { continue }
            var tables = RunInput(.file(directory), format: format)
            var under = input.subdirectory.dropLast()
            under = under.lastIndex(of: "/").map { under[...$0] } ?? ""
            tables.subdirectory = String(under)
            out.append(tables)
        }
        return out
    }

    /// Expands input paths: `-` or none is standard input; a directory means the files under it
    /// (recursively) with known extensions, in path order; an archive (zip, tar, compressed or not: by
    /// its name, else by its first bytes) is read as a directory, its members met as the run gets to
    /// them. Standard input, and a file whose extension names no format, are read as their first bytes
    /// tell (`FormatSniffer`) unless `from` says. A directory with no file to read (none with a format's
    /// extension, without `from`) goes to `foundNothing` with the number of files passed over; a run
    /// left with no input fails (`ExpandedInputs.nothingToRead`) once it finds no archive's member either.
    public static func resolve(_ arguments: [String], from: Format? = nil, options: ReadOptions = ReadOptions(),
                               foundNothing: (_ directory: String, _ passedOver: Int) -> Void = { _, _ in }) throws -> [RunInput] {
        let args = arguments.isEmpty ? ["-"] : arguments
        var out: [RunInput] = []
        for arg in args {
            if arg == "-" {
                out.append(try standardInput(from: from, options: options))
                continue
            }
            if Format.isPostgreSQLAddress(arg) {
                out.append(RunInput(.file(arg), format: .postgresql))
                continue
            }
            if try FileSystem.kind(of: arg, failing: .noInput) == .directory {
                // A CSV or TSV tables-layout directory is one input.
                if let tables = [Format.csv, .tsv].first(where: { (from == nil || from == $0) && CSVFormat.isTablesDirectory(arg, format: $0) }) {
                    out.append(RunInput(.file(arg), format: tables))
                    continue
                }
                // Each file keeps its path under the directory, for --output-dir.
                let root = arg.hasSuffix("/") ? arg : arg + "/"
                var found = 0, passedOver = 0
                for f in try listFiles(arg) {
                    var input: RunInput
                    if ArchiveFormat.named(by: f) != nil {
                        input = RunInput(archive: .file(f), format: from)
                    } else if let format = from ?? Format(streamPath: f) {
                        input = RunInput(.file(f), format: format)
                    } else {
                        passedOver += 1
                        continue
                    }
                    let relative = f.hasPrefix(root) ? f.dropFirst(root.count) : Substring(f)
                    if let slash = relative.lastIndex(of: "/") { input.subdirectory = String(relative[...slash]) }
                    out.append(input)
                    found += 1
                }
                if found == 0 { foundNothing(arg, passedOver) }
                continue
            }
            if ArchiveFormat.named(by: arg) != nil {
                out.append(RunInput(archive: .file(arg), format: from))
                continue
            }
            if from == nil, Format.isCompressedStore(arg) {
                throw TripError.usage("\(arg): a store is read in place, not compressed; decompress it first")
            }
            if let format = Format(streamPath: arg) {
                out.append(RunInput(.file(arg), format: from ?? format))
                continue
            }
            out.append(try unnamedFile(arg, from: from, options: options))
        }
        return out
    }

    /// Standard input: an archive by its first bytes (kept for its reader), else read as `from` says,
    /// else as its first bytes tell. A terminal is not read ahead when `from` says.
    private static func standardInput(from: Format?, options: ReadOptions) throws -> RunInput {
        guard from == nil || isatty(0) == 0 else { return RunInput(.standardInput, format: from!) }
        let count = from == nil ? FormatSniffer.windowSize : 512
        let head = try ByteInput.peekStandardInput(count)
        if ArchiveFormat.told(by: head) != nil { return RunInput(archive: .standardInput, format: from) }
        if let from { return RunInput(.standardInput, format: from) }
        switch FormatSniffer.sniff(head, atEnd: head.count < count, options: options) {
        case .told(let sniffed):
            if sniffed.format.isStore && !options.copiesStores {
                throw TripError.usage("standard input holds an SQLite store, which is read in place; name its file")
            }
            return RunInput(.standardInput, sniffed: sniffed)
        case .empty:
            throw TripError.usage("standard input: only blanks, which tell no format; pass --from FORMAT", notes: [formatsNote])
        case .unknown(let line):
            throw TripError.usage("standard input: its first bytes tell no format; pass --from FORMAT",
                                  notes: [formatsNote, lookedAtNote(line)])
        }
    }

    /// A file whose extension names no format: an archive by its first bytes, else read as `from`
    /// says, else as its first bytes tell.
    private static func unnamedFile(_ path: String, from: Format?, options: ReadOptions) throws -> RunInput {
        if let from {
            // Its reader says what is wrong with it, if anything (under --output-dir, for it alone).
            return ArchiveFormat.told(byFile: path) != nil ? RunInput(archive: .file(path), format: from) : RunInput(.file(path), format: from)
        }
        let count = FormatSniffer.windowSize
        let head = try ByteInput.head(of: .file(path), count: count)
        if ArchiveFormat.told(by: head.bytes) != nil { return RunInput(archive: .file(path)) }
        var notes = ["extensions: " + Format.allCases.flatMap { $0.extensions.map { "." + $0 } }.joined(separator: " ")]
        switch FormatSniffer.sniff(head.bytes, atEnd: head.bytes.count < count, options: options) {
        case .told(let sniffed):
            if sniffed.format.isStore, head.compression != nil {
                throw TripError.usage("\(path): a store is read in place, not compressed; decompress it first")
            }
            return RunInput(.file(path), sniffed: sniffed)
        case .empty:
            throw TripError.usage("\(path): only blanks, and no known extension, tell no format; pass --from FORMAT", notes: notes)
        case .unknown(let line):
            notes.append(lookedAtNote(line))
            if path.lowercased().hasSuffix(".txt") {
                notes.append("a spreadsheet's text or \"Unicode text\" export is CSV: pass --from csv (its delimiter and UTF-16 are told from the file)")
            }
            throw TripError.usage("\(path): neither its extension nor its first bytes tell its format; pass --from FORMAT", notes: notes)
        }
    }

    private static let formatsNote = "formats: " + Format.allCases.map(\.rawValue).joined(separator: ", ")

    /// What the sniff looked for, and the line it found instead.
    private static func lookedAtNote(_ line: String) -> String {
        "looked for JSON or JSON Lines ('{' or '['), XML ('<'), YAML ('---', '%YAML', 'key:' lines, '- ' items) "
            + "and a CSV or TSV header naming trip fields (name, destination, ...); found \(line.quotedForMessage)"
    }

    /// The regular files under a directory, recursively (hidden ones left out), sorted by path.
    public static func listFiles(_ directory: String) throws -> [String] {
        var result: [String] = []
        var pending = [directory]
        while let dir = pending.popLast() {
            for name in try FileSystem.entries(of: dir) where !name.hasPrefix(".") {
                let path = dir.hasSuffix("/") ? dir + name : dir + "/" + name
                switch FileSystem.kind(path) {
                case .directory?: pending.append(path)
                case .file?: result.append(path)
                case .other?, nil: continue
                }
            }
        }
        return result.sorted()
    }
}
