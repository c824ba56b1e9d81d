import TripKit

/// The trips of a store, read through the same `RecordBuilder` as every other format: the SQLite
/// and Core Data readers are its two kinds, and differ only in how their store lays the trips out,
/// which each tells as the statements of a `StoreTripQueries`.
///
/// The store is read in one read transaction, so a writer committing meanwhile is not half-seen, and
/// opened as `StoreSnapshot` opens it: with its `-wal`, writing no byte of the store's files (not even
/// the `-shm`, which a plain read-only open rewrites). The version is the one the store's metadata or structure gives, unless
/// `--source-version` overrides it.
public class StoreRecordReader: RecordReader {
    /// The store's file, as messages and origins name it.
    public let path: String
    private let snapshot: StoreSnapshot
    private var builder: RecordBuilder
    private var cursor: StoreTripCursor?
    private let version: SchemaVersion?
    private let evidence: VersionEvidence
    private let isOverridden: Bool
    private var count = 0

    /// What a kind of store tells once it is open: its version, how that was told, and the statements
    /// that read its trips.
    typealias Opened = (version: SchemaVersion?, evidence: VersionEvidence, queries: StoreTripQueries)

    /// `open` looks at the store inside the read transaction; `options` are the reader's own (a store's
    /// dates may ignore `--date-epoch`).
    init(path: String, format: Format, options: ReadOptions, busyTimeoutMilliseconds: Int,
         open: (SQLiteConnection) throws -> Opened) throws {
        self.path = path
        snapshot = try StoreSnapshot(path: path, busyTimeout: Int32(clamping: busyTimeoutMilliseconds))
        do {
            let opened = try open(snapshot.connection)
            cursor = try StoreTripCursor(snapshot.connection, opened.queries)
            version = opened.version; evidence = opened.evidence
            var builderOptions = options
            isOverridden = options.sourceVersion != nil
            if !isOverridden { builderOptions.sourceVersion = opened.version }
            builder = RecordBuilder(source: path, format: format.rawValue, options: builderOptions)
        } catch {
            snapshot.end()
            throw error
        }
    }

    /// The next trip with its related objects, or a rejection; nil at the end (the transaction ends).
    public final func next() throws -> ReadItem? {
        guard let cursor else { return nil }
        let found: Bool
        do {
            found = try cursor.next(into: &builder, record: count + 1) != nil
        } catch {
            end()
            throw error
        }
        guard found else { end(); return nil }
        count += 1
        return builder.endRecord()
    }

    private func end() {
        cursor = nil
        snapshot.end()
    }

    /// The store's version and how it was told (or `--source-version`, when given).
    public final var detection: Detection {
        builder.detection.told(byStore: version, evidence, unless: isOverridden)
    }
}

extension Detection {
    /// A store reader's detection: the builder's, with the version and evidence the store's metadata
    /// or structure gave, unless `--source-version` overrode them.
    func told(byStore version: SchemaVersion?, _ evidence: VersionEvidence, unless isOverridden: Bool) -> Detection {
        var d = self
        if !isOverridden {
            d.version = version
            d.evidence = evidence
            d.recordsVersion = nil
        }
        return d
    }
}
