import TripKit

/// What differs between the SQL databases an object store is written to: the column type of each
/// attribute kind and how a default is spelled. The DDL (`ObjectStoreLayout`) is the same for all.
struct ObjectStoreDialect: Sendable {
    /// The type of the key columns.
    var keyType: String
    /// The column type of an attribute of `kind`.
    var columnType: @Sendable (AttributeKind) -> String
    /// What follows a foreign key's ON DELETE action (PostgreSQL: deferred to the commit).
    var foreignKeySuffix = ""
    /// Whether foreign keys are added by ALTER TABLE once every table is made (PostgreSQL: a table
    /// referenced must exist), rather than declared with their column.
    var addsForeignKeysLast = false
    /// A Boolean default's literals, and what goes before and after a Data default's hexadecimal digits.
    var booleans = ("1", "0")
    var hexQuotes = ("X'", "'")

    /// SQLite: TEXT for String, URL, UUID (`uuidString`), Decimal (its digits) and Date (ISO 8601 in UTC,
    /// as every text format writes it); INTEGER for the integers and Bool (0/1); REAL for Double and
    /// Float; BLOB for Data, transformable values and kinds without a type of their own.
    static let sqlite = ObjectStoreDialect(keyType: "INTEGER", columnType: { kind in
        switch kind {
        case .string, .uri, .uuid, .decimal, .date: return "TEXT"
        case .int16, .int32, .int64, .bool: return "INTEGER"
        case .double, .float: return "REAL"
        case .binary, .transformable, .undefined, .objectID, .composite: return "BLOB"
        }
    })

    /// The SQL literal of a default value, nil where the kind has none to give.
    func literal(_ value: ObjectValue) -> String? {
        func text(_ s: String) -> String { "'" + s.replacing("'", with: "''") + "'" }
        switch value {
        case .null: return nil
        case .int(let i): return String(i)
        case .bool(let b): return b ? booleans.0 : booleans.1
        case .double(let d): return d.isFinite ? ObjectValueText.text(value) : nil
        case .data(let bytes):
            let hex = Array("0123456789ABCDEF")
            return hexQuotes.0 + String(bytes.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }) + hexQuotes.1
        default: return ObjectValueText.text(value).map(text)
        }
    }
}

/// The tables of a tripconv object store (docs/DESIGN-NOTES.md, "tripconv's store of any model"):
/// what `SQLiteObjectWriter` creates and writes and `SQLiteObjectReader` reads.
///
/// One table per root entity, named as the model names it, holding its whole inheritance tree (as
/// Core Data does) with `_entity` naming each row's entity, and a view per sub-entity, named as the
/// sub-entity, of its rows and columns. `_pk` is the object's key. A column per stored attribute and
/// per to-one relationship (a foreign key to the destination's table). A to-many is read from its
/// inverse's column where that is a to-one and the to-many is unordered; otherwise it is a join
/// table `Entity_relationship` (one per many-to-many pair), with an `…_order` column per ordered side.
struct ObjectStoreLayout {
    static let keyColumn = "_pk"
    static let entityColumn = "_entity"
    /// The table holding the model JSON (`name` 'model') and the layout's version (`name` 'layout').
    static let modelTable = "tripconv_model"
    static let layoutVersion = "1"

    /// Where a to-many's references are.
    struct ToMany {
        /// The table and the columns naming the owner and the target, and the order column.
        var table: String
        var ownerColumn: String
        var targetColumn: String
        var orderColumn: String?
        /// Whether the owner writes join rows (false: the list is the inverse's to-one column).
        var isJoin: Bool
        /// Whether the join table's primary key is (targetColumn, ownerColumn): the side that is not canonical.
        var isReversed: Bool
    }

