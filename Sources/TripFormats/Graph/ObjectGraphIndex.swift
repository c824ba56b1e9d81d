import TripKit

/// What the first pass over a graph's text learns, to resolve references in the second: per
/// family (an entity with its sub-entities, sharing keys) of an entity some relationship leads to,
/// the key of each object, found by its unique value's text or by its `@key`. One entry per object
/// of those families (a key, an entity, and the unique value's text), held for the whole read in
/// `keys`, an `ObjectKeyTable`: in memory under the run's budget, in a temporary database past it.
/// Its spaces: a family's root for its texts and for its `@key`s (to the entity), the number of
/// entities plus the root for the `@key`s given twice.
struct ObjectGraphIndex {
    let model: ObjectModel
    let slots: [Int?]
    let referred: [Bool]
    /// Per entity: whether a second object with its unique value is given, not refused (the run
    /// deduplicates on that value: `ObjectMigration.repeatsUnique`); references find the first.
    var repeatsUnique: [Bool]
    let roots: [Int]
    let attributes: [[AttributeDescription]]
    /// Shared by the copies of the index (the passes' decoders): written by the first pass alone.
    let keys: ObjectKeyTable
    /// The references the passes' decoders removed, shared by the copies (the run reads it at the end).
    let removals: ObjectReferenceRemovals
    private var ordinals: [Int]
    /// Per entity, how many objects of it the first pass noted (`ordinals` counts a family together).
    private(set) var noted: [Int]

    /// The index of `model`'s objects, its entries kept in `keys` (in memory without bound when nil).
    init(_ model: ObjectModel, keys: ObjectKeyTable? = nil, removals: ObjectReferenceRemovals? = nil) {
        self.model = model
        self.keys = keys ?? ObjectKeyTable("the reader's index of keys", budget: nil)
        self.removals = removals ?? ObjectReferenceRemovals()
        slots = model.entities.indices.map(model.referenceAttribute)
        referred = model.referredEntities
        repeatsUnique = Array(repeating: false, count: model.entities.count)
        roots = model.entities.indices.map { model.lineage(of: $0)[0] }
        attributes = model.entities.indices.map(model.allAttributes)
        ordinals = Array(repeating: 0, count: model.entities.count)
        noted = ordinals
    }

    /// The next key of an object of `entity`'s family in order: 1, 2, …
    mutating func nextOrdinal(_ entity: Int) -> Int64 {
        ordinals[roots[entity]] += 1
        return Int64(ordinals[roots[entity]])
    }

    /// The key `nextOrdinal(entity)` will give, without taking it.
    func peekOrdinal(_ entity: Int) -> Int64 { Int64(ordinals[roots[entity]] + 1) }

    /// Numbers the objects from 1 again, for the second pass.
    mutating func restartNumbering() { ordinals = Array(repeating: 0, count: ordinals.count) }

    /// Notes an object of the first pass; one the second pass will refuse for its own members
    /// (`isValid` false) is counted but not kept, so that a reference to it is refused too.
    mutating func note(entity: Int, fields: [GraphField], isValid: Bool = true) throws {
        try note(entity: entity, identity: identity(entity: entity, fields: fields, isValid: isValid), isValid: isValid)
    }

    /// The scalar an object of the first pass with these members is noted by (`note(entity:identity:isValid:)`).
    func identity(entity: Int, fields: [GraphField], isValid: Bool) -> GraphScalar? {
        let name = slots[entity].map { attributes[entity][$0].name } ?? "@key"
        guard referred[entity], isValid, let field = fields.first(where: { $0.name == name }), case .scalar(let s) = field.value else {
            return nil
        }
        return s
    }

    /// Notes an object of the first pass by `identity`, the scalar of its unique attribute (else of its `@key`).
    mutating func note(entity: Int, identity: GraphScalar?, isValid: Bool) throws {
        let ordinal = nextOrdinal(entity)
        noted[entity] += 1
        guard referred[entity], isValid, let s = identity else { return }
        let root = roots[entity]
        if let slot = slots[entity] {
            let attribute = attributes[entity][slot]
            guard let text = Self.canonical(s, attribute.kind) else { return }
            try keys.insert(root, text, ObjectReference(entity: entity, key: ordinal))
        } else {
            guard let key = ObjectGraphDecoder.integer(s) else { return }
            if try keys.update(root, key, Int64(entity)) { try keys.update(roots.count + root, key, 0) }
        }
    }

    /// The object of `root`'s family whose unique value's text is `text`.
    func reference(_ root: Int, text: String) throws -> ObjectReference? { try keys.reference(root, text) }

    /// The entity of the object of `root`'s family whose `@key` is `key`.
    func entity(_ root: Int, key: Int64) throws -> Int? { try keys.value(root, key).map { Int($0) } }

    /// Whether two objects of `root`'s family have `@key` `key`.
    func isRepeated(_ root: Int, key: Int64) throws -> Bool { try keys.value(roots.count + root, key) != nil }

    /// The text a unique value is found by: its value's one text, so that `1b9f…` finds `1B9F…`.
    static func canonical(_ s: GraphScalar, _ kind: AttributeKind) -> String? {
        ObjectGraphDecoder.value(s, kind).flatMap(ObjectValueText.text)
    }
}
