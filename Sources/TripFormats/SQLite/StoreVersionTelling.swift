import TripKit

/// Tells a store's schema version from what its catalog holds, whatever database holds it: the
/// SQLite store (`SQLiteStoreStructure`) and the PostgreSQL store (`PGStoreStructure`) ask their own
/// catalogs for the tables, columns and unique indexes, and this decides, with the same evidence
/// and the same messages for both.
struct StoreVersionTelling {
    /// How messages name the store (a path, or a PostgreSQL connection's name).
    let name: String
    /// The store's tables.
    let tables: [String]
    /// Where the tables are, for the note of a store without any (`the database`, `schema "fleet"`).
    let container: String

    static var rootTable: String { StoreLayout(TripMigrationPlan.currentSchema).rootTable }

    /// Fails `.data` unless the store has a trips table.
    func requireRootTable() throws {
        let rootTable = StoreVersionTelling.rootTable
        guard tables.contains(rootTable) else {
            throw TripError.data("\(name): not a trip store: it has no \(rootTable) table",
                                 notes: tables.isEmpty ? ["\(container) has no tables"] : ["its tables: " + tables.prefix(8).joined(separator: ", ")])
        }
    }

    /// The store's version, how it was told, and the columns of its tables: from tripconv's metadata
    /// where the store has the table (`metadataVersion` reads its `schemaVersion`, nil when the key is
    /// missing), else from the trips table's `columns` (`start_date` or `startDate`) and which of them
    /// have a single-column unique index. A metadata version tripconv does not know (a store newer
    /// than tripconv) or one the columns contradict is `.data`.
    func detect(columns: [String], uniqueSingles: Set<String>, metadataVersion: () throws -> String?,
                columnsOf: (String) throws -> [String]) throws -> DetectedStore {
        let plan = TripMigrationPlan.schemas
        let rootTable = StoreVersionTelling.rootTable

        // The versions whose persisted attributes are all columns of the table.
        let layouts = plan.map { StoreLayout($0) }
        let byColumns = layouts.indices.filter { i in layouts[i].rootColumns.allSatisfy { columns.contains($0.name) } }
        // Of those, the ones whose uniqueness the indexes bear out; the newest wins.
        let byIndexes = byColumns.filter { i in
            layouts[i].rootColumns.allSatisfy { $0.attribute.isUnique == uniqueSingles.contains($0.name) }
        }
        let structural = byIndexes.last ?? byColumns.last

        // The evidence: the columns that tell versions apart, and the unique index.
        let everywhere = Set(layouts.flatMap { $0.rootColumns.map(\.name) }).filter { n in
            layouts.allSatisfy { $0.rootColumns.contains { $0.name == n } }
        }
        let telling = columns.filter { c in !everywhere.contains(c) && layouts.contains { $0.rootColumns.contains { $0.name == c } } }
        let uniqueNames = Set(layouts.compactMap { $0.uniqueColumn?.name })
        let indexNote = uniqueNames.sorted().map { n in uniqueSingles.contains(n) ? "unique index on \(n)" : "no unique index on \(n)" }
        let structureText = (["columns " + telling.joined(separator: ", ")] + indexNote).joined(separator: "; ")

        let hasMetadata = tables.contains(StoreLayout.metadataTable)
        let version: SchemaVersion
        let evidence: VersionEvidence
        if hasMetadata {
            guard let text = try metadataVersion() else {
                throw TripError.data("\(name): the metadata table has no \(StoreLayout.versionKey)")
            }
            guard let v = SchemaVersion(text), let index = plan.firstIndex(where: { $0.versionIdentifier == v }) else {
                throw TripError.data("\(name): metadata \(StoreLayout.versionKey) \(text.quotedForMessage) is not a known version",
                                     notes: ["known versions: " + plan.map { $0.versionIdentifier.description }.joined(separator: ", ")])
            }
            guard byColumns.contains(index) else {
                let fits = byColumns.map { plan[$0].versionIdentifier.description }
                throw TripError.data("\(name): metadata says \(v), but the \(rootTable) table has \(structureText)",
                                     notes: [fits.isEmpty ? "its columns fit no version" : "its columns fit " + fits.joined(separator: ", ")])
            }
            version = v
            evidence = .marker("metadata \(StoreLayout.versionKey) \(v)")
        } else {
            guard let structural else {
                throw TripError.data("\(name): the columns of \(rootTable) (\(columns.joined(separator: ", "))) fit no schema version")
            }
            version = plan[structural].versionIdentifier
            evidence = .structure(structureText)
        }

        var childColumns: [String: [String]] = [:]
        for child in StoreLayout(TripMigrationPlan.schema(for: version)!).children where tables.contains(child.name) {
            childColumns[child.name] = try columnsOf(child.name)
        }
        return DetectedStore(version: version, evidence: evidence, hasMetadata: hasMetadata,
                                             rootColumns: columns, childColumns: childColumns)
    }
}
