import TripKit

/// A Core Data SQLite store as its catalog lays it out (SwiftData's `default.store` is one), and the
/// schema version of the trips it holds.
///
/// Core Data keeps one table per entity hierarchy, named `Z` and the root entity's name in capitals
/// (`ZTRIP`, `ZBUCKETLISTITEM`, `ZLIVINGACCOMMODATION`), with `Z_PK` (the row's primary key),
/// `Z_ENT` (its entity's number) and `Z_OPT` (a version count for optimistic locking), then a column
/// per attribute (`Z` and the attribute's name in capitals: `ZNAME`, `ZSTARTDATE` or, at 1.0.0,
/// `ZSTART_DATE`) and per to-one relationship (`ZTRIP`, holding the related row's `Z_PK`).
/// `Z_PRIMARYKEY` numbers the entities (`Z_ENT`, `Z_NAME`, `Z_SUPER`, `Z_MAX`: the last key used);
/// `Z_METADATA` holds the store's metadata as a binary property list (`Z_PLIST`), whose
/// `NSStoreModelVersionIdentifiers` name the model's version where the app set one. Dates are
/// seconds since 2001-01-01 in TIMESTAMP columns, Booleans 0 and 1.
///
/// Nothing is assumed of the entity numbers: they are read from `Z_PRIMARYKEY`.
struct CoreDataStoreLayout {
    static let primaryKeyTable = "Z_PRIMARYKEY"
    static let metadataTable = "Z_METADATA"
    static let primaryKey = "Z_PK"
    static let entityColumn = "Z_ENT"

    /// Whether a database's tables are Core Data's.
    static func isCoreData(tables: [String]) -> Bool {
        tables.contains(primaryKeyTable) && tables.contains(metadataTable)
    }

    /// The rows of one entity: its table, its number and its sub-entities' numbers, the table's columns.
    struct EntityRows {
        let entity: String
        let table: String
        /// The entity's number and those of its sub-entities, which share its table.
        let numbers: [Int64]
        let columns: [String]

        /// `"Z_ENT" IN (3)`: the numbers are integers read from the store, never text.
        var filter: String {
            "\(quoted(CoreDataStoreLayout.entityColumn)) IN (\(numbers.map(String.init).joined(separator: ", ")))"
        }
    }

    /// The rows at the other end of one of the trip's relationships.
    struct RelatedRows {
        let relationship: Relationship
        /// The relationship's index in the trip entity.
        let slot: Int
        let rows: EntityRows
        /// The destination's column that holds its trip's `Z_PK` (`ZTRIP`), where it has one.
        let inverseColumn: String?
        /// The trip table's column that holds the destination's `Z_PK` (`ZLIVINGACCOMMODATION`), for a to-one.
        let forwardColumn: String?
    }

    let trips: EntityRows
    let related: [RelatedRows]
    let version: SchemaVersion
    let evidence: VersionEvidence

    /// The column that holds an attribute or to-one relationship: `startDate` → `ZSTARTDATE`.
    static func column(_ name: String) -> String { "Z" + name.uppercased() }

    /// Whether a column is Core Data's bookkeeping (`Z_PK`, `Z_ENT`, `Z_OPT`, `Z_FOK_…`, and the
    /// entity-number companions of foreign keys such as `Z3TRIP`), never an attribute.
    static func isBookkeeping(_ column: String) -> Bool {
        let u = Array(column.utf8)
        return u.count >= 2 && u[0] == UInt8(ascii: "Z") && (u[1] == UInt8(ascii: "_") || (u[1] >= 48 && u[1] <= 57))
    }

