/// An app's versioned model and migration plan, as SwiftData declares them: every `VersionedSchema`
/// (an `ObjectModel` whose `versionIdentifiers` holds its one `Schema.Version`) and the stages of its
/// `SchemaMigrationPlan`. Read from an app's Swift source (`TripSwiftModel`) or from its JSON.
///
/// A stage's steps are not declared: `ModelStageSteps` derives them from the two versions, as Core
/// Data infers a mapping model, for a custom stage as well (its closures cannot run outside the app).
public struct ModelPlan: Sendable, Hashable {
    /// A `MigrationStage` of the plan.
    public struct Stage: Sendable, Hashable {
        public var kind: MigrationStage.Kind
        /// The version identifiers of the two schemas (`"1.0.0"`).
        public var from: String
        public var to: String
        /// The closures a custom stage declares (`willMigrate`, `didMigrate`), which tripconv does not run.
        public var hooks: [String]
        /// Where the stage is declared (`file:line:column`), for messages about it.
        public var place: String?

        /// A stage from one version to another.
        public init(_ kind: MigrationStage.Kind, from: String, to: String, hooks: [String] = [], place: String? = nil) {
            self.kind = kind; self.from = from; self.to = to; self.hooks = hooks; self.place = place
        }
    }

    /// The versions in the plan's order (`schemas`), each with its identifier.
    public var versions: [ObjectModel]
    public var stages: [Stage]
    /// Declarations read and what was made of them, one sentence each (an option kept or ignored).
    public var notes: [String]
    /// Where each declaration is (`file:line:column`), keyed `version/Entity` or `version/Entity.property`.
    public var places: [String: String]
    /// Per version identifier, Core Data's version hash of each entity (`NSEntityDescription.versionHash`,
    /// 32 bytes), where the plan's source gives them (an `.xcdatamodeld`'s versions): a store's
    /// `NSStoreModelVersionHashes` equal to one version's tell the store's version. Empty otherwise.
    public var entityVersionHashes: [String: [String: [UInt8]]] = [:]

    /// A plan of `versions` and `stages`.
    public init(versions: [ObjectModel], stages: [Stage], notes: [String] = [], places: [String: String] = [:]) {
        self.versions = versions; self.stages = stages; self.notes = notes; self.places = places
    }

    /// The version whose identifier is `identifier`.
    public func version(_ identifier: String) -> ObjectModel? {
        versions.first { $0.versionIdentifiers.first == identifier }
    }

    /// The current version: the plan's last schema.
    public var current: ObjectModel? { versions.last }

    /// Whether this is one model that names no version: an app's source with `@Model` classes and no
    /// `VersionedSchema` (most apps' shape), or plan JSON of one version without an identifier. Its
    /// objects are read and written in that model; there is no version to tell or stage to run.
    public var isUnversioned: Bool { versions.count == 1 && versions[0].versionIdentifiers.isEmpty }

    /// The place of a declaration of `version` (`Entity` or `Entity.property`), when known.
    public func place(_ version: String, _ declaration: String) -> String? { places["\(version)/\(declaration)"] }
}

