import TripKit

/// The structural part of one stage applied to a store in place, derived by comparing the two
/// versions' layouts, as the lightweight mapping is derived from their declarations.
///
/// A table whose definition changes (a column renamed, added or dropped, a foreign key's ON DELETE
/// action changed) is rebuilt the way SQLite's documentation prescribes for changes ALTER TABLE
/// cannot make (<https://sqlite.org/lang_altertable.html#otheralter>, "the 12 steps"): with foreign
/// keys off and inside the caller's transaction, create the new table under a temporary name, copy
/// every row with its id, drop the old table, rename the new one, recreate the indexes, triggers and
/// views, then check the foreign keys. A table that keeps its definition is left alone and only
/// gains or loses the layout's indexes (2.0.0's unique index on the trip name).
struct SQLiteStructuralStep {
    /// One thing the step does.
    enum Action {
        /// Rebuild a table: copy `source` into a table of the target definition named `target.name`.
        case rebuild(source: String, target: StoreLayout.TableDefinition, copy: [ColumnSource], changes: [String])
        case createTable(StoreLayout.TableDefinition)
        case dropTable(String)
        case createIndex(name: String, table: String, sql: String)
        case dropIndex(name: String, table: String)
    }

    /// Where a column of a rebuilt table takes its values from.
    enum ColumnSource {
        case column(String)
        case value(Value)
    }

    let from: StoreLayout
    let to: StoreLayout
    let actions: [Action]

    init(from source: any VersionedSchema.Type, to target: any VersionedSchema.Type) throws {
        let from = StoreLayout(source), to = StoreLayout(target)
        self.from = from
        self.to = to
        let mapping = try LightweightMapping(from: source, to: target)
        let old = from.tableDefinitions, new = to.tableDefinitions
        var actions: [Action] = []
        var rebuilt: Set<String> = []
        var kept: Set<String> = []

        for (index, table) in new.enumerated() {
            // The table this one comes from: the root's, or the child table of the mapped relationship.
            let sourceName: String?
            let entityName: String
            if index == 0 {
                sourceName = old[0].name
                entityName = to.root.name
            } else {
                let child = to.children[index - 1]
                entityName = child.entity.name
                let rootMapping = mapping.entities.first { $0.entity == to.root.name }
                let sourceSlot = rootMapping?.relationships[child.slot] ?? nil
                sourceName = sourceSlot.flatMap { slot in from.children.first { $0.slot == slot }?.name }
            }
            guard let sourceName, let sourceTable = old.first(where: { $0.name == sourceName }) else {
                actions.append(.createTable(table))
                continue
            }
            if sourceTable.name == table.name, sourceTable.createSQL() == table.createSQL() {
                kept.insert(table.name)
                continue
            }
            let entityMapping = mapping.entities.first { $0.entity == entityName }
            let sourceEntity = index == 0 ? from.root : from.children.first { $0.name == sourceName }!.entity
            let targetEntity = index == 0 ? to.root : to.children[index - 1].entity
            var copy: [ColumnSource] = []
            var changes: [String] = []
            for column in table.columnNames {
                if let slot = targetEntity.attributeIndex(column), let entityMapping {
                    switch entityMapping.attributes[slot] {
                    case .copy(let s):
                        let name = sourceEntity.attributes[s].name
                        copy.append(.column(name))
                        if name != column { changes.append("\(name) renamed \(column)") }
                    case .value(let v):
                        copy.append(.value(v))
                        changes.append("\(column) added = \(v.literal)")
                    }
                } else if sourceTable.columnNames.contains(column) {
                    copy.append(.column(column))
                } else {
                    // The bookkeeping columns (id, the foreign key, position) are the same in every layout;
                    // a to-one table that becomes a list starts its positions at 0.
                    copy.append(.value(column == StoreLayout.positionColumn ? .int(0) : .null))
                    changes.append("\(column) added")
                }
            }
            for column in sourceTable.columnNames where !copy.contains(where: { if case .column(column) = $0 { true } else { false } }) {
                changes.append("\(column) dropped")
            }
            if index > 0 {
                let a = from.children.first { $0.name == sourceName }!.relationship.deleteRule
                let b = to.children[index - 1].relationship.deleteRule
                if a != b {
                    changes.append("\(to.foreignKey) on delete \(StoreLayout.action(a)) -> \(StoreLayout.action(b))")
                }
            }
            if sourceTable.name != table.name { changes.append("renamed from \(sourceTable.name)") }
            if changes.isEmpty { changes.append("definition changes") }
            actions.append(.rebuild(source: sourceTable.name, target: table, copy: copy, changes: changes))
            rebuilt.insert(sourceTable.name)
        }
        // The old layout's tables that no table of the new one comes from.
        for table in old where !rebuilt.contains(table.name) && !kept.contains(table.name) {
            actions.append(.dropTable(table.name))
        }
        // Indexes of the tables kept as they were: the new layout's that are missing, the old one's that go.
        for table in new where kept.contains(table.name) {
            let before = old.first { $0.name == table.name }?.indexes ?? []
            for index in before where !table.indexes.contains(where: { $0.name == index.name && $0.sql == index.sql }) {
                actions.append(.dropIndex(name: index.name, table: table.name))
            }
            for index in table.indexes where !before.contains(where: { $0.name == index.name && $0.sql == index.sql }) {
                actions.append(.createIndex(name: index.name, table: table.name, sql: index.sql))
            }
        }
        self.actions = actions
    }

