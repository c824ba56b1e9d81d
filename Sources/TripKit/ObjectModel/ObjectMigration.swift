/// An app's migration plan run on its objects (issue 27): the chain of stages from the version the
/// objects are in to the target, each object of one version mapped to the next version's model as
/// the stage's derived steps (`ModelStageSteps`) say, one object at a time (docs/DESIGN-NOTES.md,
/// "Running an app's plan on its objects").
///
/// ```swift
/// let migration = try ObjectMigration(plan: plan, from: "1.0.0")
/// var counts = ObjectMigration.Counts()
/// switch migration.migrate(object, counts: &counts) {
/// case .object(let migrated): write(migrated)
/// case .setAside(let record): setAside(record)
/// }
/// ```
public struct ObjectMigration: Sendable {
    /// What the stages did to the values and objects, counted.
    public struct Counts: Sendable, Hashable {
        /// Values converted to a changed type.
        public var converted = 0
        /// Values filled: a new attribute's default, or a newly required attribute's.
        public var filled = 0
        /// Objects set aside: a value that does not convert, a required value with no default.
        public var setAside = 0
        /// Objects of an entity a stage removes.
        public var removed = 0
        /// Objects merged into a duplicate, and dropped as duplicates by the policy (`--dedupe`).
        public var merged = 0
        public var dropped = 0
        /// References removed: to an object of a removed entity, or to one set aside.
        public var referencesRemoved = 0
        /// Nothing counted yet.
        public init() {}
    }

    /// What became of one object.
    public enum Outcome: Sendable {
        /// The object in the target's model.
        case object(ObjectRecord)
        /// The object set aside (`.rejected`, with the reason naming the stage) or dropped by the plan
        /// (`.dropped`: its entity is removed).
        case setAside(SetAsideRecord)
    }

    public let plan: ModelPlan
    /// The model the objects are read in, and the model they are written in.
    public let source: ObjectModel
    public let target: ObjectModel
    /// The stages run, in order, with their derived steps.
    public let stages: [ModelPlan.Stage]
    public let steps: [ModelStageSteps]
    /// The deduplications the stages ask for, each on its stage's source model; then, with
    /// `stage == stages.count`, those of the target's own uniqueness that no stage brings, on the
    /// target's objects (`deduplicatesTarget`).
    public let deduplications: [ObjectDeduplication]
    let maps: [ObjectStageMap]

    /// The chain of `plan`'s stages from version `from` to `to` (the current version when nil). The
    /// objects are read in `reading` (the version's model when nil: a store of tripconv's carries its
    /// own, matched to the version by names). A missing chain, a version the plan does not list or a
    /// stage with refusals is `.data` (exit 65), before any object is read, with every refusal.
    /// `deduplicatesTarget`: the objects written are deduplicated on what the target makes unique
    /// and no stage of the chain brings (an export, which nothing kept unique, as SwiftData's insert
    /// of a second object with a unique value updates the first); a store kept its own constraints.
    public init(plan: ModelPlan, from: String, to: String? = nil, reading: ObjectModel? = nil, deduplicatesTarget: Bool = false) throws {
        self.plan = plan
        guard let first = plan.version(from) else {
            throw TripError.data("version \(from) is not among the plan's versions (\(ObjectMigration.identifiers(plan)))")
        }
        let targetID = to ?? plan.current?.versionIdentifiers.first ?? from
        guard let last = plan.version(targetID) else {
            throw TripError.data("version \(targetID) is not among the plan's versions (\(ObjectMigration.identifiers(plan)))")
        }
        let order = plan.versions.compactMap(\.versionIdentifiers.first)
        if let a = order.firstIndex(of: from), let b = order.firstIndex(of: targetID), b < a {
            throw TripError.usage("the objects are at \(from) and the target is \(targetID): a plan is run forward only")
        }
        var chain: [ModelPlan.Stage] = []
        var at = from
        while at != targetID {
            guard let stage = plan.stages.first(where: { $0.from == at }), !chain.contains(stage) else {
                throw TripError.data("the plan has no stage from \(at) on the way from \(from) to \(targetID)")
            }
            chain.append(stage)
            at = stage.to
        }
        let steps = chain.map { ModelStageSteps($0, of: plan) }
        let refusals = steps.flatMap(\.refusals)
        if !refusals.isEmpty {
            throw TripError(.data, "the plan cannot be run from \(from) to \(targetID): " + refusals[0], notes: Array(refusals.dropFirst()))
        }
        stages = chain; self.steps = steps
        source = reading ?? first
        var target = last
        target.versionIdentifiers = [targetID]
        self.target = target
        var maps: [ObjectStageMap] = []
        var model = source
        for (stage, derived) in zip(chain, steps) {
            guard let next = plan.version(stage.to) else { break }
            maps.append(ObjectStageMap(stage: stage, steps: derived, from: model, to: next))
            model = next
        }
        self.maps = maps
        let brought = ObjectDeduplication.derive(chain: chain, steps: steps, plan: plan, source: source)
        let own = deduplicatesTarget ? ObjectDeduplication.uniqueness(of: target, after: chain.count, except: brought, unnamed: "the model") : []
        deduplications = brought + own
    }

