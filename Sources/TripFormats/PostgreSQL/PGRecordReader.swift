import TripKit

/// Reads the trips of a PostgreSQL store, in id order with their related rows, through the same
/// `RecordBuilder` as the SQLite store's reader: each column is handed over as a scalar named by the
/// column (dates as ISO 8601 text in UTC to the millisecond, Booleans as `true`/`false`), so the
/// schema decides its type and a trip comes out as from any other input.
///
/// The store is the tables of the connection's current schema (`--pg-schema`, else the search path's
/// first). Its version comes from its metadata, or from its columns and indexes, as a SQLite store's.
/// Everything is read in one `REPEATABLE READ READ ONLY` transaction, so a writer committing meanwhile
/// is not half-seen: the trips and each related table through a server-side cursor, a batch of rows
/// at a time (`PGTripCursor`). The transaction ends, and the connection closes, after the last trip.
///
/// ```swift
/// let reader = try PGRecordReader(address: "postgresql://localhost/trips")
/// while let item = try reader.next() { … }
/// print(reader.detection.version!)            // 3.0.0
/// ```
public final class PGRecordReader: RecordReader {
    /// The store as messages and origins name it: `host:port/database`, then `/schema` with one;
    /// never the password.
    public let name: String
    private var connection: PGConnection?
    private var builder: RecordBuilder
    private var cursor: PGTripCursor?
    private let version: SchemaVersion
    private let evidence: VersionEvidence
    private let isOverridden: Bool
    private var count = 0

    /// Connects (to `options.pgSchema` when given) and opens the read transaction. An unreachable server
    /// is `.unavailable`, refused credentials `.permission`; a schema that does not exist is `.noInput`;
    /// a schema without a trips table, or a store at a version tripconv does not know, is `.data`.
    public init(address: String, options: ReadOptions = ReadOptions()) throws {
        let connection = try PGConnection(address, schema: options.pgSchema)
        name = connection.name
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", doing: "cannot read the store")
        do {
            let found = try PGStoreStructure(connection).detect()
            cursor = try PGTripCursor(connection, found)
            version = found.version; evidence = found.evidence
            var builderOptions = options
            isOverridden = options.sourceVersion != nil
            if !isOverridden { builderOptions.sourceVersion = found.version }
            builder = RecordBuilder(source: connection.name, format: Format.postgresql.rawValue, options: builderOptions)
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        self.connection = connection
    }

    /// The next trip with its related objects, or a rejection; nil at the end (the transaction ends).
    public func next() throws -> ReadItem? {
        guard let cursor else { return nil }
        let found: Bool
        do {
            found = try cursor.next(into: &builder, record: count + 1)
        } catch {
            end(committing: false)
            throw error
        }
        guard found else {
            end(committing: true)
            return nil
        }
        count += 1
        return builder.endRecord()
    }

    /// Ends the transaction and closes the connection: a reader at its end holds no lock that a
    /// writer into the same store would wait for.
    private func end(committing: Bool) {
        cursor = nil
        try? connection?.execute(committing ? "COMMIT" : "ROLLBACK")
        connection = nil
    }

    /// The store's version and how it was told (or `--source-version`, when given).
    public var detection: Detection {
        builder.detection.told(byStore: version, evidence, unless: isOverridden)
    }
}