/// One thing a stage does to the data, derived from the two versions.
public enum ModelStep: Sendable, Hashable, CustomStringConvertible {
    case addEntity(String)
    case removeEntity(String)
    case renameEntity(from: String, to: String)
    /// An attribute the source lacks: objects get its default, or nothing where it is optional.
    case addAttribute(entity: String, name: String, default: String?)
    case removeAttribute(entity: String, name: String)
    case renameAttribute(entity: String, from: String, to: String)
    case addRelationship(entity: String, name: String)
    /// A to-one relationship the target adds and requires: every object of the entity is rejected,
    /// as none names an object through it (`ObjectRequiredRelationshipReader`).
    case addRequiredRelationship(entity: String, name: String)
    /// A to-one relationship becomes required: an object whose relationship names no object is
    /// rejected, with the objects that require it in turn (`ObjectRequiredRelationshipReader`).
    case requireRelationship(entity: String, name: String)
    case allowNoRelationship(entity: String, name: String)
    case removeRelationship(entity: String, name: String)
    case renameRelationship(entity: String, from: String, to: String)
    case changeDeleteRule(entity: String, relationship: String, from: DeleteRule, to: DeleteRule)
    /// A value of one kind converted to the other where it converts losslessly; an object whose value
    /// does not is rejected.
    case convertType(entity: String, attribute: String, from: AttributeKind, to: AttributeKind)
    /// An attribute becomes required: an object without a value takes the default, or is rejected.
    case requireValue(entity: String, attribute: String, default: String?)
    case allowNil(entity: String, attribute: String)
    /// The target makes these names unique together: objects sharing them are deduplicated (`--dedupe`).
    case deduplicate(entity: String, on: [String])
    case dropUniqueness(entity: String, on: [String])

    /// A default as the steps show it: the empty text as `""`, which would otherwise show as nothing.
    static func shown(_ text: String) -> String { text.isEmpty ? "\"\"" : text }

    /// A default's text: its value's (`ObjectValueText`), empty Data as `Data()` (its base64 is no text at all).
    public static func defaultText(_ value: ObjectValue) -> String? {
        if case .data(let bytes) = value, bytes.isEmpty { return "Data()" }
        return ObjectValueText.text(value)
    }

    public var description: String {
        switch self {
        case .addEntity(let e): return "add entity \(e)"
        case .removeEntity(let e): return "remove entity \(e) (its objects are dropped and counted)"
        case .renameEntity(let from, let to): return "rename entity \(from) to \(to)"
        case .addAttribute(let e, let a, let d): return "add \(e).\(a)" + (d.map { " = \(ModelStep.shown($0))" } ?? " (optional, nil)")
        case .removeAttribute(let e, let a): return "remove \(e).\(a)"
        case .renameAttribute(let e, let from, let to): return "rename \(e).\(from) to \(to)"
        case .addRelationship(let e, let r): return "add relationship \(e).\(r) (empty)"
        case .addRequiredRelationship(let e, let r):
            return "add relationship \(e).\(r), required (empty: every \(e) is rejected, as it names no object)"
        case .requireRelationship(let e, let r): return "make relationship \(e).\(r) required (an object whose \(r) names no object is rejected)"
        case .allowNoRelationship(let e, let r): return "make relationship \(e).\(r) optional"
        case .removeRelationship(let e, let r): return "remove relationship \(e).\(r)"
        case .renameRelationship(let e, let from, let to): return "rename relationship \(e).\(from) to \(to)"
        case .changeDeleteRule(let e, let r, let from, let to): return "delete rule of \(e).\(r): \(from.rawValue) to \(to.rawValue)"
        case .convertType(let e, let a, let from, let to):
            return "convert \(e).\(a) from \(from) to \(to) (an object whose value does not convert losslessly is rejected)"
        case .requireValue(let e, let a, let d):
            return "make \(e).\(a) required" + (d.map { " (nil becomes \(ModelStep.shown($0)))" } ?? " (an object without it is rejected)")
        case .allowNil(let e, let a): return "make \(e).\(a) optional"
        case .deduplicate(let e, let keys): return "deduplicate \(e) on \(keys.joined(separator: ", ")) (--dedupe)"
        case .dropUniqueness(let e, let keys): return "drop uniqueness of \(e) on \(keys.joined(separator: ", "))"
        }
    }
}

/// The steps of a stage, derived from its two versions; or why no stage of its kind can get from one
/// to the other (a refusal, given before any work).
public struct ModelStageSteps: Sendable, Hashable {
    public var steps: [ModelStep]
    /// Changes the stage cannot make, one sentence each naming the declaration; non-empty refuses the plan.
    public var refusals: [String]

