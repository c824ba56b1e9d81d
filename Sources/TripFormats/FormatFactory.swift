import TripKit

/// The formats tripconv reads and writes.
public enum Format: String, CaseIterable, Sendable {
    case json, jsonl, csv, tsv, xml, yaml, sqlite
    /// A PostgreSQL store, addressed by a `postgresql://` URI or libpq `key=value` pairs.
    case postgresql
    /// A Core Data (SwiftData) store: read only, found by its tables in a `.sqlite` or `.store` file.
    case coredata

    /// The file extensions that name the format.
    public var extensions: [String] {
        switch self {
        case .json: return ["json"]
        case .jsonl: return ["jsonl", "ndjson"]
        case .csv: return ["csv"]
        case .tsv: return ["tsv"]
        case .xml: return ["xml"]
        case .yaml: return ["yaml", "yml"]
        case .sqlite: return ["sqlite", "db", "store"]
        case .postgresql, .coredata: return []
        }
    }

    /// Whether the format is a store (a file with tables, not a stream of bytes).
    public var isStore: Bool { self == .sqlite || self == .coredata || self == .postgresql }

    /// The format a path's extension names, if any; a PostgreSQL address is `.postgresql`.
    public init?(path: String) {
        if Format.isPostgreSQLAddress(path) { self = .postgresql; return }
        let base = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return nil }
        let ext = base[base.index(after: dot)...].lowercased()
        guard let f = Format.allCases.first(where: { $0.extensions.contains(ext) }) else { return nil }
        self = f
    }

    /// The format a streamed input's or output's path names, through a compression's extension
    /// (`trips.jsonl.gz` is JSON Lines); nil when none does. A store's extension under a
    /// compression's names nothing: a store is read and written in place, never streamed.
    public init?(streamPath path: String) {
        if let f = Format(path: path) { self = f; return }
        guard let named = Compression.named(by: path), let f = Format(path: named.inner), !f.isStore else { return nil }
        self = f
    }

    /// Whether a path names a store under a compression's extension (`trips.sqlite.gz`).
    public static func isCompressedStore(_ path: String) -> Bool {
        guard let named = Compression.named(by: path), let f = Format(path: named.inner) else { return false }
        return f.isStore
    }

    /// Whether a store argument is a PostgreSQL address rather than a path: a `postgresql://` or
    /// `postgres://` URI, or libpq `key=value` pairs (`host=/run/postgresql dbname=trips`,
    /// `service=fleet`).
    public static func isPostgreSQLAddress(_ argument: String) -> Bool {
        let lower = argument.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") { return true }
        guard let equals = lower.firstIndex(of: "=") else { return false }
        return libpqKeywords.contains(String(lower[..<equals].drop { $0 == " " }))
    }

    /// A PostgreSQL address as messages and input names show it: without its password (a URI's
    /// `user:secret@` becomes `user@`, a `password=` query parameter or `key=value` pair is left out),
    /// the rest as given. An address that does not parse as libpq parses it, yet names a password,
    /// is shown as `(a PostgreSQL address)`.
    public static func redactedPostgreSQLAddress(_ address: String) -> String {
        let lower = address.lowercased()
        guard lower.contains("password") || lower.contains("@") else { return address }
        if let scheme = address.firstRange(of: "://"), lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") {
            var s = address
            // `user[:password]@` ends at an `@` ahead of the path and query; the last one, so that a
            // password holding a bare `@` is hidden whole.
            let rest = s[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                s.removeSubrange(colon..<at)
            }
            if let q = s.firstIndex(of: "?") {
                let kept = s[s.index(after: q)...].split(separator: "&").filter { !$0.lowercased().hasPrefix("password=") }
                s = String(s[..<q]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
            }
            return s
        }
        guard let pairs = libpqPairs(address) else { return lower.contains("password") ? "(a PostgreSQL address)" : address }
        return pairs.compactMap { pair -> String? in
            switch pair.key.lowercased() {
            case "password": return nil
            case "dbname" where isPostgreSQLAddress(pair.value) && redactedPostgreSQLAddress(pair.value) != pair.value:
                // libpq takes a whole address in dbname too.
                let inner = redactedPostgreSQLAddress(pair.value).replacing("\\", with: "\\\\").replacing("'", with: "\\'")
                return "dbname='\(inner)'"
            default: return String(address[pair.range])
            }
        }.joined(separator: " ")
    }

    /// libpq's `key = value` pairs (a value in single quotes, or up to a space; a backslash escapes), each
    /// with its place in the text; nil where libpq would find a syntax error.
    private static func libpqPairs(_ text: String) -> [(key: String, value: String, range: Range<String.Index>)]? {
        var out: [(key: String, value: String, range: Range<String.Index>)] = []
        var i = text.startIndex
        func skipSpaces() { while i < text.endIndex, text[i].isWhitespace { i = text.index(after: i) } }
        while true {
            skipSpaces()
            guard i < text.endIndex else { return out }
            let start = i
            while i < text.endIndex, text[i] != "=", !text[i].isWhitespace { i = text.index(after: i) }
            let key = String(text[start..<i])
            skipSpaces()
            guard i < text.endIndex, text[i] == "=", !key.isEmpty else { return nil }
            i = text.index(after: i)
            skipSpaces()
            var value = ""
            let quoted = i < text.endIndex && text[i] == "'"
            if quoted { i = text.index(after: i) }
            while i < text.endIndex {
                let c = text[i]
                if quoted ? c == "'" : c.isWhitespace { break }
                if c == "\\" {
                    i = text.index(after: i)
                    guard i < text.endIndex else { break }
                }
                value.append(text[i])
                i = text.index(after: i)
            }
            if quoted {
                guard i < text.endIndex else { return nil }
                i = text.index(after: i)
            }
            out.append((key, value, start..<i))
        }
    }

    /// The connection keywords libpq takes (those an address is likely to start with).
    private static let libpqKeywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service", "connect_timeout",
        "options", "application_name", "sslmode", "target_session_attrs", "client_encoding",
    ]

    /// Reads `json`, `jsonl`/`ndjson`, `yml`, `postgres`/`pg` and so on.
    public init?(name: String) {
        let n = name.lowercased()
        if n == "postgres" || n == "pg" { self = .postgresql; return }
        if let f = Format(rawValue: n) { self = f; return }
        guard let f = Format.allCases.first(where: { $0.extensions.contains(n) }) else { return nil }
        self = f
    }
}

