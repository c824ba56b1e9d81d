import TripKit

/// One stage applied to a store in place, as its history table (`tripconv_migrations`) records it.
public struct StoreMigrationRecord: Sendable, Equatable {
    /// The version the stage starts from.
    public var from: SchemaVersion
    /// The version the stage ends at.
    public var to: SchemaVersion
    /// When, as ISO 8601 text.
    public var appliedAt: String
    /// The version of tripconv that applied it.
    public var toolVersion: String
    /// The stage, as `1.0.0 -> 2.0.0 (custom)` (stores migrated by tripconv 0.1.0 hold one row for
    /// the whole path, its stages joined by commas).
    public var stages: String
    /// The trips the store held before the stage.
    public var tripsBefore: Int
    /// The trips the store held after it.
    public var tripsAfter: Int

    /// A record of one stage.
    public init(from: SchemaVersion, to: SchemaVersion, appliedAt: String, toolVersion: String, stages: String,
                tripsBefore: Int, tripsAfter: Int) {
        self.from = from; self.to = to; self.appliedAt = appliedAt; self.toolVersion = toolVersion
        self.stages = stages; self.tripsBefore = tripsBefore; self.tripsAfter = tripsAfter
    }
}

/// What a migration in place did: the stages it applied, and the trips a custom stage merged or
/// dropped, accounted for as `convert` accounts for them.
public struct StoreMigrationReport: Sendable, Equatable {
    /// The store's version before the migration.
    public var from: SchemaVersion
    /// Its version after.
    public var to: SchemaVersion
    /// One record per stage applied, in order, as the history table holds them.
    public var stages: [StoreMigrationRecord]
    /// Trips merged into another (`.merged`) or dropped (`.dropped`) by the deduplication, with their
    /// origin (the store, and the trip's place in row-id order, as reading the store numbers it);
    /// empty when `SQLiteStore.migrate` was given a `setAside` to send them to instead.
    public var ledger: [SetAsideRecord]
    /// The trips the store held before the migration.
    public var tripsBefore: Int
    /// The trips it holds after.
    public var tripsAfter: Int
    /// The backup taken before the store changed, if one was.
    public var backup: String?
    /// Trips that did not fit in the memory limit and went to temporary files on the way (counted
    /// once per stage that held them), and their bytes there; 0 when none did.
    public var spilledTrips = 0
    public var spilledBytes = 0

    /// A report of a migration.
    public init(from: SchemaVersion, to: SchemaVersion, stages: [StoreMigrationRecord], ledger: [SetAsideRecord],
                tripsBefore: Int, tripsAfter: Int, backup: String? = nil) {
        self.from = from; self.to = to; self.stages = stages; self.ledger = ledger
        self.tripsBefore = tripsBefore; self.tripsAfter = tripsAfter; self.backup = backup
        merged = ledger.filter { $0.kind == .merged }.count
        dropped = ledger.filter { $0.kind == .dropped }.count
    }

    /// How many trips were merged into another.
    public var merged: Int
    /// How many trips were dropped by the policy.
    public var dropped: Int
}

/// A writer into an existing store that migrates it in place first when told to (`convert
/// --migrate`): what that migration did, and the stored trips it merged or dropped, for the run to
/// account for as `tripconv migrate` does. `SQLiteRecordWriter` and `PGRecordWriter` are such writers.
public protocol InPlaceMigrating {
    /// The migration run before writing, if one was (its `backup` names the backup it took).
    var migration: StoreMigrationReport? { get }
    /// Calls `body` with each stored trip the migration merged or dropped, in the store's order.
    func forEachMigrationEntry(_ body: (SetAsideRecord) throws -> Void) throws
}

/// What a migration in place would do, found without changing the store (`tripconv migrate --dry-run`).
///
/// ```swift
/// let store = try SQLiteStore.open(path: "trips.sqlite")
/// let preview = try store.previewMigration(to: TripSchemaV3.self, policy: .merge)
/// for d in preview.duplicates { print(d.value, d.rowIDs, d.conflicts.map(\.field)) }
/// ```
public struct StoreMigrationPreview: Sendable {
    /// One stage: the plan's step and what it would do to the tables.
    public struct Stage: Sendable, Equatable {
        /// `1.0.0 -> 2.0.0 (custom)`.
        public var description: String
        /// `create unique index trips_name_unique on trips`, `rebuild trips (start_date renamed startDate, …)`.
        public var changes: [String]
    }

    /// A value of an attribute that becomes unique, held by more than one trip.
    public struct DuplicateName: Sendable, Equatable {
        /// The attribute (`name`).
        public var attribute: String
        /// The value the trips share.
        public var value: String
        /// The row ids of the trips that hold it, in order.
        public var rowIDs: [Int64]
        /// The fields whose values differ between those trips.
        public var conflicts: [Conflict]
    }

    /// A field whose values differ between trips that share a name: its distinct values, in row order,
    /// as text (`2024-05-08T18:00:00Z`, `3 items: Louvre, …`, `none`).
    public struct Conflict: Sendable, Equatable {
        /// The attribute or relationship.
        public var field: String
        /// Its distinct values, in row order.
        public var values: [String]
    }

    /// The store's version.
    public var from: SchemaVersion
    /// The target version.
    public var to: SchemaVersion
    /// The deduplication policy the preview assumed.
    public var policy: DeduplicationPolicy
    /// The stages that would run, in order.
    public var stages: [Stage]
    /// The shared names a stage that makes the name unique would meet (empty from the streaming
    /// `previewMigration`).
    public var duplicates: [DuplicateName]
    /// The trips that would be merged or dropped (empty from the streaming `previewMigration`).
    public var ledger: [SetAsideRecord]
    /// How many values of the attributes the stages make unique several trips share: the
    /// number of `duplicates`, known before they are listed.
    public var duplicateCount = 0
    /// How many trips would be merged into another, and how many dropped.
    public var merged = 0
    public var dropped = 0
    /// Why the migration would fail (duplicates under `fail`), if it would.
    public var failure: TripError?
    /// The trips the store holds.
    public var tripsBefore: Int
    /// The trips it would hold after the migration.
    public var tripsAfter: Int
}
