/// A uniqueness a stage of the chain brings (`ModelStep.deduplicate`), resolved as the stage is given
/// the objects, in its source version (as a custom stage's `willMigrate` deduplicates): objects of
/// `entity` (and its subentities) sharing the values of `attributes` are duplicates, resolved by the
/// policy (`--dedupe`). An object with a nil among them is no one's duplicate.
public struct ObjectDeduplication: Sendable, Hashable {
    /// The position in the chain of the stage that brings it.
    public var stage: Int
    /// The entity and attributes as the target version names them (for messages).
    public var entityName: String
    public var names: [String]
    /// The entity's position in the stage's source model, and the attributes' positions in
    /// `allAttributes(of: entity)` there.
    public var entity: Int
    public var attributes: [Int]
    /// The version that makes them unique.
    public var version: String

    /// The deduplications of each stage of `chain`, found in each stage's source model through the
    /// target's renames; one on a relationship, or on an attribute the source lacks, is not made.
    static func derive(chain: [ModelPlan.Stage], steps: [ModelStageSteps], plan: ModelPlan, source: ObjectModel) -> [ObjectDeduplication] {
        var out: [ObjectDeduplication] = []
        for (i, derived) in steps.enumerated() {
            guard let from = i == 0 ? source : plan.version(chain[i].from), let to = plan.version(chain[i].to) else { continue }
            for case .deduplicate(let entity, let keys) in derived.steps {
                guard let te = to.entity(entity),
                      let index = from.entityIndex(te.name) ?? te.renamingIdentifier.flatMap(from.entityIndex),
                      let ti = to.entityIndex(entity) else { continue }
                let targetAttributes = to.allAttributes(of: ti), sourceAttributes = from.allAttributes(of: index)
                let positions = keys.compactMap { n -> Int? in
                    guard let ta = targetAttributes.first(where: { $0.name == n }) else { return nil }
                    return sourceAttributes.firstIndex { $0.name == ta.name } ?? ta.renamingIdentifier.flatMap { old in
                        sourceAttributes.firstIndex { $0.name == old }
                    }
                }
                guard positions.count == keys.count else { continue }
                out.append(ObjectDeduplication(stage: i, entityName: entity, names: keys, entity: index, attributes: positions, version: chain[i].to))
            }
        }
        return out
    }
}

/// Resolves duplicates over two passes of the same objects (docs/DESIGN-NOTES.md, "Running an app's
/// plan on its objects"). Pass 1 (`note`) sees every migrated object: per deduplication and tuple of
/// values, the survivor's key and where it came from; per duplicate, its group; under merge, what the
/// later duplicates bring (their non-nil values, the last one winning; their to-many references
/// united; their last non-empty to-one). Pass 2 (`resolve`) drops or merges the duplicates, merges
/// the survivor, and points every reference to a duplicate at its survivor.
///
/// One resolver per stage that deduplicates, on that stage's source model. Memory: what its
/// `ObjectDeduplicationState` holds: one entry per object of a deduplicated entity with non-nil
/// values (its tuple, its key and origin: about 330 bytes with an 18-byte tuple), one per duplicate,
/// and under merge one record per group that has duplicates; in memory without bound by default, or
/// past the run's budget in a temporary database (TripFormats' `SpillingDeduplicationState`).
public final class ObjectDeduplicator {
    public let policy: DeduplicationPolicy
    /// The policy's decisions: which survives, what is set aside with which reason, `fail`'s error.
    let resolver: DuplicateResolver
    public let deduplications: [ObjectDeduplication]
    let model: ObjectModel
    /// The groups, the duplicates and the survivors that merge.
    public let state: any ObjectDeduplicationState
    /// Per entity of the model: the deduplications it falls under (its own or a superentity's).
    private let applying: [[Int]]
    /// Whether the caller writes both sides of a relationship (a plan's run; not the append into a
    /// store, which writes the to-one side), so that the resolution keeps them agreeing.
    private let bothSides: Bool
    /// Per entity and relationship (positions in `allRelationships`): where the relationship's
    /// inverse is a to-one, its position on the destination (merge keeps one of the duplicates'
    /// to-ones, and a reference the kept to-one does not return goes).
    private let toOneInverse: [[Int?]]
    /// Per entity and relationship: whether it has an inverse (under `first` and `last`, a reference
    /// through it to a dropped duplicate whose survivor does not name the referrer back goes, as
    /// deleting the duplicate nullifies it).
    private let hasInverse: [[Bool]]
    /// Under `first` and `last`, when both sides are written, per entity: its relationships to an
    /// owner whose inverse cascades where the owner may be dropped (`ObjectModel.cascadeOwnership`);
    /// its relationships that cascade, where it may be dropped (a deduplicated or owned entity); and
    /// where it is deduplicated, its relationships with an inverse. Else empty.
    private let ownedThrough: [[Int]]
    private let cascading: [[Int]]
    private let naming: [[Int]]
    /// Whether pass 1 notes ownership (`first` and `last`, both sides written): per object, in the
    /// state's `OwnershipList`s, its owners as its own to-ones name them and as their cascading lists
    /// do (which wins where both are known: a reference by a repeated unique value names the
    /// first), and the objects of a deduplicated entity that name it through a relationship with an
    /// inverse (a survivor that names a referrer back keeps the reference pointed at it).
    private let notesOwnership: Bool
    // The variables below, and the state's own, are used by one thread at a time (pass 1 on the
    // calling thread, pass 2 on the thread that migrates, after it: `ObjectMigrationReader`), in
    // calls that do not overlap: unchecked, they cost no access check per look-up.
    /// Pass 1 under merge: the relationships (positions) a later duplicate brought references in.
    @exclusivity(unchecked) private var mergedToOnes = Set<Int>()
    /// Pass 2: per owned object looked up, the dropped duplicate it goes with (nil: none); a memo,
    /// emptied when it reaches `remembered` entries between two objects' look-ups, so that what it
    /// holds does not grow with the input (neighbours ask about the same objects: an owner's list
    /// and its children come close together).
    @exclusivity(unchecked) private var droppedWith: [ObjectReference: ObjectReference?] = [:]
    @exclusivity(unchecked) private var depth = 0
    static let remembered = 16_384

