import TripKit

/// A parser of a graph's text: one object's members at a time.
protocol GraphParsing {
    mutating func next() throws -> GraphParsedItem?
    /// The next item for the index's pass: an object `check`ed as it is parsed, or what `next()` gives.
    mutating func nextIndexed(_ check: inout ObjectGraphCheck) throws -> GraphIndexItem?
    /// The next item for a pass giving only the objects of the entities `only` marks: another's object
    /// may be `.checked` (to be counted; its members parsed and not made), or what `next()` gives.
    mutating func nextSkipping(_ only: [Bool]) throws -> GraphIndexItem?
    /// The next item for a pass giving objects: an object of an entity `taking` takes decoded by
    /// `decoder` as it is parsed (`.decoded`), where the parser can and `decoder` takes it as it is,
    /// else what `nextSkipping(skipping)` gives (`next()` when nil).
    mutating func nextDecoded(_ decoder: inout ObjectGraphDecoder, skipping: [Bool]?, taking: (Int) -> Bool) throws -> GraphIndexItem?
}

extension GraphParsing {
    mutating func nextIndexed(_ check: inout ObjectGraphCheck) throws -> GraphIndexItem? { try next().map(GraphIndexItem.parsed) }
    mutating func nextSkipping(_ only: [Bool]) throws -> GraphIndexItem? { try next().map(GraphIndexItem.parsed) }
    mutating func nextDecoded(_ decoder: inout ObjectGraphDecoder, skipping: [Bool]?, taking: (Int) -> Bool) throws -> GraphIndexItem? {
        try skipping.map { try nextSkipping($0) } ?? next().map(GraphIndexItem.parsed)
    }
}

/// A graph reader that can read its input again with the index its first pass made (JSON, JSON
/// Lines, YAML): the second read of a plan's run parses the input once more, not twice, and holds one index.
protocol ReopenableObjectReader: ObjectRecordReader {
    func reopened() throws -> Self
    /// This reader giving only the objects of the entities `entities` marks (the others counted and
    /// left out, their rejections too), until `reopened`: a plan's first pass
    /// (`ObjectMigration.firstPassEntities`), its objects decoded as always.
    func restricted(to entities: [Bool]) -> Self
}

/// One object's members as a parser of a graph's text gives them, before the model checks them.
enum GraphParsedItem {
    case object(entity: Int, fields: [GraphField], origin: RecordOrigin)
    case rejected(SetAsideRecord)
}

/// The passes of a graph reader over its input, so that objects come entity by entity in the
/// model's order (as `ObjectRecordReader` promises and the writers require) whatever order the
/// input has them in, in bounded memory.
///
/// The first pass fills the `ObjectGraphIndex` and notes the entities' order. When the input has
/// them in the model's order (tripconv's own outputs), one more pass gives every object. Else there
/// is one pass per entity present, in the model's order, each giving only that entity's objects
/// (and rejections): the input is read once more per entity, rather than held. Every pass counts
/// every object, so an object's number (its key, for an entity with a unique attribute) is its
/// place in the input whichever pass gives it.
struct ObjectGraphPasses<Parser: GraphParsing> {
    private let open: () throws -> Parser
    private var parser: Parser
    private var decoder: ObjectGraphDecoder
    private let index: ObjectGraphIndex
    /// The entities of the passes still to come after this one; nil for a single pass of all.
    private var remaining: [Int]?
    private var current: Int?
    private var isFirstPass = true
    /// The passes after the index's, as the index's pass found them (for `restarted`).
    private let plan: (current: Int?, remaining: [Int]?)
    /// The entities whose objects are given (nil: all), until `restarted`.
    private var only: [Bool]?

