import TripKit

/// A model told from a Core Data store's tables alone, when it has no model cache and no model was
/// given: what the catalog says, and every guess said in `ObjectModel.inferences`.
///
/// - Entities: `Z_PRIMARYKEY`'s names (`Z_SUPER` their superentity); a root entity's table is `Z` and
///   its name in capitals. A sub-entity's columns are in its root's table: all are given to the root.
/// - Attributes: each column but bookkeeping (`Z_PK`, `Z_ENT`, `Z_OPT`, `Z_…`, `Z<n>…`), named by the
///   column in lower case (the case of names is lost), of the kind its declared type says: VARCHAR
///   String, INTEGER Int64 (a Bool, Int16 or Int32 is stored the same way), FLOAT Double (a Float
///   too), TIMESTAMP Date, BLOB Data (a UUID, a transformable too), DECIMAL Decimal. Every attribute
///   is optional: Core Data declares no NOT NULL.
/// - To-one relationships: an INTEGER column Core Data indexed (`Z<TABLE>_<COLUMN>_INDEX`) whose
///   name is, or ends in, another entity's name in capitals (`ZCATEGORY` → `FeedbackCategory`).
/// - Many-to-many: a table `Z_<n><NAME>` with columns `Z_<n><NAME2>` and `Z_<m><NAME>`: entity n's
///   to-many `name` whose inverse is entity m's to-many `name2`.
/// - Uniqueness: unique indexes other than the key.
enum TableModel {
    static func model(_ connection: SQLiteConnection, entities: [(number: Int64, name: String, parent: Int64)]) throws -> ObjectModel {
        let structure = SQLiteStoreStructure(connection)
        let tables = Set(try structure.tableNames())
        var inferences: [String] = []
        var out = entities.map { e in
            EntityDescription(e.name, superentity: entities.first { $0.number == e.parent && e.parent != 0 }?.name)
        }
        func index(number: Int64) -> Int? { entities.firstIndex { $0.number == number } }
        func destination(forColumn column: String) -> Int? {
            let stem = String(column.dropFirst())
            return entities.firstIndex { $0.name.uppercased() == stem }
                ?? entities.indices.filter { entities[$0].name.uppercased().hasSuffix(stem) }.first
        }
        for (i, e) in entities.enumerated() where e.parent == 0 {
            let table = CoreDataStoreLayout.column(e.name)
            guard tables.contains(table) else {
                inferences.append("\(e.name): no table \(table); the entity has no attributes here")
                continue
            }
            let info = try connection.prepare("SELECT name, type FROM pragma_table_info(?1) ORDER BY cid")
            try info.bind(1, table)
            var columns: [(name: String, type: String)] = []
            while try info.step() { columns.append((info.text(0), info.text(1).uppercased())) }
            let indexed = Set(try indexNames(connection, table))
            for c in columns where !CoreDataStoreLayout.isBookkeeping(c.name) && c.name.hasPrefix("Z") {
                let name = String(c.name.dropFirst()).lowercased()
                if c.type == "INTEGER", indexed.contains("\(table)_\(c.name)_INDEX"), let d = destination(forColumn: c.name) {
                    let relName = entities[d].name.uppercased() == String(c.name.dropFirst()) ? lowerFirst(entities[d].name) : name
                    out[i].relationships.append(RelationshipDescription(relName, to: entities[d].name))
                    inferences.append("\(e.name).\(relName): \(table).\(c.name) read as a to-one to \(entities[d].name) (an indexed INTEGER column "
                                      + "named like it); whether \(entities[d].name) has a to-many back cannot be told")
                    continue
                }
                let kind: AttributeKind
                switch c.type {
                case "VARCHAR", "TEXT": kind = .string
                case "INTEGER":
                    kind = .int64
                    inferences.append("\(e.name).\(name): \(c.name) INTEGER read as Int64; a Bool, Int16 or Int32 is stored the same way")
                case "FLOAT", "REAL":
                    kind = .double
                    inferences.append("\(e.name).\(name): \(c.name) FLOAT read as Double; a Float is stored the same way")
                case "TIMESTAMP": kind = .date
                case "DECIMAL": kind = .decimal
                case "BLOB":
                    kind = .binary
                    inferences.append("\(e.name).\(name): \(c.name) BLOB read as Data; a UUID or a transformable value is stored the same way")
                default:
                    kind = .string
                    inferences.append("\(e.name).\(name): \(c.name) of declared type \(c.type.quotedForMessage) read as String")
                }
                out[i].attributes.append(AttributeDescription(name, kind))
            }
            for unique in try structure.uniqueIndexes(of: table) where !unique.contains(CoreDataStoreLayout.primaryKey) {
                let names = unique.map { String($0.dropFirst()).lowercased() }
                if names.allSatisfy({ n in out[i].attribute(n) != nil }) { out[i].uniquenessConstraints.append(names) }
            }
            if entities.contains(where: { $0.parent == e.number }) {
                inferences.append("\(e.name): the columns of \(table) are given to \(e.name); which of them belong to its sub-entities cannot be told")
            }
        }
        // Many-to-many join tables: Z_<n><NAME> (Z_<n><INVERSE>, Z_<m><NAME>).
        for table in tables.sorted() where table.hasPrefix("Z_") {
            guard let (n, name) = numbered(String(table.dropFirst(2))), let source = index(number: n) else { continue }
            let parsed = try structure.columns(of: table).compactMap { c in c.hasPrefix("Z_") ? numbered(String(c.dropFirst(2))) : nil }
            guard parsed.count >= 2, let back = parsed.first(where: { $0.name == name }), let target = index(number: back.number) else { continue }
            let inverse = parsed.first { $0.number == n && $0.name != name }?.name
            let relName = name.lowercased(), inverseName = inverse?.lowercased()
            out[source].relationships.append(RelationshipDescription(relName, to: entities[target].name, inverse: inverseName, toMany: true))
            if let inverseName, out[target].relationship(inverseName) == nil {
                out[target].relationships.append(RelationshipDescription(inverseName, to: entities[source].name, inverse: relName, toMany: true))
            }
            inferences.append("\(entities[source].name).\(relName): the join table \(table) read as a many-to-many with \(entities[target].name)"
                              + "; whether it is ordered cannot be told")
        }
        inferences.insert("no model cache and no --model: the model is told from the tables; names are the columns' in lower case, "
                          + "every attribute optional, every relationship nullify", at: 0)
        return ObjectModel(entities: out, inferences: inferences)
    }

    /// `12CATEGORIES` → (12, "CATEGORIES").
    static func numbered(_ s: String) -> (number: Int64, name: String)? {
        let digits = s.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count < s.count, let n = Int64(digits) else { return nil }
        return (n, String(s.dropFirst(digits.count)))
    }

    static func lowerFirst(_ s: String) -> String { s.prefix(1).lowercased() + s.dropFirst() }

    static func indexNames(_ connection: SQLiteConnection, _ table: String) throws -> [String] {
        let s = try connection.prepare("SELECT name FROM pragma_index_list(?1)")
        try s.bind(1, table)
        var out: [String] = []
        while try s.step() { out.append(s.text(0)) }
        return out
    }
}
