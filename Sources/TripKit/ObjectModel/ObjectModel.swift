/// A model of any app, as Core Data's `NSManagedObjectModel` and SwiftData's `Schema` hold one: its
/// entities, each with attributes and relationships, read at run time (from a store's model cache, an
/// Xcode model, the tables themselves) rather than declared in Swift as SampleTrips' schemas are.
///
/// SampleTrips' three versions are instances of it (`ObjectModel(schema:)`); the trip paths keep their
/// own declarations and their speed (docs/DESIGN-NOTES.md, "The general object model").
///
/// ```swift
/// let model = ObjectModel(entities: [
///     EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false)],
///                       uniquenessConstraints: [["name"]]),
/// ])
/// ```
public struct ObjectModel: Sendable, Hashable {
    /// The entities, in the order the model gives them (a store's model cache: by name).
    public var entities: [EntityDescription]
    /// `NSStoreModelVersionIdentifiers`, SwiftData's `Schema.Version` as text ("1.0.0"); empty when unknown.
    public var versionIdentifiers: [String]
    /// What could not be told and was assumed, one sentence each (a model inferred from tables says
    /// which columns it guessed the type of); empty for a model the store or an Xcode model gave.
    public var inferences: [String]

    /// A model of `entities`.
    public init(entities: [EntityDescription], versionIdentifiers: [String] = [], inferences: [String] = []) {
        self.entities = entities; self.versionIdentifiers = versionIdentifiers; self.inferences = inferences
    }

    /// The position of the entity named `name`.
    public func entityIndex(_ name: String) -> Int? { entities.firstIndex { $0.name == name } }
    /// The entity named `name`.
    public func entity(_ name: String) -> EntityDescription? { entityIndex(name).map { entities[$0] } }

    /// The entity an entity's table belongs to: its root (an entity without a superentity). Core Data
    /// keeps a whole inheritance tree in its root's table, told apart by `Z_ENT`.
    public func rootEntity(of name: String) -> EntityDescription? {
        var current = entity(name)
        var steps = 0
        while let e = current, let parent = e.superentity, steps < entities.count {
            current = entity(parent); steps += 1
        }
        return current
    }

    /// The entities whose root is `name`, `name` first: the entities sharing its table.
    public func family(of name: String) -> [EntityDescription] {
        entities.filter { rootEntity(of: $0.name)?.name == name }.sorted { a, b in
            a.name == name ? true : (b.name == name ? false : a.name < b.name)
        }
    }

    /// The relationship on `destination` that is the inverse of `relationship` (declared by name, or
    /// found as the one pointing back whose inverse names it).
    public func inverse(of relationship: RelationshipDescription, in entity: String) -> RelationshipDescription? {
        guard let destination = self.entity(relationship.destination) else { return nil }
        if let name = relationship.inverse { return destination.relationship(name) }
        return destination.relationships.first { $0.destination == entity && $0.inverse == relationship.name }
    }
}

/// An entity of an `ObjectModel`, as `NSEntityDescription`.
public struct EntityDescription: Sendable, Hashable {
    public var name: String
    /// The entity this one inherits from (it shares that entity's table), if any.
    public var superentity: String?
    public var isAbstract: Bool
    /// The entity's own attributes (not its superentity's), in declared order.
    public var attributes: [AttributeDescription]
    /// The entity's own relationships (not its superentity's), in declared order.
    public var relationships: [RelationshipDescription]
    /// Attribute or relationship names whose values, together, no two objects share (`@Attribute(.unique)`
    /// is a one-name tuple; `#Unique<T>([\.a, \.b])` a two-name one).
    public var uniquenessConstraints: [[String]]
    /// The name in the previous model version, for a rename (`NSRenamingIdentifier`, `originalName`).
    public var renamingIdentifier: String?

    /// An entity, as `NSEntityDescription` describes one.
    public init(_ name: String, superentity: String? = nil, isAbstract: Bool = false,
                attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
                uniquenessConstraints: [[String]] = [], renamingIdentifier: String? = nil) {
        self.name = name; self.superentity = superentity; self.isAbstract = isAbstract
        self.attributes = attributes; self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints; self.renamingIdentifier = renamingIdentifier
    }

    /// The attribute named `name`.
    public func attribute(_ name: String) -> AttributeDescription? { attributes.first { $0.name == name } }
    /// The relationship named `name`.
    public func relationship(_ name: String) -> RelationshipDescription? { relationships.first { $0.name == name } }

    /// The single attribute no two objects share, when the entity has one (the stable key objects of
    /// this entity are referred to by in exports).
    public var uniqueAttribute: AttributeDescription? {
        for tuple in uniquenessConstraints where tuple.count == 1 {
            if let a = attribute(tuple[0]), !a.isTransient { return a }
        }
        return nil
    }
}

