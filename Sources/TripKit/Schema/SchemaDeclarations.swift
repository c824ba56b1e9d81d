/// A schema version, `major.minor.patch`, as SwiftData's `Schema.Version`.
public struct SchemaVersion: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let major: Int, minor: Int, patch: Int

    /// The version `major.minor.patch`, as `Schema.Version(1, 0, 0)` in SwiftData.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major; self.minor = minor; self.patch = patch
    }

    /// Parses `3`, `3.0` or `3.0.0`.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var numbers: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(part) else { return nil }
            numbers.append(n)
        }
        while numbers.count < 3 { numbers.append(0) }
        self.init(numbers[0], numbers[1], numbers[2])
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (a: SchemaVersion, b: SchemaVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }
}

/// The type of an attribute's values.
public enum AttributeType: String, Sendable, Hashable {
    case string, date, bool, int
}

/// What happens to related objects when their owner is deleted.
public enum DeleteRule: String, Sendable, Hashable {
    case nullify, cascade, deny, noAction
}

/// An attribute of an entity, as SwiftData's `@Attribute`.
public struct Attribute: Sendable, Hashable {
    /// Options, as SwiftData's `Schema.Attribute.Option`.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        /// Options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// No two objects of the entity share the value.
        public static let unique = Options(rawValue: 1)
        /// Never persisted, never exported.
        public static let transient = Options(rawValue: 2)
    }

    public let name: String
    public let type: AttributeType
    public let options: Options
    /// The attribute's name in the previous version, for a rename.
    public let originalName: String?
    /// The value an object gets when its input does not give one; nil makes the attribute required.
    public let defaultValue: Value?

    /// An attribute, as `@Attribute(options, originalName:)` declares one in SwiftData.
    public init(_ name: String, _ type: AttributeType, options: Options = [],
                originalName: String? = nil, default defaultValue: Value? = nil) {
        self.name = name; self.type = type; self.options = options
        self.originalName = originalName; self.defaultValue = defaultValue
    }

    public var isUnique: Bool { options.contains(.unique) }
    public var isTransient: Bool { options.contains(.transient) }
    public var isRequired: Bool { defaultValue == nil && !isTransient }
}

/// A relationship of an entity, as SwiftData's `@Relationship`.
public struct Relationship: Sendable, Hashable {
    public let name: String
    public let destination: String
    public let isToMany: Bool
    public let deleteRule: DeleteRule
    public let originalName: String?

    /// A to-many relationship, as `@Relationship(deleteRule:)` on an array property.
    public static func toMany(_ name: String, _ destination: String, deleteRule: DeleteRule,
                              originalName: String? = nil) -> Relationship {
        Relationship(name: name, destination: destination, isToMany: true, deleteRule: deleteRule, originalName: originalName)
    }

    /// A to-one relationship, as `@Relationship(deleteRule:)` on an optional property.
    public static func toOne(_ name: String, _ destination: String, deleteRule: DeleteRule,
                             originalName: String? = nil) -> Relationship {
        Relationship(name: name, destination: destination, isToMany: false, deleteRule: deleteRule, originalName: originalName)
    }
}

/// An entity: a model class of one schema version.
public struct Entity: Sendable, Hashable {
    public let name: String
    public let attributes: [Attribute]
    public let relationships: [Relationship]
    /// Other spellings of attribute and relationship names that exports of this version carry
    /// (`bucketListItem` for `bucketList`); read, never written.
    public let legacySpellings: [String: String]

    /// An entity: a `@Model` class of a versioned schema.
    public init(_ name: String, attributes: [Attribute], relationships: [Relationship] = [],
                legacySpellings: [String: String] = [:]) {
        self.name = name; self.attributes = attributes
        self.relationships = relationships; self.legacySpellings = legacySpellings
    }

    /// The position of the attribute named `name`, in declared order.
    public func attributeIndex(_ name: String) -> Int? { attributes.firstIndex { $0.name == name } }
    /// The position of the relationship named `name`, in declared order.
    public func relationshipIndex(_ name: String) -> Int? { relationships.firstIndex { $0.name == name } }

    /// The attributes that are persisted and exported, in declaration order.
    public var persistedAttributes: [Attribute] { attributes.filter { !$0.isTransient } }

    /// The unique attribute, if the entity has one.
    public var uniqueAttribute: Attribute? { attributes.first { $0.isUnique } }
}

/// A version of the model, as SwiftData's `VersionedSchema`.
public protocol VersionedSchema: Sendable {
    static var versionIdentifier: SchemaVersion { get }
    /// The entities; the first is the root (Trip), the others are reached through relationships.
    static var entities: [Entity] { get }
}

extension VersionedSchema {
    /// The entity named `name`, as `Schema.entity(for:)`.
    public static func entity(_ name: String) -> Entity? { entities.first { $0.name == name } }
    public static var rootEntity: Entity { entities[0] }
}

/// A step of a migration plan, as SwiftData's `MigrationStage`.
public enum MigrationStage: Sendable {
    /// Derived entirely from the two declarations.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// The derived structural step, with code before it (on source objects) and after it (on target objects).
    case custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                willMigrate: (@Sendable (MigrationContext) throws -> Void)?,
                didMigrate: (@Sendable (MigrationContext) throws -> Void)?)

    public var fromVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _, _): return from
        }
    }

    public var toVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _, _): return to
        }
    }

    /// Which of the two cases a stage is; its `description` ("lightweight", "custom") is what messages say.
    public enum Kind: String, Sendable, CustomStringConvertible {
        case lightweight
        case custom
        public var description: String { rawValue }
    }

    public var kind: Kind {
        if case .custom = self { return .custom }
        return .lightweight
    }
}

/// An ordered list of schema versions and the stages between them, as SwiftData's `SchemaMigrationPlan`.
public protocol SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { get }
    static var stages: [MigrationStage] { get }
}

extension SchemaMigrationPlan {
    public static var currentSchema: any VersionedSchema.Type { schemas[schemas.count - 1] }

    /// The plan's schema of `version`; nil for a version the plan does not know.
    public static func schema(for version: SchemaVersion) -> (any VersionedSchema.Type)? {
        schemas.first { $0.versionIdentifier == version }
    }

    public static var versions: [SchemaVersion] { schemas.map { $0.versionIdentifier } }
}
