import TripKit

/// Core Data's version hash of each entity of a model (`NSEntityDescription.versionHash`, what a
/// store's `Z_METADATA` keeps as `NSStoreModelVersionHashes`), computed as Core Data computes it, so
/// that a store's hashes tell which version of an Xcode model wrote it (docs/DESIGN-NOTES.md,
/// "Telling a store's version by its entity version hashes"). Each is SHA-256, integers little-endian:
///
/// - a property: its name (UTF-8), its flags as 2 bytes (optional 1, transient 2, read-only 4), its
///   `versionHashModifier` when it has one;
/// - an attribute: that property digest, its `NSAttributeType` code as 4 bytes, a byte 1 when it
///   allows external binary storage, another when it preserves its value in history on deletion;
/// - a relationship: that property digest, the destination entity's name, the inverse's name when it
///   has one (not for a relationship that is its own inverse), its maximum and minimum counts as 4
///   bytes each (a to-many's maximum 0 when unbounded), 2 bytes `01 00` when ordered;
/// - an entity: its name, its abstract flag as a byte, its superentity's hash (32 bytes) when it has
///   one, the hashes of its stored (not transient) attributes and relationships, inherited ones
///   too, in the order of their names, its `versionHashModifier`, then each uniqueness constraint as
///   its names joined by "." (in sorted order).
///
/// ```swift
/// let hashes = EntityVersionHash.hashes(EntityVersionHash.entities(of: model))   // ["Item": 32 bytes]
/// ```
public enum EntityVersionHash {
    /// What Core Data hashes of a property.
    public struct Property: Sendable, Hashable {
        /// An attribute's or a relationship's own part of the hash.
        public enum Kind: Sendable, Hashable {
            /// `NSAttributeType`'s code, `allowsExternalBinaryDataStorage`, `preservesValueInHistoryOnDeletion`.
            case attribute(type: Int, externalStorage: Bool, preservesOnDeletion: Bool)
            case relationship(destination: String, inverse: String?, maxCount: Int, minCount: Int, ordered: Bool)
        }
        public var name: String
        public var isOptional: Bool
        public var isTransient: Bool
        public var versionHashModifier: String?
        public var kind: Kind
    }

    /// What Core Data hashes of an entity: its own properties (the inherited ones come from its superentity).
    public struct Entity: Sendable, Hashable {
        public var name: String
        public var superentity: String?
        public var isAbstract: Bool
        public var versionHashModifier: String?
        public var properties: [Property]
        public var uniquenessConstraints: [[String]]
    }

    /// The hash inputs of `model` as Core Data builds its description: no version hash modifiers, a
    /// to-one's maximum count 1, a to-many's 0 (unbounded), minimum counts 0, no value kept in history.
    public static func entities(of model: ObjectModel) -> [Entity] {
        model.entities.map { e in
            Entity(name: e.name, superentity: e.superentity, isAbstract: e.isAbstract, versionHashModifier: nil,
                   properties: e.attributes.map { a in
                       Property(name: a.name, isOptional: a.isOptional, isTransient: a.isTransient, versionHashModifier: nil,
                                kind: .attribute(type: a.kind.rawValue, externalStorage: a.allowsExternalStorage, preservesOnDeletion: false))
                   } + e.relationships.map { r in
                       Property(name: r.name, isOptional: r.isOptional, isTransient: false, versionHashModifier: nil,
                                kind: .relationship(destination: r.destination, inverse: r.inverse, maxCount: r.isToMany ? 0 : 1, minCount: 0,
                                                    ordered: r.isOrdered))
                   },
                   uniquenessConstraints: e.uniquenessConstraints)
        }
    }

    /// Each entity's hash, by name. An entity whose superentity is missing or in a cycle is left out.
    public static func hashes(_ entities: [Entity]) -> [String: [UInt8]] {
        let byName = Dictionary(entities.map { ($0.name, $0) }) { a, _ in a }
        var out: [String: [UInt8]] = [:]
        func hash(_ e: Entity, depth: Int) -> [UInt8]? {
            if let done = out[e.name] { return done }
            guard depth <= entities.count else { return nil }
            var parent: [UInt8]?
            if let s = e.superentity {
                guard let p = byName[s], let h = hash(p, depth: depth + 1) else { return nil }
                parent = h
            }
            var bytes = Array(e.name.utf8) + [e.isAbstract ? 1 : 0] + (parent ?? [])
            for (owner, p) in allProperties(e, byName).sorted(by: { $0.1.name.utf16.lexicographicallyPrecedes($1.1.name.utf16) })
            where !p.isTransient {
                bytes += propertyHash(p, owner: owner, byName)
            }
            bytes += Array((e.versionHashModifier ?? "").utf8)
            for c in e.uniquenessConstraints.map({ $0.joined(separator: ".") }).sorted(by: { $0.utf16.lexicographicallyPrecedes($1.utf16) }) {
                bytes += Array(c.utf8)
            }
            let digest = SHA256.digest(bytes)
            out[e.name] = digest
            return digest
        }
        for e in entities { _ = hash(e, depth: 0) }
        return out
    }

    /// An entity's properties with the entity declaring each, its superentities' too (a redeclared name once, the nearest).
    private static func allProperties(_ e: Entity, _ byName: [String: Entity]) -> [(String, Property)] {
        var out: [(String, Property)] = e.properties.map { (e.name, $0) }
        var current = e.superentity.flatMap { byName[$0] }
        var steps = 0
        while let s = current, steps < byName.count {
            for p in s.properties where !out.contains(where: { $0.1.name == p.name }) { out.append((s.name, p)) }
            current = s.superentity.flatMap { byName[$0] }
            steps += 1
        }
        return out
    }

    /// A property's hash; `owner` declares it.
    static func propertyHash(_ p: Property, owner: String, _ byName: [String: Entity]) -> [UInt8] {
        let flags = (p.isOptional ? 1 : 0) | (p.isTransient ? 2 : 0)
        var h = SHA256()
        h.update(Array(p.name.utf8) + le(flags, 2) + Array((p.versionHashModifier ?? "").utf8))
        var bytes = h.finish()
        switch p.kind {
        case .attribute(let type, let external, let preserves):
            bytes += le(type, 4)
            if external { bytes.append(1) }
            if preserves { bytes.append(1) }
        case .relationship(let destination, let inverse, let maxCount, let minCount, let ordered):
            bytes += Array(destination.utf8)
            // The inverse counts when the destination has it, and it is not this relationship itself.
            if let inverse, let found = relationship(inverse, of: destination, byName), !(found.owner == owner && inverse == p.name) {
                bytes += Array(found.property.name.utf8)
            }
            bytes += le(maxCount, 4) + le(minCount, 4)
            if ordered { bytes += [1, 0] }
        }
        return SHA256.digest(bytes)
    }

    /// The relationship named `name` of entity `entity` (inherited too), and the entity declaring it.
    private static func relationship(_ name: String, of entity: String, _ byName: [String: Entity]) -> (owner: String, property: Property)? {
        guard let e = byName[entity] else { return nil }
        return allProperties(e, byName).first { owner, p in
            if p.name == name, case .relationship = p.kind { return true }
            return false
        }.map { (owner: $0.0, property: $0.1) }
    }

    /// `value` as `count` bytes, least significant first.
    private static func le(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
