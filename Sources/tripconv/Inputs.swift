#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import TripKit
import TripFormats

enum InputResolver {
    /// Expands the command line's inputs (`RunInput.resolve`, which library users call too), a
    /// directory with no file to read said so on standard error.
    static func resolve(_ arguments: [String], from: Format?, options: ReadOptions) throws -> [RunInput] {
        try RunInput.resolve(arguments, from: from, options: options) { directory, passedOver in
            Diagnostics.print(nothingFound(in: directory, what: "file", passedOver: passedOver))
        }
    }

    /// `resolve` for a run over another app's objects: a directory of CSV or TSV tables is one input
    /// (`RunInput.resolveObjects`).
    static func resolveObjects(_ arguments: [String], from: Format?, options: ReadOptions) throws -> [RunInput] {
        try RunInput.resolveObjects(arguments, from: from, options: options) { directory, passedOver in
            Diagnostics.print(nothingFound(in: directory, what: "file", passedOver: passedOver))
        }
    }

    /// Refuses to wait on a terminal: no input named and standard input a terminal prints the usage
    /// on standard error and exits 64, a usage error, as jq and Miller do (with theirs: 2 and 1).
    /// `-` reads the terminal.
    static func refuseTerminal(_ arguments: [String], usage: @autoclosure () -> String) throws {
        guard arguments.isEmpty, isatty(0) == 1 else { return }
        Diagnostics.print("tripconv: no input named, and standard input is a terminal")
        Diagnostics.print("usage: tripconv \(usage())")
        Diagnostics.print("note: name files, or pipe trips in (cat trips.csv | tripconv --to json); - reads the terminal; tripconv --help says more")
        throw ExitCode(64)
    }

    /// The `-v` line of an input whose format its bytes told.
    static func sniffedLine(_ input: RunInput) -> String? {
        input.sniffed.map { "tripconv: \(input.location.name): read as \($0.format.rawValue), \($0.phrase)" }
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
}
