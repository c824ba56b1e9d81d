/// Every field name that any version of a plan uses, for each entity, resolved once: which versions
/// declare the name, what it is (attribute, relationship, transient), and its slot in each version.
///
/// Readers resolve a field name here once; a record's version is the intersection of the versions of
/// the names it carries (`start_date` says 1.0.0 or 2.0.0, `startDate` says 3.0.0).
public final class SchemaVocabulary: Sendable {
    /// What a field is.
    public enum FieldKind: Sendable, Equatable {
        case attribute(AttributeType)
        case toMany(destination: Int)
        case toOne(destination: Int)
        /// A transient attribute: read and ignored, never persisted.
        case transient
    }

    /// One name of one entity, across all versions.
    public struct Field: Sendable {
        public let name: String
        public let kind: FieldKind
        /// Bit i set: version i of the plan declares this name (or reads it as a legacy spelling).
        public let versions: UInt32
        /// Per version: the attribute or relationship index the name maps to, or -1.
        public let slots: [Int]
        /// Per version: the declared name the field maps to (the legacy spelling's real name).
        public let declaredNames: [String?]
    }

    /// The union of one entity's fields across versions.
    public struct EntityFields: Sendable {
        public let name: String
        public let fields: [Field]
        let index: [String: Int]
    }

    public let schemas: [any VersionedSchema.Type]
    public let entities: [EntityFields]
    /// All versions' bits.
    public let allVersions: UInt32
    /// Per entity, per version: how objects are laid out.
    let layouts: [[Layout]]

    /// The vocabulary of the SampleTrips plan.
    public static let trips = SchemaVocabulary(TripMigrationPlan.schemas)

    /// The vocabulary of `schemas`, oldest first: every field name any of them (or a legacy spelling) uses.
    public init(_ schemas: [any VersionedSchema.Type]) {
        precondition(!schemas.isEmpty && schemas.count <= 32)
        self.schemas = schemas
        self.allVersions = schemas.count == 32 ? UInt32.max : (UInt32(1) << UInt32(schemas.count)) - 1
        let entityNames = schemas[schemas.count - 1].entities.map(\.name)
            + schemas.flatMap { $0.entities.map(\.name) }
        var orderedEntityNames: [String] = []
        for n in entityNames where !orderedEntityNames.contains(n) { orderedEntityNames.append(n) }

        var built: [EntityFields] = []
        for entityName in orderedEntityNames {
            var names: [String] = []
            var kinds: [String: FieldKind] = [:]
            var masks: [String: UInt32] = [:]
            var slots: [String: [Int]] = [:]
            var declared: [String: [String?]] = [:]
            func add(_ name: String, _ kind: FieldKind, version v: Int, slot: Int, declaredName: String, versioned: Bool) {
                if kinds[name] == nil {
                    names.append(name); kinds[name] = kind
                    slots[name] = Array(repeating: -1, count: schemas.count)
                    declared[name] = Array(repeating: nil, count: schemas.count)
                    masks[name] = 0
                }
                masks[name]! |= versioned ? UInt32(1) << UInt32(v) : 0
                slots[name]![v] = slot
                declared[name]![v] = declaredName
            }
            for (v, schema) in schemas.enumerated() {
                guard let entity = schema.entity(entityName) else { continue }
                for (i, a) in entity.attributes.enumerated() {
                    // A transient attribute carries no evidence of a version: it is ignored everywhere.
                    add(a.name, a.isTransient ? .transient : .attribute(a.type), version: v, slot: i,
                        declaredName: a.name, versioned: !a.isTransient)
                }
                for (i, r) in entity.relationships.enumerated() {
                    let destination = orderedEntityNames.firstIndex(of: r.destination) ?? 0
                    add(r.name, r.isToMany ? .toMany(destination: destination) : .toOne(destination: destination),
                        version: v, slot: i, declaredName: r.name, versioned: true)
                }
                for (spelling, real) in entity.legacySpellings.sorted(by: { $0.key < $1.key }) {
                    if let i = entity.relationshipIndex(real) {
                        let r = entity.relationships[i]
                        let destination = orderedEntityNames.firstIndex(of: r.destination) ?? 0
                        add(spelling, r.isToMany ? .toMany(destination: destination) : .toOne(destination: destination),
                            version: v, slot: i, declaredName: real, versioned: true)
                    } else if let i = entity.attributeIndex(real) {
                        add(spelling, .attribute(entity.attributes[i].type), version: v, slot: i, declaredName: real, versioned: true)
                    }
                }
            }
            let allBits = schemas.count == 32 ? UInt32.max : (UInt32(1) << UInt32(schemas.count)) - 1
            let fields = names.map { n in
                Field(name: n, kind: kinds[n]!, versions: kinds[n]! == .transient ? allBits : masks[n]!,
                      slots: slots[n]!, declaredNames: declared[n]!)
            }
            var index: [String: Int] = [:]
            for (i, f) in fields.enumerated() { index[f.name] = i }
            built.append(EntityFields(name: entityName, fields: fields, index: index))
        }
        self.entities = built
        self.layouts = SchemaVocabulary.makeLayouts(entities: built, schemas: schemas)
    }

