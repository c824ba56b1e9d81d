import TripKit

/// The files and columns of a graph of any model in the tables layout (docs/DESIGN-NOTES.md, "The
/// general object model"): what `CSVObjectTablesWriter` writes and `CSVObjectTablesReader` reads.
///
/// One file per concrete entity, `Entity.csv`: `@key` where its family's root has no unique
/// attribute, then a column per stored attribute (inherited first) and per to-one relationship (the
/// reference). One file `Entity.relationship.csv` (owner, then target) per to-many that no to-one on
/// the other side gives: without an inverse, many-to-many, or ordered.
struct CSVObjectLayout {
    /// A column of an entity's file.
    struct Column {
        enum Role { case key, attribute(slot: Int, AttributeDescription), toOne(slot: Int, destination: Int) }
        var name: String
        var role: Role
    }

    /// The file of a concrete entity.
    struct EntityTable {
        var entity: Int
        var file: String
        var columns: [Column]
    }

    /// A to-many written as its own two-column file.
    struct JoinTable {
        /// The entity declaring the relationship (its family's objects are the owners).
        var entity: Int
        /// The relationship's position in `allRelationships(of:)` of the entity and every entity under it.
        var slot: Int
        var destination: Int
        var file: String
        var header: [String]
    }

    /// A to-many the other side's to-one gives: read back from that column.
    struct InverseToMany {
        var entity: Int
        var slot: Int
        var destination: Int
        /// The to-one on the destination, its position in `allRelationships(of:)` there.
        var inverseSlot: Int
    }

    let model: ObjectModel
    let names: ObjectNaming
    var tables: [EntityTable] = []
    var joins: [JoinTable] = []
    var inverses: [InverseToMany] = []

    static let keyColumn = "@key"

    /// The layout of `model`'s objects in files ending `.ext`; the names a writer notes are held
    /// within `budget`.
    init(_ model: ObjectModel, extension ext: String, budget: SpillBudget? = nil) {
        self.model = model
        names = ObjectNaming(model, budget: budget) { e, r in CSVObjectLayout.isWritten(model, e, r) }
        for (e, entity) in model.entities.enumerated() {
            var columns: [Column] = []
            if names.hasKey(e) { columns.append(Column(name: CSVObjectLayout.keyColumn, role: .key)) }
            for (slot, a) in model.allAttributes(of: e).enumerated() where !a.isTransient {
                columns.append(Column(name: a.name, role: .attribute(slot: slot, a)))
            }
            for (slot, r) in model.allRelationships(of: e).enumerated() where !r.isToMany {
                guard let d = model.entityIndex(r.destination) else { continue }
                columns.append(Column(name: r.name, role: .toOne(slot: slot, destination: d)))
            }
            if !entity.isAbstract { tables.append(EntityTable(entity: e, file: "\(entity.name).\(ext)", columns: columns)) }
            // The entity's own to-manys (those it inherits are its superentity's files).
            let inherited = model.allRelationships(of: e).count - entity.relationships.count
            for (i, r) in entity.relationships.enumerated() where r.isToMany {
                guard let d = model.entityIndex(r.destination) else { continue }
                let slot = inherited + i
                if CSVObjectLayout.isWritten(model, e, slot) {
                    joins.append(JoinTable(entity: e, slot: slot, destination: d, file: "\(entity.name).\(r.name).\(ext)",
                                           header: [ownerColumn(e), r.name]))
                } else if let inverse = model.inverse(of: r, in: entity.name),
                          let inverseSlot = model.allRelationships(of: d).firstIndex(where: { $0.name == inverse.name }) {
                    inverses.append(InverseToMany(entity: e, slot: slot, destination: d, inverseSlot: inverseSlot))
                }
            }
        }
    }

    /// The owner column's name of a join file: the unique attribute objects are named by, or `@key`.
    private func ownerColumn(_ e: Int) -> String {
        guard let slot = names.uniqueSlot[e] else { return CSVObjectLayout.keyColumn }
        return model.allAttributes(of: e)[slot].name
    }

    /// Whether relationship `slot` of entity `e` is written as references: a to-one always; a
    /// to-many when ordered, without an inverse, or many-to-many.
    static func isWritten(_ model: ObjectModel, _ e: Int, _ slot: Int) -> Bool {
        let r = model.allRelationships(of: e)[slot]
        guard r.isToMany else { return true }
        if r.isOrdered { return true }
        let declaring = model.lineage(of: e).first { model.entities[$0].relationships.contains { $0.name == r.name } } ?? e
        guard let inverse = model.inverse(of: r, in: model.entities[declaring].name) else { return true }
        return inverse.isToMany
    }

    /// The files the layout has (an existing directory holding only these may be replaced).
    var fileNames: [String] { tables.map(\.file) + joins.map(\.file) }

    /// Whether a value of `kind` can be the empty text (so that a null must be told from it).
    static func canBeEmpty(_ kind: AttributeKind) -> Bool {
        switch kind {
        case .string, .uri, .binary, .transformable, .undefined, .objectID, .composite: return true
        default: return false
        }
    }

    /// The kind of the text a reference to an object of `entity` is written as.
    func referenceKind(_ entity: Int) -> AttributeKind {
        guard let slot = names.uniqueSlot[entity] else { return .int64 }
        return model.allAttributes(of: entity)[slot].kind
    }
}