    let model: ObjectModel
    let dialect: ObjectStoreDialect
    /// Per entity: its family's table.
    var tableOf: [String] = []
    /// Per entity: whether its table holds more than one entity (rows carry `_entity`).
    var isShared: [Bool] = []
    /// Per entity, per slot of `allAttributes(of:)`: the column (nil: transient).
    var attributeColumns: [[String?]] = []
    /// Per entity, per slot of `allRelationships(of:)`: the column of a to-one.
    var toOneColumns: [[String?]] = []
    /// Per entity, per slot of `allRelationships(of:)`: where a to-many is.
    var toManys: [[ToMany?]] = []
    /// Per entity, per slot: the destination entity's position (nil when the model has no such entity).
    var destinations: [[Int?]] = []
    /// CREATE TABLE, VIEW and INDEX statements, in order.
    var statements: [String] = []

    /// The layout of `model`; a model whose names collide with the layout's own is `.usage`.
    init(_ model: ObjectModel, dialect: ObjectStoreDialect) throws {
        self.model = model; self.dialect = dialect
        let n = model.entities.count
        tableOf = model.entities.indices.map { model.entities[model.lineage(of: $0)[0]].name }
        isShared = model.entities.indices.map { e in model.family(of: tableOf[e]).count > 1 }
        attributeColumns = Array(repeating: [], count: n)
        toOneColumns = Array(repeating: [], count: n)
        toManys = Array(repeating: [], count: n)
        destinations = model.entities.indices.map { model.allRelationships(of: $0).map { model.entityIndex($0.destination) } }
        var names = Set([ObjectStoreLayout.modelTable.lowercased()])
        func claim(_ name: String) throws {
            guard names.insert(name.lowercased()).inserted else {
                throw TripError.usage("the model's names give two tables or views named \(name) (SQL names ignore case); "
                                      + "a tripconv store cannot hold this model")
            }
        }
        // Per (declaring entity, name): the column an attribute or to-one has in its family's table.
        var columnOf: [Int: [String: String]] = [:]
        var foreignKeys: [String] = []
        for (root, entity) in model.entities.enumerated() where entity.superentity == nil {
            try claim(entity.name)
            let family = model.family(of: entity.name).compactMap { model.entityIndex($0.name) }
            statements += try familyTable(root, family, &columnOf, &foreignKeys)
            statements += family.filter { $0 != root }.map { view($0, columnOf) }
            for member in family where member != root { try claim(model.entities[member].name) }
        }
        for e in model.entities.indices {
            let lineage = model.lineage(of: e)
            attributeColumns[e] = lineage.flatMap { d in model.entities[d].attributes.map { $0.isTransient ? nil : columnOf[d]?[$0.name] } }
            toOneColumns[e] = lineage.flatMap { d in model.entities[d].relationships.map { $0.isToMany ? nil : columnOf[d]?[$0.name] } }
        }
        statements += try joinTables(columnOf, claim, &foreignKeys)
        statements += foreignKeys
    }

    /// The column `c` of `table` naming a row of `target`: declared with it, or added by `later`.
    private func reference(_ table: String, _ c: String, _ target: String, _ rule: String, _ later: inout [String]) -> String {
        let clause = "REFERENCES \(quoted(target))(\(quoted(ObjectStoreLayout.keyColumn))) ON DELETE \(rule)\(dialect.foreignKeySuffix)"
        guard dialect.addsForeignKeysLast else { return " " + clause }
        later.append("ALTER TABLE \(quoted(table)) ADD FOREIGN KEY (\(quoted(c))) \(clause)")
        return ""
    }

