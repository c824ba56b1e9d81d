import TripKit

/// The tables of a store at one schema version, derived from that version's declarations.
///
/// The root entity (Trip) gets a table of its persisted attributes, named after the entity
/// (`trips`); each of its relationships gets a table of the destination entity's attributes
/// (`bucket_list_items`, `living_accommodations`) with a foreign key to the root (`trip_id`),
/// whose ON DELETE clause is the relationship's delete rule; a to-many table keeps the list's order in
/// `position`, a to-one table makes the foreign key UNIQUE. Column names are the attribute names of the
/// version (`start_date` at 1.0.0 and 2.0.0, `startDate` at 3.0.0); transient attributes have none.
/// A unique attribute gets a unique index. Nothing here is written by hand per version.
struct StoreLayout {
    /// A column that holds an attribute.
    struct Column {
        let name: String
        /// The attribute's index in its entity's declaration (the slot in `ModelObject.attributes`).
        let slot: Int
        let attribute: Attribute
    }

    /// The table of a relationship's destination.
    struct ChildTable {
        let name: String
        /// The relationship's index in the root entity (the slot in `ModelObject.relationships`).
        let slot: Int
        let relationship: Relationship
        let entity: Entity
        let columns: [Column]
        var isToMany: Bool { relationship.isToMany }
    }

    let schema: any VersionedSchema.Type
    let root: Entity
    let rootTable: String
    let rootColumns: [Column]
    /// The column of each child table that refers to the root row (`trip_id`).
    let foreignKey: String
    let children: [ChildTable]
    /// The column of the root's unique attribute, and the slot of that attribute.
    let uniqueColumn: Column?

    static let idColumn = "id"
    static let positionColumn = "position"
    static let metadataTable = "tripconv_metadata"
    static let migrationsTable = "tripconv_migrations"
    /// The metadata key of the store's schema version.
    static let versionKey = "schemaVersion"

    init(_ schema: any VersionedSchema.Type) {
        self.schema = schema
        root = schema.rootEntity
        rootTable = StoreLayout.tableName(root.name)
        rootColumns = StoreLayout.columns(of: root)
        foreignKey = StoreLayout.snakeCase(root.name) + "_id"
        var children: [ChildTable] = []
        for (slot, r) in root.relationships.enumerated() {
            guard let destination = schema.entity(r.destination) else { continue }
            children.append(ChildTable(name: StoreLayout.tableName(destination.name), slot: slot, relationship: r,
                                       entity: destination, columns: StoreLayout.columns(of: destination)))
        }
        self.children = children
        uniqueColumn = rootColumns.first { $0.attribute.isUnique }
    }

    private static func columns(of entity: Entity) -> [Column] {
        entity.attributes.enumerated().compactMap { slot, a in
            a.isTransient ? nil : Column(name: a.name, slot: slot, attribute: a)
        }
    }

    // MARK: - Names

    /// `Trip` → `trips`, `BucketListItem` → `bucket_list_items`, `LivingAccommodation` → `living_accommodations`.
    static func tableName(_ entityName: String) -> String {
        let snake = snakeCase(entityName)
        if snake.hasSuffix("y"), let before = snake.dropLast().last, !"aeiou".contains(before) {
            return snake.dropLast() + "ies"
        }
        if snake.hasSuffix("s") || snake.hasSuffix("x") || snake.hasSuffix("ch") || snake.hasSuffix("sh") {
            return snake + "es"
        }
        return snake + "s"
    }

