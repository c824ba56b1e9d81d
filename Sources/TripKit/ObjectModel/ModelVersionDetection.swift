/// Tells which version of a `ModelPlan` an input's objects were written at, from what a probe saw
/// of it (`ModelVersionEvidence`), as the trip path tells SampleTrips' versions: a marker first; else
/// a store's entity version hashes (`NSStoreModelVersionHashes`) where the plan has its versions' (an
/// `.xcdatamodeld`'s) and the marker names no version; else
/// the versions whose entities declare every name seen (with a kind that takes every value seen),
/// preferring one whose stored attributes were all seen (an exact match), then one whose unseen
/// attributes are optional or defaulted; among several alike, the earliest, so that every stage after
/// it runs (the trip path reads fields that 1.0.0 and 2.0.0 share as 1.0.0 too). When no version
/// declares them all, the one declaring the most (a best match, said). A name no version declares is an
/// error (exit 65) naming it, and saying whose `originalName` it is where it is one.
///
/// ```swift
/// let verdict = try ModelVersionDetection.detect(seen, plan: plan, input: "trips.json")
/// print(verdict.version, verdict.evidence.joined(separator: "; "))
/// ```
public enum ModelVersionDetection {
    /// The version of `plan` that `evidence` tells; `input` names the input in errors.
    public static func detect(_ evidence: ModelVersionEvidence, plan: ModelPlan, input: String) throws -> ModelVersionVerdict {
        let ids = plan.versions.map { $0.versionIdentifiers.first ?? "" }
        guard let current = ids.last else { throw TripError.data("\(input): the plan declares no version") }
        let hashes = HashComparison(evidence, plan: plan, ids: ids)
        if !evidence.markers.isEmpty, evidence.markers.contains(where: ids.contains) || hashes?.matching.isEmpty != false {
            return try byMarker(evidence, ids: ids, input: input, hashes: hashes)
        }
        if let hashes, !hashes.matching.isEmpty {
            var sentences = hashes.sentences(ids)
            if !evidence.markers.isEmpty {
                sentences.insert("\(evidence.markerPlace ?? "marker") names version \(evidence.markers.joined(separator: ", ")), which the plan does not declare", at: 0)
            }
            return ModelVersionVerdict(version: ids[hashes.matching[0]], basis: .versionHashes, evidence: sentences,
                                       alike: hashes.matching.dropFirst().map { ids[$0] })
        }
        var verdict = try byNames(evidence, plan: plan, ids: ids, current: current, input: input)
        if let hashes { verdict.evidence.insert(contentsOf: hashes.sentences(ids), at: 0) }
        return verdict
    }

