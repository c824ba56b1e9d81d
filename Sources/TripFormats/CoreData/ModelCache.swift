import TripKit

/// The model a Core Data store keeps of itself in `Z_MODELCACHE.Z_CONTENT`: an `NSManagedObjectModel`
/// archived with `NSKeyedArchiver`, compressed with raw DEFLATE. Read without Foundation, bounded
/// (`RawInflate`'s and `BinaryPropertyList`'s limits), every failure a `BinaryPropertyList.Failure`.
///
/// What the archive holds, as Core Data's `encodeWithCoder:` writes it:
/// - the model: `NSEntities` (an `NSKnownKeysDictionary1`, entity name → entity), `NSVersionIdentifiers`;
/// - an entity: `NSEntityName`, `NSSuperentity`, `NSSubentities`, `NSProperties` (name → property),
///   `NSUniqueTuples` (arrays of names), `NSRenamingIdentifier`, `NSIsAbstract` (written only when true);
/// - a property: `NSPropertyName`, `NSRenamingIdentifier`, and `_P`, its flags: 1 (always set), 2
///   optional, 8 transient, 0x400 ordered. `NSIsOptional`, `NSIsTransient`, `NSIsOrdered` are written
///   too, but only when true: an attribute without `NSIsOptional` is not optional (SwiftData's
///   `name: String`), as `_P` says;
/// - an attribute: `NSAttributeType` (`AttributeKind`'s raw value), `NSDefaultValue`,
///   `NSAttributeValueClassName`, `NSValueTransformerName`;
/// - a relationship: `NSDestinationEntity`, `NSInverseRelationship`, `NSMinCount`, `NSMaxCount` (1 is
///   to-one; 0, unbounded, or above 1 to-many), `NSDeleteRule` (0 no action, 1 nullify, 2 cascade, 3 deny).
enum ModelCache {
    typealias Failure = BinaryPropertyList.Failure

    /// The model in a `Z_CONTENT` blob.
    static func model(compressed: [UInt8]) throws -> ObjectModel {
        try model(archive: KeyedArchive(RawInflate.inflate(compressed)))
    }

    static func model(archive a: KeyedArchive) throws -> ObjectModel {
        let root = try a.object(a.root)
        guard try a.className(root) == "NSManagedObjectModel" else {
            throw Failure("the archived root is an \(try a.className(root)), not an NSManagedObjectModel")
        }
        let versions = try a.elements(root["NSVersionIdentifiers"], "NSVersionIdentifiers").compactMap { try a.string(.uid($0), "a version identifier") }
        var entities: [EntityDescription] = []
        for (name, uid) in try a.members(root["NSEntities"], "NSEntities") {
            entities.append(try entity(a, uid, name))
        }
        entities.sort { $0.name < $1.name }
        let model = ObjectModel(entities: entities, versionIdentifiers: versions.sorted())
        try ModelCache.check(model)
        return model
    }

    /// The name of the entity an archived entity UID is.
    private static func entityName(_ a: KeyedArchive, _ value: PropertyListValue?, _ what: String) throws -> String? {
        guard let o = try a.resolve(value) else { return nil }
        guard try a.className(o) == "NSEntityDescription" else { throw Failure("\(what) is not an NSEntityDescription") }
        guard let name = try a.string(o["NSEntityName"], "\(what)'s NSEntityName") else { throw Failure("\(what) has no NSEntityName") }
        return name
    }

    private static func entity(_ a: KeyedArchive, _ uid: UInt64, _ key: String) throws -> EntityDescription {
        let o = try a.object(uid)
        let what = "entity \(key.quotedForMessage)"
        guard try a.className(o) == "NSEntityDescription" else { throw Failure("\(what) is an \(try a.className(o)), not an NSEntityDescription") }
        let name = try a.string(o["NSEntityName"], "\(what)'s NSEntityName") ?? key
        guard name == key else { throw Failure("\(what) is named \(name.quotedForMessage)") }
        var e = EntityDescription(name)
        e.superentity = try entityName(a, o["NSSuperentity"], "\(what)'s NSSuperentity")
        e.isAbstract = try a.bool(o["NSIsAbstract"], "\(what)'s NSIsAbstract") ?? false
        let renaming = try a.string(o["NSRenamingIdentifier"], "\(what)'s NSRenamingIdentifier")
        e.renamingIdentifier = renaming == name ? nil : renaming
        for (propertyName, p) in try a.members(o["NSProperties"], "\(what)'s NSProperties") {
            let property = try a.object(p)
            let pwhat = "\(name).\(propertyName)"
            switch try a.className(property) {
            case "NSAttributeDescription", "NSDerivedAttributeDescription", "NSCompositeAttributeDescription":
                e.attributes.append(try attribute(a, property, propertyName, pwhat))
            case "NSRelationshipDescription": e.relationships.append(try relationship(a, property, propertyName, pwhat))
            default: continue  // fetched properties and expressions are not stored
            }
        }
        e.attributes.sort { $0.name < $1.name }
        e.relationships.sort { $0.name < $1.name }
        for t in try a.elements(o["NSUniqueTuples"], "\(what)'s NSUniqueTuples") {
            let names = try a.elements(.uid(t), "a tuple of \(what)'s NSUniqueTuples").map { u -> String in
                let item = try a.object(u)
                if case .string(let s) = item { return s }
                // A property description in place of its name.
                guard let s = try a.string(item["NSPropertyName"], "a uniqueness name of \(what)") else {
                    throw Failure("a uniqueness constraint of \(what) names nothing")
                }
                return s
            }
            if !names.isEmpty { e.uniquenessConstraints.append(names) }
        }
        return e
    }