    /// `BucketListItem` → `bucket_list_item`.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        var previousIsLowerOrDigit = false
        for c in name {
            if c.isUppercase {
                if previousIsLowerOrDigit { out.append("_") }
                out += c.lowercased()
                previousIsLowerOrDigit = false
            } else {
                out.append(c)
                previousIsLowerOrDigit = c.isLowercase || c.isNumber
            }
        }
        return out
    }

    /// The unique index on the root's unique attribute (`trips_name_unique`).
    var uniqueIndexName: String? { uniqueColumn.map { "\(rootTable)_\($0.name)_unique" } }

    // MARK: - DDL

    /// One table of the layout as DDL: its CREATE TABLE under any name (the 12-step rebuild creates it
    /// under a temporary one), and its indexes, by name.
    struct TableDefinition {
        let name: String
        /// The column definitions, in order, as they go between the parentheses.
        let columnDefinitions: [String]
        /// The column names, in order (the id first).
        let columnNames: [String]
        let indexes: [(name: String, sql: String)]

        func createSQL(named table: String? = nil) -> String {
            "CREATE TABLE \(quoted(table ?? name)) (\n" + columnDefinitions.map { "  " + $0 }.joined(separator: ",\n") + "\n)"
        }
    }

    /// The tables of this version, the root first, each with its indexes.
    var tableDefinitions: [TableDefinition] {
        var out: [TableDefinition] = []
        var rootIndexes: [(name: String, sql: String)] = []
        if let unique = uniqueColumn, let index = uniqueIndexName {
            rootIndexes.append((index, "CREATE UNIQUE INDEX \(quoted(index)) ON \(quoted(rootTable)) (\(quoted(unique.name)))"))
        }
        out.append(TableDefinition(
            name: rootTable,
            columnDefinitions: ["\(quoted(StoreLayout.idColumn)) INTEGER PRIMARY KEY"] + rootColumns.map(StoreLayout.definition),
            columnNames: [StoreLayout.idColumn] + rootColumns.map(\.name),
            indexes: rootIndexes))
        for child in children {
            var definitions = ["\(quoted(StoreLayout.idColumn)) INTEGER PRIMARY KEY"]
            definitions.append("\(quoted(foreignKey)) INTEGER\(child.isToMany ? "" : " UNIQUE") REFERENCES "
                               + "\(quoted(rootTable)) (\(quoted(StoreLayout.idColumn))) ON DELETE \(StoreLayout.action(child.relationship.deleteRule))")
            var names = [StoreLayout.idColumn, foreignKey]
            if child.isToMany {
                definitions.append("\(quoted(StoreLayout.positionColumn)) INTEGER NOT NULL")
                names.append(StoreLayout.positionColumn)
            }
            definitions += child.columns.map(StoreLayout.definition)
            names += child.columns.map(\.name)
            var indexes: [(name: String, sql: String)] = []
            if child.isToMany {
                // Deleting a trip looks its items up by trip; reading walks them in list order.
                let index = child.name + "_" + foreignKey
                indexes.append((index, "CREATE INDEX \(quoted(index)) ON \(quoted(child.name)) "
                                + "(\(quoted(foreignKey)), \(quoted(StoreLayout.positionColumn)))"))
            }
            out.append(TableDefinition(name: child.name, columnDefinitions: definitions, columnNames: names, indexes: indexes))
        }
        return out
    }

    /// The statements that create the store's tables and indexes at this version.
    var createStatements: [String] {
        tableDefinitions.flatMap { [$0.createSQL()] + $0.indexes.map(\.sql) }
    }

    /// The statements that create the metadata and migration-history tables, when absent.
    static var metadataStatements: [String] {
        [
            "CREATE TABLE IF NOT EXISTS \(quoted(metadataTable)) (\n  \"key\" TEXT PRIMARY KEY,\n  \"value\" TEXT NOT NULL\n)",
            "CREATE TABLE IF NOT EXISTS \(quoted(migrationsTable)) (\n"
                + [
                    "  \"id\" INTEGER PRIMARY KEY",
                    "  \"from_version\" TEXT NOT NULL",
                    "  \"to_version\" TEXT NOT NULL",
                    "  \"applied_at\" TEXT NOT NULL",
                    "  \"tool_version\" TEXT NOT NULL",
                    "  \"stages\" TEXT NOT NULL",
                    "  \"trips_before\" INTEGER NOT NULL",
                    "  \"trips_after\" INTEGER NOT NULL",
                ].joined(separator: ",\n") + "\n)",
        ]
    }

    /// The statements that drop the tables of this layout, children first.
    var dropStatements: [String] {
        children.map { "DROP TABLE IF EXISTS \(quoted($0.name))" } + ["DROP TABLE IF EXISTS \(quoted(rootTable))"]
    }

    private static func definition(_ column: Column) -> String {
        let a = column.attribute
        var s = "\(quoted(column.name)) \(sqlType(a.type)) NOT NULL"
        if let d = a.defaultValue { s += " DEFAULT \(literal(d))" }
        if a.type == .bool { s += " CHECK (\(quoted(column.name)) IN (0, 1))" }
        return s
    }

    private static func sqlType(_ type: AttributeType) -> String {
        switch type {
        case .string, .date: return "TEXT"
        case .bool, .int: return "INTEGER"
        }
    }

    private static func literal(_ value: Value) -> String {
        switch value {
        case .null: return "NULL"
        case .string(let s): return "'" + s.replacing("'", with: "''") + "'"
        case .date(let t): return "'\(t.iso8601)'"
        case .bool(let b): return b ? "1" : "0"
        case .int(let n): return String(n)
        }
    }

    static func action(_ rule: DeleteRule) -> String {
        switch rule {
        case .nullify: return "SET NULL"
        case .cascade: return "CASCADE"
        case .deny: return "RESTRICT"
        case .noAction: return "NO ACTION"
        }
    }

    // MARK: - Statements for rows

    /// `INSERT INTO "trips" ("id", "name", …) VALUES (?1, ?2, …)`: the id first, then the attributes.
    var insertRootSQL: String {
        let names = [StoreLayout.idColumn] + rootColumns.map(\.name)
        return "INSERT INTO \(quoted(rootTable)) (\(names.map(quoted).joined(separator: ", "))) VALUES (\(parameters(names.count)))"
    }

    /// `UPDATE "trips" SET "name" = ?2, … WHERE "id" = ?1`: the attributes in the order of the insert.
    var updateRootSQL: String {
        let sets = rootColumns.enumerated().map { "\(quoted($0.element.name)) = ?\($0.offset + 2)" }
        return "UPDATE \(quoted(rootTable)) SET \(sets.joined(separator: ", ")) WHERE \(quoted(StoreLayout.idColumn)) = ?1"
    }

    /// `INSERT INTO "bucket_list_items" ("trip_id", "position", "title", …) VALUES (…), (…), …` with
    /// `rows` rows of parameters, numbered on from row to row (row r's first is r × columns + 1).
    func insertChildSQL(_ child: ChildTable, rows: Int) -> String {
        let names = [foreignKey] + (child.isToMany ? [StoreLayout.positionColumn] : []) + child.columns.map(\.name)
        let row = "(" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
        return "INSERT INTO \(quoted(child.name)) (\(names.map(quoted).joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    private func parameters(_ count: Int) -> String {
        (1...count).map { "?\($0)" }.joined(separator: ", ")
    }
}

/// An SQL identifier in double quotes, inner quotes doubled: safe whatever the name.
func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacing("\"", with: "\"\"") + "\""
}