    /// No stage: the objects of `model` as they are, deduplicated on what it makes unique (an export
    /// read with a model of one version: a store's, an Xcode model, source without a VersionedSchema).
    /// Nil when it makes nothing unique.
    public init?(deduplicating model: ObjectModel) {
        let own = ObjectDeduplication.uniqueness(of: model, after: 0, except: [], unnamed: "the model")
        guard !own.isEmpty else { return nil }
        plan = ModelPlan(versions: [model], stages: [])
        source = model; target = model
        stages = []; steps = []; maps = []
        deduplications = own
    }

    /// Whether it runs no stage: it only deduplicates the objects on their model's uniqueness.
    public var onlyDeduplicates: Bool { stages.isEmpty }

    /// Per entity of the source: whether a reader should give a second object with the value of its
    /// reference attribute (`referenceAttribute`, its one unique attribute), rather than refuse it,
    /// because the run deduplicates the entity on that value. Only when no stage runs (the source is
    /// the target); through stages, a repeat of a value the source makes unique is refused, as before.
    public var repeatsUnique: [Bool] {
        source.entities.indices.map { e in
            guard stages.isEmpty, let slot = source.referenceAttribute(of: e) else { return false }
            let lineage = source.lineage(of: e)
            return deduplications.contains { lineage.contains($0.entity) && $0.attributes == [slot] }
        }
    }

    private static func identifiers(_ plan: ModelPlan) -> String {
        plan.versions.compactMap(\.versionIdentifiers.first).joined(separator: ", ")
    }

    /// Whether some object may be set aside or dropped by a stage, so that references to it must be
    /// known before they are written (a second pass).
    public var mayRemoveObjects: Bool {
        steps.contains { $0.steps.contains { step in
            switch step {
            case .convertType, .removeEntity: return true
            case .requireValue(_, _, let d): return d == nil
            default: return false
            }
        } }
    }

    /// `object` (of `source`) through every stage.
    public func migrate(_ object: ObjectRecord, counts: inout Counts) -> Outcome {
        var current = object
        if let record = migrate(&current, counts: &counts, before: { _, _, _ in nil }) { return .setAside(record) }
        return .object(current)
    }

    /// `object` (of `source`) through every stage, in place (its arrays changed where they are, not
    /// copied from stage to stage); nil when it reaches the target, else the record it is set aside
    /// with. `before(i, &object)` is given the object as stage `i` is given it (in the stage's source
    /// version, as a custom stage's `willMigrate` sees it), to resolve its duplicates in place, or
    /// gives the record that sets it aside.
    /// Only the first `steps` steps are taken (`firstPassSteps`: stage `i`'s `before` is step `2i`,
    /// its map `2i + 1`).
    public func migrate(_ object: inout ObjectRecord, counts: inout Counts, steps: Int = .max,
                        before: (Int, inout ObjectRecord, inout Counts) throws -> SetAsideRecord?) rethrows -> SetAsideRecord? {
        for i in maps.indices {
            if 2 * i >= steps { return nil }
            if let record = try before(i, &object, &counts) { return record }
            if 2 * i + 1 >= steps { return nil }
            if let record = maps[i].apply(&object, counts: &counts) { return record }
        }
        // The target's own uniqueness, on the objects as they are written.
        if deduplicatesWritten, 2 * maps.count < steps { return try before(maps.count, &object, &counts) }
        return nil
    }