    /// Optional, transient, ordered: from `_P` where it is set (bit 0), else from the keys written when true.
    private static func flags(_ a: KeyedArchive, _ o: PropertyListValue, _ what: String) throws -> (optional: Bool, transient: Bool, ordered: Bool) {
        if let p = try a.integer(o["_P"], "\(what)'s _P"), p & 1 == 1 {
            return (p & 2 != 0, p & 8 != 0, p & 0x400 != 0)
        }
        return (try a.bool(o["NSIsOptional"], what) ?? false, try a.bool(o["NSIsTransient"], what) ?? false,
                try a.bool(o["NSIsOrdered"], what) ?? false)
    }

    private static func attribute(_ a: KeyedArchive, _ o: PropertyListValue, _ name: String, _ what: String) throws -> AttributeDescription {
        let code = try a.integer(o["NSAttributeType"], "\(what)'s NSAttributeType") ?? 0
        guard let kind = AttributeKind(rawValue: Int(clamping: code)) else { throw Failure("\(what) has the unknown NSAttributeType \(code)") }
        let f = try flags(a, o, what)
        let renaming = try a.string(o["NSRenamingIdentifier"], "\(what)'s NSRenamingIdentifier")
        return AttributeDescription(
            name, kind, isOptional: f.optional, isTransient: f.transient,
            defaultValue: try a.value(o["NSDefaultValue"], kind: kind),
            valueClassName: try a.string(o["NSAttributeValueClassName"], "\(what)'s NSAttributeValueClassName"),
            valueTransformerName: try a.string(o["NSValueTransformerName"], "\(what)'s NSValueTransformerName"),
            renamingIdentifier: renaming == name ? nil : renaming,
            // NSFlagsKey's bit 2 is allowsExternalBinaryDataStorage (NSAttributeDescription's encodeWithCoder:).
            allowsExternalStorage: (try a.integer(o["NSFlagsKey"], "\(what)'s NSFlagsKey") ?? 0) & 4 != 0)
    }

    private static func relationship(_ a: KeyedArchive, _ o: PropertyListValue, _ name: String, _ what: String) throws -> RelationshipDescription {
        guard let destination = try entityName(a, o["NSDestinationEntity"], "\(what)'s NSDestinationEntity")
                ?? a.string(o["_NSDestinationEntityName"], "\(what)'s destination") else {
            throw Failure("\(what) has no NSDestinationEntity")
        }
        var inverse: String?
        if let i = try a.resolve(o["NSInverseRelationship"]) {
            inverse = try a.string(i["NSPropertyName"], "\(what)'s inverse")
        } else {
            inverse = try a.string(o["_NSInverseRelationshipName"], "\(what)'s _NSInverseRelationshipName")
        }
        let maxCount = try a.integer(o["NSMaxCount"], "\(what)'s NSMaxCount") ?? 0
        let rule = try a.integer(o["NSDeleteRule"], "\(what)'s NSDeleteRule") ?? 1
        let rules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
        guard let deleteRule = rules[rule] else { throw Failure("\(what) has the unknown NSDeleteRule \(rule)") }
        let f = try flags(a, o, what)
        let renaming = try a.string(o["NSRenamingIdentifier"], "\(what)'s NSRenamingIdentifier")
        return RelationshipDescription(name, to: destination, inverse: inverse, toMany: maxCount != 1, ordered: f.ordered,
                                       isOptional: f.optional, deleteRule: deleteRule, renamingIdentifier: renaming == name ? nil : renaming)
    }

    /// A model whose parts refer to each other as they must: destinations and superentities that
    /// exist, no inheritance cycle, inverses that exist on their destination.
    static func check(_ model: ObjectModel) throws {
        let names = Set(model.entities.map(\.name))
        guard names.count == model.entities.count else { throw Failure("two entities share a name") }
        for e in model.entities {
            if let s = e.superentity {
                guard names.contains(s) else { throw Failure("entity \(e.name)'s superentity \(s) is not in the model") }
                var seen: Set<String> = [e.name]
                var current: String? = s
                while let c = current {
                    guard seen.insert(c).inserted else { throw Failure("entity \(e.name) inherits from itself (through \(c))") }
                    current = model.entity(c)?.superentity
                }
            }
            for r in e.relationships {
                guard let d = model.entity(r.destination) else {
                    throw Failure("\(e.name).\(r.name)'s destination \(r.destination) is not in the model")
                }
                if let i = r.inverse, !model.allRelationships(of: model.entityIndex(d.name)!).contains(where: { $0.name == i }) {
                    throw Failure("\(e.name).\(r.name)'s inverse \(i) is not a relationship of \(d.name)")
                }
            }
        }
    }
}