    /// The index of the root entity (the current schema's first).
    public var rootEntity: Int { 0 }

    /// The index of `version` among the vocabulary's schemas; nil for a version it does not know.
    public func versionIndex(_ version: SchemaVersion) -> Int? {
        schemas.firstIndex { $0.versionIdentifier == version }
    }

    /// The versions in a mask, oldest first.
    public func versions(in mask: UInt32) -> [SchemaVersion] {
        schemas.indices.filter { mask & (UInt32(1) << UInt32($0)) != 0 }.map { schemas[$0].versionIdentifier }
    }

    /// `1.0.0 and 2.0.0`, for messages.
    public func describe(_ mask: UInt32) -> String {
        let list = versions(in: mask).map(\.description)
        switch list.count {
        case 0: return "no version"
        case 1: return list[0]
        default: return list.dropLast().joined(separator: ", ") + " and " + list.last!
        }
    }
}

extension SchemaVocabulary {
    /// One entity of one version, precomputed for building objects: where each field goes, what each
    /// slot defaults to, which slots are required. A class, so that reading one per object costs one
    /// reference, not one per array it holds.
    final class Layout: Sendable {
        let exists: Bool
        let entityName: String
        /// Attribute values an object starts with: the defaults, null where required.
        let template: [Value]
        let requiredSlots: [Int]
        let attributeNames: [String]
        /// Per field of the entity's vocabulary: the attribute slot, or -1.
        let attributeSlot: [Int]
        /// Per attribute slot: the one field (below 64) that fills it, or -1 for none; nil when some
        /// slot has several (legacy spellings of an attribute), so slots cannot be filled in order.
        let fieldOfSlot: [Int]?
        /// Per field: the relationship slot, or -1.
        let relationshipSlot: [Int]
        /// Per relationship slot: to-many or not.
        let isToMany: [Bool]
        /// Per relationship slot: for a to-one whose destination has no required attribute, the
        /// destination's defaults; an object equal to them is none.
        let noneWhenDefaults: [[Value]?]
        /// The relationships an object starts with: an empty list or none, per slot.
        let emptyRelationships: [Related]

        init(exists: Bool, entityName: String, template: [Value], requiredSlots: [Int], attributeNames: [String],
             attributeSlot: [Int], relationshipSlot: [Int], isToMany: [Bool], noneWhenDefaults: [[Value]?]) {
            self.exists = exists; self.entityName = entityName; self.template = template
            self.requiredSlots = requiredSlots; self.attributeNames = attributeNames
            self.attributeSlot = attributeSlot; self.relationshipSlot = relationshipSlot
            self.isToMany = isToMany; self.noneWhenDefaults = noneWhenDefaults
            emptyRelationships = isToMany.map { $0 ? Related.toMany([]) : Related.toOne(nil) }
            var fields = Array(repeating: -1, count: template.count)
            var isSingle = true
            for (field, slot) in attributeSlot.enumerated() where slot >= 0 {
                if fields[slot] >= 0 || field >= 64 { isSingle = false }
                fields[slot] = field
            }
            fieldOfSlot = isSingle ? fields : nil
        }
    }

    static func makeLayouts(entities: [EntityFields], schemas: [any VersionedSchema.Type]) -> [[Layout]] {
        entities.map { fields in
            schemas.enumerated().map { (vi, schema) -> Layout in
                guard let e = schema.entity(fields.name) else {
                    return Layout(exists: false, entityName: fields.name, template: [], requiredSlots: [], attributeNames: [],
                                  attributeSlot: [], relationshipSlot: [], isToMany: [], noneWhenDefaults: [])
                }
                let attributeSlot = fields.fields.map { f -> Int in
                    if case .attribute = f.kind { return f.slots[vi] }
                    return -1
                }
                let relationshipSlot = fields.fields.map { f -> Int in
                    switch f.kind {
                    case .toMany, .toOne: return f.slots[vi]
                    default: return -1
                    }
                }
                let none = e.relationships.map { r -> [Value]? in
                    guard !r.isToMany, let d = schema.entity(r.destination), d.attributes.allSatisfy({ !$0.isRequired }) else { return nil }
                    return d.attributes.map { $0.defaultValue ?? .null }
                }
                return Layout(exists: true, entityName: e.name,
                              template: e.attributes.map { $0.defaultValue ?? .null },
                              requiredSlots: e.attributes.indices.filter { e.attributes[$0].isRequired },
                              attributeNames: e.attributes.map(\.name),
                              attributeSlot: attributeSlot, relationshipSlot: relationshipSlot,
                              isToMany: e.relationships.map(\.isToMany), noneWhenDefaults: none)
            }
        }
    }
}
