/// What an input shows of the model version its objects were written at, as a probe of its format
/// found it (TripFormats' `ObjectVersionDetection`): a marker naming the version (a store's
/// `NSStoreModelVersionIdentifiers`, the model tripconv wrote into its own store), else per entity the
/// names of the properties its first objects (or a table's header) carry, with what their values can
/// be where the format tells it. `ModelVersionDetection` weighs it against a plan's versions.
///
/// ```swift
/// var seen = ModelVersionEvidence()
/// seen.note("Trip", "start_date", kinds: [.string, .date], seen: "strings")
/// let verdict = try ModelVersionDetection.detect(seen, plan: plan, input: "trips.json")
/// ```
public struct ModelVersionEvidence: Sendable, Hashable {
    /// How a property's values came: scalars, lists (a to-many's references), or nested objects.
    public enum Shape: Sendable, Hashable { case scalar, list, nested }

    /// One property of an entity, as its values were seen.
    public struct Property: Sendable, Hashable {
        public var name: String
        /// The attribute kinds every non-null value seen could be read as; nil when the format tells
        /// nothing (a table header, XML's text before a value was seen, only nulls).
        public var kinds: Set<AttributeKind>?
        /// What the values were, in the format's words (`numbers`, `strings`, `an INTEGER column`).
        public var seen: [String]
        public var shapes: Set<Shape>
    }

    /// One entity (a JSON section, an `@entity`, an XML element, a table's file or a store's table).
    public struct Entity: Sendable, Hashable {
        public var name: String
        public var properties: [Property]
        /// The objects of it looked at (0 for a header or a store's table).
        public var objects: Int
    }

    /// The version identifiers a marker names (empty ones dropped), and where the marker is.
    public var markers: [String] = []
    public var markerPlace: String?
    /// The entities seen, in the order first seen.
    public var entities: [Entity] = []
    /// Names were seen in another case than the model's (a Core Data store's columns read without its
    /// model: `ZSTARTDATE` is `startdate`): they match whatever their case.
    public var ignoresCase = false
    /// Per entity, the uniqueness constraints the input's own model declares, when it has one (a
    /// store's model cache): they tell apart versions of the same names (SampleTrips' 2.0.0 makes
    /// `Trip.name` unique). Nil when the input does not tell.
    public var uniqueness: [String: [[String]]]?
    /// Each entity's version hash as the input keeps it (a Core Data store's `NSStoreModelVersionHashes`),
    /// for a plan that has its versions' (`ModelPlan.entityVersionHashes`); nil when the input keeps none.
    public var versionHashes: [String: [UInt8]]?
    /// Where the hashes are (`Z_METADATA NSStoreModelVersionHashes`).
    public var versionHashesPlace: String?
    /// How much of the input was looked at, in words (`the first 100 objects of each entity`).
    public var looked: String?

    /// Evidence with nothing seen yet.
    public init() {}

    /// The objects looked at, over every entity.
    public var objectsLooked: Int { entities.reduce(0) { $0 + $1.objects } }

    /// Whether anything tells the version: a marker or a property.
    public var isEmpty: Bool { markers.isEmpty && entities.allSatisfy { $0.properties.isEmpty } }

    /// Notes that `entity` exists in the input, and counts an object of it when `object`.
    public mutating func noteEntity(_ entity: String, object: Bool = false) {
        let e = entityPosition(entity)
        if object { entities[e].objects += 1 }
    }

    /// Notes a property of `entity` and what one of its values was: `kinds` nil tells nothing of kinds,
    /// else the kinds this value could be read as (they narrow what earlier values allowed).
    public mutating func note(_ entity: String, _ name: String, kinds: Set<AttributeKind>? = nil, seen: String? = nil, shape: Shape = .scalar) {
        let e = entityPosition(entity)
        guard let p = entities[e].properties.firstIndex(where: { $0.name == name }) else {
            entities[e].properties.append(Property(name: name, kinds: kinds, seen: seen.map { [$0] } ?? [], shapes: [shape]))
            return
        }
        if let kinds { entities[e].properties[p].kinds = entities[e].properties[p].kinds.map { $0.intersection(kinds) } ?? kinds }
        if let seen, !entities[e].properties[p].seen.contains(seen) { entities[e].properties[p].seen.append(seen) }
        entities[e].properties[p].shapes.insert(shape)
    }

    private mutating func entityPosition(_ name: String) -> Int {
        if let e = entities.firstIndex(where: { $0.name == name }) { return e }
        entities.append(Entity(name: name, properties: [], objects: 0))
        return entities.count - 1
    }
}

/// The version `ModelVersionDetection` tells an input is at, and why.
public struct ModelVersionVerdict: Sendable, Hashable {
    /// What decided it, strongest first.
    public enum Basis: String, Sendable, Hashable {
        /// A marker in the input names the version.
        case marker
        /// The input's entity version hashes are the version's (a Core Data store's
        /// `NSStoreModelVersionHashes`, those of a version of an `.xcdatamodeld`).
        case versionHashes = "version hashes"
        /// The names (and kinds) seen are exactly one version's: every attribute it stores was seen.
        case exactNames = "exact names"
        /// The names seen fit the version, some of its optional attributes not seen.
        case names
        /// No version declares every name seen as seen: the one declaring the most.
        case bestMatch = "best match"
        /// No object to tell by: the current version.
        case nothingSeen = "nothing seen"
    }

    /// The version identifier (`"2.0.0"`).
    public var version: String
    public var basis: Basis
    /// Sentences saying what told it (`Trip has start_date, end_date, which only 1.0.0 and 2.0.0 declare`).
    public var evidence: [String]
    /// The other versions the data cannot tell from `version`: they declare the same names and kinds.
    public var alike: [String]
}