    /// The family's table, its indexes; records the columns in `columnOf`.
    private func familyTable(_ root: Int, _ family: [Int], _ columnOf: inout [Int: [String: String]], _ later: inout [String]) throws -> [String] {
        let table = model.entities[root].name
        let shared = family.count > 1
        let members = { (e: Int) in
            model.entities.indices.filter { model.lineage(of: $0).contains(e) }.map { "'" + model.entities[$0].name.replacing("'", with: "''") + "'" }
                .joined(separator: ", ")
        }
        var definitions = ["\(quoted(ObjectStoreLayout.keyColumn)) \(dialect.keyType) PRIMARY KEY"]
        if shared { definitions.append("\(quoted(ObjectStoreLayout.entityColumn)) TEXT NOT NULL CHECK (\(quoted(ObjectStoreLayout.entityColumn)) IN (\(members(root))))") }
        var used = Set([ObjectStoreLayout.keyColumn, ObjectStoreLayout.entityColumn].map { $0.lowercased() })
        var indexes: [String] = []
        for e in family {
            let entity = model.entities[e]
            func column(_ name: String) throws -> String {
                if used.insert(name.lowercased()).inserted { return name }
                let renamed = "\(entity.name)_\(name)"
                guard used.insert(renamed.lowercased()).inserted else {
                    throw TripError.usage("\(entity.name).\(name): its column would be named as another of \(table)'s; a tripconv store cannot hold this model")
                }
                return renamed
            }
            // A sub-entity's required attribute: a CHECK, since the other entities' rows leave it NULL.
            let required = { (c: String) in e == root ? " NOT NULL" : " CHECK (\(quoted(ObjectStoreLayout.entityColumn)) NOT IN (\(members(e))) OR \(quoted(c)) IS NOT NULL)" }
            for a in entity.attributes where !a.isTransient {
                let c = try column(a.name)
                columnOf[e, default: [:]][a.name] = c
                var definition = "\(quoted(c)) \(dialect.columnType(a.kind))"
                if !a.isOptional { definition += required(c) }
                if let d = a.defaultValue, let literal = dialect.literal(d) { definition += " DEFAULT \(literal)" }
                definitions.append(definition)
            }
            for r in entity.relationships where !r.isToMany {
                let c = try column(r.name)
                columnOf[e, default: [:]][r.name] = c
                guard let d = model.entityIndex(r.destination) else {
                    definitions.append("\(quoted(c)) \(dialect.keyType)")
                    continue
                }
                let rule = model.inverse(of: r, in: entity.name).map { ObjectStoreLayout.onDelete($0.deleteRule) } ?? "SET NULL"
                definitions.append("\(quoted(c)) \(dialect.keyType)" + reference(table, c, tableOf[d], rule, &later))
                indexes.append("CREATE INDEX \(quoted("\(table)_\(c)")) ON \(quoted(table)) (\(quoted(c)))")
            }
        }
        let known = columnOf
        for e in family {
            let entity = model.entities[e]
            let lineage = model.lineage(of: e)
            for (i, tuple) in entity.uniquenessConstraints.enumerated() {
                let columns = tuple.compactMap { name in lineage.lazy.compactMap { known[$0]?[name] }.first }
                guard columns.count == tuple.count, !columns.isEmpty else { continue }
                let filter = e == root ? "" : " WHERE \(quoted(ObjectStoreLayout.entityColumn)) IN (\(members(e)))"
                indexes.append("CREATE UNIQUE INDEX \(quoted("\(entity.name)_unique_\(i + 1)")) ON \(quoted(table)) "
                               + "(\(columns.map(quoted).joined(separator: ", ")))\(filter)")
            }
        }
        return ["CREATE TABLE \(quoted(table)) (\n  " + definitions.joined(separator: ",\n  ") + "\n)"] + indexes
    }

