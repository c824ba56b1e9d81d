/// A scalar as a format hands it over; the schema decides its type, not the format.
public enum ScalarToken: Sendable, Equatable {
    /// A typed string: a JSON string, a YAML quoted scalar.
    case string(String)
    /// Untyped text the schema types: a CSV cell, an XML element's text.
    case text(String)
    /// A YAML plain scalar: as `text`, but `~`, `null` and the empty scalar are null.
    case plain(String)
    /// A JSON number, its text.
    case number(String)
    case bool(Bool)
    case null
}

/// How readers read.
public struct ReadOptions: Sendable, Equatable {
    /// How numbers in date fields count time.
    public var dateEpoch: DateEpoch
    /// Read every input as this version, whatever it looks like.
    public var sourceVersion: SchemaVersion?
    /// Ignore fields that no version declares, instead of rejecting the record.
    public var ignoreUnknown: Bool
    /// The encoding of text inputs that carry none of their own: `utf-8` (default), `latin1`,
    /// `windows-1252`, `utf-16`, `utf-16le` or `utf-16be` (TripFormats' `TextEncoding` reads it).
    public var inputEncoding: String
    /// CSV: the byte between cells; nil to take a `sep=` first line or detect it from the header.
    public var csvDelimiter: UInt8?
    /// CSV and TSV: read a cell that `'` guards against spreadsheet formulas (`'=…`, `'+…`, `'-…`,
    /// `'@…`, `''…`) without its `'`, undoing `WriteOptions.csvSafeFormulas`.
    public var csvSafeFormulas: Bool
    /// Whether the XML and YAML readers run their parser (libxml2, libyaml or the block scanner) on
    /// a thread of its own, ahead of the thread that builds trips, and a compressed file or standard
    /// input is decoded on a thread of its own; false keeps a read on one thread.
    public var parsesAhead: Bool
    /// A PostgreSQL store: the schema (namespace) its tables are in; nil, the server's search path.
    public var pgSchema: String? = nil
    /// Compressed inputs and archives (issue 17): the most times a compressed input's bytes may
    /// expand, once it has expanded past `expansionGrace` bytes; 0, no limit. Past it the input is
    /// refused as a decompression bomb.
    public var maxExpansionRatio: Int = 200
    /// The bytes an input expands to before `maxExpansionRatio` applies (64 MiB): small files
    /// of repeated text expand further than large ones.
    public var expansionGrace: Int = 64 << 20
    /// The most bytes one compressed input or archive may expand to in all (64 GiB); 0, no limit.
    public var maxExpandedBytes: Int = 64 << 30
    /// Whether a store on standard input or in an archive is given to the run, which reads it from a
    /// temporary copy (`detect`, and runs over another app's objects), rather than refused.
    public var copiesStores = false

    /// Options as the command line gives them; the defaults read what tripconv and SwiftData write.
    public init(dateEpoch: DateEpoch = .reference, sourceVersion: SchemaVersion? = nil, ignoreUnknown: Bool = false,
                inputEncoding: String = "utf-8", csvDelimiter: UInt8? = nil, csvSafeFormulas: Bool = false,
                parsesAhead: Bool = true) {
        self.dateEpoch = dateEpoch; self.sourceVersion = sourceVersion; self.ignoreUnknown = ignoreUnknown
        self.inputEncoding = inputEncoding; self.csvDelimiter = csvDelimiter; self.csvSafeFormulas = csvSafeFormulas
        self.parsesAhead = parsesAhead
    }
}

/// What a reader yields: a trip, or a record it could not make a trip of.
public enum ReadItem: Sendable {
    case trip(TripRecord)
    /// A record the reader could not make a trip of, set aside with kind `.rejected`, its place and why.
    case rejected(SetAsideRecord)
}