    /// A resolver of `deduplications` (of one stage) of `model`'s objects (that stage's source) under
    /// `policy`, keeping what it learns in `state` (in memory when nil). `cascades`: under `first`
    /// and `last`, the objects a dropped duplicate owns (through a relationship whose delete rule is
    /// cascade) are dropped with it, as a dropped trip's bucket list is, and every reference through
    /// a relationship with an inverse to a dropped object goes, so that both sides agree.
    public init(_ deduplications: [ObjectDeduplication], model: ObjectModel, policy: DeduplicationPolicy,
                state: (any ObjectDeduplicationState)? = nil, cascades: Bool = false) {
        self.deduplications = deduplications; self.model = model; self.policy = policy
        self.state = state ?? InMemoryDeduplicationState(deduplications: deduplications.count)
        resolver = DuplicateResolver(policy: policy)
        applying = model.entities.indices.map { e in
            let lineage = model.lineage(of: e)
            return deduplications.indices.filter { lineage.contains(deduplications[$0].entity) }
        }
        let inverses = model.entities.indices.map { model.allInverses(of: $0) }
        toOneInverse = inverses.map { list in
            list.map { pair in
                guard let (destination, inverse) = pair, !inverse.isToMany,
                      let d = model.entityIndex(destination) else { return nil }
                return model.allRelationships(of: d).firstIndex { $0.name == inverse.name }
            }
        }
        hasInverse = inverses.map { $0.map { $0 != nil } }
        bothSides = cascades
        notesOwnership = cascades && (policy == .first || policy == .last)
        let none = Array(repeating: [Int](), count: model.entities.count)
        if notesOwnership {
            let owned = model.cascadeOwnership(of: deduplications.map(\.entity))
            let applying = self.applying
            ownedThrough = owned
            cascading = model.entities.indices.map { e in
                guard !applying[e].isEmpty || !owned[e].isEmpty else { return [] }
                return model.allRelationships(of: e).indices.filter { model.allRelationships(of: e)[$0].deleteRule == .cascade }
            }
            naming = model.entities.indices.map { e in applying[e].isEmpty ? [] : inverses[e].indices.filter { inverses[e][$0] != nil } }
        } else {
            ownedThrough = none; cascading = none; naming = none
        }
    }

