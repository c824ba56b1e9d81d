import TripKit

/// How trips are laid out in CSV or TSV.
public enum CSVLayout: String, Sendable, CaseIterable {
    /// One file, one row per trip; related objects flattened into columns (`bucketList.1.title`).
    case rows
    /// A directory of related tables: `trips.csv`, `bucket_list_items.csv`, `living_accommodations.csv`,
    /// joined by a `trip_id` column.
    case tables
}

/// CSV and TSV: the reader and writer of both layouts.
///
/// ```swift
/// var reader = try CSVFormat.makeReader(.file("trips.csv"), format: .csv, options: ReadOptions())
/// while let item = try reader.next() { ... }
/// var writer = try CSVFormat.makeTablesWriter(directory: "out", options: WriteOptions())
/// ```
public enum CSVFormat: FormatCodec {
    /// A reader of a CSV or TSV file, or of a tables-layout directory (one that holds `trips.csv`).
    public static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        if case .file(let path) = input, FileSystem.kind(path) == .directory {
            let tripsFile = "trips.\(CSVTableNames.fileExtension(format))"
            guard FileSystem.exists("\(path)/\(tripsFile)") else {
                throw TripError(.noInput, "\(path): is a directory without \(tripsFile)",
                                notes: ["a tables-layout directory holds \(tripsFile) and its related tables"])
            }
            return try makeTablesReader(directory: path, format: format, options: options)
        }
        let bytes = try ByteInput(input, options: options)
        if let empty = try FormatFactory.emptyReader(bytes, format: format, options: options) { return empty }
        let rows = try makeRowReader(name: bytes.name, format: format, options: options) { try bytes.read(into: $0) }
        return CSVRecordReader(rows: rows, format: format, options: options, compression: bytes.compression)
    }

    /// The row reader of a trip CSV or TSV: the options' encoding (a UTF-16 byte order mark overrides
    /// it), and the separator given (`csvDelimiter`), declared (a `sep=X` first line) or, for CSV,
    /// detected from the header among `,` `;` tab `|` by which splits it into known column names.
    static func makeRowReader(name: String, format: Format, options: ReadOptions, chunkSize: Int = 1 << 18,
                              source: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws -> CSVRowReader {
        let encoding = try TextEncoding.of(options)
        let dialect = CSVDialect(format, delimiter: options.csvDelimiter)
        let separator: CSVRowReader.SeparatorChoice
        if options.csvDelimiter != nil || format == .tsv {
            separator = .fixed
        } else {
            separator = .detect(candidates: CSVDialect.detectedSeparators, score: tripColumnCount)
        }
        return CSVRowReader(name: name, dialect: dialect, encoding: encoding, separator: separator, chunkSize: chunkSize,
                            source: source)
    }

    /// How many of a header's names are a trip's fields in some version (`bucketList.1.title` by its
    /// root): what a detected separator is chosen by, and what tells a header when an input is sniffed.
    static func tripColumnCount(_ names: [String]) -> Int {
        names.reduce(0) { n, name in
            tripColumnRoots.contains(name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "") ? n + 1 : n
        }
    }

    static let tripColumnRoots = CSVRecordReader.knownColumnRoots(SchemaVocabulary.trips)

    /// A writer in the layout `options.csvLayout` says: one file with a row per trip, or a directory of tables.
    public static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        try makeWriter(output, format: format, options: options, layout: options.csvLayout)
    }

    /// A writer in either layout; `.tables` needs a directory (`-o DIR`).
    ///
    /// ```swift
    /// let writer = try CSVFormat.makeWriter(.file("out"), format: .csv, options: options, layout: .tables)
    /// ```
    public static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions,
                                  layout: CSVLayout) throws -> any RecordWriter {
        switch layout {
        case .rows: return try CSVRecordWriter(output, dialect: CSVDialect(format, delimiter: options.csvDelimiter), options: options)
        case .tables:
            guard case .file(let directory) = output else {
                throw TripError.usage("the tables layout writes a directory; give -o DIR")
            }
            return try makeTablesWriter(directory: directory, format: format, options: options)
        }
    }

    /// A writer of the tables layout: a directory holding `trips.csv`, `bucket_list_items.csv` and
    /// `living_accommodations.csv` (`.tsv` for TSV), complete or absent.
    ///
    /// ```swift
    /// var writer = try CSVFormat.makeTablesWriter(directory: "export", options: WriteOptions())
    /// try writer.write(trip); try writer.finish()
    /// ```
    public static func makeTablesWriter(directory: String, format: Format = .csv, options: WriteOptions) throws -> any RecordWriter {
        try CSVTablesWriter(directory: directory, format: format, options: options)
    }

    /// A reader of a tables-layout directory.
    ///
    /// ```swift
    /// var reader = try CSVFormat.makeTablesReader(directory: "export", options: ReadOptions())
    /// ```
    public static func makeTablesReader(directory: String, format: Format = .csv, options: ReadOptions) throws -> any RecordReader {
        try CSVTablesReader(directory: directory, format: format, options: options)
    }

    /// Whether a path is a tables-layout directory: one that holds `trips.csv` (`trips.tsv` for TSV).
    /// An input list that expands directories into their files should keep such a directory whole.
    ///
    /// ```swift
    /// if CSVFormat.isTablesDirectory("export") { inputs.append(.file("export")) }
    /// ```
    public static func isTablesDirectory(_ path: String, format: Format = .csv) -> Bool {
        FileSystem.kind(path) == .directory && FileSystem.exists("\(path)/trips.\(CSVTableNames.fileExtension(format))")
    }
}