    /// The version the names (and kinds) seen tell, `current` when nothing was seen.
    private static func byNames(_ evidence: ModelVersionEvidence, plan: ModelPlan, ids: [String], current: String,
                                input: String) throws -> ModelVersionVerdict {
        if evidence.isEmpty {
            return ModelVersionVerdict(version: current, basis: .nothingSeen,
                                       evidence: ["no objects to tell the version by: reading as the current version, \(current)"], alike: [])
        }
        try refuseUndeclared(evidence, plan: plan, input: input)
        let fits = plan.versions.map { Fit($0, evidence) }
        let consistent = fits.indices.filter { fits[$0].isConsistent }
        var sentences = telling(evidence, plan: plan, ids: ids, fits: fits)
        guard !consistent.isEmpty else {
            let best = fits.indices.max { a, b in fits[a].fitting < fits[b].fitting || (fits[a].fitting == fits[b].fitting && a > b) }!
            let total = evidence.entities.reduce(0) { $0 + $1.properties.count }
            sentences.append("no version declares every name as seen: best match \(ids[best]), which takes \(fits[best].fitting) of the \(total) "
                             + "names seen (not \(fits[best].misfits.joined(separator: ", ")))")
            return ModelVersionVerdict(version: ids[best], basis: .bestMatch, evidence: sentences, alike: [])
        }
        let exact = consistent.filter { fits[$0].isExact }
        let plausible = consistent.filter { fits[$0].isPlausible }
        var tier = !exact.isEmpty ? exact : (!plausible.isEmpty ? plausible : consistent)
        if consistent.count > tier.count {
            let others = consistent.filter { !tier.contains($0) }.map { ids[$0] }
            let why = exact.isEmpty ? "requires attributes not seen" : "stores attributes not seen"
            sentences.append("\(list(others)) declare\(others.count == 1 ? "s" : "") every name seen too, but \(others.count == 1 ? "it" : "each") \(why)")
        }
        if let told = evidence.uniqueness {
            let matching = tier.filter { uniquenessMatches(told, plan.versions[$0], evidence.ignoresCase) }
            if !matching.isEmpty, matching.count < tier.count {
                let others = tier.filter { !matching.contains($0) }
                sentences.append(uniquenessSentence(told, plan: plan, ids: ids, matching: matching, others: others, evidence.ignoresCase))
                tier = matching
            }
        }
        let chosen = tier[0]
        let alike = tier.dropFirst().map { ids[$0] }
        if alike.isEmpty {
            if sentences.isEmpty { sentences.append("only \(ids[chosen]) declares the names seen") }
        } else {
            let all = [ids[chosen]] + alike
            let untold = untoldKinds(evidence, versions: tier.map { plan.versions[$0] })
            let same = untold.isEmpty ? "the same names and types" : "the same names, and the data tells no kinds: " + untold.joined(separator: "; ")
            sentences.append("\(list(all)) cannot be told apart by the data: they declare \(same); "
                             + "reading as \(ids[chosen]), the earliest, so that every stage after it runs")
        }
        return ModelVersionVerdict(version: ids[chosen], basis: exact.isEmpty ? .names : .exactNames, evidence: sentences, alike: alike)
    }

    private static func byMarker(_ evidence: ModelVersionEvidence, ids: [String], input: String, hashes: HashComparison?) throws -> ModelVersionVerdict {
        let place = evidence.markerPlace ?? "marker"
        guard let found = evidence.markers.first(where: { ids.contains($0) }) else {
            throw TripError.data("\(input): \(place) names version \(evidence.markers.joined(separator: ", ")), which the plan does not declare",
                                 notes: ["the plan's versions: " + ids.joined(separator: ", ")] + (hashes?.sentences(ids) ?? []))
        }
        var sentences = ["marker \(place) \(found)"]
        // Core Data opens a store by its hashes, the identifiers being hints: say where they disagree.
        if let hashes, !hashes.matching.isEmpty, !hashes.matching.contains(where: { ids[$0] == found }) {
            sentences.append("but \(hashes.place) match \(list(hashes.matching.map { ids[$0] })), not \(found)")
        }
        return ModelVersionVerdict(version: found, basis: .marker, evidence: sentences, alike: [])
    }

    /// An input's entity version hashes compared with those of each version that has them.
    struct HashComparison {
        var place: String
        /// The versions (positions in the plan) whose every entity's hash is the input's, and no other entity.
        var matching: [Int] = []
        /// Per version compared and not matching, what differs (`Item differs, Tag is not in the store`).
        var differences: [(version: Int, what: String)] = []
        /// The versions without hashes.
        var uncompared: [Int] = []

        init?(_ evidence: ModelVersionEvidence, plan: ModelPlan, ids: [String]) {
            guard let seen = evidence.versionHashes, !seen.isEmpty, !plan.entityVersionHashes.isEmpty else { return nil }
            place = evidence.versionHashesPlace ?? "the input's entity version hashes"
            for (v, id) in ids.enumerated() {
                guard let own = plan.entityVersionHashes[id] else { uncompared.append(v); continue }
                if own == seen { matching.append(v); continue }
                let differ = own.keys.filter { seen[$0] != nil && seen[$0] != own[$0] }.sorted()
                let missing = own.keys.filter { seen[$0] == nil }.sorted(), extra = seen.keys.filter { own[$0] == nil }.sorted()
                var what: [String] = []
                if !differ.isEmpty { what.append("\(ModelVersionDetection.list(differ)) differ\(differ.count == 1 ? "s" : "")") }
                if !missing.isEmpty { what.append("\(ModelVersionDetection.list(missing)) not in the store") }
                if !extra.isEmpty { what.append("the store's \(ModelVersionDetection.list(extra)) not in it") }
                differences.append((v, what.joined(separator: ", ")))
            }
            if uncompared.count == ids.count { return nil }
        }