/// How an input's version was decided.
public enum VersionEvidence: Sendable, Equatable, CustomStringConvertible {
    /// A marker in the input: the JSON wrapper's `schemaVersion`, the XML root attribute, a store's metadata.
    case marker(String)
    /// The field names of the records.
    case fields([String])
    /// `--source-version`.
    case override
    /// A store's columns and indexes.
    case structure(String)
    /// Nothing to go on (no trips).
    case none

    public var description: String {
        switch self {
        case .marker(let where_): return "marker \(where_)"
        case .fields(let names): return "fields " + names.joined(separator: ", ")
        case .override: return "--source-version"
        case .structure(let what): return what
        case .none: return "no trips to tell by"
        }
    }
}

/// The facts a reader found about its input.
public struct Detection: Sendable, Equatable {
    public var format: String
    /// The input's version; nil when nothing told it (no trips, no marker).
    public var version: SchemaVersion?
    /// The layout the records were built in, when it differs from `version` (a marker after the records).
    public var recordsVersion: SchemaVersion?
    public var evidence: VersionEvidence
    /// Records that carried a transient attribute, which was ignored.
    public var transientIgnored: Int
    /// Unknown fields ignored under `ignoreUnknown`.
    public var unknownIgnored: Int
    /// The compression the input was read through (`gzip`, …), nil for plain bytes.
    public var compression: String?

    /// What a reader found out about its input.
    public init(format: String, version: SchemaVersion? = nil, recordsVersion: SchemaVersion? = nil,
                evidence: VersionEvidence = .none, transientIgnored: Int = 0, unknownIgnored: Int = 0) {
        self.format = format; self.version = version; self.recordsVersion = recordsVersion
        self.evidence = evidence; self.transientIgnored = transientIgnored; self.unknownIgnored = unknownIgnored
    }
}

/// A source of trips, read one at a time: nil at the end of input, and nil again after that.
///
/// Readers stream: they work on bytes in buffered chunks and never hold a whole input.
/// Syntax errors that leave the reader unable to go on are thrown as `TripError`; a bad record that
/// the reader can step over is yielded as `.rejected`.
public protocol RecordReader {
    mutating func next() throws -> ReadItem?
    /// The version and evidence; final once `next()` has returned nil.
    var detection: Detection { get }
}

/// What a writer will be given, told before the first trip: writers whose layout depends on the
/// whole set (a CSV header as wide as the longest bucket list) can then stream instead of holding it.
public struct OutputShape: Sendable, Equatable {
    /// How many trips will be written.
    public var trips: Int
    /// Per relationship of the root entity, the most objects any trip has there.
    public var longestRelationships: [Int]
    /// The shape of what a writer is about to be given.
    public init(trips: Int, longestRelationships: [Int]) {
        self.trips = trips; self.longestRelationships = longestRelationships
    }
}

/// A destination of trips in one schema version. `finish()` writes any trailer, flushes, and makes the
/// output visible; `abort()` removes whatever was written, leaving the target as it was.
public protocol RecordWriter {
    /// Called once before the first `write`, with what is coming, when `needsShape` says so.
    mutating func expect(_ shape: OutputShape)
    /// Whether the writer needs `expect` before its first trip (a CSV row's columns depend on the
    /// longest lists of all trips): a pipeline then gives it no trip before it has them all.
    var needsShape: Bool { get }
    mutating func write(_ object: ModelObject) throws
    /// Writes a trip, told where it came from: a writer that sets trips aside (an upsert into a
    /// store) names the trip's own origin in what it sets aside. By default, `write(_:)`.
    mutating func write(_ object: ModelObject, origin: RecordOrigin) throws
    mutating func finish() throws
    mutating func abort()
}

extension RecordWriter {
    /// Writers whose layout does not depend on the shape ignore it.
    public mutating func expect(_ shape: OutputShape) {}
    /// Writers whose layout does not depend on the shape take trips as they come.
    public var needsShape: Bool { false }
    /// Writers with nothing to undo do nothing.
    public mutating func abort() {}
    /// Writers that set nothing aside need no origin.
    public mutating func write(_ object: ModelObject, origin: RecordOrigin) throws { try write(object) }
}
