import ArgumentParser
import TripKit

/// The `tripconv` command: its subcommands turn options into one pipeline call each.
@main
struct TripConv: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "tripconv",
        abstract: "Convert and migrate SampleTrips trip records between formats and schema versions.",
        discussion: """
            Reads trips exported by the SampleTrips app at schema 1.0.0, 2.0.0 or 3.0.0 (CSV, TSV, JSON, \
            JSON Lines, XML, YAML, a SQLite store, or a Core Data / SwiftData store), detects each input's version, \
            migrates it through the plan (1.0.0 -> 2.0.0 \
            deduplicates trips by name; 2.0.0 -> 3.0.0 renames start_date/end_date to startDate/endDate), \
            and writes the current schema, or an older one with --target-version.

            Files other tools wrote are read as those tools' own readers read them: CSV quoted minimally or \
            throughout ("" is an empty cell), with , ; tab or | between cells (detected from the header, or \
            Excel's sep= line; --csv-delimiter for others), UTF-8 or UTF-16 (told by the byte-order mark; a \
            a spreadsheet's "Unicode text" .txt export is told by its bytes too), Latin-1 or Windows-1252 with \
            --input-encoding, R's NA and row names; XML with fields as attributes or elements, namespaces, \
            CDATA, any declared encoding; YAML as PyYAML, ruamel.yaml and yq write it. Any of them may be \
            compressed with gzip, bzip2, xz or zstd (told by the first bytes), or kept in a zip or tar archive, \
            read as a directory without unpacking (places name the member: backup.zip!2019/trips.xml:12:7); \
            outputs are compressed by their name (-o trips.jsonl.gz) or --compress.

            Exit status: 0 ok, 64 usage, 65 bad input data, 66 input missing or unreadable or nothing to read \
            (a store's file or PostgreSQL schema, --model's path), \
            69 PostgreSQL server unreachable or a library the run needs not installed (libpq, libarchive, libxml2), \
            73 output cannot be created (checked before any input is read), 74 I/O error, 75 store busy, \
            77 PostgreSQL credentials refused. See tripconv(1).
            """,
        version: "tripconv \(version)",
        subcommands: [Convert.self, Detect.self, Schema.self, Migrate.self],
        defaultSubcommand: Convert.self)

    /// Runs the command as ArgumentParser's own `main` does, except that a usage error's first line
    /// starts `tripconv: `, as every other message does, where ArgumentParser writes `Error: `.
    /// Help, `--version` and completion scripts go to standard output with status 0; the rest of a
    /// usage error (its help and usage lines) and its status (64) are ArgumentParser's.
    ///
    /// `tripconv --version` alone is answered before ArgumentParser builds its tree of commands,
    /// which it does by reflection over every option of the default command (Convert): 40 % of the
    /// run's time, measured with perf (docs/BENCHMARKS.md, "Start-up: libraries on first use").
    /// Anything else, `--version` among other arguments too, goes through ArgumentParser.
    static func main() {
        if CommandLine.arguments.count == 2, CommandLine.arguments[1] == "--version" {
            print(configuration.version)
            return
        }
        Allocator.tune()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let status = exitCode(for: error)
            var text = fullMessage(for: error)
            if status == .success {
                if !text.isEmpty { writeAll(1, text + "\n") }
            } else if !text.isEmpty {
                if text.hasPrefix("Error: ") { text = "tripconv: " + text.dropFirst("Error: ".count) }
                writeAll(2, text + "\n")
            }
            exit(withError: status)
        }
    }
}