    /// Derives the steps of `stage` of `plan`. Entities, attributes and relationships map by name or
    /// through `renamingIdentifier` (`originalName`): the target's names a source declaration, or
    /// (Core Data's rule, for a name changed twice) equals the source declaration's own. A lightweight stage refuses what Core Data's
    /// inferred mapping refuses (a changed type); both kinds refuse a new required attribute without a
    /// default, which no object could be given.
    public init(_ stage: ModelPlan.Stage, of plan: ModelPlan) {
        steps = []; refusals = []
        guard let source = plan.version(stage.from), let target = plan.version(stage.to) else {
            refusals.append("stage \(stage.from) -> \(stage.to) names a version the plan's schemas do not list")
            return
        }
        let label = "\(stage.kind) stage \(stage.from) -> \(stage.to)"
        func placed(_ declaration: String) -> String {
            plan.place(stage.to, declaration).map { "\($0): " } ?? ""
        }
        var matchedSources = Set<String>()
        for te in target.entities {
            let se = source.entity(te.name) ?? te.renamingIdentifier.flatMap { id in
                source.entity(id) ?? source.entities.first { $0.renamingIdentifier == id }
            }
            guard let se else { steps.append(.addEntity(te.name)); continue }
            matchedSources.insert(se.name)
            if se.name != te.name { steps.append(.renameEntity(from: se.name, to: te.name)) }
            deriveAttributes(se, te, kind: stage.kind, label: label, placed: placed)
            deriveRelationships(se, te, kind: stage.kind, label: label, placed: placed)
            let sourceUnique = Set(se.uniquenessConstraints.map { $0.map { renamed($0, in: se, te) } })
            for tuple in te.uniquenessConstraints where !sourceUnique.contains(tuple) {
                steps.append(.deduplicate(entity: te.name, on: tuple))
            }
            let targetUnique = Set(te.uniquenessConstraints)
            for tuple in sourceUnique where !targetUnique.contains(tuple) {
                steps.append(.dropUniqueness(entity: te.name, on: tuple))
            }
        }
        for se in source.entities where !matchedSources.contains(se.name) { steps.append(.removeEntity(se.name)) }
    }

    /// The target's name of a source property, through renames declared on the target.
    private func renamed(_ name: String, in source: EntityDescription, _ target: EntityDescription) -> String {
        if target.attribute(name) != nil || target.relationship(name) != nil { return name }
        let id = source.attribute(name)?.renamingIdentifier ?? source.relationship(name)?.renamingIdentifier
        func continues(_ t: String?) -> Bool { t != nil && (t == name || t == id) }
        if let a = target.attributes.first(where: { continues($0.renamingIdentifier) }) { return a.name }
        if let r = target.relationships.first(where: { continues($0.renamingIdentifier) }) { return r.name }
        return name
    }

    private mutating func deriveAttributes(_ se: EntityDescription, _ te: EntityDescription, kind: MigrationStage.Kind,
                                           label: String, placed: (String) -> String) {
        var used = Set<String>()
        for ta in te.attributes where !ta.isTransient {
            let sa = se.attribute(ta.name) ?? ta.renamingIdentifier.flatMap { id in
                se.attribute(id) ?? se.attributes.first { $0.renamingIdentifier == id }
            }
            let fixed = ta.defaultValue.flatMap(ModelStep.defaultText)
            guard let sa, !sa.isTransient else {
                if ta.isOptional || fixed != nil {
                    steps.append(.addAttribute(entity: te.name, name: ta.name, default: fixed))
                } else {
                    refusals.append("\(placed("\(te.name).\(ta.name)"))\(label): \(te.name).\(ta.name) is new and required, "
                                    + "with no default to give the objects that lack it")
                }
                continue
            }
            used.insert(sa.name)
            if sa.name != ta.name { steps.append(.renameAttribute(entity: te.name, from: sa.name, to: ta.name)) }
            if sa.kind != ta.kind {
                if kind == .lightweight {
                    refusals.append("\(placed("\(te.name).\(ta.name)"))\(label): \(te.name).\(ta.name) changes type from \(sa.kind) "
                                    + "to \(ta.kind), which a lightweight stage cannot do (declare a custom stage)")
                } else if ModelStageSteps.converts(sa.kind, ta.kind) {
                    steps.append(.convertType(entity: te.name, attribute: ta.name, from: sa.kind, to: ta.kind))
                } else {
                    refusals.append("\(placed("\(te.name).\(ta.name)"))\(label): \(te.name).\(ta.name) changes type from \(sa.kind) "
                                    + "to \(ta.kind), and no value of the one is a value of the other")
                }
            }
            if sa.isOptional && !ta.isOptional { steps.append(.requireValue(entity: te.name, attribute: ta.name, default: fixed)) }
            if !sa.isOptional && ta.isOptional { steps.append(.allowNil(entity: te.name, attribute: ta.name)) }
        }
        for sa in se.attributes where !sa.isTransient && !used.contains(sa.name) {
            steps.append(.removeAttribute(entity: te.name, name: sa.name))
        }
    }

