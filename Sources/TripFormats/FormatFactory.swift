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

    /// Whether a store argument is a PostgreSQL address rather than a path: a `postgresql://` or
    /// `postgres://` URI, or libpq `key=value` pairs (`host=/run/postgresql dbname=trips`,
    /// `service=fleet`).
    public static func isPostgreSQLAddress(_ argument: String) -> Bool {
        let lower = argument.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") { return true }
        guard let equals = lower.firstIndex(of: "=") else { return false }
        return libpqKeywords.contains(String(lower[..<equals].drop { $0 == " " }))
    }

    /// A PostgreSQL address as messages may show it: without a password, whether in the URI's user
    /// information (`postgresql://ann:secret@host/db` → `postgresql://ann@host/db`) or as a
    /// `password=` pair, or in a `password` query parameter.
    public static func redactedPostgreSQLAddress(_ address: String) -> String {
        let lower = address.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") {
            var s = address
            let start = s.index(s.firstIndex(of: ":")!, offsetBy: 3)
            let authorityEnd = s[start...].firstIndex { $0 == "/" || $0 == "?" } ?? s.endIndex
            if let at = s[start..<authorityEnd].lastIndex(of: "@"), let colon = s[start..<at].firstIndex(of: ":") {
                s.removeSubrange(colon..<at)
            }
            if let q = s.firstIndex(of: "?") {
                let pairs = s[s.index(after: q)...].split(separator: "&").filter { !$0.lowercased().hasPrefix("password=") }
                s = String(s[..<q]) + (pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&"))
            }
            return s
        }
        // key=value pairs; a quoted value may hold spaces.
        var out: [String] = []
        var current = "", inQuote = false, escaped = false
        for ch in address {
            if escaped { current.append(ch); escaped = false; continue }
            if ch == "\\" { current.append(ch); escaped = true; continue }
            if ch == "'" { inQuote.toggle() }
            if ch == " " && !inQuote {
                if !current.isEmpty { out.append(current) }
                current = ""
            } else {
                current.append(ch)
            }
        }
        if !current.isEmpty { out.append(current) }
        return out.filter { !$0.lowercased().hasPrefix("password=") && !$0.lowercased().hasPrefix("password =") }.joined(separator: " ")
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
        return try codec(format).makeReader(input, format: format, options: options)
    }

    /// The writer of an output in a format.
    public static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        if format.isStore, output == .standardOutput {
            throw TripError.usage("a \(format.rawValue) store cannot be written to standard output; give -o FILE")
        }
        return try codec(format).makeWriter(output, format: format, options: options)
    }
}
