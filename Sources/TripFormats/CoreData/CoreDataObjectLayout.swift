import TripKit

/// Where a Core Data store keeps the objects of a model, and the statements that read them
/// (docs/DESIGN-NOTES.md, "Reading the objects of any model out of a Core Data store").
///
/// - An entity's rows are in its root entity's table, `Z` and the root's name in capitals; an
///   entity's own rows are those whose `Z_ENT` is its number (`Z_PRIMARYKEY`).
/// - A stored attribute or to-one relationship is the column `Z` and its name in capitals. Where
///   entities sharing a table declare the same name, Core Data numbers the columns in entity-number
///   order: the first `ZACCOUNT`, the next `ZACCOUNT1`, … (as Apple Notes' `ZICCLOUDSYNCINGOBJECT`).
/// - A to-many whose inverse is a to-one is the destination rows whose inverse column names the
///   owner, in `Z_FOK_<INVERSE>` order for an ordered one (`ZPARENTFOLDER`, `Z_FOK_PARENTFOLDER`).
/// - A to-many without an inverse is a hidden to-one on the destination's root table, `Z<n><NAME>`
///   (`n` the number of the entity declaring it), ordered by `Z_FOK_<n><NAME>` for an ordered one.
/// - A many-to-many is a join table `Z_<n><RELATIONSHIP>`, `n` the number of the entity declaring
///   one of the pair (which one Core Data picks is not assumed: the one that exists is read); its
///   column `Z_<n><NAME>` holds the keys of entity `n` that the relationship `NAME` points at, and
///   `Z_FOK_<n><NAME>` their order (Photos' `Z_26ASSETS`: `Z_26ALBUMS`, `Z_3ASSETS`, `Z_FOK_3ASSETS`).
///   Either may end in a clash number, each numbered on its own (AddressBook's `Z_19PARENTGROUPS1`):
///   the columns are read from the table, not foretold.
/// - A many-to-many that is its own inverse is `Z_<n><NAME>(Z_<n><NAME>, REFLEXIVE)`.
///
/// What the layout cannot be sure of (an ordered many-to-many that is its own inverse, a column that
/// is not where these rules put it) is refused, exit 65, naming the place.
struct CoreDataObjectLayout {
    /// How one relationship of an entity is read.
    enum Slot {
        /// The owner statement's columns from `first`: the foreign key, then the joined destination's
        /// `Z_PK` and `Z_ENT` (NULL when the key names no row), or, where the destination has no
        /// sub-entities and a `Check` has proved every key names a row, the key and the entity's number.
        case toOne(first: Int32, column: String)
        /// A statement of rows (owner key, destination key, destination `Z_PK` or NULL, destination
        /// `Z_ENT`) in the order of the owner keys, then of the objects in the relationship.
        case toMany(sql: String, table: String, column: String)
    }

    /// A check that every key a relationship holds names a row of its destination.
    struct Check {
        let sql: CheckQueries
        let table: String
        let column: String
        /// Whether the statement's table is a join table (its rows are named by their owner).
        let isJoinTable: Bool
        /// The side of the relationship whose rows the key should name, as the message says.
        var side = "destination"
        /// Where the reader meets the keys this check tests (`CoreDataEntityCursor`); `.none`: it runs
        /// before the entity's first object.
        var probe = Probe.none
        /// The entity whose keys (its own rows only, no sub-entity's) the references name, when its
        /// family is that entity alone: the keys of its rows the reader read before, if it did.
        var destination: Int?
    }

    /// Where the reader tests the keys of a `Check` as it reads them.
    enum Probe {
        case none
        /// The owner statement's column: a to-one's key.
        case toOne(column: Int32)
        /// Column 1 of the to-many at this slot: a join table's key. `nullOwners` finds a row whose
        /// owner is NULL and key is not (such a row is not among the list's).
        case listKey(slot: Int, nullOwners: String)
        /// The owner column of the to-many at this slot, where the owner is this entity alone: a key
        /// the merge join steps over names no row.
        case listOwner(slot: Int)
    }

    /// A check's statements (`CoreDataKeyCheck` runs them). `first`'s first row, if any, is the
    /// reference naming no row that the message names: (owner `Z_PK`, key), the least owner first.
    struct CheckQueries {
        let first: String
        /// The key of every reference, NULL keys left out.
        let references: String
        /// The keys of the destination's rows, and their least and greatest (`range`).
        let keys: String
        let range: String
    }

