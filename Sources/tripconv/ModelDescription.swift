import TripKit
import TripFormats

/// `tripconv schema --model PATH`: a model of any app, in tripconv's words, and as JSON that
/// `--model model.json` reads back.
enum ModelDescription {
    /// The model at `path` (a store, an Xcode model, model JSON), read as library users read it; a
    /// PostgreSQL store's tables are looked for in `pgSchema` (the search path's first when nil).
    static func read(_ path: String, pgSchema: String? = nil) throws -> StoreModel { try TripConverter.loadModel(path, pgSchema: pgSchema) }

    /// Where the model came from, in a phrase: `the store's model cache (Z_MODELCACHE)`, `an Xcode model (PATH)`.
    static func origin(_ store: StoreModel) -> String {
        store.source.rawValue + (store.modelFile.map { " (\($0))" } ?? "")
    }

    static func attributeText(_ a: AttributeDescription) -> String {
        var s = "    \(a.name): \(a.kind)\(a.isOptional ? "?" : "")"
        if let d = a.defaultValue, let text = ModelStep.defaultText(d) {
            s += " = " + (a.kind == .string || a.kind == .uri ? JSONText.quote(text) : text)
        }
        var notes: [String] = []
        if a.isTransient { notes.append("transient") }
        if let c = a.valueClassName, a.kind == .transformable || a.kind == .binary { notes.append("class \(c)") }
        if let t = a.valueTransformerName { notes.append("transformer \(t)") }
        if let o = a.renamingIdentifier { notes.append("originalName \(o)") }
        if !notes.isEmpty { s += "  (" + notes.joined(separator: ", ") + ")" }
        return s + "\n"
    }

    static func relationshipText(_ r: RelationshipDescription) -> String {
        let type = r.isToMany ? "[\(r.destination)]" : "\(r.destination)\(r.isOptional ? "?" : "")"
        var notes = [r.isToMany ? (r.isOrdered ? "ordered to-many" : "to-many") : "to-one"]
        notes.append(r.inverse.map { "inverse \($0)" } ?? "no inverse")
        notes.append("delete rule \(r.deleteRule.rawValue)")
        if let o = r.renamingIdentifier { notes.append("originalName \(o)") }
        return "    \(r.name): \(type)  (" + notes.joined(separator: ", ") + ")\n"
    }

    static func text(_ store: StoreModel, name: String) -> String {
        let model = store.model
        var s = "model of \(name)\n"
        s += "  from \(origin(store))\n"
        if !model.versionIdentifiers.isEmpty { s += "  version \(model.versionIdentifiers.joined(separator: ", "))\n" }
        if let v = store.frameworkVersion { s += "  framework version \(v)\n" }
        for e in model.entities {
            var head = "  \(e.name)"
            var notes: [String] = []
            if let p = e.superentity { notes.append("inherits from \(p)") }
            if e.isAbstract { notes.append("abstract") }
            if let n = store.entityNumbers[e.name] { notes.append("entity \(n)") }
            if let c = store.objectCounts[e.name] { notes.append("\(c) object\(c == 1 ? "" : "s")") }
            if let o = e.renamingIdentifier { notes.append("originalName \(o)") }
            if !notes.isEmpty { head += "  (" + notes.joined(separator: ", ") + ")" }
            s += head + "\n"
            for a in e.attributes { s += attributeText(a) }
            for r in e.relationships { s += relationshipText(r) }
            for u in e.uniquenessConstraints { s += "    unique: \(u.joined(separator: ", "))\n" }
        }
        if !model.inferences.isEmpty {
            s += "inferred\n"
            for i in model.inferences { s += "  \(i)\n" }
        }
        return s
    }

    /// The JSON of `ObjectModelJSON` with where it came from first.
    static func node(_ store: StoreModel) -> JSONText.Node {
        var members: [(String, JSONText.Node)] = [("source", .string(origin(store)))]
        if store.frameworkVersion != nil || !store.entityNumbers.isEmpty {
            members.append(("store", storeNode(store)))
        }
        return .object(members + ObjectModelJSON.node(store.model))
    }

    /// What a store says of itself, for `schema --json` and `detect --json`.
    static func storeNode(_ store: StoreModel) -> JSONText.Node {
        .object([
            ("versionIdentifiers", .array(store.versionIdentifiers.map(JSONText.Node.string))),
            ("frameworkVersion", store.frameworkVersion.map(JSONText.Node.int) ?? .null),
            ("storeType", store.storeType.map(JSONText.Node.string) ?? .null),
            ("hashedEntities", .array(store.hashedEntities.map(JSONText.Node.string))),
            ("pendingWAL", .bool(store.hasPendingWAL)),
            ("modelSource", .string(origin(store))),
            ("entities", .array(store.model.entities.map { e in
                .object([
                    ("name", .string(e.name)),
                    ("number", store.entityNumbers[e.name].map(JSONText.Node.int) ?? .null),
                    ("objects", store.objectCounts[e.name].map(JSONText.Node.int) ?? .null),
                ])
            })),
        ])
    }
}