    /// What the step does, for people: `rebuild trips (start_date renamed startDate, …)`.
    var descriptions: [String] {
        actions.map { action in
            switch action {
            case .rebuild(let source, let target, _, let changes):
                return "rebuild \(source == target.name ? source : "\(source) as \(target.name)") (\(changes.joined(separator: ", ")))"
            case .createTable(let table): return "create table \(table.name)"
            case .dropTable(let name): return "drop table \(name)"
            case .createIndex(let name, let table, let sql):
                return "create \(sql.hasPrefix("CREATE UNIQUE") ? "unique " : "")index \(name) on \(table)"
            case .dropIndex(let name, let table): return "drop index \(name) on \(table)"
            }
        }
    }

    // MARK: - Applying

    /// Applies the step to the store. Foreign keys must be off on the connection (the pragma is a
    /// no-op inside a transaction, so the caller turns them off before it begins one), and a
    /// transaction must be open: on a failure the caller rolls everything back.
    func apply(_ connection: SQLiteConnection) throws {
        guard try connection.integer("PRAGMA foreign_keys") == 0, connection.isInTransaction else {
            throw TripError(.io, "\(connection.path): cannot migrate the store: foreign keys must be off and a transaction open")
        }
        let rebuilds = actions.contains { if case .rebuild = $0 { true } else { false } }
        // Views and triggers may name the tables being rebuilt, and SQLite checks them when a table is
        // renamed: set them aside, and recreate them after, as the procedure's steps 3 and 8 say.
        var saved: [(type: String, name: String, sql: String)] = []
        if rebuilds {
            let s = try connection.prepare("SELECT type, name, sql FROM sqlite_master WHERE type IN ('view', 'trigger') AND sql IS NOT NULL ORDER BY rowid")
            while try s.step() { saved.append((s.text(0), s.text(1), s.text(2))) }
            for item in saved.reversed() {
                try connection.execute("DROP \(item.type == "view" ? "VIEW" : "TRIGGER") IF EXISTS \(quoted(item.name))")
            }
        }
        for action in actions {
            switch action {
            case .rebuild(let source, let target, let copy, _):
                try rebuild(connection, source: source, target: target, copy: copy)
            case .createTable(let table):
                try connection.execute(table.createSQL(), doing: "cannot migrate the store")
                for index in table.indexes { try connection.execute(index.sql, doing: "cannot migrate the store") }
            case .dropTable(let name):
                try connection.execute("DROP TABLE IF EXISTS \(quoted(name))", doing: "cannot migrate the store")
            case .createIndex(_, let table, let sql):
                try connection.execute(sql, doing: "cannot migrate the store: table \(table)")
            case .dropIndex(let name, _):
                try connection.execute("DROP INDEX IF EXISTS \(quoted(name))", doing: "cannot migrate the store")
            }
        }
        for item in saved {
            try connection.execute(item.sql, doing: "cannot migrate the store: the \(item.type) \(item.name) no longer fits the tables")
        }
        if !saved.isEmpty {
            // CREATE VIEW and CREATE TRIGGER do not resolve the columns they name; renaming a table
            // makes SQLite check every view and trigger of the schema, so rename a scratch one.
            try connection.execute("CREATE TABLE \"tripconv_schema_check\" (\"x\")")
            try connection.execute("ALTER TABLE \"tripconv_schema_check\" RENAME TO \"tripconv_schema_checked\"",
                                   doing: "cannot migrate the store: a view or trigger no longer fits the tables")
            try connection.execute("DROP TABLE \"tripconv_schema_checked\"")
        }
    }