    /// A sub-entity's view: its rows of the family's table, its columns by the model's names.
    private func view(_ e: Int, _ columnOf: [Int: [String: String]]) -> String {
        let lineage = model.lineage(of: e)
        var selected = [ObjectStoreLayout.keyColumn, ObjectStoreLayout.entityColumn].map(quoted)
        for d in lineage {
            let entity = model.entities[d]
            let names = entity.attributes.filter { !$0.isTransient }.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
            for name in names { if let c = columnOf[d]?[name] { selected.append(c == name ? quoted(c) : "\(quoted(c)) AS \(quoted(name))") } }
        }
        let members = model.entities.indices.filter { model.lineage(of: $0).contains(e) }
            .map { "'" + model.entities[$0].name.replacing("'", with: "''") + "'" }.joined(separator: ", ")
        return "CREATE VIEW \(quoted(model.entities[e].name)) AS SELECT \(selected.joined(separator: ", ")) FROM \(quoted(tableOf[e])) "
            + "WHERE \(quoted(ObjectStoreLayout.entityColumn)) IN (\(members))"
    }

    /// The join tables, and every entity's to-many slots.
    private mutating func joinTables(_ columnOf: [Int: [String: String]], _ claim: (String) throws -> Void, _ later: inout [String]) throws -> [String] {
        var out: [String] = []
        // Per (declaring entity, relationship name): the to-many, as its declaring entity's slots see it.
        var declared: [Int: [String: ToMany]] = [:]
        for (e, entity) in model.entities.enumerated() {
            for (i, r) in entity.relationships.enumerated() where r.isToMany {
                guard let d = model.entityIndex(r.destination) else { continue }
                let inverse = model.inverse(of: r, in: entity.name)
                if let inverse, !inverse.isToMany, !r.isOrdered,
                   let column = model.lineage(of: d).lazy.compactMap({ columnOf[$0]?[inverse.name] }).first {
                    declared[e, default: [:]][r.name] = ToMany(table: tableOf[d], ownerColumn: column, targetColumn: ObjectStoreLayout.keyColumn,
                                                               isJoin: false, isReversed: false)
                    continue
                }
                // A many-to-many pair has one table, named after its side declared first in the model.
                var other: (entity: Int, index: Int, r: RelationshipDescription)?
                if let inverse, inverse.isToMany,
                   let owner = model.lineage(of: d).reversed().first(where: { model.entities[$0].relationship(inverse.name) != nil }),
                   !(owner == e && inverse.name == r.name) {
                    other = (owner, model.entities[owner].relationships.firstIndex { $0.name == inverse.name }!, inverse)
                }
                if let other, (other.entity, other.index) < (e, i) { continue }
                let table = "\(entity.name)_\(r.name)"
                try claim(table)
                let ownerColumn = entity.name.lowercased() == r.name.lowercased() ? "\(entity.name)_owner" : entity.name
                let rOrder = r.isOrdered ? "\(r.name)_order" : nil
                var otherOrder = other.flatMap { $0.r.isOrdered ? "\($0.r.name)_order" : nil }
                if let o = otherOrder, o.lowercased() == rOrder?.lowercased() { otherOrder = "\(r.destination)_\(o)" }
                var definitions = [
                    "\(quoted(ownerColumn)) \(dialect.keyType) NOT NULL" + reference(table, ownerColumn, tableOf[e], "CASCADE", &later),
                    "\(quoted(r.name)) \(dialect.keyType) NOT NULL" + reference(table, r.name, tableOf[d], "CASCADE", &later),
                ]
                for order in [rOrder, otherOrder].compactMap({ $0 }) {
                    definitions.append("\(quoted(order)) INTEGER")
                }
                definitions.append("PRIMARY KEY (\(quoted(ownerColumn)), \(quoted(r.name)))")
                out.append("CREATE TABLE \(quoted(table)) (\n  " + definitions.joined(separator: ",\n  ") + "\n)")
                out.append("CREATE INDEX \(quoted("\(table)_\(r.name)")) ON \(quoted(table)) (\(quoted(r.name)))")
                declared[e, default: [:]][r.name] = ToMany(table: table, ownerColumn: ownerColumn, targetColumn: r.name, orderColumn: rOrder,
                                                           isJoin: true, isReversed: false)
                if let other {
                    declared[other.entity, default: [:]][other.r.name] = ToMany(table: table, ownerColumn: r.name, targetColumn: ownerColumn,
                                                                                orderColumn: otherOrder, isJoin: true, isReversed: true)
                }
            }
        }
        for e in model.entities.indices {
            toManys[e] = model.lineage(of: e).flatMap { d in model.entities[d].relationships.map { $0.isToMany ? declared[d]?[$0.name] : nil } }
        }
        return out
    }

