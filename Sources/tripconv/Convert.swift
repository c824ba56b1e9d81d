import ArgumentParser
import TripKit
import TripThreads
import TripFormats

/// `tripconv convert`: inputs through the plan to one output.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        // Named here, not derived: deriving it is String(describing: Self.self), a scan of every protocol
        // conformance in the binary at each start (docs/BENCHMARKS.md, "Start-up: libraries on first use").
        commandName: "convert",
        abstract: "Convert trips between formats and schema versions.",
        discussion: """
            A Core Data or SwiftData store of another app (one with no Trip entity) is read with the model it carries \
            (or --model's): its objects, with their relationships, go to JSON, JSON Lines, YAML, XML, CSV or TSV as a \
            directory of tables (-o DIR), or tripconv's SQLite store of the model (-o FILE.sqlite: a table per root entity \
            named as the model names it, a column per attribute, foreign keys with the delete rules, join tables, unique \
            indexes, the model in tripconv_model; an existing one of the same model, at the run's version or migrated to it with \
            --migrate, is appended to, what the model makes unique deduplicated under --dedupe against the stored objects, in one \
            transaction; another model's is exit 65) or PostgreSQL store of it (-o ADDRESS, --pg-schema NAME: the same tables \
            with PostgreSQL's types, Dates as exact ISO 8601 text, foreign keys deferred, written in one transaction; an \
            existing one in the schema is appended to as the SQLite one, migrated first with --migrate in the same transaction; a \
            schema holding other tables is left as it is, exit 73), with no version detected and no stage run; --model \
            reads such an export back (a directory holding .csv or .tsv files is one tables directory, given or found \
            under a directory of inputs; one table file alone is exit 64), and the SQLite and PostgreSQL stores need none. \
            Such a store or export on standard input or in an archive is read from a temporary copy in --temp-dir, \
            removed at the end (when the run fails too); several go to --output-dir, one output each (-o takes one: \
            two stores' keys could name two objects alike, exit 64). \
            No INPUT, or -, reads standard input; a directory means the files under it with known extensions, \
            in path order (one with none says so; a run left with nothing to read fails, exit 66, \
            writing nothing). \
            An input of no bytes, compressed or not, is an empty stream (0 trips) in CSV, TSV, JSON Lines \
            and YAML, and bad input (exit 65) in JSON and XML, whose document has a root. \
            -o, --output-dir, --report and --rejects are checked before any input is read (exit 73). \
            Inputs compressed with gzip, bzip2, xz or zstd are told by their first bytes \
            (trips.jsonl.gz is JSON Lines); an output named so (-o trips.jsonl.gz) is written compressed. \
            An archive (.zip, .tar, .tar.gz, .tgz, .tar.xz, .tar.zst, .tar.bz2, on a file or standard input) is read \
            as a directory without unpacking, each member an input of its own, named archive!member; links, \
            devices, encrypted members, names climbing out and data expanding past --max-expansion-ratio or \
            --max-expanded-size are refused. \
            Several inputs are read in order, each detected and migrated on its own, then \
            deduplicated across all of them. No -o, or -o -, writes standard output (JSON Lines unless --to says). \
            A PostgreSQL store, as an input or -o, is a postgresql:// URI or libpq key=value address (PGHOST, \
            PGUSER, PGPASSWORD and ~/.pgpass fill in the rest); many runs may load one store at once, each in one \
            transaction, ending as if they had run one after another in the order they committed. \
            libpq, libarchive and libxml2 are loaded only by the runs that need them (a PostgreSQL store; an archive, \
            a bzip2, xz or zstd input, a compressed output; an XML input): where one is not installed, those runs fail \
            with exit 69, naming it.
            """)

    @Argument(help: ArgumentHelp("Input files, directories, archives or PostgreSQL addresses; - or none for standard input.", valueName: "input"))
    var inputs: [String] = []

    @Option(name: .customShort("o"), help: ArgumentHelp("The output file or store (a PostgreSQL address for a PostgreSQL store); - for standard output.", valueName: "output"))
    var output: String?

    @OptionGroup var reading: ReadingOptions

    @Option(name: .customLong("model"), help: ArgumentHelp("Read the objects of another app's model: the input is a Core Data or SwiftData store (read with its own model cache when it has one; MODEL, an .xcdatamodeld, .xcdatamodel or model JSON, when it has none), or an export tripconv wrote of one (MODEL: the store it came from, or its model JSON). A store of another app, and tripconv's SQLite or PostgreSQL store of one, needs no --model; MODEL may also be an app's Swift source, plan JSON or an .xcdatamodeld of several versions: the input is read at its version (a store's own, else --source-version, else the one its data shows) and the plan's stages run to --target-version. Standard input (--model MODEL -) and archive members are read from a temporary copy in --temp-dir.", valueName: "model"))
    var model: String?

    @OptionGroup var modelDefaults: ModelDefaultOptions

    @Option(name: .customLong("to"), help: ArgumentHelp("The output format, where no extension says; with -o FILE, the one its extension names.", valueName: "format"))
    var to: OutputFormatArgument?

    @Option(name: .customLong("target-version"), help: ArgumentHelp("Write this schema version (an older one reverses the renames); with --model naming an app's Swift source, plan JSON or an .xcdatamodeld of several versions, one of its plan's versions at or after the input's (default: the current version).", valueName: "version"))
    var targetVersion: SchemaVersion?

    @Option(name: .customLong("dedupe"), help: ArgumentHelp("What to do with trips that share a name where names are unique, or with objects of another app's model (--model) that share what a stage or the model written makes unique: merge, last, first, fail.", valueName: "policy"))
    var dedupe: DeduplicationPolicy = .merge

    @Option(name: .customLong("rejects"), help: ArgumentHelp("Set bad records aside in FILE (JSON Lines: kind, place (source, record, line and column of what the record is rejected for), reason and the record's source text) and go on.", valueName: "file"))
    var rejects: String?

    @Flag(name: .customLong("migrate"), help: "Migrate the existing store -o names, when it is older than the target version, in place first, in the same transaction, backed up and accounted for as by migrate (not with --output-dir); with --model naming an app's plan, a tripconv SQLite or PostgreSQL store of its objects, as migrate --model does.")
    var migrate = false

    @OptionGroup var backup: BackupOptions

    @Option(name: .customLong("csv-layout"), help: ArgumentHelp("CSV and TSV output: rows (one row per trip, the default) or tables (a directory with trips, bucket_list_items and living_accommodations joined by trip_id).", valueName: "layout"))
    var csvLayout: CSVLayout = .rows

    @Flag(name: .customLong("csv-safe-formulas"), help: "CSV and TSV: write a field that starts with =, +, -, @ or ' behind a ', so spreadsheets do not run it as a formula, and read such fields back without it.")
    var csvSafeFormulas = false

    @Option(name: .customLong("output-csv-delimiter"), help: ArgumentHelp("CSV output: the character between cells, when it differs from --csv-delimiter (which sets both).", valueName: "c"))
    var outputCsvDelimiter: CSVDelimiterArgument?

    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Convert each input to its own file in DIR (same base name, the output format's extension; a file found under a directory given under its path there, an archive's member under its path in the archive), each deduplicated on its own. Inputs that would be written to one file are refused, all named. Inputs of another app's objects go one at a time, each accounted for on its own. --migrate, --backup and --no-backup do not go with it.", valueName: "dir"))
    var outputDir: String?

    @Option(name: .customLong("jobs"), help: ArgumentHelp("With --output-dir: convert N inputs at once; else format JSON, JSON Lines and CSV rows on N threads, and with 2 or more decode trips for an SQLite store on a thread of their own. With 2 or more, XML and YAML are parsed, compressed inputs decoded, and another app's Core Data store (but one to JSON or JSON Lines, whose rows are written as they are read, on one thread) or JSON/JSON Lines export read, on a thread of their own too, and an app's plan run on another (default: the number of cores; 1: one thread).", valueName: "n"))
    var jobs: Int?

    @Option(name: .customLong("report"), help: ArgumentHelp("Write the accounting as JSON to FILE: totals (with replacedInStore: written trips, or objects, that replaced a stored one), each input's format, version, evidence and counts, each stage's counts, and with --migrate the store's migration (storeMigration: its stages, trips (objects) read, merged and dropped, and backup); written when the run fails too, with its error.", valueName: "file"))
    var report: String?

    @Option(name: .customLong("compress"), help: ArgumentHelp("Compress standard output: gzip, bzip2, xz or zstd (a file is compressed by its name: -o trips.jsonl.gz).", valueName: "compression"))
    var compress: Compression?

    @OptionGroup var memory: MemoryOptions

    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "Print no summary.")
    var quiet = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Print a line per input, per record set aside, and per reference removed (the first ten).")
    var verbose = false

    /// The options, described once: the runs are built from them.
    var options: RunOptions {
        var o = RunOptions()
        o.targetVersion = targetVersion ?? TripMigrationPlan.currentSchema.versionIdentifier
        o.policy = dedupe
        o.reading = reading.readOptions
        o.csvSafeFormulas = csvSafeFormulas
        o.outputCSVDelimiter = outputCsvDelimiter?.byte
        o.csvLayout = csvLayout
        o.migratesStore = migrate
        o.rejects = rejects
        o.jobs = jobs ?? Threads.coreCount
        o.outputFormat = to?.format
        o.compression = compress
        o.toolVersion = TripConv.version
        memory.apply(to: &o)
        backup.apply(to: &o)
        o.modelDefaults = (try? modelDefaults.assignments()) ?? []
        return o
    }

    func validate() throws {
        do { _ = try modelDefaults.assignments() } catch let e as TripError { throw ValidationError(e.message) }
        if !modelDefaults.defaults.isEmpty && model == nil {
            throw ValidationError("--default gives defaults to an app's plan: it goes with --model naming its Swift source, plan JSON or an "
                                  + ".xcdatamodeld of several versions")
        }
        // --output-dir writes a file per input: the one store a migration is accounted for (summary,
        // -v, --report's storeMigration, its backup) is the store -o names.
        if migrate && outputDir != nil {
            throw ValidationError("--migrate migrates the store -o names, not the files --output-dir writes; "
                                  + "migrate a store first with `tripconv migrate STORE` (which backs it up), or give -o STORE --migrate")
        }
        if backup.isGiven && !migrate { throw ValidationError("--backup and --no-backup go with --migrate") }
    }

    func run() throws {
        TemporaryPaths.installSignalCleanup()
        let started = monotonicSeconds()
        if model != nil || inputs.contains(where: { Self.namesOtherAppStore($0, pgSchema: reading.pgSchema) }) || pipesStore {
            return try runObjects(started: started)
        }
        if outputDir != nil { return try runBulk(started: started) }
        do {
            try checkOutputs()
            let (summary, migration) = try convert(started: started)
            if let report {
                try RunReport.write(report, summary: summary, migration: migration, elapsed: monotonicSeconds() - started, error: nil)
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            if let report { try? RunReport.write(report, summary: nil, elapsed: monotonicSeconds() - started, error: error) }
            throw Diagnostics.fail(error)
        }
    }

    /// The run, with the summary lines: first `migrate`'s for a store migrated in place (`--migrate`).
    private func convert(started: Double) throws -> (ConversionSummary, MigrationSummary?) {
        let inputs = try resolveInputs()
        let conversion = try options.conversion(to: OutputLocation(output))
        let progress = ProgressBar.start(quiet: quiet, inputs: inputs)
        defer { progress?.stop() }
        var migration: MigrationSummary?
        let summary = try conversion.run(inputs, observer: CommandLineObserver(progress: progress, listsSetAside: verbose, verbose: verbose),
                                         migrated: { report in
            let postgreSQL = conversion.format == .postgresql
            migration = MigrationSummary(report: report, store: postgreSQL ? Format.redactedPostgreSQLAddress(output ?? "") : output ?? "",
                                         backsUp: !postgreSQL)
        })
        progress?.stop()
        if let migration {
            if verbose { for line in migration.stageLines { Diagnostics.print(line) } }
            if !quiet { Diagnostics.print(migration.line) }
        }
        if verbose {
            for i in summary.inputs {
                let v = i.detection.version.map(\.description) ?? "no version"
                Diagnostics.print("tripconv: \(i.name): \(i.detection.format) \(v) by \(i.detection.evidence); read \(i.read), rejected \(i.rejected); stages \(i.stages.isEmpty ? "none" : i.stages.joined(separator: ", "))")
            }
        }
        if !quiet {
            Diagnostics.print("tripconv: " + summary.line(elapsedSeconds: monotonicSeconds() - started))
        }
        return (summary, migration)
    }

    /// The inputs, each with its format; with -v, a line for each whose bytes told it.
    private func resolveInputs() throws -> [RunInput] {
        try InputResolver.refuseTerminal(self.inputs, usage: Self.usageString())
        let inputs = try InputResolver.resolve(self.inputs, from: reading.from, options: reading.readOptions)
        if verbose { for line in inputs.compactMap(InputResolver.sniffedLine) { Diagnostics.print(line) } }
        return inputs
    }

    /// Fails unless every output can be made (`-o`, `--output-dir`, `--report`, `--rejects`), before
    /// any input is read and anything is written (exit 73).
    private func checkOutputs() throws {
        if outputDir != nil, output != nil { throw TripError.usage("give -o or --output-dir, not both") }
        if let output, output != "-", !Format.isPostgreSQLAddress(output) {
            try FileSystem.checkCanCreate(output, isDirectory: csvLayout == .tables)
            if ObjectConversion.isObjectStore(output) {
                throw TripError.usage("\(output): a tripconv store of another app's objects (its model in tripconv_model): trips are not written "
                                      + "into one", notes: migrate ? ["migrate it, and write objects into it, with --model naming that app's plan"] : [])
            }
        }
        if let outputDir { try FileSystem.checkCanWrite(in: outputDir) }
        for file in [report, rejects].compactMap({ $0 }) where file != "-" { try FileSystem.checkCanCreate(file) }
    }

    private func runBulk(started: Double) throws {
        var outcomes: [BulkConversion.Outcome] = []
        do {
            try checkOutputs()
            let options = self.options
            try options.checkJobs()
            let inputs = try resolveInputs()
            let bulk = try options.bulkConversion(of: inputs, into: outputDir!)
            let progress = ProgressBar.start(quiet: quiet, inputs: inputs)
            outcomes = try bulk.run(observer: CommandLineObserver(progress: progress, listsSetAside: false, verbose: verbose))
            progress?.stop()
            try bulk.commitRejects()
            if verbose { BulkReport.printLines(outcomes) }
            if !quiet { Diagnostics.print("tripconv: " + BulkReport.line(outcomes, elapsed: monotonicSeconds() - started)) }
            if let report { try BulkReport.write(report, outcomes, elapsed: monotonicSeconds() - started, error: nil) }
        } catch let error as ExitCode {
            throw error
        } catch {
            if let report { try? BulkReport.write(report, outcomes, elapsed: monotonicSeconds() - started, error: error) }
            throw Diagnostics.fail(error)
        }
        if let failed = outcomes.first(where: { $0.error != nil }) {
            throw ExitCode(failed.error!.kind.rawValue)
        }
    }
}