/// How writers write.
public struct WriteOptions {
    /// The schema the objects are in, and the output's version.
    public var schema: any VersionedSchema.Type
    /// How an existing store takes trips whose name it already holds.
    public var policy: DeduplicationPolicy
    /// Migrate an existing store older than `schema` in place first.
    public var migrate: Bool
    /// Where a SQLite store migrated in place (`migrate`) is backed up first; none unless told. A
    /// PostgreSQL store is never backed up (its migration is one transaction).
    public var backup: StoreBackup = .none
    /// CSV and TSV: prefix `'` to fields that start with `=`, `+`, `-`, `@` or `'` (so that a reader
    /// told `ReadOptions.csvSafeFormulas` takes exactly one `'` off).
    public var csvSafeFormulas: Bool
    /// CSV: the byte between cells (`,` when nil).
    public var csvDelimiter: UInt8?
    /// CSV and TSV: one row per trip, or a directory of related tables.
    public var csvLayout: CSVLayout
    /// The tool's version, recorded in a store's migration history.
    public var toolVersion: String
    /// A PostgreSQL store: the schema (namespace) its tables go in, created when missing; nil, the
    /// server's search path.
    public var pgSchema: String?
    /// The compression of a streamed output that its name does not give (standard output,
    /// `--compress`); a file's extension gives its own.
    public var compression: Compression?
    /// What a store writer may hold in memory (the trips of a migration in place, what it sets
    /// aside) and where the rest goes: the run's budget; nil, the default budget.
    package var budget: SpillBudget?

