import ArgumentParser
import TripKit
import TripFormats

extension SchemaVersion: ExpressibleByArgument {
    /// One of SampleTrips' versions; with `--model` on the command line, any `major.minor.patch` (an app's
    /// plan lists its own, as `Schema.Version`s: the run checks it is one of them).
    public init?(argument: String) {
        guard let v = SchemaVersion(argument) else { return nil }
        let namesModel = CommandLine.arguments.contains { $0 == "--model" || $0.hasPrefix("--model=") }
        guard namesModel || TripMigrationPlan.schema(for: v) != nil else { return nil }
        self = v
    }
    public static var allValueStrings: [String] { TripMigrationPlan.versions.map(\.description) }
}

extension Format: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { Format.allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
}

/// `--to`'s value: a format tripconv writes. `coredata` is parsed, so that the run can say why it
/// is refused (a Core Data store is read, never written: exit 64), but neither the help nor the
/// completions offer it.
struct OutputFormatArgument: ExpressibleByArgument {
    let format: Format
    init?(argument: String) {
        guard let f = Format(name: argument) else { return nil }
        format = f
    }
    static var allValueStrings: [String] { Format.allCases.filter { $0 != .coredata }.map(\.rawValue) }
    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}

extension DeduplicationPolicy: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
}
extension DateEpoch: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
}

/// The options every command that reads shares.
struct ReadingOptions: ParsableArguments {
    @Option(name: .customLong("from"), help: ArgumentHelp("The input format, overriding the extension and, for standard input and a file whose extension names none, the first bytes, which tell JSON, JSON Lines, XML, YAML, CSV and TSV (-v and detect say how).", valueName: "format"))
    var from: Format?

    @Option(name: .customLong("source-version"), help: ArgumentHelp("Read every input as this schema version instead of detecting it (with --model of an app's Swift source, plan JSON or an .xcdatamodeld of several versions: one of its plan's versions; source without a VersionedSchema has none).", valueName: "version"))
    var sourceVersion: SchemaVersion?

    @Option(name: .customLong("date-epoch"), help: ArgumentHelp("How numbers in date fields count time: reference (seconds since 2001-01-01, the default), unix (seconds since 1970), unix-ms.", valueName: "epoch"))
    var dateEpoch: DateEpoch = .reference

    @Option(name: .customLong("input-encoding"), help: ArgumentHelp("The encoding of CSV, TSV and JSON inputs (and XML that declares none): utf-8 (the default), latin1, windows-1252, utf-16le, utf-16be or utf-16. A UTF-16 byte order mark at the start of a CSV or TSV input is honoured whatever this says.", valueName: "encoding"))
    var inputEncoding: TextEncoding = .utf8

    @Option(name: .customLong("csv-delimiter"), help: ArgumentHelp("CSV: the character between cells, read and written (, ; | tab or any ASCII character but a quote). Without it, a CSV input's Excel 'sep=X' first line or else its header tells: , ; tab or |, whichever splits the header into trip columns.", valueName: "c"))
    var csvDelimiter: CSVDelimiterArgument?

    @Flag(name: .customLong("ignore-unknown"), help: "Ignore fields or columns that no schema version declares, instead of rejecting the record.")
    var ignoreUnknown = false

    @Option(name: .customLong("pg-schema"), help: ArgumentHelp("PostgreSQL stores (inputs and -o): the schema their tables are in, so one database holds several stores; created when written to (default: the server's search path, usually public).", valueName: "name"))
    var pgSchema: String?

    @Option(name: .customLong("max-expansion-ratio"), help: ArgumentHelp("Compressed inputs and archives: refuse one whose data expands more than N times its compressed size, once past 64M (default 200; 0: no limit).", valueName: "n"))
    var maxExpansionRatio: Int = 200

    @Option(name: .customLong("max-expanded-size"), help: ArgumentHelp("Compressed inputs and archives: refuse one whose data expands past SIZE in all, such as 100G (default 64G; 0: no limit).", valueName: "size"))
    var maxExpandedSize: ExpandedSizeArgument?

    var readOptions: ReadOptions {
        var o = ReadOptions(dateEpoch: dateEpoch, sourceVersion: sourceVersion, ignoreUnknown: ignoreUnknown,
                            inputEncoding: inputEncoding.rawValue, csvDelimiter: csvDelimiter?.byte)
        o.pgSchema = pgSchema
        o.maxExpansionRatio = max(maxExpansionRatio, 0)
        if let maxExpandedSize { o.maxExpandedBytes = maxExpandedSize.bytes }
        return o
    }
}

extension TextEncoding: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { TextEncoding.allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
}