    /// The model of the version stage `i` of the chain starts from (the objects' own for the first).
    public func model(before i: Int) -> ObjectModel {
        i == 0 ? source : i == stages.count ? target : plan.version(stages[i].from) ?? source
    }

    /// Per entity of the model before stage `i`, how many of the objects `counts` numbers (per entity
    /// of the source) become objects of it through the stages before `i` (a dropped entity's none).
    public func objectCounts(before i: Int, from counts: [Int]) -> [Int] {
        var carried = counts
        for s in 0..<min(i, maps.count) {
            var next = Array(repeating: 0, count: model(before: s + 1).entities.count)
            for e in carried.indices where e < maps[s].entities.count {
                if let t = maps[s].entities[e]?.target, t >= 0, t < next.count { next[t] += carried[e] }
            }
            carried = next
        }
        return carried
    }

    /// Whether the objects the last stage gives are deduplicated on the target's own uniqueness.
    public var deduplicatesWritten: Bool { deduplications.last.map { $0.stage == stages.count } ?? false }

    /// One sentence per stage: what it is and what tripconv did for it, for the summary and `-v`
    /// ("custom stage 1.0.0 -> 2.0.0: its willMigrate code is not run; deduplicating Recipe on title,
    /// as 2.0.0 makes it unique").
    public func stageSentences(policy: DeduplicationPolicy) -> [String] {
        zip(stages, steps).map { stage, derived in
            var parts: [String] = []
            if !stage.hooks.isEmpty {
                parts.append("its \(stage.hooks.joined(separator: " and ")) code is not run")
            }
            for step in derived.steps {
                if case .deduplicate(let e, let keys) = step {
                    parts.append("deduplicating \(e) on \(keys.joined(separator: ", ")), as \(stage.to) makes it unique (--dedupe \(policy.rawValue))")
                } else {
                    parts.append(step.description)
                }
            }
            return "\(stage.kind) stage \(stage.from) -> \(stage.to): " + (parts.isEmpty ? "nothing to do" : parts.joined(separator: "; "))
        } + deduplications.filter { $0.stage == stages.count }.map { d in
            let by = target.versionIdentifiers.first.map { "as \($0) makes it unique" } ?? "as the model makes it unique"
            return "deduplicating \(d.entityName) on \(d.names.joined(separator: ", ")), \(by) (--dedupe \(policy.rawValue))"
        }
    }
}

/// One stage's mapping of objects of its source model to its target model, by position: computed
/// once, applied to every object.
final class ObjectStageMap: Sendable {
    enum Value: Sendable {
        case copy(Int)
        case convert(Int, AttributeKind)
        /// A new attribute: its default, or null where it is optional.
        case fill(ObjectValue)
    }
    /// A class, so that an object's `apply` takes one reference to its entity's map, not a copy of its arrays.
    final class Entity: Sendable {
        let target: Int
        let values: [Value]
        /// Per target attribute: the default a null takes where the attribute is required (nil: none).
        let required: [(Bool, ObjectValue?)]
        let names: [String]
        let relationships: [Int?]
        /// Whether `values` copies each attribute to the same place (an object's attributes are then
        /// shared, unless a required one is null), and the places of the required attributes.
        let copiesAll: Bool
        let requiredPlaces: [Int]
        /// Whether each relationship keeps its place (an object's list of lists is then kept).
        let keepsRelationships: Bool
        /// The number of the source entity's attributes and relationships.
        let sourceAttributes: Int, sourceRelationships: Int
        /// Whether an object's attributes are mapped where they are: each target attribute taken from
        /// a source one is taken from the same place, the new ones (filled) come after the source's,
        /// and the source's past the target's are removed.
        let mapsAttributesInPlace: Bool
        /// The same of its relationships: the first ones kept, the source's past them removed, new
        /// (empty) ones after.
        let mapsRelationshipsInPlace: Bool