    /// The passes over what `open` parses, the index's entries kept in `keys` (in memory when nil), the
    /// references removed counted in `removals` (its own when nil); a second object with the unique
    /// value of an entity `repeatsUnique` marks is given, not refused.
    init(model: ObjectModel, keys: ObjectKeyTable? = nil, removals: ObjectReferenceRemovals? = nil, repeatsUnique: [Bool]? = nil,
         open: @escaping () throws -> Parser) throws {
        self.open = open
        var first = try open()
        var index = ObjectGraphIndex(model, keys: keys, removals: removals)
        if let repeatsUnique, repeatsUnique.count == model.entities.count { index.repeatsUnique = repeatsUnique }
        var checker = ObjectGraphDecoder(index, resolvesReferences: false)
        var check = ObjectGraphCheck(index)
        var present = Set<Int>()
        var seen = [Bool](repeating: false, count: model.entities.count)
        var previous = -1
        var inOrder = true
        while let item = try first.nextIndexed(&check) {
            let entity: Int
            switch item {
            case .checked(let object):
                entity = object.entity
                try index.note(entity: entity, identity: object.identity, isValid: object.isValid || !index.referred[entity])
            case .parsed(.rejected), .decoded:
                continue
            case .parsed(.object(let e, let fields, let origin)):
                entity = e
                // Only an object others may refer to is checked: the index keeps only those.
                var isValid = !index.referred[entity]
                if isValid {
                    checker.skip(entity)
                } else if case .object = try checker.decode(entity: entity, fields: fields, origin: origin) {
                    isValid = true
                }
                try index.note(entity: entity, fields: fields, isValid: isValid)
            }
            if entity >= seen.count || !seen[entity] {
                present.insert(entity)
                if entity < seen.count { seen[entity] = true }
            }
            if entity < previous { inOrder = false }
            previous = entity
        }
        self.index = index
        decoder = ObjectGraphDecoder(index)
        parser = try open()
        if !inOrder {
            var passes = present.sorted()
            current = passes.removeFirst()
            remaining = passes
        }
        plan = (current, remaining)
    }

    /// These passes from the start of the input again, with the index the first pass made: for a
    /// second read of the same input (a plan's run reads it twice), which then parses it once, not twice.
    func restarted() throws -> ObjectGraphPasses {
        var again = self
        again.parser = try open()
        again.decoder = ObjectGraphDecoder(index)
        (again.current, again.remaining) = plan
        again.isFirstPass = true
        again.only = nil
        return again
    }

    /// These passes giving only the objects of the entities `entities` marks: an object of another is
    /// counted (its key is its place) and not decoded; a pass of an entity not marked is not made.
    func restricted(to entities: [Bool]) -> ObjectGraphPasses {
        var out = self
        out.only = entities
        if var passes = remaining {
            if let current { passes.insert(current, at: 0) }
            passes.removeAll { $0 >= entities.count || !entities[$0] }
            out.current = passes.isEmpty ? -1 : passes.removeFirst()
            out.remaining = passes
        }
        return out
    }

    mutating func next() throws -> ObjectReadItem? {
        while true {
            let passEntity = current, only = self.only
            let got = try parser.nextDecoded(&decoder, skipping: only) { e in
                (passEntity == nil || e == passEntity) && (only.map { e < $0.count && $0[e] } ?? true)
            }
            guard let got else {
                guard var passes = remaining, !passes.isEmpty else { return nil }
                current = passes.removeFirst()
                remaining = passes
                isFirstPass = false
                parser = try open()
                decoder = ObjectGraphDecoder(index)
                continue
            }
            let item: GraphParsedItem
            switch got {
            case .parsed(let parsed): item = parsed
            case .decoded(let decoded): return decoded
            case .checked(let object):
                decoder.skip(object.entity)
                continue
            }
            switch item {
            case .rejected(let r):
                if isFirstPass && only == nil { return .rejected(r) }
            case .object(let entity, let fields, let origin):
                if let current, entity != current {
                    decoder.skip(entity)
                    continue
                }
                if let only, entity >= only.count || !only[entity] {
                    decoder.skip(entity)
                    continue
                }
                return try decoder.decode(entity: entity, fields: fields, origin: origin)
            }
        }
    }
}
