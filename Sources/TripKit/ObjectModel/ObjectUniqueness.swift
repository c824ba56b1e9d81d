extension ObjectDeduplication {
    /// What `model` makes unique, as deduplications of one step (`stage` 0): each entity's
    /// `uniquenessConstraints` made of attributes (one naming a relationship is not made), its objects
    /// and its subentities' sharing those values being duplicates. What objects appended to a store
    /// of the model are deduplicated on, against the objects it holds (`convert --model … -o STORE`).
    public static func uniqueness(of model: ObjectModel) -> [ObjectDeduplication] {
        var out: [ObjectDeduplication] = []
        for (e, entity) in model.entities.enumerated() {
            let attributes = model.allAttributes(of: e)
            for names in entity.uniquenessConstraints where !names.isEmpty {
                let positions = names.compactMap { n in attributes.firstIndex { $0.name == n } }
                guard positions.count == names.count else { continue }
                out.append(ObjectDeduplication(stage: 0, entityName: entity.name, names: names, entity: e, attributes: positions,
                                               version: model.versionIdentifiers.first ?? "the store's model"))
            }
        }
        return out
    }
}