        init(target: Int, values: [Value], required: [(Bool, ObjectValue?)], names: [String], relationships: [Int?],
             sourceAttributes: Int, sourceRelationships: Int) {
            self.target = target; self.values = values; self.required = required; self.names = names
            self.relationships = relationships
            self.sourceAttributes = sourceAttributes; self.sourceRelationships = sourceRelationships
            copiesAll = values.enumerated().allSatisfy { j, v in if case .copy(let i) = v { i == j } else { false } }
            requiredPlaces = required.indices.filter { required[$0].0 }
            keepsRelationships = relationships.enumerated().allSatisfy { $0.element == $0.offset }
            mapsAttributesInPlace = values.enumerated().allSatisfy { j, v in
                switch v {
                case .copy(let i), .convert(let i, _): i == j
                case .fill: j >= sourceAttributes
                }
            }
            mapsRelationshipsInPlace = relationships.enumerated().allSatisfy { r, slot in
                slot.map { $0 == r } ?? (r >= sourceRelationships)
            }
        }
    }
    let label: String
    let stageTo: String
    let sourceNames: [String]
    /// Per source entity: where its objects go, nil for a removed entity.
    let entities: [Entity?]
    /// Per source entity: whether its objects keep their entity's place (a reference to one is the same reference after).
    let keepsPlace: [Bool]

    init(stage: ModelPlan.Stage, steps: ModelStageSteps, from: ObjectModel, to: ObjectModel) {
        label = "\(stage.kind) stage \(stage.from) -> \(stage.to)"
        stageTo = stage.to
        sourceNames = from.entities.map(\.name)
        let entities: [Entity?] = from.entities.indices.map { se in
            let sourceEntity = from.entities[se]
            guard let te = to.entities.firstIndex(where: { $0.name == sourceEntity.name })
                    ?? to.entities.firstIndex(where: { $0.renamingIdentifier == sourceEntity.name && from.entity($0.name) == nil }) else { return nil }
            let sourceAttributes = from.allAttributes(of: se), sourceRelationships = from.allRelationships(of: se)
            var values: [Value] = [], required: [(Bool, ObjectValue?)] = [], names: [String] = []
            for ta in to.allAttributes(of: te) {
                names.append(ta.name)
                required.append((!ta.isOptional && !ta.isTransient, ta.defaultValue))
                let found = ta.isTransient ? nil : sourceAttributes.firstIndex { $0.name == ta.name && !$0.isTransient }
                    ?? ta.renamingIdentifier.flatMap { old in sourceAttributes.firstIndex { $0.name == old && !$0.isTransient } }
                guard let i = found else { values.append(.fill(ta.isTransient ? .null : ta.defaultValue ?? .null)); continue }
                values.append(sourceAttributes[i].kind == ta.kind ? .copy(i) : .convert(i, ta.kind))
            }
            let relationships = to.allRelationships(of: te).map { tr in
                sourceRelationships.firstIndex { $0.name == tr.name }
                    ?? tr.renamingIdentifier.flatMap { old in sourceRelationships.firstIndex { $0.name == old } }
            }
            return Entity(target: te, values: values, required: required, names: names, relationships: relationships,
                          sourceAttributes: sourceAttributes.count, sourceRelationships: sourceRelationships.count)
        }
        self.entities = entities
        keepsPlace = entities.indices.map { entities[$0]?.target == $0 }
    }

