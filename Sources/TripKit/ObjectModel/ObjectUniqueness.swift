extension ObjectDeduplication {
    /// What `model` makes unique, as deduplications of one step (`stage` 0): each entity's
    /// `uniquenessConstraints` made of attributes (one naming a relationship is not made), its objects
    /// and its subentities' sharing those values being duplicates. What objects appended to a store
    /// of the model are deduplicated on, against the objects it holds (`convert --model … -o STORE`).
    public static func uniqueness(of model: ObjectModel) -> [ObjectDeduplication] {
        uniqueness(of: model, after: 0, except: [])
    }

    /// `uniqueness(of:)` as the step `stage` (of a chain: after its last stage, on the objects
    /// written), leaving out what one of `brought` (the chain's own) already deduplicates.
    /// `unnamed`: what the messages call a model that names no version.
    static func uniqueness(of model: ObjectModel, after stage: Int, except brought: [ObjectDeduplication],
                           unnamed: String = "the store's model") -> [ObjectDeduplication] {
        let done = Set(brought.map { [$0.entityName] + $0.names })
        var out: [ObjectDeduplication] = []
        for (e, entity) in model.entities.enumerated() {
            let attributes = model.allAttributes(of: e)
            for names in entity.uniquenessConstraints where !names.isEmpty && !done.contains([entity.name] + names) {
                let positions = names.compactMap { n in attributes.firstIndex { $0.name == n } }
                guard positions.count == names.count else { continue }
                out.append(ObjectDeduplication(stage: stage, entityName: entity.name, names: names, entity: e, attributes: positions,
                                               version: model.versionIdentifiers.first ?? unnamed))
            }
        }
        return out
    }
}
