extension ObjectModel {
    /// The position, in the `attributes` of an `ObjectRecord` of the entity at `index`, of the value
    /// its objects are referred to by in exports: the unique attribute of the entity's root (root
    /// first, so the same position in every entity of the family); nil when they are referred to by
    /// `@key` (the root has no single unique attribute).
    public func referenceAttribute(of index: Int) -> Int? {
        let root = lineage(of: index)[0]
        guard let unique = entities[root].uniqueAttribute else { return nil }
        return entities[root].attributes.firstIndex { $0.name == unique.name }
    }

    /// Per entity, whether some relationship leads to it or to one of its superentities: the
    /// entities whose objects may be referred to.
    public var referredEntities: [Bool] {
        let destinations = Set(entities.flatMap { $0.relationships.map(\.destination) }.compactMap(entityIndex))
        return entities.indices.map { lineage(of: $0).contains(where: destinations.contains) }
    }
}