    /// `object` (of the stage's source model) mapped to its target model, in place: its arrays are
    /// changed where they are (copied only where they are shared or the map moves their elements),
    /// never copied whole where the map keeps them. Nil when mapped; the record set aside when the
    /// stage drops its entity or a value does not convert or fill (`object` is then as it was but its
    /// attributes, which may be cut or partly mapped: no caller uses it after).
    func apply(_ object: inout ObjectRecord, counts: inout ObjectMigration.Counts) -> SetAsideRecord? {
        guard object.entity >= 0, object.entity < entities.count, let map = entities[object.entity] else {
            counts.removed += 1
            let name = object.entity >= 0 && object.entity < sourceNames.count ? sourceNames[object.entity] : "entity \(object.entity)"
            return SetAsideRecord(kind: .dropped, origin: object.origin, reason: "\(label) removes entity \(name): the object is dropped by the plan")
        }
        if !(map.copiesAll && object.attributes.count == map.values.count && !map.requiredPlaces.contains(where: { object.attributes[$0].isNull })) {
            do throws(Refusal) {
                if map.mapsAttributesInPlace && object.attributes.count == map.sourceAttributes {
                    try mapInPlace(&object.attributes, map, counts: &counts)
                } else {
                    object.attributes = try mapped(object.attributes, map, counts: &counts)
                }
            } catch {
                counts.setAside += 1
                return SetAsideRecord(origin: object.origin, reason: message(error, object.entity, map))
            }
        }
        if !(map.keepsRelationships && object.relationships.count == map.relationships.count) {
            if map.mapsRelationshipsInPlace && object.relationships.count == map.sourceRelationships {
                object.relationships.resize(to: map.relationships.count)
            } else {
                let source = object.relationships
                object.relationships = ObjectRelationships(map.relationships.map { slot in
                    slot.flatMap { $0 < source.count ? source[$0] : nil } ?? ObjectReferenceList()
                })
            }
        }
        // The buffer as it is where every object it names keeps its entity's place; else changed where it is.
        if !object.relationships.allReferences(satisfy: { $0.entity >= 0 && $0.entity < keepsPlace.count && keepsPlace[$0.entity] }) {
            counts.referencesRemoved += object.relationships.updateReferences { reference in
                guard reference.entity >= 0, reference.entity < entities.count, let to = entities[reference.entity] else { return nil }
                return ObjectReference(entity: to.target, key: reference.key)
            }
        }
        object.entity = map.target
        return nil
    }

    /// Why a value of an object stops it: the target attribute at `j`, and the value its rule was given.
    enum Refusal: Error {
        /// The value does not convert to the attribute's kind.
        case conversion(Int, ObjectValue, AttributeKind)
        /// No value, where the target requires one and declares no default.
        case missing(Int)
    }

    /// The value `map`'s rule `j` makes of `old` (the source attribute it takes; null for a new one).
    @inline(__always)
    private func value(_ j: Int, _ map: Entity, _ old: ObjectValue, counts: inout ObjectMigration.Counts) throws(Refusal) -> ObjectValue {
        var value: ObjectValue
        switch map.values[j] {
        case .copy: value = old
        case .fill(let v):
            value = v
            if !v.isNull { counts.filled += 1 }
        case .convert(_, let kind):
            guard let converted = ObjectValueConversion.convert(old, to: kind) else { throw .conversion(j, old, kind) }
            if !old.isNull { counts.converted += 1 }
            value = converted
        }
        if value.isNull, map.required[j].0 {
            guard let fill = map.required[j].1 else { throw .missing(j) }
            value = fill
            counts.filled += 1
        }
        return value
    }

    /// The attributes `attributes` as `map` makes them, in a new array.
    private func mapped(_ attributes: [ObjectValue], _ map: Entity, counts: inout ObjectMigration.Counts) throws(Refusal) -> [ObjectValue] {
        var out: [ObjectValue] = []
        out.reserveCapacity(map.values.count)
        for (j, rule) in map.values.enumerated() {
            let old: ObjectValue
            switch rule {
            case .copy(let i), .convert(let i, _): old = i < attributes.count ? attributes[i] : .null
            case .fill: old = .null
            }
            out.append(try value(j, map, old, counts: &counts))
        }
        return out
    }