    /// Pass 1: notes a migrated object. Under `fail` a duplicate is `.data` naming both origins.
    public func note(_ object: ObjectRecord) throws {
        if notesOwnership, object.entity >= 0, object.entity < ownedThrough.count {
            let me = object.reference
            for r in ownedThrough[object.entity] where r < object.relationships.count {
                for owner in object.relationships[r] { try state.append(owner, to: me, in: .ownersNamed) }
            }
            for r in cascading[object.entity] where r < object.relationships.count {
                for owned in object.relationships[r] { try state.append(me, to: owned, in: .ownersListing) }
            }
            for r in naming[object.entity] where r < object.relationships.count {
                for named in object.relationships[r] { try state.append(me, to: named, in: .namedBy) }
            }
        }
        guard object.entity < applying.count else { return }
        for d in applying[object.entity] {
            let attributes = deduplications[d].attributes
            let found: Int?
            if attributes.count == 1 {
                // One attribute, the usual unique one: its value as the tuple, no array made.
                let a = attributes[0]
                guard a < object.attributes.count, !object.attributes[a].isNull else { continue }
                found = try state.group(d, one: object.attributes[a], orAdd: object.reference, origin: object.origin)
            } else {
                let values = attributes.map { $0 < object.attributes.count ? object.attributes[$0] : .null }
                if values.contains(where: \.isNull) { continue }
                found = try state.group(d, values, orAdd: object.reference, origin: object.origin)
            }
            guard let g = found else { continue }
            switch resolver.outcome {
            case .refuse:
                let group = try state.group(at: g)
                throw resolver.objectRefusal(at: object.origin, described: describe(group), first: group.origin)
            case .keepKept:
                try state.setDuplicate(object.reference, group: g)
            case .takeIncoming:
                var group = try state.group(at: g)
                try state.setDuplicate(group.survivor, group: g)
                group.survivor = object.reference; group.origin = object.origin
                try state.replace(g, with: group)
            case .mergeIncomingIntoKept:
                var group = try state.group(at: g)
                try state.setDuplicate(object.reference, group: g)
                try state.setMerging(group.survivor, group: g)
                group.later = ObjectDeduplicator.merge(group.later, object, model.allRelationships(of: object.entity))
                for r in object.relationships.indices where !object.relationships[r].isEmpty { mergedToOnes.insert(r) }
                try state.replace(g, with: group)
            }
            return
        }
    }

    /// Makes room in the state for the groups `counts` may bring: per entity of the stage's source
    /// model, at most how many objects of it come (`ObjectRecordReader.expectedObjects`, carried
    /// through the stages before). A deduplication on an entity counts its sub-entities' too.
    public func expect(_ counts: [Int]) {
        for (d, deduplication) in deduplications.enumerated() {
            var objects = 0
            for e in counts.indices where e < model.entities.count && model.lineage(of: e).contains(deduplication.entity) {
                objects += counts[e]
            }
            state.expect(d, objects: objects)
        }
    }

    private func describe(_ g: ObjectDeduplicationGroup) -> String {
        let d = deduplications[g.deduplication]
        let pairs = zip(d.names, g.values).map { "\($0) \(ObjectMigration.quoted($1))" }.joined(separator: ", ")
        return "\(d.entityName) with \(pairs) (unique from \(d.version))"
    }

    /// Pass 2: the object to write (merged where it survives a merge, its references pointed at
    /// survivors), or the record of a duplicate merged into its survivor or dropped by the policy.
    public func resolve(_ object: ObjectRecord, counts: inout ObjectMigration.Counts) throws -> ObjectMigration.Outcome {
        var out = object
        if let record = try resolve(&out, counts: &counts) { return .setAside(record) }
        return .object(out)
    }

    /// As `resolve(_:counts:)`, in place: `object` becomes the object to write (its arrays changed
    /// where they are), and nil is returned; or the record of a duplicate merged or dropped is.
    public func resolve(_ object: inout ObjectRecord, counts: inout ObjectMigration.Counts) throws -> SetAsideRecord? {
        guard state.hasDuplicates else { return nil }
        let isDeduplicated = isDeduplicated(object.entity)
        if isDeduplicated, let g = try state.duplicate(object.reference) {
            // Pass 1 refused any duplicate under `fail`: a record is set aside.
            let group = try state.group(at: g)
            let record = resolver.setAsideObject(at: object.origin, described: describe(group), survivor: group.origin)!
            if record.kind == .merged { counts.merged += 1 } else { counts.dropped += 1 }
            return record
        }
        if let duplicate = try droppedOwner(of: object.reference), let g = try state.duplicate(duplicate) {
            let group = try state.group(at: g)
            counts.dropped += 1
            return SetAsideRecord(kind: .dropped, origin: object.origin,
                                  reason: "owned (a relationship whose delete rule is cascade) by another \(describe(group)), "
                                      + "dropped under --dedupe \(policy.rawValue), which keeps the one at \(group.origin): dropped with it")
        }
        if isDeduplicated, let g = try state.merging(object.reference), let later = try state.later(ofGroup: g) {
            ObjectDeduplicator.merge(into: &object, later, model.allRelationships(of: object.entity))
        }
        for r in object.relationships.indices where !object.relationships[r].isEmpty {
            if bothSides, let kept = try returned(object.relationships[r], through: r, of: object.reference) {
                // Under first and last they name objects not written; under merge, one written that does not name this one back.
                if resolver.outcome != .mergeIncomingIntoKept { counts.referencesRemoved += object.relationships[r].count - kept.count }
                object.relationships.replace(r, with: kept)
            }
            if let list = try survivors(object.relationships[r]) { object.relationships.replace(r, with: list) }
        }
        return nil
    }

