import TripKit

// The store core: what tripconv's SQLite and PostgreSQL trip stores share, whatever the engine.

/// A trip store's version and how it was told, from its tables (SQLite's `SQLiteStoreStructure`,
/// PostgreSQL's `PGStoreStructure`).
struct DetectedStore {
    let version: SchemaVersion
    let evidence: VersionEvidence
    let hasMetadata: Bool
    /// The columns of each table of the store's layout that the store has (nil: no such table).
    let rootColumns: [String]
    let childColumns: [String: [String]]
    var schema: any VersionedSchema.Type { TripMigrationPlan.schema(for: version)! }
}

/// A foreign key of a store's table.
public struct StoreForeignKey: Sendable, Equatable {
    public var table: String
    public var column: String
    public var referencedTable: String
    public var referencedColumn: String
    /// `CASCADE`, `SET NULL`, `RESTRICT`, `NO ACTION`.
    public var onDelete: String

    /// The key from `table.column` to `referencedTable.referencedColumn`, and what deleting the
    /// referenced row does to the rows that refer to it.
    public init(table: String, column: String, referencedTable: String, referencedColumn: String, onDelete: String) {
        self.table = table; self.column = column; self.referencedTable = referencedTable
        self.referencedColumn = referencedColumn; self.onDelete = onDelete
    }
}
