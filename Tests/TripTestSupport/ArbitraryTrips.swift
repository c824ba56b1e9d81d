import TripKit

/// The text a generator puts in strings for one format's tests: the pieces hard for that format (its
/// separators, quotes and escapes, words it would read as another type), and which scalars it can
/// carry at all (XML 1.0 cannot carry most control characters).
public struct TripText: Sendable {
    public let pieces: [String]
    /// How many strings in a hundred are one piece exactly (a YAML scalar that is all `no` is the case
    /// to test; one that merely holds it is not).
    public let wholePiecePercent: Int
    public let allows: @Sendable (Unicode.Scalar) -> Bool

    public init(pieces: [String], wholePiecePercent: Int = 10, allows: @escaping @Sendable (Unicode.Scalar) -> Bool = { _ in true }) {
        self.pieces = pieces
        self.wholePiecePercent = wholePiecePercent
        self.allows = allows
    }
}

/// Arbitrary trips of a schema for property tests, from a seed: strings of any Unicode mixed with the
/// format's hard pieces, control characters, spaces at the ends; 0 to many items; with and without an
/// accommodation; dates with and without milliseconds.
///
/// ```swift
/// var generator = ArbitraryTrips(seed: 7, text: .init(pieces: [",", "\""]))
/// let trips = generator.trips(40, in: TripSchemaV3.self)
/// ```
public struct ArbitraryTrips {
    /// Years 1900 to 2100, in seconds since 1970.
    public static let modernDates: ClosedRange<Int64> = -2_208_988_800...4_102_444_799
    /// Years 1 to 9999, every year ISO 8601 writes in four digits.
    public static let allDates: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    public var random: SplitMix64
    public let text: TripText
    /// The schema `trip()` makes trips of.
    public let schema: any VersionedSchema.Type
    public let dates: ClosedRange<Int64>
    /// Whether a to-one object whose attributes are all at their defaults is kept as is, for tests
    /// that check it reads back as none (`readBack`); otherwise it is made none at once.
    public let keepsDefaultToOne: Bool
    /// Whether trip names are unique within this generator (a store keeps one trip per name).
    public let uniqueNames: Bool
    private var names: Set<String> = []

    public init(seed: UInt64, text: TripText, schema: any VersionedSchema.Type = TripSchemaV3.self,
                dates: ClosedRange<Int64> = ArbitraryTrips.modernDates, keepsDefaultToOne: Bool = false, uniqueNames: Bool = false) {
        random = SplitMix64(seed: seed)
        self.text = text
        self.schema = schema
        self.dates = dates
        self.keepsDefaultToOne = keepsDefaultToOne
        self.uniqueNames = uniqueNames
    }

    /// A string of up to `maxPieces` pieces, now and then with spaces at either end.
    public mutating func string(maxPieces: Int = 6) -> String {
        if random.chance(text.wholePiecePercent) { return random.pick(text.pieces) }
        var s = random.chance(10) ? " " : ""
        for _ in 0..<random.int(0...maxPieces) {
            switch random.below(8) {
            case 0, 1, 2: s += random.pick(text.pieces)
            case 3, 4: append(UInt32(random.int(0x20...0x7E)), to: &s)
            case 5: append(UInt32(random.int(0...0x1F)), to: &s)
            case 6: append(UInt32(random.int(0x80...0xFFFF)), to: &s)
            default: append(UInt32(random.int(0x10000...0x10FFFF)), to: &s)
            }
        }
        if random.chance(10) { s += "  " }
        return s
    }

    /// A scalar, or U+FFFD where there is none (a surrogate) or the format cannot carry it.
    private func append(_ value: UInt32, to s: inout String) {
        let scalar = Unicode.Scalar(value).flatMap { text.allows($0) ? $0 : nil } ?? "\u{FFFD}"
        s.unicodeScalars.append(scalar)
    }

    /// A date in `dates`, with milliseconds half the time.
    public mutating func timestamp() -> Timestamp {
        let seconds = dates.lowerBound + Int64(random.next() % UInt64(dates.upperBound - dates.lowerBound + 1))
        return Timestamp(milliseconds: seconds * 1000 + (random.bool() ? Int64(random.int(1...999)) : 0))
    }

    /// An object of an entity of the schema, in declaration order (a transient attribute at its default).
    public mutating func object(_ entity: Entity, in schema: any VersionedSchema.Type) -> ModelObject {
        var attributes: [Value] = []
        for a in entity.attributes {
            if a.isTransient { attributes.append(a.defaultValue ?? .null); continue }
            switch a.type {
            case .string: attributes.append(.string(string()))
            case .date: attributes.append(.date(timestamp()))
            case .bool: attributes.append(.bool(random.bool()))
            case .int: attributes.append(.int(Int64(random.int(-1_000_000...1_000_000))))
            }
        }
        var relationships: [Related] = []
        for r in entity.relationships {
            let destination = schema.entity(r.destination)!
            if r.isToMany {
                let count = random.pick([0, 0, 1, 2, 3, 5, 9])
                relationships.append(.toMany((0..<count).map { _ in object(destination, in: schema) }))
            } else if random.chance(60) {
                let o = object(destination, in: schema)
                relationships.append(.toOne(!keepsDefaultToOne && ArbitraryTrips.isDefault(o, destination) ? nil : o))
            } else {
                relationships.append(.toOne(nil))
            }
        }
        return ModelObject(attributes: attributes, relationships: relationships)
    }

    /// A trip of `schema` (the generator's when nil); its name unique where `uniqueNames` says so.
    public mutating func trip(schema: (any VersionedSchema.Type)? = nil) -> ModelObject {
        let schema = schema ?? self.schema
        var trip = object(schema.rootEntity, in: schema)
        if uniqueNames, case .string(var name) = trip.attributes[0] {
            while names.contains(name) { name += "\u{1F9F3}" }
            names.insert(name)
            trip.attributes[0] = .string(name)
        }
        return trip
    }

    public mutating func trips(_ count: Int, in schema: (any VersionedSchema.Type)? = nil) -> [ModelObject] {
        (0..<count).map { _ in trip(schema: schema) }
    }

    /// What a reader gives back for a trip of `schema`: a to-one object of nothing but defaults is none.
    public static func readBack(_ trip: ModelObject, schema: any VersionedSchema.Type = TripSchemaV3.self) -> ModelObject {
        var t = trip
        for (i, r) in schema.rootEntity.relationships.enumerated() where !r.isToMany {
            if case .toOne(let o?) = t.relationships[i], let d = schema.entity(r.destination), isDefault(o, d) {
                t.relationships[i] = .toOne(nil)
            }
        }
        return t
    }

    /// `readBack` for this generator's schema.
    public func expected(_ trip: ModelObject) -> ModelObject { ArbitraryTrips.readBack(trip, schema: schema) }

    private static func isDefault(_ object: ModelObject, _ entity: Entity) -> Bool {
        zip(entity.attributes, object.attributes).allSatisfy { $0.defaultValue == $1 }
    }
}
