import TripKit

/// One run's options, described once from the command line: what `convert`, `convert --output-dir`
/// and `migrate` were asked for. The runs are built from it the same way: the pipeline, the
/// readers' and writers' options and the rejects file are made here, and nowhere else.
///
/// ```swift
/// var options = RunOptions()
/// options.targetVersion = SchemaVersion(2, 0, 0)
/// options.rejects = "bad.jsonl"
/// let conversion = try options.conversion(to: .file("trips.json"))
/// let summary = try conversion.run([RunInput(.file("legacy.csv"), format: .csv)])
/// ```
public struct RunOptions: Sendable {
    /// The schema version written, or migrated to (`--target-version`).
    public var targetVersion = TripMigrationPlan.currentSchema.versionIdentifier
    /// What becomes of trips that share a name where names are unique (`--dedupe`).
    public var policy = DeduplicationPolicy.merge
    /// How inputs are read: the options every command that reads shares.
    public var reading = ReadOptions()
    /// CSV and TSV: cells that start like a formula are written behind a `'`, and read without it.
    public var csvSafeFormulas = false
    /// CSV output: the byte between cells, where it differs from `reading.csvDelimiter`.
    public var outputCSVDelimiter: UInt8?
    /// CSV and TSV output: rows, or a directory of tables.
    public var csvLayout = CSVLayout.rows
    /// Migrate an existing store older than the target in place before writing to it (`--migrate`).
    public var migratesStore = false
    /// Where a SQLite store migrated in place (`migrate`, `convert --migrate`) is backed up first:
    /// beside it, named by the version it holds, unless told (`--backup`, `--no-backup`). A
    /// PostgreSQL store is not backed up, and `.file` for one is a usage error.
    public var backup = StoreBackup.besideStore
    /// The rejects file (`--rejects`): records set aside go there and the run goes on. Without it,
    /// the first bad record fails the run.
    public var rejects: String?
    /// Threads (`--jobs`): of a conversion into one output, to format trips and parse ahead; of a
    /// bulk run, inputs converted at once.
    public var jobs = 1
    /// The output format, where the output's extension does not say (`--to`).
    public var outputFormat: Format?
    /// Defaults for attributes of an app's plan (`--default Entity.attribute=VALUE`), given to every
    /// version that declares the attribute before the stages are derived (`ModelPlan.givingDefaults`).
    public var modelDefaults: [(entity: String, attribute: String, value: String)] = []
    /// The tool's version, recorded in a store's migration history.
    public var toolVersion = WriteOptions().toolVersion
    /// The memory the run may take (`--memory-limit`), in bytes: trips beyond what fits go to
    /// temporary files. A bulk run shares it among the inputs it converts at once.
    public var memoryLimit = SpillBudget.defaultLimit
    /// Where temporary files go (`--temp-dir`); nil: `$TMPDIR`, else `/tmp`.
    public var temporaryDirectory: String?
    /// Standard output's compression (`--compress`); a file's is its extension's.
    public var compression: Compression?

    /// The options of a plain `convert`: the current schema version, trips that share a name
    /// merged, no rejects file (the first bad record fails the run), one job.
    public init() {}

    /// What readers are told: the reading options, formula-safe cells, and whether XML and YAML
    /// are parsed on a thread of their own (with 2 or more jobs).
    public var readOptions: ReadOptions {
        var options = reading
        options.csvSafeFormulas = csvSafeFormulas
        options.parsesAhead = jobs > 1
        return options
    }

    /// The target version's schema.
    public func targetSchema() throws -> any VersionedSchema.Type {
        guard let schema = TripMigrationPlan.schema(for: targetVersion) else {
            throw TripError.usage("unknown target version \(targetVersion)")
        }
        return schema
    }

    /// What writers of `schema` are told.
    public func writeOptions(_ schema: any VersionedSchema.Type) -> WriteOptions { writeOptions(schema, budget: nil) }

    /// What writers of `schema` are told, a store writer holding what it holds under `budget`.
    package func writeOptions(_ schema: any VersionedSchema.Type, budget: SpillBudget?) -> WriteOptions {
        var options = WriteOptions(schema: schema, policy: policy, migrate: migratesStore, csvSafeFormulas: csvSafeFormulas,
                                   csvDelimiter: outputCSVDelimiter ?? reading.csvDelimiter, csvLayout: csvLayout,
                                   toolVersion: toolVersion)
        options.budget = budget ?? SpillBudget(limit: memoryLimit, directory: temporaryDirectory)
        options.pgSchema = reading.pgSchema
        options.compression = compression
        options.backup = backup
        return options
    }