    /// The SELECTs that read entity `e`'s objects: its rows in key order (the key, each stored
    /// attribute's column, and per to-one its column and the entity of the row it names, NULL where
    /// that table holds one entity); per to-many slot, its (owner, target, target's entity) in owner order.
    func entityQueries(_ e: Int) -> (rows: String, lists: [String?]) {
        let k = quoted(ObjectStoreLayout.keyColumn), ent = quoted(ObjectStoreLayout.entityColumn)
        // The expression of a destination's entity name: its row's `_entity`, or NULL where its table holds one entity.
        func entityOf(_ d: Int?, _ alias: String) -> String { d.map { isShared[$0] } == true ? "\(alias).\(ent)" : "NULL" }
        var selected = ["o.\(k)"] + attributeColumns[e].compactMap { $0.map { "o." + quoted($0) } }
        var joins: [String] = []
        for (slot, column) in toOneColumns[e].enumerated() {
            guard let column else { continue }
            let d = destinations[e][slot]
            selected += ["o." + quoted(column), entityOf(d, "t\(slot)")]
            if let d, isShared[d] { joins.append("LEFT JOIN \(quoted(tableOf[d])) AS t\(slot) ON t\(slot).\(k) = o.\(quoted(column))") }
        }
        let filter = isShared[e] ? " WHERE o.\(ent) = '\(model.entities[e].name.replacing("'", with: "''"))'" : ""
        let rows = "SELECT \(selected.joined(separator: ", ")) FROM \(quoted(tableOf[e])) AS o \(joins.joined(separator: " "))"
            + "\(filter) ORDER BY o.\(k)"
        let lists = toManys[e].enumerated().map { slot, toMany -> String? in
            guard let t = toMany else { return nil }
            let d = destinations[e][slot]
            let sql: String
            if t.isJoin {
                let join = d.map { isShared[$0] } == true ? "LEFT JOIN \(quoted(tableOf[d!])) AS t ON t.\(k) = j.\(quoted(t.targetColumn))" : ""
                let order = ["j." + quoted(t.ownerColumn)] + (t.orderColumn.map { ["j." + quoted($0)] } ?? []) + ["j." + quoted(t.targetColumn)]
                sql = "SELECT j.\(quoted(t.ownerColumn)), j.\(quoted(t.targetColumn)), \(entityOf(d, "t")) FROM \(quoted(t.table)) AS j \(join) "
                    + "ORDER BY \(order.joined(separator: ", "))"
            } else {
                sql = "SELECT t.\(quoted(t.ownerColumn)), t.\(k), \(entityOf(d, "t")) FROM \(quoted(t.table)) AS t "
                    + "WHERE t.\(quoted(t.ownerColumn)) IS NOT NULL ORDER BY t.\(quoted(t.ownerColumn)), t.\(k)"
            }
            return sql
        }
        return (rows, lists)
    }

    /// The ON DELETE action of a foreign key column: what happens to its row when the row it names
    /// goes, which is what the model's inverse relationship (from that row to this one) says.
    static func onDelete(_ rule: DeleteRule) -> String {
        switch rule {
        case .nullify: return "SET NULL"
        case .cascade: return "CASCADE"
        case .deny: return "RESTRICT"
        case .noAction: return "NO ACTION"
        }
    }

    /// The statement creating the model table.
    static var modelTableStatement: String {
        "CREATE TABLE \(quoted(modelTable)) (\(quoted("name")) TEXT PRIMARY KEY, \(quoted("value")) TEXT NOT NULL)"
    }
}
