/// One attribute value of an object of any model, with the kinds Core Data and SwiftData store.
public enum ObjectValue: Sendable, Hashable {
    case null
    case string(String)
    /// Int16, Int32, Int64 (and Swift's `Int`).
    case int(Int64)
    /// Double and Float.
    case double(Double)
    /// A Decimal, kept as the text of its digits so that no digit is lost.
    case decimal(String)
    case bool(Bool)
    /// A Date as Core Data stores it: seconds since 2001-01-01T00:00:00Z, to the Double's precision
    /// (SwiftData's `Date.now` has sub-microsecond digits that tripconv's millisecond `Timestamp` would lose).
    case date(Double)
    /// Binary data, a transformable's or a Codable value's bytes.
    case data([UInt8])
    /// A UUID's 16 bytes.
    case uuid(UUIDBytes)
    case url(String)

    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

/// The 16 bytes of a UUID, written as Foundation writes `UUID.uuidString`.
public struct UUIDBytes: Sendable, Hashable, CustomStringConvertible {
    public var bytes: [UInt8]

    /// The UUID of `bytes`; nil unless there are 16.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses `1B9FD00D-CB92-46CD-8711-5297025B7822` (either case).
    public init?(string: some StringProtocol) {
        var out: [UInt8] = []
        var high: UInt8?
        for (i, c) in string.utf8.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let v = UUIDBytes.hexValue(c) else { return nil }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        guard string.utf8.count == 36 else { return nil }
        self.init(out)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Upper-case hexadecimal in groups of 8-4-4-4-12, as `UUID.uuidString`.
    public var description: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, b) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(i) { out.append(UInt8(ascii: "-")) }
            out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Which object a relationship points at: its entity (a position in the model's `entities`) and its
/// key, unique within the entity's table (a Core Data store's `Z_PK`; in an export, the number
/// tripconv wrote or read back).
public struct ObjectReference: Sendable, Hashable, Comparable {
    public var entity: Int
    public var key: Int64

    /// The object of key `key` in the entity at `entity`.
    public init(entity: Int, key: Int64) { self.entity = entity; self.key = key }

    public static func < (a: ObjectReference, b: ObjectReference) -> Bool { (a.entity, a.key) < (b.entity, b.key) }

    /// The hash a `Dictionary` or `Set` of references places one by (`hash(into:)` stays as
    /// synthesized, for a reference inside another value): the two words folded into one and mixed
    /// with the table's seed by MurmurHash3's 64-bit finalizer, in place of a SipHash over both.
    /// A plan's run looks references up several times per object (docs/DESIGN-NOTES.md, "Pass 1 in
    /// one look-up, references hashed in one word"). The seed, which differs per table and per
    /// process as Swift's own does, is mixed in before the finalizer, so no input can choose its
    /// collisions without it.
    public func _rawHashValue(seed: Int) -> Int {
        var x = UInt64(bitPattern: key) ^ (UInt64(truncatingIfNeeded: entity) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(bitPattern: Int64(seed))
        x ^= x >> 33; x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33; x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return Int(truncatingIfNeeded: x)
    }
}

/// An object of any model, as a reader gives it: its entity, its key, its attribute values in the
/// order of the entity's attributes (its superentities' first, root first), and for each relationship
/// (in the same order) the objects it points at, in order for an ordered to-many.
///
/// Relationships are references, not nested objects, so a graph of any shape (cycles, many-to-many,
/// objects shared by several owners) streams one object at a time; writers that nest owned objects
/// do so from the references.
public struct ObjectRecord: Sendable, Hashable {
    public var entity: Int
    public var key: Int64
    public var attributes: [ObjectValue]
    public var relationships: ObjectRelationships
    public var origin: RecordOrigin

    /// An object of the entity at `entity` with key `key`.
    public init(entity: Int, key: Int64, attributes: [ObjectValue], relationships: ObjectRelationships, origin: RecordOrigin) {
        self.entity = entity; self.key = key; self.attributes = attributes
        self.relationships = relationships; self.origin = origin
    }

    /// A reference to this object.
    public var reference: ObjectReference { ObjectReference(entity: entity, key: key) }
}

extension ObjectModel {
    /// The attributes of the entity at `index` with those it inherits, root first: the order of an
    /// `ObjectRecord`'s `attributes`.
    public func allAttributes(of index: Int) -> [AttributeDescription] {
        lineage(of: index).flatMap { entities[$0].attributes }
    }

    /// The relationships of the entity at `index` with those it inherits, root first: the order of an
    /// `ObjectRecord`'s `relationships`.
    public func allRelationships(of index: Int) -> [RelationshipDescription] {
        lineage(of: index).flatMap { entities[$0].relationships }
    }

    /// The entity at `index` and its superentities, root first.
    public func lineage(of index: Int) -> [Int] {
        var chain = [index]
        var current = entities[index]
        while let parent = current.superentity, let p = entityIndex(parent), !chain.contains(p) {
            chain.append(p); current = entities[p]
        }
        return chain.reversed()
    }
}

extension ObjectModel {
    /// A SampleTrips schema version as a general model: the same entities, attributes and
    /// relationships, with Core Data's kinds for tripconv's four (`int` is Int64), and each to-one or
    /// to-many relationship of a trip the inverse-less relationship the schema declares. Every
    /// attribute is required, as its Swift declaration makes it (`var details: String = ""`: not
    /// optional, with a default); the SampleTrips source read by `TripSwiftModel` gives this model.
    public init(schema: any VersionedSchema.Type) {
        let entities = schema.entities.map { e in
            EntityDescription(
                e.name,
                attributes: e.attributes.map { a in
                    AttributeDescription(a.name, AttributeKind(a.type), isOptional: false,
                                         isTransient: a.isTransient, defaultValue: a.defaultValue.map(ObjectValue.init),
                                         renamingIdentifier: a.originalName)
                },
                relationships: e.relationships.map { r in
                    RelationshipDescription(r.name, to: r.destination, toMany: r.isToMany, deleteRule: r.deleteRule,
                                            renamingIdentifier: r.originalName)
                },
                uniquenessConstraints: e.attributes.filter(\.isUnique).map { [$0.name] })
        }
        self.init(entities: entities, versionIdentifiers: [schema.versionIdentifier.description])
    }
}

extension AttributeKind {
    /// The kind of one of SampleTrips' attribute types.
    public init(_ type: AttributeType) {
        switch type {
        case .string: self = .string
        case .date: self = .date
        case .bool: self = .bool
        case .int: self = .int64
        }
    }
}

extension ObjectValue {
    /// The general value of a SampleTrips value.
    public init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .string(let s): self = .string(s)
        case .date(let d): self = .date(Double(d.milliseconds) / 1000 - Double(Timestamp.referenceDateOffset))
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        }
    }
}