    /// The pipeline. With `usingJobs`, a conversion into one output, it formats JSON, JSON Lines
    /// and CSV rows on `jobs` threads and, with 2 or more, decodes trips for a store ahead on a
    /// thread of their own (only the calling thread writes); without, in a bulk run, whose jobs
    /// are its inputs, it runs on its worker's thread alone.
    public func pipeline(usingJobs: Bool) -> Pipeline {
        pipeline(usingJobs: usingJobs, budget: spillBudget(usingJobs: usingJobs))
    }

    /// The memory budget of one pipeline: the whole `memoryLimit` for a conversion into one output,
    /// a `jobs`th of it for each of a bulk run's conversions.
    package func spillBudget(usingJobs: Bool) -> SpillBudget {
        SpillBudget(limit: usingJobs ? memoryLimit : memoryLimit / max(jobs, 1), directory: temporaryDirectory)
    }

    /// The pipeline, holding its trips under `budget` (`SpillingTrips`).
    package func pipeline(usingJobs: Bool, budget: SpillBudget) -> Pipeline {
        var pipeline = Pipeline()
        pipeline.holding = { SpillingTrips(budget: budget) }
        pipeline.targetVersion = targetVersion
        pipeline.policy = policy
        pipeline.keepsGoing = rejects != nil
        if usingJobs {
            pipeline.encodingThreads = jobs
            pipeline.decodesAhead = jobs > 1
        }
        return pipeline
    }

    /// Fails unless `temporaryDirectory`, when given, is a directory.
    public func checkTemporaryDirectory() throws {
        guard let dir = temporaryDirectory else { return }
        guard FileSystem.kind(dir) == .directory else {
            throw TripError.usage("--temp-dir \(dir.quotedForMessage): no such directory")
        }
    }

    /// Fails unless `jobs` is 1 or more.
    public func checkJobs() throws {
        guard jobs >= 1 else { throw TripError.usage("--jobs takes a number of 1 or more") }
    }

    /// The rejects file, open; nil without one.
    public func openRejects() throws -> RejectsFile? {
        try rejects.map { try RejectsFile(OutputLocation($0)) }
    }

    // MARK: - Runs

    /// A conversion of every input into `output`, checked and with its rejects file open: the
    /// output's format is `outputFormat`, else CSV for tables, else the file's extension's, else
    /// (standard output) JSON Lines.
    public func conversion(to output: OutputLocation) throws -> Conversion {
        let format: Format
        if let outputFormat {
            format = outputFormat
            // `-o trips.csv --to json` would put JSON in a .csv file: a name and --to that disagree are
            // refused (`trips.json.gz` names JSON; a Core Data store is refused as such, further on).
            if case .file(let path) = output, let named = Format(streamPath: path), named != outputFormat, outputFormat != .coredata {
                throw TripError.usage("\(output.name): the name says \(named.rawValue), but --to says \(outputFormat.rawValue)",
                                      notes: ["name the output for the format it holds, or leave --to out: the name's extension tells"])
            }
        } else if csvLayout == .tables {
            format = .csv
        } else if case .file(let path) = output {
            if Format.isCompressedStore(path) { throw TripError.usage("\(path): a store is written in place, not compressed") }
            guard let f = Format(streamPath: path) else {
                throw TripError.usage("\(path): no known extension tells the output format; pass --to FORMAT")
            }
            format = f
        } else {
            format = .jsonl
        }
        if format.isStore, output == .standardOutput {
            throw TripError.usage("a store cannot be written to standard output; give -o FILE")
        }
        if format == .postgresql { try refuseBackupOfPostgreSQL() }
        if compression != nil, output != .standardOutput {
            throw TripError.usage("--compress is for standard output; a file is compressed by its name's extension (.gz, .bz2, .xz, .zst)")
        }
        if case .file(let path) = output, format.isStore, Compression.named(by: path) != nil {
            throw TripError.usage("\(path): a store is written in place, not compressed")
        }
        if csvLayout == .tables, compression != nil || output.compressedByName {
            throw TripError.usage("--csv-layout tables writes a directory of files, which is not compressed")
        }
        let schema = try targetSchema()
        let readOptions = self.readOptions
        let budget = spillBudget(usingJobs: true)
        let pipeline = pipeline(usingJobs: true, budget: budget)
        try checkJobs()
        try checkTemporaryDirectory()
        let rejects = try openRejects()
        return Conversion(output: output, format: format, pipeline: pipeline, budget: budget, readOptions: readOptions,
                          writeOptions: writeOptions(schema, budget: budget), rejects: rejects)
    }