    private mutating func deriveRelationships(_ se: EntityDescription, _ te: EntityDescription, kind: MigrationStage.Kind,
                                              label: String, placed: (String) -> String) {
        var used = Set<String>()
        for tr in te.relationships {
            guard let sr = se.relationship(tr.name) ?? tr.renamingIdentifier.flatMap({ id in
                se.relationship(id) ?? se.relationships.first { $0.renamingIdentifier == id }
            }) else {
                let required = !tr.isToMany && !tr.isOptional
                if required && kind == .lightweight {
                    // Nothing can fill it: no default is declared for a relationship, and a lightweight
                    // stage runs no code (a custom stage's might, in the app: there every object is rejected).
                    refusals.append("\(placed("\(te.name).\(tr.name)"))\(label): \(te.name).\(tr.name) is a new required relationship, "
                                    + "which a lightweight stage cannot fill for the objects that exist (make it optional, or declare a custom stage)")
                } else {
                    steps.append(required ? .addRequiredRelationship(entity: te.name, name: tr.name) : .addRelationship(entity: te.name, name: tr.name))
                }
                continue
            }
            used.insert(sr.name)
            if sr.name != tr.name { steps.append(.renameRelationship(entity: te.name, from: sr.name, to: tr.name)) }
            if sr.deleteRule != tr.deleteRule {
                steps.append(.changeDeleteRule(entity: te.name, relationship: tr.name, from: sr.deleteRule, to: tr.deleteRule))
            }
            // A to-one's optionality (a to-many's, Core Data's minCount, is not enforced).
            let (wasRequired, isRequired) = (!sr.isToMany && !sr.isOptional, !tr.isToMany && !tr.isOptional)
            if isRequired && !wasRequired { steps.append(.requireRelationship(entity: te.name, name: tr.name)) }
            if wasRequired && !isRequired { steps.append(.allowNoRelationship(entity: te.name, name: tr.name)) }
        }
        for sr in se.relationships where !used.contains(sr.name) {
            steps.append(.removeRelationship(entity: te.name, name: sr.name))
        }
    }

    /// Whether some values of kind `from` are values of kind `to` (each is then converted, or its object
    /// rejected): numbers and text both ways, dates to and from seconds, Bool to and from 0 and 1.
    public static func converts(_ from: AttributeKind, _ to: AttributeKind) -> Bool {
        let numbers: Set<AttributeKind> = [.int16, .int32, .int64, .double, .float, .decimal, .bool]
        let texts: Set<AttributeKind> = [.string, .uri, .uuid]
        if numbers.contains(from) && numbers.contains(to) { return true }
        if (numbers.contains(from) || texts.contains(from)) && to == .string { return true }
        if from == .string && (numbers.contains(to) || texts.contains(to)) { return true }
        if from == .date && (to == .double || to == .string) { return true }
        if (from == .double || from == .string) && to == .date { return true }
        return false
    }
}