/// The kind of an attribute's values, as `NSAttributeType` (its raw value is Core Data's code).
public enum AttributeKind: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case undefined = 0
    case int16 = 100, int32 = 200, int64 = 300
    case decimal = 400, double = 500, float = 600
    case string = 700, bool = 800, date = 900, binary = 1000
    case uuid = 1100, uri = 1200
    case transformable = 1800, objectID = 2000, composite = 2100

    /// The name tripconv's outputs use: Swift's where SwiftData uses it (`Int64`, `Date`, `UUID`).
    public var description: String {
        switch self {
        case .undefined: return "Undefined"
        case .int16: return "Int16"
        case .int32: return "Int32"
        case .int64: return "Int64"
        case .decimal: return "Decimal"
        case .double: return "Double"
        case .float: return "Float"
        case .string: return "String"
        case .bool: return "Bool"
        case .date: return "Date"
        case .binary: return "Data"
        case .uuid: return "UUID"
        case .uri: return "URL"
        case .transformable: return "Transformable"
        case .objectID: return "ObjectID"
        case .composite: return "Composite"
        }
    }

    /// The kind named `name` (`Int64`, `Date`, …: `description`'s words, or Core Data's model words
    /// `Integer 64`, `Boolean`, `Binary`, `URI`), nil for another.
    public init?(name: String) {
        let aliases: [String: AttributeKind] = [
            "Integer 16": .int16, "Integer 32": .int32, "Integer 64": .int64, "Boolean": .bool,
            "Binary": .binary, "URI": .uri, "Int": .int64,
        ]
        if let k = aliases[name] { self = k; return }
        guard let k = AttributeKind.allCases.first(where: { $0.description == name }) else { return nil }
        self = k
    }

    /// Whether values are whole numbers.
    public var isInteger: Bool { self == .int16 || self == .int32 || self == .int64 }
}

/// An attribute of an entity, as `NSAttributeDescription`.
public struct AttributeDescription: Sendable, Hashable {
    public var name: String
    public var kind: AttributeKind
    public var isOptional: Bool
    /// Never stored (`@Transient`, a transient Core Data attribute).
    public var isTransient: Bool
    /// The value an object gets when none is given.
    public var defaultValue: ObjectValue?
    /// `NSAttributeValueClassName`: the class of a transformable's values (`NSArray`, a Codable type's name).
    public var valueClassName: String?
    /// `NSValueTransformerName`, for a transformable attribute.
    public var valueTransformerName: String?
    /// The name in the previous model version, for a rename.
    public var renamingIdentifier: String?
    /// Binary data Core Data may keep in a file beside the store (`allowsExternalBinaryDataStorage`,
    /// SwiftData's `@Attribute(.externalStorage)`): its column holds a marker byte before the bytes or
    /// the file's name.
    public var allowsExternalStorage: Bool

    /// An attribute, as `NSAttributeDescription` describes one.
    public init(_ name: String, _ kind: AttributeKind, isOptional: Bool = true, isTransient: Bool = false,
                defaultValue: ObjectValue? = nil, valueClassName: String? = nil, valueTransformerName: String? = nil,
                renamingIdentifier: String? = nil, allowsExternalStorage: Bool = false) {
        self.name = name; self.kind = kind; self.isOptional = isOptional; self.isTransient = isTransient
        self.defaultValue = defaultValue; self.valueClassName = valueClassName
        self.valueTransformerName = valueTransformerName; self.renamingIdentifier = renamingIdentifier
        self.allowsExternalStorage = allowsExternalStorage
    }
}

/// A relationship of an entity, as `NSRelationshipDescription`.
public struct RelationshipDescription: Sendable, Hashable {
    public var name: String
    /// The entity at the other end.
    public var destination: String
    /// The name of the relationship on `destination` that points back, if one does.
    public var inverse: String?
    public var isToMany: Bool
    /// A to-many relationship whose objects keep their order (`NSOrderedSet`).
    public var isOrdered: Bool
    public var isOptional: Bool
    public var deleteRule: DeleteRule
    /// The name in the previous model version, for a rename.
    public var renamingIdentifier: String?

    /// A relationship, as `NSRelationshipDescription` describes one.
    public init(_ name: String, to destination: String, inverse: String? = nil, toMany: Bool = false,
                ordered: Bool = false, isOptional: Bool = true, deleteRule: DeleteRule = .nullify,
                renamingIdentifier: String? = nil) {
        self.name = name; self.destination = destination; self.inverse = inverse; self.isToMany = toMany
        self.isOrdered = ordered; self.isOptional = isOptional; self.deleteRule = deleteRule
        self.renamingIdentifier = renamingIdentifier
    }
}