    /// Steps 4 to 8 of the procedure for one table.
    private func rebuild(_ connection: SQLiteConnection, source: String, target: StoreLayout.TableDefinition,
                         copy: [ColumnSource]) throws {
        let path = connection.path
        let doing = "cannot migrate the store: table \(target.name)"
        // A column the old layout does not know would be lost by the copy: refuse rather than lose it.
        let present = try SQLiteStoreStructure(connection).columns(of: source)
        let known = from.tableDefinitions.first { $0.name == source }?.columnNames ?? []
        if let unknown = present.first(where: { !known.contains($0) }) {
            throw TripError.data("\(path): cannot migrate the store: table \(source) has a column \(unknown.quotedForMessage) that \(from.schema.versionIdentifier) does not declare, and rebuilding the table would lose it",
                                 notes: ["remove the column, or copy its values elsewhere, then migrate"])
        }
        // The indexes someone added to the table themselves go with it: recreate them after.
        var ownIndexes: [String] = []
        let ours = Set(from.tableDefinitions.flatMap { $0.indexes.map(\.name) } + target.indexes.map(\.name))
        let list = try connection.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL ORDER BY rowid")
        try list.bind(1, source)
        while try list.step() {
            if !ours.contains(list.text(0)) { ownIndexes.append(list.text(1)) }
        }

        let temporary = target.name + "_tripconv_new"
        do {
            try connection.execute(target.createSQL(named: temporary), doing: doing)
            var expressions: [String] = []
            var values: [Value] = []
            for c in copy {
                switch c {
                case .column(let name): expressions.append(quoted(name))
                case .value(let v):
                    values.append(v)
                    expressions.append("?\(values.count)")
                }
            }
            let insert = try connection.prepare(
                "INSERT INTO \(quoted(temporary)) (\(target.columnNames.map(quoted).joined(separator: ", "))) "
                    + "SELECT \(expressions.joined(separator: ", ")) FROM \(quoted(source)) ORDER BY \(quoted(StoreLayout.idColumn))",
                doing: doing)
            for (i, v) in values.enumerated() { try insert.bind(Int32(i + 1), v) }
            try insert.run()
            try connection.execute("DROP TABLE \(quoted(source))", doing: doing)
            try connection.execute("ALTER TABLE \(quoted(temporary)) RENAME TO \(quoted(target.name))", doing: doing)
        } catch var error as TripError {
            // SQLite names the temporary table in its messages; people know the table by its name.
            error.message = error.message.replacing(temporary, with: target.name)
            throw error
        }
        for index in target.indexes { try connection.execute(index.sql, doing: doing) }
        for sql in ownIndexes {
            try connection.execute(sql, doing: "cannot migrate the store: an index of \(target.name) no longer fits it")
        }
    }

    /// Rows of the layout's tables whose foreign key names a row that is not there (step 10).
    static func foreignKeyProblems(_ connection: SQLiteConnection, layout: StoreLayout) throws -> [String] {
        var out: [String] = []
        for child in layout.children {
            let s = try connection.prepare("SELECT count(*) FROM pragma_foreign_key_check(?1)")
            try s.bind(1, child.name)
            if try s.step(), s.int64(0) > 0 {
                out.append("\(s.int64(0)) \(child.name) row\(s.int64(0) == 1 ? "" : "s")")
            }
            s.reset()
        }
        return out
    }
}