    /// A bulk run: each input converted to a file of its own in `directory` (`--output-dir`),
    /// checked and with its rejects file open. The format is `outputFormat`, else CSV for tables,
    /// else JSON Lines.
    public func bulkConversion(of inputs: [RunInput], into directory: String) throws -> BulkConversion {
        if inputs.contains(where: { $0.location == .standardInput && !$0.isArchive }) {
            throw TripError.usage("--output-dir converts files; standard input has no name to give its output")
        }
        let format = outputFormat ?? (csvLayout == .tables ? .csv : .jsonl)
        if compression != nil {
            throw TripError.usage("--compress is for standard output, not --output-dir")
        }
        // One file per input: a format with no file of its own has nothing to write there.
        guard !format.extensions.isEmpty else {
            throw TripError.usage("--output-dir writes a file per input, and \(format.rawValue) is not written to files",
                                  notes: [format == .postgresql ? "load a PostgreSQL store with -o ADDRESS (runs may load it at once)"
                                                                : "a Core Data store is read, never written; convert it to sqlite"])
        }
        let schema = try targetSchema()
        try checkTemporaryDirectory()
        let rejects = try openRejects()
        return BulkConversion(inputs: inputs, directory: directory, format: format, options: self,
                              schema: schema, rejects: rejects)
    }

    /// Migrates an open store in place to the target version under `policy`, backing it up first
    /// as `backup` says; the trips merged or dropped go to the observer and the rejects file. Nil
    /// when the store was already at the target (another process migrated it since it was looked
    /// at), and nothing was written.
    public func migrate(_ store: SQLiteStore, observer: some RunObserver) throws -> StoreMigrationReport? {
        let target = try targetSchema()
        return try migrating(observer: observer) { setAside in
            try withoutActuallyEscaping(setAside) { setAside in
                try store.migrate(to: target, policy: policy, toolVersion: toolVersion, backup: backup,
                                  memoryLimit: memoryLimit, temporaryDirectory: temporaryDirectory, setAside: setAside)
            }
        }
    }

    /// Migrates the PostgreSQL store at `address` (in `schema`) in place to the target version under
    /// `policy`; the trips merged or dropped go to the observer and the rejects file. With `dryRun`,
    /// the migration is rolled back and the entries go to the observer only. Nil when the store was
    /// already at the target.
    public func migrate(postgreSQL address: String, schema: String?, dryRun: Bool, busyTimeoutMilliseconds: Int? = nil,
                        sharedName: ((StoreMigrationPreview.DuplicateName) throws -> Void)? = nil,
                        observer: some RunObserver) throws -> StoreMigrationReport? {
        let target = try targetSchema()
        try refuseBackupOfPostgreSQL()
        var options = self
        if dryRun { options.rejects = nil }
        return try options.migrating(observer: observer) { setAside in
            try PGStoreMigration.migrate(address: address, schema: schema, to: target, policy: policy, toolVersion: toolVersion,
                                         memoryLimit: memoryLimit, temporaryDirectory: temporaryDirectory, dryRun: dryRun,
                                         busyTimeoutMilliseconds: busyTimeoutMilliseconds, setAside: setAside, sharedName: sharedName)
        }
    }

    /// A PostgreSQL store is migrated in one transaction and never backed up: `--backup` is refused.
    private func refuseBackupOfPostgreSQL() throws {
        if case .file = backup {
            throw TripError.usage("--backup: a PostgreSQL store is migrated in one transaction and not backed up; use pg_dump to keep a copy")
        }
    }