    /// The dropped duplicate the object at `reference` goes with: every owner (as their cascading
    /// lists name it, else as its own to-ones do) is a duplicate `first` or `last` dropped, or goes
    /// with one itself. Nil where it has no owner, one stays, or both sides are not written.
    private func droppedOwner(of reference: ObjectReference) throws -> ObjectReference? {
        // Asked per object and reference of every run: without ownership noted (merge, fail, a model
        // with no cascade to a deduplicated entity), nothing is hashed.
        guard notesOwnership, state.hasReferences(in: .ownersListing) || state.hasReferences(in: .ownersNamed) else { return nil }
        if let known = droppedWith[reference] { return known }
        guard let owners = try state.references(of: reference, in: .ownersListing) ?? state.references(of: reference, in: .ownersNamed) else {
            return nil
        }
        if depth == 0, droppedWith.count >= Self.remembered { droppedWith.removeAll(keepingCapacity: true) }
        depth += 1
        defer { depth -= 1 }
        droppedWith[reference] = .some(nil)  // an ownership cycle ends here
        var found: ObjectReference?
        for owner in owners {
            let dropped = isDeduplicated(owner.entity) ? try state.duplicate(owner) != nil : false
            guard let root = try dropped ? owner : droppedOwner(of: owner) else { found = nil; break }
            if found == nil { found = root }
        }
        droppedWith[reference] = .some(found)
        return found
    }

    /// `references` (of relationship `r` of the object at `me`) without those the other side will
    /// not name back, so that the two sides agree; nil when none goes (or both sides are not written).
    /// Under `first` and `last`: a reference to an object dropped with its owner, and one through a
    /// relationship with an inverse to a dropped duplicate whose survivor does not name `me`. Under
    /// merge: one to a duplicate or survivor through a relationship whose inverse is a to-one, when
    /// the to-one the merge keeps is not `me`.
    private func returned(_ references: ObjectReferenceList, through r: Int, of me: ObjectReference) throws -> [ObjectReference]? {
        guard bothSides, me.entity >= 0, me.entity < hasInverse.count, r < hasInverse[me.entity].count else { return nil }
        // The to-one the merge keeps, under merge; no closure made per call (it would be allocated).
        var toOne = -1
        switch resolver.outcome {
        case .keepKept, .takeIncoming:
            break
        case .mergeIncomingIntoKept:
            // Only a relationship some later duplicate brought a value of is looked up.
            guard let p = toOneInverse[me.entity][r], mergedToOnes.contains(p) else { return nil }
            toOne = p
        case .refuse:
            return nil
        }
        let inverse = hasInverse[me.entity][r]
        var kept: [ObjectReference]?
        for (i, reference) in references.enumerated() {
            if try goes(reference, toOne: toOne, inverse: inverse, of: me) {
                if kept == nil { kept = Array(references[..<i]) }
            } else {
                kept?.append(reference)
            }
        }
        return kept
    }

    /// Whether `returned` removes `reference` (of the object at `me`): under merge (`toOne`, the
    /// inverse's position, not -1), when the to-one the merge keeps on it is not `me`; under `first`
    /// and `last`, when it names an object dropped with its owner, or (`inverse`) a dropped duplicate
    /// whose survivor does not name `me`.
    private func goes(_ reference: ObjectReference, toOne p: Int, inverse: Bool, of me: ObjectReference) throws -> Bool {
        if p >= 0 {
            guard isDeduplicated(reference.entity),
                  let g = try state.duplicate(reference) ?? state.merging(reference),
                  let later = try state.later(ofGroup: g), p < later.relationships.count,
                  let kept = later.relationships[p].first else { return false }
            return (try survivors([kept])?.first ?? kept) != me
        }
        if try droppedOwner(of: reference) != nil { return true }
        guard inverse, isDeduplicated(reference.entity), let g = try state.duplicate(reference) else { return false }
        return !(try state.references(of: me, in: .namedBy) ?? []).contains(try state.survivor(ofGroup: g))
    }

