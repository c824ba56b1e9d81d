import TripKit

/// What the text writers of graphs (JSON, JSON Lines, YAML) need to know of each entity, worked
/// out once at `begin`: its members in the order DESIGN-NOTES lays down (`@key` where the entity's
/// family has no unique attribute, the attributes root first, the relationships root first) and,
/// per relationship, how its references are written.
final class ObjectGraphLayout {
    struct Relationship {
        let name: String
        let isToMany: Bool
        /// Whether references are the destination's unique value (else its `@key` number).
        let byValue: Bool
    }

    struct Entity {
        let name: String
        let writesKey: Bool
        let attributes: [AttributeDescription]
        let relationships: [Relationship]
    }

    let model: ObjectModel
    let entities: [Entity]
    /// Per entity, how many attribute values its objects have (transient ones included), and how many
    /// relationships (read per object without copying the entity's description: three retains).
    private let valueCounts: [Int]
    private let relationshipCounts: [Int]

    init(_ model: ObjectModel) {
        self.model = model
        entities = model.entities.indices.map { e in
            let relationships = model.allRelationships(of: e).map { r in
                Relationship(name: r.name, isToMany: r.isToMany,
                             byValue: model.entityIndex(r.destination).flatMap(model.referenceAttribute) != nil)
            }
            return Entity(name: model.entities[e].name, writesKey: model.referenceAttribute(of: e) == nil,
                          attributes: model.allAttributes(of: e).filter { !$0.isTransient }, relationships: relationships)
        }
        valueCounts = model.entities.indices.map { model.allAttributes(of: $0).count }
        relationshipCounts = entities.map(\.relationships.count)
    }

    /// Checks that objects come entity by entity in the model's order and that `object` has the
    /// values its entity's layout reads.
    func check(_ object: ObjectRecord, after previous: Int) throws {
        guard object.entity >= 0, object.entity < entities.count else {
            throw TripError.data("an object of entity \(object.entity), which the model does not have")
        }
        guard object.entity >= previous else {
            throw TripError.data("an object of \(entities[object.entity].name) after those of \(entities[previous].name): objects must come in the model's order")
        }
        guard object.attributes.count >= valueCounts[object.entity],
              object.relationships.count >= relationshipCounts[object.entity] else {
            throw TripError.data("\(entities[object.entity].name) \(object.key): fewer values than the entity has attributes and relationships")
        }
    }

    /// The positions in an object's `attributes` of the attributes written (transient ones are not).
    func attributeSlots(of entity: Int) -> [Int] {
        model.allAttributes(of: entity).enumerated().filter { !$0.element.isTransient }.map(\.offset)
    }
}
