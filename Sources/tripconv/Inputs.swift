#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

enum InputResolver {
    /// Expands the command line's inputs: `-` or none is standard input; a directory means the files
    /// under it (recursively) with known extensions, in path order; an archive (zip, tar, compressed
    /// or not: by its name, else by its first bytes) is read as a directory, its members met as
    /// the run gets to them.
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
                for f in try listFiles(arg) {
                    if ArchiveFormat.named(by: f) != nil {
                        out.append(RunInput(archive: .file(f), format: from))
                    } else if let format = from ?? Format(streamPath: f) {
                        out.append(RunInput(.file(f), format: format))
                    }
                }
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
        "tripconv: \(archive.location.name): no member to read"
            + (passedOver > 0 ? " (\(passedOver) file\(passedOver == 1 ? "" : "s") with no format's extension; --from FORMAT reads every member as FORMAT)" : "")
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
