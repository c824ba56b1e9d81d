#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

/// One input to read, with its format.
struct ResolvedInput {
    var location: InputLocation
    var format: Format
}

enum InputResolver {
    /// Expands the command line's inputs: `-` or none is standard input; a directory means the files
    /// under it (recursively) with known extensions, in path order.
    static func resolve(_ arguments: [String], from: Format?) throws -> [ResolvedInput] {
        let args = arguments.isEmpty ? ["-"] : arguments
        var out: [ResolvedInput] = []
        for arg in args {
            if arg == "-" {
                guard let format = from else {
                    throw TripError.usage("standard input has no extension to tell its format; pass --from FORMAT",
                                          notes: ["formats: " + Format.allCases.map(\.rawValue).joined(separator: ", ")])
                }
                out.append(ResolvedInput(location: .standardInput, format: format))
                continue
            }
            var st = stat()
            guard stat(arg, &st) == 0 else {
                throw TripError(.noInput, "\(arg): cannot open: \(String(cString: strerror(errno)))")
            }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                // A CSV or TSV tables-layout directory is one input.
                if let tables = [Format.csv, .tsv].first(where: { (from == nil || from == $0) && CSVFormat.isTablesDirectory(arg, format: $0) }) {
                    out.append(ResolvedInput(location: .file(arg), format: tables))
                    continue
                }
                let files = try listFiles(arg).filter { from != nil || Format(path: $0) != nil }
                for f in files { out.append(ResolvedInput(location: .file(f), format: from ?? Format(path: f)!)) }
                continue
            }
            guard let format = from ?? Format(path: arg) else {
                var notes = ["extensions: " + Format.allCases.flatMap { $0.extensions.map { "." + $0 } }.joined(separator: " ")]
                if arg.lowercased().hasSuffix(".txt") {
                    notes.append("a spreadsheet's text or \"Unicode text\" export is CSV: pass --from csv (its delimiter and UTF-16 are told from the file)")
                }
                throw TripError.usage("\(arg): no known extension tells its format; pass --from FORMAT", notes: notes)
            }
            out.append(ResolvedInput(location: .file(arg), format: format))
        }
        return out
    }

    /// The regular files under a directory, recursively, sorted by path.
    static func listFiles(_ directory: String) throws -> [String] {
        var result: [String] = []
        var pending = [directory]
        while let dir = pending.popLast() {
            guard let handle = opendir(dir) else {
                throw TripError(.noInput, "\(dir): cannot read directory: \(String(cString: strerror(errno)))")
            }
            defer { closedir(handle) }
            while let entry = readdir(handle) {
                // d_name read in place: copying the 256-byte field reads past readdir's buffer when
                // the last entry is shorter (AddressSanitizer: heap-buffer-overflow).
                let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
                let name = String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
                if name == "." || name == ".." || name.hasPrefix(".") { continue }
                let path = dir.hasSuffix("/") ? dir + name : dir + "/" + name
                var st = stat()
                guard stat(path, &st) == 0 else { continue }
                if (st.st_mode & S_IFMT) == S_IFDIR { pending.append(path) } else if (st.st_mode & S_IFMT) == S_IFREG { result.append(path) }
            }
        }
        return result.sorted()
    }
}
