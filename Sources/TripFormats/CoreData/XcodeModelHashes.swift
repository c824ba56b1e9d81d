import TripKit

/// The entity version hashes of an Xcode model's version (`EntityVersionHash`), for telling which
/// version of an `.xcdatamodeld` a store was written at by its `NSStoreModelVersionHashes`.
extension XcodeModel {
    /// Each entity's version hash of the model `model` read from `elements` (of the `contents` at
    /// `path`): the model's properties with what only the hashes need from the XML (`versionHashModifier`,
    /// a relationship's `minCount`, `maxCount` and `transient`, an attribute's `preserveAfterDeletion`).
    /// Nil, with the sentence why, for a model holding what tripconv does not hash: a derived or
    /// composite attribute, whose hash takes more than the XML says as it is.
    static func versionHashes(_ model: ObjectModel, elements: [Element], path: String) -> (hashes: [String: [UInt8]]?, why: String?) {
        var entities = EntityVersionHash.entities(of: model)
        var e: Int?
        for el in elements {
            let a = el.attributes
            switch (el.depth, el.name) {
            case (2, "entity"):
                e = entities.firstIndex { $0.name == a["name"] }
                if let e { entities[e].versionHashModifier = a["versionHashModifier"] }
            case (3, "attribute"), (3, "relationship"):
                guard let e, let p = entities[e].properties.firstIndex(where: { $0.name == a["name"] }) else { continue }
                let entity = entities[e].name, name = entities[e].properties[p].name
                if a["derived"] == "YES" || a["attributeType"] == "Composite" {
                    let what = a["derived"] == "YES" ? "a derived attribute" : "a composite attribute"
                    return (nil, "\(path):\(el.line): \(entity).\(name) is \(what), whose version hash tripconv does not compute")
                }
                entities[e].properties[p].versionHashModifier = a["versionHashModifier"]
                switch entities[e].properties[p].kind {
                case .attribute(let type, let external, _):
                    let preserves = a["preserveAfterDeletion"] == "YES"
                    entities[e].properties[p].kind = .attribute(type: type, externalStorage: external, preservesOnDeletion: preserves)
                case .relationship(let destination, let inverse, let maxCount, _, let ordered):
                    entities[e].properties[p].isTransient = a["transient"] == "YES"
                    let counts = (max: a["maxCount"].flatMap { Int($0) } ?? maxCount, min: a["minCount"].flatMap { Int($0) } ?? 0)
                    entities[e].properties[p].kind = .relationship(destination: destination, inverse: inverse, maxCount: counts.max,
                                                                   minCount: counts.min, ordered: ordered)
                }
            default:
                break
            }
        }
        return (EntityVersionHash.hashes(entities), nil)
    }
}