    /// Options for writing `schema` (the current version unless told), merging trips that share a
    /// name, one CSV row per trip with `,` between cells and no formula guard.
    public init(schema: any VersionedSchema.Type = TripMigrationPlan.currentSchema, policy: DeduplicationPolicy = .merge,
                migrate: Bool = false, csvSafeFormulas: Bool = false, csvDelimiter: UInt8? = nil, csvLayout: CSVLayout = .rows,
                toolVersion: String = "0.1.0") {
        self.schema = schema; self.policy = policy; self.migrate = migrate
        self.csvSafeFormulas = csvSafeFormulas; self.csvDelimiter = csvDelimiter; self.csvLayout = csvLayout
        self.toolVersion = toolVersion
    }
}

/// What one format provides: a reader and a writer. Formats never import each other.
public protocol FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader
    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter
}

/// Maps a format to its reader and writer: the one place that knows every format.
public enum FormatFactory {
    static func codec(_ format: Format) -> any FormatCodec.Type {
        switch format {
        case .json, .jsonl: return JSONFormat.self
        case .sqlite: return SQLiteFormat.self
        case .csv, .tsv: return CSVFormat.self
        case .xml: return XMLFormat.self
        case .yaml: return YAMLFormat.self
        case .coredata: return CoreDataFormat.self
        case .postgresql: return PGFormat.self
        }
    }

    /// The reader of an input in a format.
    public static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        if format.isStore, input == .standardInput {
            throw TripError.usage("a \(format.rawValue) store cannot be read from standard input; name its file")
        }
        // A store's file of no bytes (SQLite's empty database) is no export either, as a stream's is not.
        if format.isStore, case .file(let path) = input, FileSystem.kind(path) == .file, FileSystem.size(path) == 0 {
            throw noBytes(path)
        }
        return try codec(format).makeReader(input, format: format, options: options)
    }

    /// An input that holds no bytes (none once decompressed) is what its format's grammar makes of
    /// it (issue 25): a stream of records (CSV, TSV, JSON Lines, YAML) holds none, so no trips, as
    /// Miller and jq write an empty set; a document (JSON, XML) is missing, bad input (exit 65), as
    /// JSONTestSuite's `n_structure_no_data` and libxml2's `empty.xml` must be. The same on a file,
    /// standard input or an archive's member, compressed or not. Nil when it holds bytes: its
    /// format's reader reads them.
    static func emptyReader(_ bytes: ByteInput, format: Format, options: ReadOptions) throws -> (any RecordReader)? {
        // An unknown encoding is a usage error whatever the input holds (YAML tells its own).
        if format != .yaml { _ = try TextEncoding.of(options) }
        guard try bytes.holdsNoBytes() else { return nil }
        if format == .json || format == .xml { throw noBytes(bytes.name) }
        return EmptyInputReader(name: bytes.name, format: format, options: options, compression: bytes.compression)
    }

    /// The error of a JSON or XML input, or a store, of no bytes (issue 25): it names the input first.
    public static func noBytes(_ name: String) -> TripError {
        .data("\(name): no bytes: a JSON or XML document, or a store, has at least its root (one of no trips: [] or <trips/>)")
    }

    /// The writer of an output in a format.
    public static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        if format.isStore, output == .standardOutput {
            throw TripError.usage("a \(format.rawValue) store cannot be written to standard output; give -o FILE")
        }
        return try codec(format).makeWriter(output, format: format, options: options)
    }
}

/// The reader of an input with no bytes: no trips, and the detection of no trips.
struct EmptyInputReader: RecordReader {
    let detection: Detection
    mutating func next() throws -> ReadItem? { nil }

    init(name: String, format: Format, options: ReadOptions, compression: Compression?) {
        var builder = RecordBuilder(source: name, format: format.rawValue, options: options)
        builder.compression = compression?.rawValue
        detection = builder.detection
    }
}
