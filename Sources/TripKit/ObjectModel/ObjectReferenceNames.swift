extension ObjectModel {
    /// The position, in the `attributes` of an `ObjectRecord` of the entity at `index`, of the value
    /// its objects are referred to by in exports: the unique attribute of the entity's root (root
    /// first, so the same position in every entity of the family); nil when they are referred to by
    /// `@key` (the root has no single unique attribute).
    public func referenceAttribute(of index: Int) -> Int? {
        let root = lineage(of: index)[0]
        guard let unique = entities[root].uniqueAttribute else { return nil }
        return entities[root].attributes.firstIndex { $0.name == unique.name }
    }

    /// Per entity, whether some relationship leads to it or to one of its superentities: the
    /// entities whose objects may be referred to.
    public var referredEntities: [Bool] {
        let destinations = Set(entities.flatMap { $0.relationships.map(\.destination) }.compactMap(entityIndex))
        return entities.indices.map { lineage(of: $0).contains(where: destinations.contains) }
    }
}

/// The values objects are referred to by, for a writer that meets a reference before (or without)
/// the object it names: per entity referred to by its unique attribute (`ObjectModel.referenceAttribute`),
/// each object's key and that attribute's value.
///
/// It holds one entry per object of such an entity that some relationship leads to (a key and a
/// value in two arrays kept in key order: 32 bytes, and the value's text past 15 bytes), for as
/// long as the writer writes;
/// the objects of other entities cost nothing. A caller fills it in a first pass over the objects
/// (`collect`), or from a source that can look the values up (a store's `Z_PK` and column).
///
/// ```swift
/// var first = try openReader()
/// let names = try ObjectReferenceNames.collect(&first)
/// var writer = try JSONObjectWriter(.file("out.jsonl"), format: .jsonl, names: names)
/// ```
public struct ObjectReferenceNames: Sendable {
    /// Per entity: the position of the value its objects are referred to by, nil for `@key`.
    public let slots: [Int?]
    private let kept: [Bool]
    /// Per entity, keys in ascending order and their values at the same positions.
    private var keys: [[Int64]]
    private var values: [[ObjectValue]]

    /// An empty table for `model`'s entities.
    public init(model: ObjectModel) {
        let slots = model.entities.indices.map(model.referenceAttribute)
        let referred = model.referredEntities
        self.slots = slots
        kept = model.entities.indices.map { referred[$0] && slots[$0] != nil }
        keys = Array(repeating: [], count: model.entities.count)
        values = Array(repeating: [], count: model.entities.count)
    }

    /// Keeps `object`'s value if objects of its entity are referred to by value.
    public mutating func note(_ object: ObjectRecord) {
        guard object.entity < kept.count, kept[object.entity], let slot = slots[object.entity],
              slot < object.attributes.count else { return }
        store(object.attributes[slot], entity: object.entity, key: object.key)
    }

    /// Objects come in key order: appended; any other order is inserted in place.
    private mutating func store(_ value: ObjectValue, entity e: Int, key: Int64) {
        if let last = keys[e].last, key <= last {
            let i = position(of: key, in: keys[e])
            if i < keys[e].count, keys[e][i] == key { values[e][i] = value; return }
            keys[e].insert(key, at: i); values[e].insert(value, at: i)
        } else {
            keys[e].append(key); values[e].append(value)
        }
    }

    /// The first position whose key is not less than `key`.
    private func position(of key: Int64, in list: [Int64]) -> Int {
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Keeps the value of the object `reference` names.
    public mutating func note(_ reference: ObjectReference, value: ObjectValue) {
        guard reference.entity < kept.count, kept[reference.entity] else { return }
        store(value, entity: reference.entity, key: reference.key)
    }

    /// The value the object `reference` names is referred to by; nil when it is not known (or the
    /// entity is referred to by `@key`).
    public func value(of reference: ObjectReference) -> ObjectValue? {
        guard reference.entity >= 0, reference.entity < keys.count else { return nil }
        let list = keys[reference.entity]
        let i = position(of: reference.key, in: list)
        return i < list.count && list[i] == reference.key ? values[reference.entity][i] : nil
    }

    /// How many values are kept.
    public var count: Int { keys.reduce(0) { $0 + $1.count } }

    /// Reads every object of `reader` (a first pass) and keeps the values references need;
    /// records the reader rejects are skipped (the second pass sets them aside).
    public static func collect<R: ObjectRecordReader>(_ reader: inout R) throws -> ObjectReferenceNames {
        var names = ObjectReferenceNames(model: reader.model)
        while let item = try reader.next() {
            if case .object(let o) = item { names.note(o) }
        }
        return names
    }
}