/// `--csv-delimiter`'s value, read by TripFormats' one parser of it.
struct CSVDelimiterArgument: ExpressibleByArgument {
    let byte: UInt8
    init?(argument: String) {
        guard let b = CSVDelimiter.parse(argument) else { return nil }
        byte = b
    }
    static var defaultCompletionKind: CompletionKind { .list([",", ";", "|", "tab"]) }
}

extension CSVLayout: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
}

/// `--memory-limit`'s value, read by TripFormats' one parser of sizes.
struct MemorySizeArgument: ExpressibleByArgument {
    let bytes: Int
    init?(argument: String) {
        guard let n = try? SpillBudget.parseSize(argument) else { return nil }
        bytes = n
    }
}

/// `--max-expanded-size`'s value: a size, 0 for no limit.
struct ExpandedSizeArgument: ExpressibleByArgument {
    let bytes: Int
    init?(argument: String) {
        guard let n = try? SpillBudget.parseSize(argument, option: "--max-expanded-size", minimum: 0) else { return nil }
        bytes = n
    }
}

/// The memory options `convert` and `detect` share: the budget of the run and where what does not
/// fit in it goes.
struct MemoryOptions: ParsableArguments {
    @Option(name: .customLong("memory-limit"), help: ArgumentHelp("The memory the run may take, such as 256M or 2G (at least 1M; default: a quarter of the machine's memory, at most 1G). What does not fit (trips held, detect's names, a --model run's index of keys, names and what its plan learns) goes to temporary files: the output is the same, only slower.", valueName: "size"))
    var memoryLimit: MemorySizeArgument?

    @Option(name: .customLong("temp-dir"), help: ArgumentHelp("Where temporary files go when the run does not fit in --memory-limit (default: $TMPDIR, else /tmp). They have no name and vanish when the run ends, however it ends.", valueName: "dir"))
    var tempDir: String?

    /// Sets the run's budget and temporary directory from the options.
    func apply(to options: inout RunOptions) {
        if let memoryLimit { options.memoryLimit = memoryLimit.bytes }
        options.temporaryDirectory = tempDir
    }
}

/// `--default Entity.attribute=VALUE`, repeated: defaults for an app's plan that its source cannot
/// give (one computed when an object is made), the options `convert` and `schema` share.
struct ModelDefaultOptions: ParsableArguments {
    @Option(name: .customLong("default"), help: ArgumentHelp("With --model naming an app's plan: give Entity.attribute VALUE as its default in every version that declares it (repeat for several), read as the attribute's kind; for a default the source computes when an object is made (TimeZone.current.identifier, Date()), which a stage needs to fill a new required attribute.", valueName: "entity.attribute=value"))
    var defaults: [String] = []

    /// The assignments, each split; one without `Entity.attribute=` is a usage error.
    func assignments() throws -> [(entity: String, attribute: String, value: String)] {
        try defaults.map { text in
            guard let a = ModelPlan.defaultAssignment(text) else {
                throw TripError.usage("--default takes Entity.attribute=VALUE, found '\(text)'")
            }
            return a
        }
    }

    /// Sets the run's defaults from the options.
    func apply(to options: inout RunOptions) throws { options.modelDefaults = try assignments() }
}

/// Where a store migrated in place is backed up first: the options `migrate` and `convert --migrate`
/// share. A backup never replaces a file (see `StoreBackup`).
struct BackupOptions: ParsableArguments {
    @Option(name: .customLong("backup"), help: ArgumentHelp("Before migrating a SQLite store in place, back it up to FILE instead of STORE.VERSION.bak, the store's name and the version the backup holds (trips.sqlite.1.0.0.bak). A backup never replaces a file: when the name is taken, .2, .3, ... is added; the summary names the file.", valueName: "file"))
    var backup: String?

    @Flag(name: .customLong("no-backup"), help: "Take no backup before migrating a store in place.")
    var noBackup = false

    /// Whether either option was given.
    var isGiven: Bool { backup != nil || noBackup }

    func validate() throws {
        if backup != nil && noBackup { throw ValidationError("--backup and --no-backup exclude each other") }
    }

    /// Sets where the run backs a store up.
    func apply(to options: inout RunOptions) {
        options.backup = noBackup ? .none : backup.map(StoreBackup.file) ?? .besideStore
    }
}

extension Compression: ExpressibleByArgument {
    // What ArgumentParser's defaults for a CaseIterable enum give, without their reflection (1.2M
    // instructions of every run; docs/BENCHMARKS.md, "Start-up: ArgumentParser's share").
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    public static var allValueDescriptions: [String: String] { [:] }
}