    /// How the objects of one entity are read.
    struct EntityPlan {
        let index: Int
        let number: Int64
        let table: String
        let attributes: [AttributeDescription]
        /// The owner statement's column of each attribute, nil for a transient one.
        let attributeColumns: [Int32?]
        let attributeColumnNames: [String?]
        /// The numbers of each relationship's destination and its sub-entities.
        let destinations: [Set<Int64>]
        let slots: [Slot]
        /// Run before the entity's first object.
        let checks: [Check]
        /// The entity's rows in `Z_PK` order: `Z_PK`, the attribute columns, three per to-one.
        let sql: String
    }

    let entities: [EntityPlan]
    /// The model's entity at each entity number.
    let entityByNumber: [Int64: Int]

    static let key = "Z_PK"
    static let entityColumn = "Z_ENT"

    /// The entity numbers of `Z_PRIMARYKEY`, by name.
    static func entityNumbers(_ connection: SQLiteConnection) throws -> [String: Int64] {
        let s = try connection.prepare("SELECT \"Z_ENT\", \"Z_NAME\" FROM \"Z_PRIMARYKEY\"")
        var out: [String: Int64] = [:]
        while try s.step() {
            if !s.isNull(0) { out[s.text(1)] = s.int64(0) }
        }
        return out
    }