        /// `Z_METADATA NSStoreModelVersionHashes match version 2`, or match no version and what differs.
        func sentences(_ ids: [String]) -> [String] {
            var s: String
            switch matching.count {
            case 0:
                s = "\(place) match no version of the plan (" + differences.map { "\(ids[$0.version]): \($0.what)" }.joined(separator: "; ") + ")"
            case 1:
                s = "\(place) match version \(ids[matching[0]])"
            default:
                s = "\(place) match versions \(ModelVersionDetection.list(matching.map { ids[$0] })), whose entity version hashes are the same: "
                    + "reading as \(ids[matching[0]]), the earliest, so that every stage after it runs"
            }
            if !uncompared.isEmpty { s += "; \(ModelVersionDetection.list(uncompared.map { ids[$0] })) not compared: no hashes known" }
            return [s]
        }
    }

    /// Throws when an entity or a property seen is declared by no version, naming them.
    private static func refuseUndeclared(_ evidence: ModelVersionEvidence, plan: ModelPlan, input: String) throws {
        var missing: [String] = []
        var notes: [String] = []
        for seen in evidence.entities {
            let entities = plan.versions.compactMap { v in entity(seen.name, in: v, evidence.ignoresCase).map { (v, $0) } }
            if entities.isEmpty {
                missing.append("entity \(seen.name)")
                notes += renamings(of: seen.name, plan: plan) { v in v.entities.filter { $0.renamingIdentifier == seen.name }.map(\.name) }
                continue
            }
            let undeclared = seen.properties.map(\.name).filter { name in
                !entities.contains { v, e in property(name, of: e, in: v, evidence.ignoresCase) != nil }
            }
            guard !undeclared.isEmpty else { continue }
            missing.append("\(seen.name) has \(undeclared.joined(separator: ", "))")
            for name in undeclared {
                notes += renamings(of: name, plan: plan) { v in
                    entities.filter { $0.0 == v }.flatMap { v, e in
                        v.allAttributes(of: v.entityIndex(e.name)!).filter { $0.renamingIdentifier == name }.map { "\(e.name).\($0.name)" }
                            + v.allRelationships(of: v.entityIndex(e.name)!).filter { $0.renamingIdentifier == name }.map { "\(e.name).\($0.name)" }
                    }
                }
            }
        }
        guard !missing.isEmpty else { return }
        let ids = plan.versions.map { $0.versionIdentifiers.first ?? "" }
        throw TripError.data("\(input): \(missing.joined(separator: "; ")), which no version of the plan declares (\(ids.joined(separator: ", ")))",
                             notes: notes)
    }

    /// Notes for a name some version renames through `originalName`, whose own version is not in the plan.
    private static func renamings(of name: String, plan: ModelPlan, _ renamedIn: (ObjectModel) -> [String]) -> [String] {
        plan.versions.flatMap { v in
            renamedIn(v).map { "\(name) is the originalName of \($0) in \(v.versionIdentifiers.first ?? ""), "
                + "but no schema of the plan declares \(name) itself: add the version that does to the plan's schemas" }
        }
    }