    /// The attributes `attributes` as `map` makes them, where they are (`mapsAttributesInPlace`):
    /// a kept value is rewritten only where its rule changes it.
    private func mapInPlace(_ attributes: inout [ObjectValue], _ map: Entity, counts: inout ObjectMigration.Counts) throws(Refusal) {
        let count = map.values.count
        while attributes.count > count { attributes.removeLast() }
        for j in 0..<attributes.count {
            if case .copy = map.values[j], !(map.required[j].0 && attributes[j].isNull) { continue }
            attributes[j] = try value(j, map, attributes[j], counts: &counts)
        }
        if attributes.count < count {
            attributes.reserveCapacity(count)
            for j in attributes.count..<count { attributes.append(try value(j, map, .null, counts: &counts)) }
        }
    }

    /// The reason an object of source entity `entity` is set aside for `refusal`.
    private func message(_ refusal: Refusal, _ entity: Int, _ map: Entity) -> String {
        switch refusal {
        case .conversion(let j, let old, let kind):
            return "\(label): \(sourceNames[entity]).\(map.names[j]) value \(ObjectMigration.quoted(old)) does not convert losslessly to \(kind)"
        case .missing(let j):
            return "\(label): \(sourceNames[entity]).\(map.names[j]) has no value, which \(stageTo) requires, and no default to fill it with"
        }
    }

}

extension ObjectMigration {
    /// A value as a message quotes it: text in quotes, others as their text.
    static func quoted(_ value: ObjectValue) -> String {
        switch value {
        case .null: return "nil"
        case .string(let s): return "\"\(s)\""
        default: return ObjectValueText.text(value) ?? "nil"
        }
    }
}

/// The lossless conversions of a changed type (`ModelStep.convertType`): a value converts when the
/// new kind holds exactly the same value, and reads back to it.
public enum ObjectValueConversion {
    /// `value` as a value of `kind`, nil when it has no exact equal there (`"12a"` to an Int, `2.5` to
    /// an Int, `300` to an Int16). Null stays null.
    public static func convert(_ value: ObjectValue, to kind: AttributeKind) -> ObjectValue? {
        switch (value, kind) {
        case (.null, _): return .null
        case (.int(let i), .int16): return Int16(exactly: i) == nil ? nil : value
        case (.int(let i), .int32): return Int32(exactly: i) == nil ? nil : value
        case (.int, .int64): return value
        case (.int(let i), .double): return Double(exactly: i).map(ObjectValue.double)
        case (.int(let i), .float): return Float(exactly: i).map { .double(Double($0)) }
        case (.int(let i), .decimal): return .decimal(String(i))
        case (.int(let i), .bool): return i == 0 || i == 1 ? .bool(i == 1) : nil
        case (.double(let d), _) where kind.isInteger: return Int64(exactly: d).flatMap { convert(.int($0), to: kind) }
        case (.double, .double): return value
        case (.double(let d), .float): return Float(exactly: d) == nil ? nil : value
        case (.double(let d), .decimal): return d.isFinite ? .decimal(ObjectValueText.text(value) ?? "") : nil
        case (.double(let d), .date): return .date(d)
        case (.double(let d), .bool): return d == 0 || d == 1 ? .bool(d == 1) : nil
        case (.bool(let b), _) where kind.isInteger: return .int(b ? 1 : 0)
        case (.bool(let b), .double), (.bool(let b), .float): return .double(b ? 1 : 0)
        case (.bool(let b), .decimal): return .decimal(b ? "1" : "0")
        case (.decimal(let s), _) where kind.isInteger || kind == .double || kind == .float || kind == .bool:
            guard let n = ObjectValueText.value(s, kind: kind), ObjectValueText.text(n) == s else { return nil }
            return n
        case (.date(let d), .double): return .double(d)
        case (_, .string):
            guard let text = ObjectValueText.text(value) else { return nil }
            return .string(text)
        case (.string(let s), _):
            guard let v = ObjectValueText.value(s, kind: kind), let back = ObjectValueText.text(v), back == s || sameDate(v, s) else { return nil }
            return v
        default: return nil
        }
    }

    /// A date given as other ISO 8601 text of the same instant (another zone, other fraction digits),
    /// every digit it has kept.
    private static func sameDate(_ v: ObjectValue, _ text: String) -> Bool {
        guard case .date(let seconds) = v, text.contains("T") else { return false }
        return ObjectValueText.isSameInstant(seconds, as: text)
    }
}