    /// Whether objects of `entity` fall under a deduplication: only they are noted as duplicates or
    /// survivors that merge (`note`), so only they are looked up.
    private func isDeduplicated(_ entity: Int) -> Bool { entity >= 0 && entity < applying.count && !applying[entity].isEmpty }

    /// `references` each pointed at its survivor, each once (its first place); nil when that is
    /// `references` as they are (no duplicate named, none twice), which then need no copy.
    private func survivors(_ references: ObjectReferenceList) throws -> [ObjectReference]? {
        func survivor(_ reference: ObjectReference) throws -> ObjectReference {
            guard isDeduplicated(reference.entity) else { return reference }
            return try state.duplicate(reference).map { try state.survivor(ofGroup: $0) } ?? reference
        }
        if references.count > 64 {
            var seen = Set<ObjectReference>(), list: [ObjectReference] = []
            for reference in references {
                let to = try survivor(reference)
                if seen.insert(to).inserted { list.append(to) }
            }
            return list
        }
        // Short lists are searched rather than hashed; the prefix before the first change is distinct and as it was.
        var list: [ObjectReference]?
        for i in references.indices {
            let to = try survivor(references[i])
            if list == nil {
                if to == references[i] && !references[..<i].contains(to) { continue }
                list = Array(references[..<i])
                list!.reserveCapacity(references.count)
            }
            if !list!.contains(to) { list!.append(to) }
        }
        return list
    }

    /// `earlier` with what `later` brings: its non-nil values win, its to-many references are added
    /// after the earlier ones, its non-empty to-one wins. Nil `earlier`: `later` itself.
    static func merge(_ earlier: ObjectRecord?, _ later: ObjectRecord, _ relationships: [RelationshipDescription]) -> ObjectRecord {
        guard var out = earlier else { return later }
        merge(into: &out, later, relationships)
        return out
    }

    /// `merge(_:_:_:)` into `out`, in place.
    static func merge(into out: inout ObjectRecord, _ later: ObjectRecord, _ relationships: [RelationshipDescription]) {
        for i in later.attributes.indices where i < out.attributes.count && !later.attributes[i].isNull {
            out.attributes[i] = later.attributes[i]
        }
        for r in later.relationships.indices where r < out.relationships.count && !later.relationships[r].isEmpty {
            if r < relationships.count, relationships[r].isToMany {
                var list = out.relationships[r].array
                for reference in later.relationships[r] where !list.contains(reference) { list.append(reference) }
                out.relationships.replace(r, with: list)
            } else {
                out.relationships[r] = later.relationships[r]
            }
        }
    }
}

extension ObjectModel {
    /// Per relationship of the entity at `index` (the order of `allRelationships`): its destination
    /// and its inverse there, nil where it has none.
    func allInverses(of index: Int) -> [(String, RelationshipDescription)?] {
        lineage(of: index).flatMap { e in
            entities[e].relationships.map { r in inverse(of: r, in: entities[e].name).map { (r.destination, $0) } }
        }
    }

    /// Per entity: its relationships (positions in `allRelationships`) to an owner, an object whose
    /// inverse relationship cascades, that may be dropped as a duplicate of `deduplicated` (entities,
    /// with their subentities) or as owned by one, through any depth of ownership; empty for an entity
    /// that is not so owned.
    func cascadeOwnership(of deduplicated: [Int]) -> [[Int]] {
        var owned = entities.indices.map { e in lineage(of: e).contains { deduplicated.contains($0) } }
        var through = Array(repeating: [Int](), count: entities.count)
        let inverses = entities.indices.map { allInverses(of: $0) }
        var changed = true
        while changed {
            changed = false
            for e in entities.indices {
                for (r, pair) in inverses[e].enumerated() where !through[e].contains(r) {
                    guard let (destination, inverse) = pair, inverse.deleteRule == .cascade,
                          let d = entityIndex(destination),
                          entities.indices.contains(where: { owned[$0] && lineage(of: $0).contains(d) }) else { continue }
                    through[e].append(r)
                    owned[e] = true
                    changed = true
                }
            }
        }
        return through
    }
}
