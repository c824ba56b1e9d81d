#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

enum InputResolver {
    /// Expands the command line's inputs: `-` or none is standard input; a directory means the files
    /// under it (recursively) with known extensions, in path order; an archive (zip, tar, compressed
    /// or not: by its name, else by its first bytes) is read as a directory, its members met as
    /// the run gets to them. A directory with no file to read (none with a format's extension,
    /// without --from) is said so on standard error; a run left with no input fails (`nothingToRead`)
    /// once the run finds no archive's member either.
    static func resolve(_ arguments: [String], from: Format?) throws -> [RunInput] {
        let args = arguments.isEmpty ? ["-"] : arguments
        var out: [RunInput] = []
        for arg in args {
            if arg == "-" {
                // An archive on standard input (`tar cz … | tripconv`) is told by its first bytes,
                // kept for its reader; a terminal is not read ahead.
                if isatty(0) == 0, ArchiveFormat.told(by: try ByteInput.peekStandardInput(512)) != nil {
                    out.append(RunInput(archive: .standardInput, format: from))
                    continue
                }
                guard let format = from else {
                    throw TripError.usage("standard input has no extension to tell its format; pass --from FORMAT",
                                          notes: ["formats: " + Format.allCases.map(\.rawValue).joined(separator: ", ")])
                }
                out.append(RunInput(.standardInput, format: format))
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
                if found == 0 { Diagnostics.print(nothingFound(in: arg, what: "file", passedOver: passedOver)) }
                continue
            }
            if ArchiveFormat.named(by: arg) != nil || (Format(streamPath: arg) == nil && ArchiveFormat.told(byFile: arg) != nil) {
                out.append(RunInput(archive: .file(arg), format: from))
                continue
            }
            if from == nil, Format.isCompressedStore(arg) {
                throw TripError.usage("\(arg): a store is read in place, not compressed; decompress it first")
            }
            guard let format = from ?? Format(streamPath: arg) else {
                var notes = ["extensions: " + Format.allCases.flatMap { $0.extensions.map { "." + $0 } }.joined(separator: " ")]
                if arg.lowercased().hasSuffix(".txt") {
                    notes.append("a spreadsheet's text or \"Unicode text\" export is CSV: pass --from csv (its delimiter and UTF-16 are told from the file)")
                }
                throw TripError.usage("\(arg): no known extension tells its format; pass --from FORMAT", notes: notes)
            }
            out.append(RunInput(.file(arg), format: format))
        }
        return out
    }

    /// The warning for an archive that held no member to read.
    static func nothingFound(in archive: RunInput, passedOver: Int) -> String {
        nothingFound(in: archive.location.name, what: "member", passedOver: passedOver)
    }

    /// The warning for a directory or an archive with no file or member to read (`what`), with the
    /// files passed over for their extension.
    static func nothingFound(in name: String, what: String, passedOver: Int) -> String {
        "tripconv: \(name): no \(what) to read"
            + (passedOver > 0 ? " (\(passedOver) file\(passedOver == 1 ? "" : "s") with no format's extension; --from FORMAT reads every \(what) as FORMAT)" : "")
    }

    /// The regular files under a directory, recursively, sorted by path.
    static func listFiles(_ directory: String) throws -> [String] {
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