    /// Runs a migration whose set-aside trips go to the observer and the rejects file, committed
    /// only when the migration was.
    private func migrating(observer: some RunObserver,
                           _ body: (_ setAside: (SetAsideRecord) throws -> Void) throws -> StoreMigrationReport?) throws -> StoreMigrationReport? {
        let rejects = try openRejects()
        let report: StoreMigrationReport
        do {
            guard let done = try body({ entry in
                observer.settingAside(entry)
                try rejects?.write(entry)
            }) else {
                rejects?.discard()
                return nil
            }
            report = done
        } catch {
            rejects?.discard()
            throw error
        }
        try rejects?.commit()
        return report
    }
}

/// An input of a run: where it is, and the format it is read as; or an archive, read as a directory
/// of members (issue 17).
public struct RunInput: Sendable, Equatable {
    public var location: InputLocation
    /// The format it is read as. For an archive, the format every member is read as; nil, each
    /// member with a known extension in the format it names.
    public var format: Format?
    /// Whether it is an archive (zip or tar, compressed or not) whose members are the inputs.
    public var isArchive: Bool
    /// How its bytes told its format, where neither its extension nor `--from` did; nil otherwise.
    public var sniffed: SniffedFormat?
    /// The directories between a directory given on the command line and this file, which
    /// `--output-dir` keeps (`2019/` for `yearly/2019/trips.json` of `yearly`); an archive's
    /// members keep their archive's. Empty for an input given itself.
    public var subdirectory = ""

    /// An input at `location`, read as `format`: the caller tells the format, a run never guesses it.
    public init(_ location: InputLocation, format: Format) {
        self.location = location
        self.format = format
        isArchive = false
    }

    /// An input at `location` read as its bytes told (`FormatSniffer`).
    public init(_ location: InputLocation, sniffed: SniffedFormat) {
        self.init(location, format: sniffed.format)
        self.sniffed = sniffed
    }

    /// An archive at `location`, each member read as `format`, or as its extension says.
    public init(archive location: InputLocation, format: Format? = nil) {
        self.location = location
        self.format = format
        isArchive = true
    }

    /// Its reader (not for an archive: `ExpandedInputs` gives its members).
    public func makeReader(options: ReadOptions) throws -> any RecordReader {
        guard !isArchive, let format else { throw TripError.usage("\(location.name): an archive is read through its members") }
        return try FormatFactory.makeReader(location, format: format, options: options)
    }
}

/// A run's inputs one by one, each archive's members in its place (opened when the run gets to it,
/// read from the archive while it is at them): what the readers read.
///
/// ```swift
/// var inputs = ExpandedInputs([RunInput(archive: .file("backup.zip"))], options: ReadOptions())
/// while let member = try inputs.next() { var reader = try member.makeReader(options: ReadOptions()) … }
/// ```
public struct ExpandedInputs {
    private var pending: ArraySlice<RunInput>
    private var archive: ArchiveMembers?
    private let options: ReadOptions
    private var current: RunInput?
    private let emptyArchive: (RunInput, Int) -> Void
    /// The inputs given so far, members one each.
    public private(set) var given = 0

    /// The error of a run that found nothing to read in any of its inputs (every directory's and
    /// archive's files passed over, or none there): it writes nothing.
    public static let nothingToRead = TripError(.noInput, "nothing to read in the inputs given; nothing written")

    /// The inputs, whose archives are read with `options` (their expansion limits). `emptyArchive`
    /// is told of an archive that gave no member to read, with the files it passed over for their
    /// extension.
    public init(_ inputs: [RunInput], options: ReadOptions, emptyArchive: @escaping (RunInput, Int) -> Void = { _, _ in }) {
        pending = inputs[...]
        self.options = options
        self.emptyArchive = emptyArchive
    }

    /// The next input, nil after the last. A member is read before the next call: that call moves
    /// its archive on.
    public mutating func next() throws -> RunInput? {
        while true {
            if let archive {
                if let member = try archive.next() {
                    var input = RunInput(.member(member), format: member.format)
                    input.subdirectory = current?.subdirectory ?? ""
                    given += 1
                    return input
                }
                if archive.membersGiven == 0, let current { emptyArchive(current, archive.passedOver) }
                self.archive = nil
            }
            guard let input = pending.popFirst() else { return nil }
            guard input.isArchive else {
                given += 1
                return input
            }
            current = input
            archive = try ArchiveMembers(input.location, from: input.format, options: options)
        }
    }
}