    init(_ connection: SQLiteConnection, model: ObjectModel, numbers: [String: Int64]) throws {
        let path = connection.path
        let structure = SQLiteStoreStructure(connection)
        let tables = Set(try structure.tableNames())
        func fail(_ message: String, _ notes: [String] = []) -> TripError { TripError.data("\(path): \(message)", notes: notes) }

        var number: [Int64] = []
        for e in model.entities {
            guard let n = numbers[e.name] else { throw fail("Z_PRIMARYKEY numbers no entity \(e.name.quotedForMessage) of the model") }
            number.append(n)
        }
        entityByNumber = Dictionary(number.indices.map { (number[$0], $0) }, uniquingKeysWith: { a, _ in a })
        func root(_ i: Int) -> Int { model.lineage(of: i)[0] }
        // Every entity's inheritance ends in a root (no unknown superentity, no cycle), whose table it shares.
        for i in model.entities.indices where model.entities[root(i)].superentity != nil {
            throw fail("the inheritance of entity \(model.entities[i].name.quotedForMessage) does not end in a root entity",
                       ["its superentity \(model.entities[root(i)].superentity!.quotedForMessage) is unknown or inherits from it"])
        }
        func table(_ i: Int) -> String { "Z" + model.entities[root(i)].name.uppercased() }
        func family(_ i: Int) -> Set<Int64> {
            Set(model.entities.indices.filter { model.lineage(of: $0).contains(i) }.map { number[$0] })
        }
        func declaring(_ name: String, in i: Int) -> Int? {
            model.lineage(of: i).last { model.entities[$0].relationship(name) != nil }
        }

        // Every table's columns, and the column of every stored property, numbered on clashes.
        var tableColumns: [String: Set<String>] = [:]
        var columnLists: [String: [String]] = [:]
        var column: [Int: [String: String]] = [:]
        for r in model.entities.indices where model.entities[r].superentity == nil {
            let name = table(r)
            guard tables.contains(name) else { throw fail("the store has no table \(name) for entity \(model.entities[r].name)") }
            columnLists[name] = try structure.columns(of: name)
            let columns = Set(columnLists[name]!)
            tableColumns[name] = columns
            var uses: [String: Int] = [:]
            for i in model.entities.indices.filter({ root($0) == r }).sorted(by: { number[$0] < number[$1] }) {
                let e = model.entities[i]
                let names = e.attributes.filter { !$0.isTransient }.map(\.name) + e.relationships.filter { !$0.isToMany }.map(\.name)
                var own: [String: String] = [:]
                for n in names {
                    let base = "Z" + n.uppercased()
                    let k = uses[base, default: 0]
                    uses[base] = k + 1
                    let c = k == 0 ? base : base + String(k)
                    guard !own.values.contains(c) else { throw fail("\(e.name) has two properties stored as \(c) in \(name)") }
                    guard columns.contains(c) else {
                        throw fail("\(name) has no column \(c) for \(e.name).\(n)",
                                   k == 0 ? [] : ["entities sharing \(name) declare \(n) \(k + 1) times; Core Data numbers such columns in entity-number order"])
                    }
                    own[n] = c
                }
                column[i] = own
            }
        }
        // The column of table `t` named one of `bases`, or that and a clash number (Core Data numbers a name two
        // relationships give a table: AddressBook's `Z_22PARENTGROUPS(Z_22CONTACTS, Z_19PARENTGROUPS1)`), read
        // from the table's columns rather than foretold; none, or two that fit alike, is refused.
        func resolve(_ bases: [String], in t: String, _ columns: [String], for what: String, excluding: String? = nil) throws -> String {
            var names: [String] = []
            for b in bases where !names.contains(b) { names.append(b) }
            let fits = columns.filter { c in
                c != excluding && names.contains { c.hasPrefix($0) && c.dropFirst($0.count).allSatisfy { $0 >= "0" && $0 <= "9" } }
            }
            let exact = fits.filter { names.contains($0) }
            if exact.count == 1 { return exact[0] }
            if exact.isEmpty && fits.count == 1 { return fits[0] }
            let expected = names.joined(separator: " or ")
            if fits.isEmpty { throw fail("\(t) has no column \(expected) for \(what)") }
            throw fail("\(t) has the columns \(fits.joined(separator: ", ")) for \(what): Core Data names one \(expected), and which is its cannot be told")
        }
        func columnOf(_ name: String, in i: Int) -> String? {
            for l in model.lineage(of: i).reversed() { if let c = column[l]?[name] { return c } }
            return nil
        }

        var plans: [EntityPlan] = []
        for i in model.entities.indices {
            let e = model.entities[i]
            let t = table(i)
            let attributes = model.allAttributes(of: i)
            var selected = ["o." + quoted(CoreDataObjectLayout.key)]
            var attributeColumns: [Int32?] = []
            var attributeNames: [String?] = []
            for a in attributes {
                guard !a.isTransient else { attributeColumns.append(nil); attributeNames.append(nil); continue }
                switch a.kind {
                case .undefined, .objectID, .composite:
                    throw fail("\(e.name).\(a.name): attributes of kind \(a.kind) are not read from a store")
                default: break
                }
                let c = columnOf(a.name, in: i)!
                attributeColumns.append(Int32(selected.count)); attributeNames.append(c)
                selected.append("o." + quoted(c))
            }
            var joins: [String] = []
            var slots: [Slot] = []
            var destinations: [Set<Int64>] = []
            var checks: [Check] = []
            // Keys naming no row of the destination, found with one scan per relationship against a bitmap
            // of the destination's keys (`CoreDataKeyCheck`) rather than a lookup per row.
            func dangling(_ from: String, _ owner: String, _ key: String, _ d: Int, where filter: String) -> CheckQueries {
                let ents = family(d).sorted().map(String.init).joined(separator: ", ")
                let keys = "SELECT \"Z_PK\" FROM \(quoted(table(d))) WHERE \"Z_ENT\" IN (\(ents))"
                return CheckQueries(first: "SELECT \(owner), \(key) FROM \(from) WHERE \(filter)\(key) IS NOT NULL AND \(key) NOT IN "
                                        + "(\(keys)) ORDER BY \(owner), \(key) LIMIT 1",
                                    references: "SELECT \(key) FROM \(from) WHERE \(filter)+\(key) IS NOT NULL",
                                    keys: keys, range: "SELECT (SELECT min(\"Z_PK\") FROM \(quoted(table(d)))), (SELECT max(\"Z_PK\") FROM \(quoted(table(d))))")
            }
            for r in model.allRelationships(of: i) {
                guard let d = model.entityIndex(r.destination) else {
                    throw fail("\(e.name).\(r.name) points at \(r.destination.quotedForMessage), which the model has no entity of")
                }
                destinations.append(family(d))
                let owner = declaring(r.name, in: i) ?? i
                if !r.isToMany {
                    let c = columnOf(r.name, in: i)!
                    slots.append(.toOne(first: Int32(selected.count), column: c))
                    if family(d).count == 1 {
                        checks.append(Check(sql: dangling("\(quoted(t)) AS o", "o.\"Z_PK\"", "o." + quoted(c), d, where: "o.\"Z_ENT\" = \(number[i]) AND "),
                                            table: t, column: c, isJoinTable: false, probe: .toOne(column: Int32(selected.count)), destination: d))
                        selected += ["o." + quoted(c), "o." + quoted(c), String(number[d])]
                    } else {
                        let alias = "d\(joins.count)"
                        selected += ["o." + quoted(c), alias + "." + quoted(CoreDataObjectLayout.key), alias + "." + quoted(CoreDataObjectLayout.entityColumn)]
                        joins.append("LEFT JOIN \(quoted(table(d))) AS \(alias) ON \(alias).\(quoted(CoreDataObjectLayout.key)) = o.\(quoted(c))")
                    }
                    continue
                }
                let relationship = "\(e.name).\(r.name)"
                let inverse = model.inverse(of: r, in: model.entities[owner].name)
                if inverse?.isToMany != true {
                    // The destination rows whose column names the owner: the inverse's, or, without an inverse, the
                    // hidden to-one Core Data keeps on the destination's root table, `Z<n><NAME>` (n the declaring entity).
                    let dt = table(d)
                    let fk: String
                    var fok: String?
                    if let inverse {
                        guard let c = columnOf(inverse.name, in: d) else {
                            throw fail("\(relationship): the inverse \(r.destination).\(inverse.name) is not a stored to-one of \(r.destination)")
                        }
                        fk = c
                        if r.isOrdered {
                            let order = "Z_FOK_" + c.dropFirst()
                            guard tableColumns[dt]?.contains(order) == true else {
                                throw fail("\(dt) has no column \(order), the order of the ordered \(relationship)")
                            }
                            fok = order
                        }
                    } else {
                        let name = "\(number[owner])\(r.name.uppercased())"
                        fk = try resolve(["Z" + name], in: dt, columnLists[dt] ?? [], for: "\(relationship), a to-many without an inverse")
                        if r.isOrdered { fok = try resolve(["Z_FOK_" + name], in: dt, columnLists[dt] ?? [], for: "the order of the ordered \(relationship)") }
                        if i == owner {
                            // A key naming no owner would leave its row out of every owner's list: refused instead.
                            let ents = family(d).sorted().map(String.init).joined(separator: ", ")
                            let sql = dangling("\(quoted(dt)) AS d", "d.\"Z_PK\"", "d." + quoted(fk), owner, where: "d.\"Z_ENT\" IN (\(ents)) AND ")
                            checks.append(Check(sql: sql, table: dt, column: fk, isJoinTable: false, side: "owner",
                                                probe: family(owner).count == 1 ? .listOwner(slot: slots.count) : .none))
                        }
                    }
                    var order = ["+d." + quoted(fk)]
                    if let fok { order.append("d." + quoted(fok)) }
                    order.append("d." + quoted(CoreDataObjectLayout.key))
                    let ents = family(d).sorted().map(String.init).joined(separator: ", ")
                    let sql = "SELECT d.\(quoted(fk)), d.\"Z_PK\", d.\"Z_PK\", d.\"Z_ENT\" FROM \(quoted(dt)) AS d "
                        + "WHERE +d.\(quoted(fk)) IS NOT NULL AND d.\"Z_ENT\" IN (\(ents)) ORDER BY \(order.joined(separator: ", "))"
                    slots.append(.toMany(sql: sql, table: dt, column: fk))
                    continue
                }
                let inverseRelationship = inverse!
                // A many-to-many: a join table named after either side.
                guard let inverseOwner = declaring(inverseRelationship.name, in: d) else {
                    throw fail("\(relationship): its inverse \(inverseRelationship.name) is not a relationship of \(r.destination)")
                }
                if inverseOwner == owner && inverseRelationship.name == r.name {
                    // Its own inverse (a symmetric "friends"): `Z_<n><NAME>(Z_<n><NAME>, REFLEXIVE)`, a pair kept in
                    // either column order (or both): an object's list is the other column of the rows naming it in either.
                    let jt = "Z_\(number[owner])\(r.name.uppercased())"
                    guard !r.isOrdered else {
                        throw fail("\(relationship): an ordered many-to-many that is its own inverse, whose order tripconv does not know")
                    }
                    guard tables.contains(jt) else { throw fail("\(relationship): the store has no join table \(jt), which it keeps as its own inverse") }
                    let jc = try structure.columns(of: jt)
                    let a = try resolve(["Z_\(number[owner])\(r.name.uppercased())", "Z_\(number[d])\(r.name.uppercased())"], in: jt, jc, for: relationship)
                    let b = try resolve(["REFLEXIVE"], in: jt, jc, for: relationship, excluding: a)
                    let pairs = "(SELECT \(quoted(a)) AS o, \(quoted(b)) AS k FROM \(quoted(jt)) UNION SELECT \(quoted(b)), \(quoted(a)) FROM \(quoted(jt))) AS j"
                    let sql: String
                    if family(d).count == 1 {
                        checks.append(Check(sql: dangling(pairs, "j.o", "j.k", d, where: ""), table: jt, column: "\(a) or \(b)", isJoinTable: true))
                        sql = "SELECT j.o, j.k, j.k, \(number[d]) FROM \(pairs) WHERE j.o IS NOT NULL ORDER BY j.o, j.k"
                    } else {
                        sql = "SELECT j.o, j.k, d.\"Z_PK\", d.\"Z_ENT\" FROM \(pairs) LEFT JOIN \(quoted(table(d))) AS d ON d.\"Z_PK\" = j.k "
                            + "WHERE j.o IS NOT NULL ORDER BY j.o, j.k"
                    }
                    slots.append(.toMany(sql: sql, table: jt, column: "\(a) or \(b)"))
                    continue
                }
                let candidates = ["Z_\(number[owner])\(r.name.uppercased())", "Z_\(number[inverseOwner])\(inverseRelationship.name.uppercased())"]
                let present = candidates.filter { tables.contains($0) }
                guard present.count == 1, let jt = present.first else {
                    throw fail("\(relationship): the store has " + (present.isEmpty ? "neither" : "both")
                               + " of the join tables \(candidates.joined(separator: " and "))")
                }
                // Each column is `Z_<n><NAME>`, n the number of the entity whose keys it holds, perhaps with a clash
                // number (AddressBook's `Z_19PARENTGROUPS1`); its order `Z_FOK_<n><NAME>`, numbered on its own.
                let jc = try structure.columns(of: jt)
                let ownerNumbers = [number[model.entityIndex(inverseRelationship.destination) ?? owner], number[owner]]
                let destNumbers = [number[d], number[inverseOwner]]
                let ownerColumn = try resolve(ownerNumbers.map { "Z_\($0)\(inverseRelationship.name.uppercased())" }, in: jt, jc, for: relationship)
                let destColumn = try resolve(destNumbers.map { "Z_\($0)\(r.name.uppercased())" }, in: jt, jc, for: relationship, excluding: ownerColumn)
                var order = ["j." + quoted(ownerColumn)]
                if r.isOrdered {
                    let fok = try resolve(destNumbers.map { "Z_FOK_\($0)\(r.name.uppercased())" }, in: jt, jc, for: "the order of the ordered \(relationship)")
                    order.append("j." + quoted(fok))
                }
                order.append("j." + quoted(destColumn))
                if r.isOrdered { order[0] = "+" + order[0] }
                let sql: String
                if family(d).count == 1 {
                    let nullOwners = "SELECT 1 FROM \(quoted(jt)) WHERE \(quoted(ownerColumn)) IS NULL AND \(quoted(destColumn)) IS NOT NULL LIMIT 1"
                    checks.append(Check(sql: dangling(quoted(jt) + " AS j", "j." + quoted(ownerColumn), "j." + quoted(destColumn), d, where: ""),
                                        table: jt, column: destColumn, isJoinTable: true, probe: .listKey(slot: slots.count, nullOwners: nullOwners),
                                        destination: d))
                    sql = "SELECT j.\(quoted(ownerColumn)), j.\(quoted(destColumn)), j.\(quoted(destColumn)), \(number[d]) FROM \(quoted(jt)) AS j "
                        + "WHERE j.\(quoted(ownerColumn)) IS NOT NULL ORDER BY \(order.joined(separator: ", "))"
                } else {
                    sql = "SELECT j.\(quoted(ownerColumn)), j.\(quoted(destColumn)), d.\"Z_PK\", d.\"Z_ENT\" FROM \(quoted(jt)) AS j "
                        + "LEFT JOIN \(quoted(table(d))) AS d ON d.\"Z_PK\" = j.\(quoted(destColumn)) "
                        + "WHERE j.\(quoted(ownerColumn)) IS NOT NULL ORDER BY \(order.joined(separator: ", "))"
                }
                slots.append(.toMany(sql: sql, table: jt, column: destColumn))
            }
            let sql = "SELECT \(selected.joined(separator: ", ")) FROM \(quoted(t)) AS o \(joins.joined(separator: " ")) "
                + "WHERE o.\"Z_ENT\" = \(number[i]) ORDER BY o.\"Z_PK\""
            plans.append(EntityPlan(index: i, number: number[i], table: t, attributes: attributes, attributeColumns: attributeColumns,
                                    attributeColumnNames: attributeNames, destinations: destinations, slots: slots, checks: checks, sql: sql))
        }
        entities = plans

        // A row of an entity the model does not have would never be read: refused, not dropped.
        for (t, _) in tableColumns.sorted(by: { $0.key < $1.key }) {
            let known = plans.filter { $0.table == t }.map { String($0.number) }.joined(separator: ", ")
            let s = try connection.prepare("SELECT \"Z_PK\", \"Z_ENT\" FROM \(quoted(t)) WHERE \"Z_ENT\" IS NULL OR \"Z_ENT\" NOT IN (\(known)) LIMIT 1")
            if try s.step() {
                let ent = s.isNull(1) ? "NULL" : String(s.int64(1))
                throw fail("\(t) row Z_PK \(s.int64(0)): Z_ENT \(ent) is no entity of the model sharing \(t)")
            }
        }
    }
}