    init(_ connection: SQLiteConnection) throws {
        let path = connection.path
        let structure = SQLiteStoreStructure(connection)
        let tables = try structure.tableNames()
        guard CoreDataStoreLayout.isCoreData(tables: tables) else {
            throw TripError.data("\(path): not a Core Data store: it has no \(CoreDataStoreLayout.primaryKeyTable) and \(CoreDataStoreLayout.metadataTable) tables")
        }

        // The entities, by number.
        var entities: [(number: Int64, name: String, parent: Int64)] = []
        let list = try connection.prepare("SELECT \"Z_ENT\", \"Z_NAME\", \"Z_SUPER\" FROM \(quoted(CoreDataStoreLayout.primaryKeyTable)) ORDER BY \"Z_ENT\"")
        while try list.step() { entities.append((list.int64(0), list.text(1), list.isNull(2) ? 0 : list.int64(2))) }
        func rows(_ name: String) throws -> EntityRows? {
            guard let entity = entities.first(where: { $0.name == name }) else { return nil }
            // Sub-entities live in the table of their hierarchy's root.
            var top = entity
            var steps = 0
            while top.parent != 0, let parent = entities.first(where: { $0.number == top.parent }), steps < entities.count {
                top = parent
                steps += 1
            }
            let table = CoreDataStoreLayout.column(top.name)
            guard tables.contains(table) else { return nil }
            var numbers = [entity.number]
            var frontier = [entity.number]
            while let n = frontier.popLast(), numbers.count <= entities.count {
                for e in entities where e.parent == n && !numbers.contains(e.number) {
                    numbers.append(e.number)
                    frontier.append(e.number)
                }
            }
            return EntityRows(entity: name, table: table, numbers: numbers, columns: try structure.columns(of: table))
        }

        let plan = TripMigrationPlan.schemas
        let root = TripMigrationPlan.currentSchema.rootEntity
        guard let trips = try rows(root.name) else {
            throw TripError.data("\(path): a Core Data store without a \(root.name) entity",
                                 notes: ["its entities: " + entities.prefix(8).map(\.name).joined(separator: ", ")])
        }
        self.trips = trips
        var related: [RelatedRows] = []
        let inverse = CoreDataStoreLayout.column(root.name)
        for (slot, relationship) in root.relationships.enumerated() {
            guard let destination = try rows(relationship.destination) else { continue }
            // The relationship's own column, or a legacy spelling's.
            let spellings = [relationship.name] + plan.flatMap { $0.rootEntity.legacySpellings.filter { $0.value == relationship.name }.map(\.key) }
            let forward = relationship.isToMany ? nil : spellings.map(CoreDataStoreLayout.column).first { trips.columns.contains($0) }
            related.append(RelatedRows(relationship: relationship, slot: slot, rows: destination,
                                       inverseColumn: destination.columns.contains(inverse) ? inverse : nil, forwardColumn: forward))
        }
        self.related = related

        // The version: the columns the trip table has, its unique indexes, and the model version the metadata names.
        let layouts = plan.map { $0.rootEntity.persistedAttributes }
        let byColumns = layouts.indices.filter { i in layouts[i].allSatisfy { trips.columns.contains(CoreDataStoreLayout.column($0.name)) } }
        let uniqueSingles = Set(try structure.uniqueIndexes(of: trips.table).filter { $0.count == 1 }.map { $0[0] })
        let byIndexes = byColumns.filter { i in
            layouts[i].allSatisfy { $0.isUnique == uniqueSingles.contains(CoreDataStoreLayout.column($0.name)) }
        }
        let everywhere = Set(layouts.flatMap { $0.map(\.name) }).filter { n in layouts.allSatisfy { $0.contains { $0.name == n } } }
        let telling = trips.columns.filter { c in
            layouts.contains { $0.contains { !everywhere.contains($0.name) && CoreDataStoreLayout.column($0.name) == c } }
        }
        let uniqueColumns = Set(layouts.flatMap { $0.filter(\.isUnique).map { CoreDataStoreLayout.column($0.name) } })
        var structureText = (["columns " + telling.joined(separator: ", ")]
            + uniqueColumns.sorted().map { uniqueSingles.contains($0) ? "unique index on \($0)" : "no unique index on \($0)" })
            .joined(separator: "; ")

        let identifiers: [String]
        do {
            identifiers = try CoreDataStoreLayout.modelVersionIdentifiers(connection)
        } catch let failure as BinaryPropertyList.Failure {
            identifiers = []
            structureText += "; \(CoreDataStoreLayout.metadataTable) plist unreadable (\(failure))"
        }
        let known = identifiers.compactMap { SchemaVersion($0) }.first { v in plan.contains { $0.versionIdentifier == v } }
        if let known, let index = plan.firstIndex(where: { $0.versionIdentifier == known }) {
            guard byColumns.contains(index) else {
                let fits = byColumns.map { plan[$0].versionIdentifier.description }
                throw TripError.data("\(path): the store's metadata names model version \(known), but \(trips.table) has \(structureText)",
                                     notes: [fits.isEmpty ? "its columns fit no version" : "its columns fit " + fits.joined(separator: ", ")])
            }
            version = known
            evidence = .marker("\(CoreDataStoreLayout.metadataTable) NSStoreModelVersionIdentifiers \(known)")
        } else {
            guard let index = byIndexes.last ?? byColumns.last else {
                throw TripError.data("\(path): the columns of \(trips.table) (\(trips.columns.joined(separator: ", "))) fit no schema version")
            }
            if let other = identifiers.first(where: { !$0.isEmpty }) {
                structureText += "; model version \(other.quotedForMessage) is none of tripconv's"
            }
            version = plan[index].versionIdentifier
            evidence = .structure(structureText)
        }
    }

    /// The `NSStoreModelVersionIdentifiers` of the store's metadata plist; empty where it has none.
    static func modelVersionIdentifiers(_ connection: SQLiteConnection) throws -> [String] {
        let s = try connection.prepare("SELECT \"Z_PLIST\" FROM \(quoted(metadataTable)) ORDER BY \"Z_VERSION\" LIMIT 1")
        guard try s.step(), s.storage(0) == .blob else { return [] }
        guard s.byteCount(0) <= BinaryPropertyList.maximumBytes else {
            throw BinaryPropertyList.Failure("a plist of \(s.byteCount(0)) bytes is longer than the limit")
        }
        let plist = try BinaryPropertyList.parse(s.bytes(0))
        s.reset()
        return plist["NSStoreModelVersionIdentifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Whether a file is a SQLite database whose tables are Core Data's; false for anything else
    /// (whose reader then says what is wrong with it).
    static func isCoreDataFile(_ path: String) -> Bool {
        guard (try? SQLiteRecordWriter.isSQLiteFile(path)) == true,
              let snapshot = try? StoreSnapshot(path: path, busyTimeout: 5000) else { return false }
        defer { snapshot.end() }
        guard let tables = try? SQLiteStoreStructure(snapshot.connection).tableNames() else { return false }
        return isCoreData(tables: tables)
    }
}