    /// The sentences naming what tells the versions apart: entities some versions lack, names some
    /// versions do not declare, values some versions' kinds do not take.
    private static func telling(_ evidence: ModelVersionEvidence, plan: ModelPlan, ids: [String], fits: [Fit]) -> [String] {
        var sentences: [String] = []
        let everyVersion = Set(ids.indices)
        for seen in evidence.entities {
            let having = Set(plan.versions.indices.filter { entity(seen.name, in: plan.versions[$0], evidence.ignoresCase) != nil })
            if having != everyVersion { sentences.append("entity \(seen.name), which only \(list(having.sorted().map { ids[$0] })) \(verb(having))") }
            var groups: [(versions: [Int], names: [String])] = []
            for p in seen.properties {
                let declaring = plan.versions.indices.filter { v in
                    let model = plan.versions[v]
                    return entity(seen.name, in: model, evidence.ignoresCase).map { property(p.name, of: $0, in: model, evidence.ignoresCase) != nil } ?? false
                }
                guard Set(declaring) != having else { continue }
                if let g = groups.firstIndex(where: { $0.versions == declaring }) {
                    groups[g].names.append(p.name)
                } else {
                    groups.append((declaring, [p.name]))
                }
            }
            for g in groups {
                let versions = g.versions.map { ids[$0] }
                var s = "\(seen.name) has \(g.names.joined(separator: ", ")), which only \(list(versions)) declare\(versions.count == 1 ? "s" : "")"
                let renames = g.names.flatMap { name in renamedBy(name, entity: seen.name, plan: plan) }
                if !renames.isEmpty { s += " (\(renames.joined(separator: ", ")) through originalName)" }
                sentences.append(s)
            }
            for p in seen.properties {
                guard let kinds = p.kinds else { continue }
                var declared: [(String, AttributeKind)] = []
                for (v, model) in plan.versions.enumerated() {
                    guard let e = entity(seen.name, in: model, evidence.ignoresCase),
                          case .attribute(let a)? = property(p.name, of: e, in: model, evidence.ignoresCase) else { continue }
                    declared.append((ids[v], a.kind))
                }
                let taking = declared.filter { kinds.contains($0.1) }
                guard taking.count < declared.count, !declared.isEmpty else { continue }
                let what = p.seen.isEmpty ? "values" : p.seen.joined(separator: " and ")
                let each = declared.map { "\($0.0) declares \($0.1)\(kinds.contains($0.1) ? "" : ", which does not take them")" }
                sentences.append("\(seen.name).\(p.name) holds \(what): " + each.joined(separator: ", "))
            }
        }
        return sentences
    }

    /// Whether `model` makes unique what the input's own model does, for every entity it tells of.
    private static func uniquenessMatches(_ told: [String: [[String]]], _ model: ObjectModel, _ ignoresCase: Bool) -> Bool {
        func key(_ tuples: [[String]]) -> Set<Set<String>> { Set(tuples.map { Set($0.map { ignoresCase ? $0.lowercased() : $0 }) }) }
        return told.allSatisfy { name, tuples in entity(name, in: model, ignoresCase).map { key($0.uniquenessConstraints) == key(tuples) } ?? true }
    }

    /// `the store's model makes Trip unique on name, as 2.0.0 does (1.0.0 does not)`.
    private static func uniquenessSentence(_ told: [String: [[String]]], plan: ModelPlan, ids: [String], matching: [Int], others: [Int],
                                           _ ignoresCase: Bool) -> String {
        let differing = told.keys.sorted().filter { name in
            others.contains { !uniquenessMatches([name: told[name]!], plan.versions[$0], ignoresCase) }
        }
        let said = differing.map { name in
            let tuples = told[name]!
            if tuples.isEmpty { return "makes nothing of \(name) unique" }
            return "makes \(name) unique on " + tuples.map { $0.joined(separator: ", ") }.joined(separator: " and on ")
        }
        let m = matching.map { ids[$0] }, o = others.map { ids[$0] }
        return "the store's model \(list(said)), as \(list(m)) \(m.count == 1 ? "does" : "do") (\(list(o)) \(o.count == 1 ? "does" : "do") not)"
    }

    /// `Item.count is String in 1.0.0, Int64 in 2.0.0`, for each name seen without kinds whose kind the versions differ in.
    private static func untoldKinds(_ evidence: ModelVersionEvidence, versions: [ObjectModel]) -> [String] {
        var sentences: [String] = []
        for seen in evidence.entities {
            for p in seen.properties where p.kinds == nil {
                let kinds = versions.map { v -> String? in
                    guard let e = entity(seen.name, in: v, evidence.ignoresCase),
                          case .attribute(let a)? = property(p.name, of: e, in: v, evidence.ignoresCase) else { return nil }
                    return "\(a.kind) in \(v.versionIdentifiers.first ?? "")"
                }
                let distinct = Set(kinds.compactMap { $0?.split(separator: " ").first })
                if distinct.count > 1 { sentences.append("\(seen.name).\(p.name) is " + kinds.compactMap { $0 }.joined(separator: ", ")) }
            }
        }
        return sentences
    }

