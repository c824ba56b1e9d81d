/// The structural step between two schema versions, derived by comparing their declarations, as Core
/// Data infers a mapping model: attributes map by name, or through `originalName` (in either
/// direction, so a stage can also be run backwards); an attribute the source lacks takes its default;
/// an attribute the target lacks is dropped; relationships map by name and may change delete rule.
///
/// Derived once per pair of versions and applied to each object as a slot-to-slot copy.
public struct LightweightMapping: Sendable, Equatable {
    /// Where a target slot's value comes from.
    public enum Source: Sendable, Equatable {
        case copy(Int)
        case value(Value)
    }

    /// The mapping of one entity.
    public struct EntityMapping: Sendable, Equatable {
        public let entity: String
        public let attributes: [Source]
        public let relationships: [Int?]
    }

    /// One difference between the versions, for people (`tripconv schema`).
    public enum Change: Sendable, Equatable, CustomStringConvertible {
        case renamed(entity: String, from: String, to: String)
        case added(entity: String, attribute: String, default: Value, transient: Bool)
        case removed(entity: String, attribute: String)
        case uniquenessChanged(entity: String, attribute: String, isUnique: Bool)
        case deleteRuleChanged(entity: String, relationship: String, from: DeleteRule, to: DeleteRule)

        public var description: String {
            switch self {
            case .renamed(let e, let from, let to): return "rename \(e).\(from) to \(to)"
            case .added(let e, let a, let d, let t): return "add \(e).\(a)\(t ? " (transient)" : "") = \(d.literal)"
            case .removed(let e, let a): return "remove \(e).\(a)"
            case .uniquenessChanged(let e, let a, let u): return u ? "make \(e).\(a) unique" : "drop uniqueness of \(e).\(a)"
            case .deleteRuleChanged(let e, let r, let from, let to): return "delete rule of \(e).\(r): \(from.rawValue) to \(to.rawValue)"
            }
        }
    }

    public let from: SchemaVersion
    public let to: SchemaVersion
    public let entities: [EntityMapping]
    public let changes: [Change]

    /// Derives the mapping from one schema to another; throws where no lightweight mapping exists
    /// (a required attribute added without a default, a type changed).
    public init(from source: any VersionedSchema.Type, to target: any VersionedSchema.Type) throws {
        from = source.versionIdentifier; to = target.versionIdentifier
        var entities: [EntityMapping] = []
        var changes: [Change] = []
        for te in target.entities {
            guard let se = source.entity(te.name) else {
                throw TripError.data("no lightweight mapping from \(from) to \(to): entity \(te.name) is new")
            }
            var used = Set<Int>()
            var attributes: [Source] = []
            for ta in te.attributes {
                let si = se.attributes.firstIndex { $0.name == ta.name }
                    ?? ta.originalName.flatMap { o in se.attributes.firstIndex { $0.name == o } }
                    ?? se.attributes.firstIndex { $0.originalName == ta.name }
                if let si, !se.attributes[si].isTransient || ta.isTransient {
                    let sa = se.attributes[si]
                    guard sa.type == ta.type else {
                        throw TripError.data("no lightweight mapping from \(from) to \(to): \(te.name).\(ta.name) changes type")
                    }
                    used.insert(si)
                    if sa.isTransient {
                        attributes.append(.value(ta.defaultValue ?? .null))
                        continue
                    }
                    attributes.append(.copy(si))
                    if sa.name != ta.name { changes.append(.renamed(entity: te.name, from: sa.name, to: ta.name)) }
                    if sa.isUnique != ta.isUnique {
                        changes.append(.uniquenessChanged(entity: te.name, attribute: ta.name, isUnique: ta.isUnique))
                    }
                } else if let d = ta.defaultValue {
                    if let si { used.insert(si) }
                    attributes.append(.value(d))
                    changes.append(.added(entity: te.name, attribute: ta.name, default: d, transient: ta.isTransient))
                } else {
                    throw TripError.data("no lightweight mapping from \(from) to \(to): \(te.name).\(ta.name) is required and has no default")
                }
            }
            for (si, sa) in se.attributes.enumerated() where !used.contains(si) && !sa.isTransient {
                changes.append(.removed(entity: te.name, attribute: sa.name))
            }
            var relationships: [Int?] = []
            for tr in te.relationships {
                let si = se.relationships.firstIndex { $0.name == tr.name }
                    ?? tr.originalName.flatMap { o in se.relationships.firstIndex { $0.name == o } }
                    ?? se.relationships.firstIndex { $0.originalName == tr.name }
                relationships.append(si)
                if let si {
                    let sr = se.relationships[si]
                    if sr.name != tr.name { changes.append(.renamed(entity: te.name, from: sr.name, to: tr.name)) }
                    if sr.deleteRule != tr.deleteRule {
                        changes.append(.deleteRuleChanged(entity: te.name, relationship: tr.name, from: sr.deleteRule, to: tr.deleteRule))
                    }
                }
            }
            entities.append(EntityMapping(entity: te.name, attributes: attributes, relationships: relationships))
        }
        self.entities = entities
        self.changes = changes
        self.targetEntities = target.entities
        self.sourceEntities = source.entities
    }

    private let targetEntities: [Entity]
    private let sourceEntities: [Entity]

    public static func == (a: LightweightMapping, b: LightweightMapping) -> Bool {
        a.from == b.from && a.to == b.to && a.entities == b.entities && a.changes == b.changes
    }

    /// Whether applying the mapping changes nothing in an object's values.
    public var isIdentity: Bool {
        entities.allSatisfy { m in
            m.attributes.enumerated().allSatisfy { $0.element == .copy($0.offset) }
                && m.relationships.enumerated().allSatisfy { $0.element == $0.offset }
        } && sourceEntities.map { $0.attributes.count } == targetEntities.map { $0.attributes.count }
    }

    /// Applies the mapping to a root object and everything it relates to.
    public func apply(_ object: ModelObject) -> ModelObject {
        apply(object, entity: targetEntities[0].name)
    }

    private func apply(_ object: ModelObject, entity name: String) -> ModelObject {
        guard let mi = entities.firstIndex(where: { $0.entity == name }) else { return object }
        let m = entities[mi]
        let te = targetEntities[mi]
        var attributes = [Value]()
        attributes.reserveCapacity(m.attributes.count)
        for s in m.attributes {
            switch s {
            case .copy(let i): attributes.append(object.attributes[i])
            case .value(let v): attributes.append(v)
            }
        }
        var relationships = [Related]()
        relationships.reserveCapacity(m.relationships.count)
        for (ti, si) in m.relationships.enumerated() {
            let tr = te.relationships[ti]
            guard let si, si < object.relationships.count else {
                relationships.append(tr.isToMany ? .toMany([]) : .toOne(nil))
                continue
            }
            switch object.relationships[si] {
            case .toMany(let list): relationships.append(.toMany(list.map { apply($0, entity: tr.destination) }))
            case .toOne(let o): relationships.append(.toOne(o.map { apply($0, entity: tr.destination) }))
            }
        }
        return ModelObject(attributes: attributes, relationships: relationships)
    }
}

extension Value {
    /// The value as a literal in a declaration (`""`, `false`, `0`).
    public var literal: String {
        switch self {
        case .null: return "nil"
        case .string(let s): return "\"\(s)\""
        case .date(let t): return t.iso8601
        case .bool(let b): return b ? "true" : "false"
        case .int(let n): return String(n)
        }
    }
}