    private static func verb(_ versions: Set<Int>) -> String { versions.count == 1 ? "has" : "have" }

    /// `3.0.0 renames start_date to startDate`, for each later version renaming `name` on `entity`.
    private static func renamedBy(_ name: String, entity: String, plan: ModelPlan) -> [String] {
        plan.versions.compactMap { v in
            guard let e = v.entityIndex(entity) ?? v.entities.firstIndex(where: { $0.renamingIdentifier == entity }) else { return nil }
            let renamed = v.allAttributes(of: e).first { $0.renamingIdentifier == name }?.name
                ?? v.allRelationships(of: e).first { $0.renamingIdentifier == name }?.name
            return renamed.map { "\(v.versionIdentifiers.first ?? "") renames \(name) to \($0)" }
        }
    }

    /// `1.0.0`, `1.0.0 and 2.0.0`, `1.0.0, 2.0.0 and 3.0.0`.
    static func list(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items.last!
    }

    static func entity(_ name: String, in model: ObjectModel, _ ignoresCase: Bool) -> EntityDescription? {
        model.entity(name) ?? (ignoresCase ? model.entities.first { $0.name.lowercased() == name.lowercased() } : nil)
    }

    enum Declared { case attribute(AttributeDescription), relationship(RelationshipDescription) }

    /// The property named `name` of `entity` (its inherited ones too).
    static func property(_ name: String, of entity: EntityDescription, in model: ObjectModel, _ ignoresCase: Bool) -> Declared? {
        guard let e = model.entityIndex(entity.name) else { return nil }
        func same(_ other: String) -> Bool { other == name || (ignoresCase && other.lowercased() == name.lowercased()) }
        if let a = model.allAttributes(of: e).first(where: { same($0.name) }) { return .attribute(a) }
        if let r = model.allRelationships(of: e).first(where: { same($0.name) }) { return .relationship(r) }
        return nil
    }

    /// How one version fits the evidence.
    struct Fit {
        /// The names seen it declares with a kind and shape that take their values.
        var fitting = 0
        /// `Entity.name` seen that it does not declare, or declares with a kind that does not take the values.
        var misfits: [String] = []
        /// Every entity seen is one of its, and every name fits.
        var isConsistent: Bool { misfits.isEmpty }
        /// Consistent, and every attribute it stores on the entities seen was seen.
        var isExact = true
        /// Consistent, and every attribute it stores that was not seen is optional or has a default.
        var isPlausible = true

        init(_ model: ObjectModel, _ evidence: ModelVersionEvidence) {
            for seen in evidence.entities {
                guard let e = ModelVersionDetection.entity(seen.name, in: model, evidence.ignoresCase) else {
                    misfits += seen.properties.map { "\(seen.name).\($0.name)" }
                    if seen.properties.isEmpty { misfits.append(seen.name) }
                    continue
                }
                for p in seen.properties {
                    switch ModelVersionDetection.property(p.name, of: e, in: model, evidence.ignoresCase) {
                    case .attribute(let a)? where p.shapes == [.scalar] && (p.kinds?.contains(a.kind) ?? true):
                        fitting += 1
                    case .relationship?:
                        fitting += 1
                    default:
                        misfits.append("\(seen.name).\(p.name)")
                    }
                }
                let seenNames = Set(seen.properties.map { evidence.ignoresCase ? $0.name.lowercased() : $0.name })
                for a in model.allAttributes(of: model.entityIndex(e.name)!) where !a.isTransient {
                    guard !seenNames.contains(evidence.ignoresCase ? a.name.lowercased() : a.name) else { continue }
                    isExact = false
                    if !a.isOptional && a.defaultValue == nil { isPlausible = false }
                }
            }
            if !misfits.isEmpty { isExact = false; isPlausible = false }
        }
    }
}
