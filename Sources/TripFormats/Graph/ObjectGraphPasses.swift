import Synchronization
import TripKit
import TripThreads

/// A parser of a graph's text: one object's members at a time.
protocol GraphParsing: SendableMetatype {
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
    /// Where this parser's input (not yet read) may be cut in two for an index's pass on two threads:
    /// the input offset of a line's start near its middle; nil where it may not (a document, a
    /// compressed input or a pipe, a small file).
    func indexCut() throws -> Int?
    /// A parser of the same input from `offset` (a line's start) to its end, nil where there is none.
    /// Its lines and records are counted from there: only the index's pass uses it.
    func reopened(at offset: Int) throws -> Self?
    /// Makes this parser (not yet read) stop at the input offset `end`, a line's start.
    mutating func stop(at end: Int)
    /// The input offset of the next line this parser reads.
    var offset: Int { get }
    /// The input's name, for messages.
    var inputName: String { get }
}

extension GraphParsing {
    mutating func nextIndexed(_ check: inout ObjectGraphCheck) throws -> GraphIndexItem? { try next().map(GraphIndexItem.parsed) }
    mutating func nextSkipping(_ only: [Bool]) throws -> GraphIndexItem? { try next().map(GraphIndexItem.parsed) }
    mutating func nextDecoded(_ decoder: inout ObjectGraphDecoder, skipping: [Bool]?, taking: (Int) -> Bool) throws -> GraphIndexItem? {
        try skipping.map { try nextSkipping($0) } ?? next().map(GraphIndexItem.parsed)
    }
    func indexCut() throws -> Int? { nil }
    func reopened(at offset: Int) throws -> Self? { nil }
    mutating func stop(at end: Int) {}
    var offset: Int { 0 }
    var inputName: String { "the input" }
}

/// A reader that can read its input again with the index its first pass made (JSON, JSON Lines,
/// YAML, XML, a tables directory): the second read of a plan's run parses the input once more, not
/// twice, and holds one index.
protocol ReopenableObjectReader: ObjectRecordReader {
    func reopened() throws -> Self
    /// This reader giving only the objects of the entities `entities` marks (the others counted and
    /// left out, their rejections too), until `reopened`: a plan's first pass
    /// (`ObjectMigration.firstPassEntities`), its objects decoded as always.
    func restricted(to entities: [Bool]) -> Self
}

/// A reopenable reader that reads again by going back to its input's start, the first pass's index
/// kept, and that leaves out, one by one, the objects of the entities a restricted read does not give
/// (XML, a tables directory).
protocol RewindingObjectReader: ReopenableObjectReader {
    /// The entities whose objects this read gives (a plan's first pass: `restricted`), nil for all.
    var only: [Bool]? { get set }
    /// Goes back to the input's start, the index kept (the first pass not made again).
    mutating func rewind() throws
}

extension RewindingObjectReader {
    func reopened() throws -> Self {
        var again = self
        try again.rewind()
        again.only = nil
        return again
    }

    func restricted(to entities: [Bool]) -> Self {
        var out = self
        out.only = entities
        return out
    }
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
        var index = ObjectGraphIndex(model, keys: keys, removals: removals)
        if let repeatsUnique, repeatsUnique.count == model.entities.count { index.repeatsUnique = repeatsUnique }
        var order = EntityOrder(model.entities.count)
        try Self.indexPass(try open(), into: &index, order: &order)
        self.index = index
        decoder = ObjectGraphDecoder(index)
        parser = try open()
        if !order.inOrder {
            var passes = order.present.sorted()
            current = passes.removeFirst()
            remaining = passes
        }
        plan = (current, remaining)
    }

    /// Per entity, at most how many objects of it the passes give: how many the index's pass noted
    /// (`ObjectRecordReader.expectedObjects`).
    var expectedObjects: [Int] { index.noted }

    /// The entities the index's pass met, and whether in the model's order.
    private struct EntityOrder {
        var present = Set<Int>()
        var seen: [Bool]
        var previous = -1
        var inOrder = true
        init(_ count: Int) { seen = Array(repeating: false, count: count) }
        mutating func note(_ entity: Int) {
            if entity >= seen.count || !seen[entity] {
                present.insert(entity)
                if entity < seen.count { seen[entity] = true }
            }
            if entity < previous { inOrder = false }
            previous = entity
        }
    }

    /// What the index's pass learns of one object: `ObjectGraphIndex.note(entity:identity:isValid:)`'s arguments.
    private struct Noted {
        var identity: GraphScalar?
        var isValid: Bool
        private var entityIndex: Int32
        var entity: Int { Int(entityIndex) }
        init(entity: Int, identity: GraphScalar?, isValid: Bool) {
            self.identity = identity; self.isValid = isValid; entityIndex = Int32(truncatingIfNeeded: entity)
        }
    }

    /// The index's pass over what `parser` reads: on two threads where the parser's input can be cut
    /// (`GraphParsing.indexCut`: JSON Lines in a plain file of 8 MiB or more), else on this one.
    ///
    /// On two threads, this one reads up to the cut and notes what it finds in `index`, as on one;
    /// the other reads from the cut and keeps what it finds (a `Noted` an object, with a long
    /// identity's text) until this one is done and notes it, in the input's order: the index is then
    /// what one thread makes. The other thread stops at `tailBytes` of them, and this one reads on
    /// from where it stopped; where it fails (an I/O error), or cannot start, this one reads from the
    /// cut, so that errors are told, with their places, as on one thread.
    private static func indexPass(_ parser: Parser, into index: inout ObjectGraphIndex, order: inout EntityOrder) throws {
        var parser = parser
        func noteAll(_ parser: inout Parser) throws {
            _ = try scan(&parser, index) { n in
                try index.note(entity: n.entity, identity: n.identity, isValid: n.isValid)
                order.note(n.entity)
                return true
            }
        }
        guard let cut = try parser.indexCut(), var tail = try parser.reopened(at: cut) else { return try noteAll(&parser) }
        let found = TailNotes(), limit = tailBytes(index.keys)
        let started = Threads.start { [index] in
            // Reserved whole, so that it is not copied as it grows; only the pages written are the process's.
            var noted: [Noted] = []
            noted.reserveCapacity(limit / MemoryLayout<Noted>.stride + 1)
            var bytes = 0, held = 0
            do {
                let atEnd = try Self.scan(&tail, index) { n in
                    noted.append(n)
                    bytes += MemoryLayout<Noted>.stride + (n.identity.map(Self.heapBytes) ?? 0)
                    // Counted in the run's budget every 64 KiB, beside the index: past it, this thread stops.
                    if bytes - held >= 64 << 10 {
                        defer { held = bytes }
                        if index.keys.holdBeside(bytes - held) { return false }
                    }
                    return bytes < limit && !found.isCancelled
                }
                found.finish(noted, from: atEnd ? nil : tail.offset, held: held)
            } catch {
                found.finish([], from: cut, held: held)
            }
        }
        guard let started else { return try noteAll(&parser) }
        parser.stop(at: cut)
        do {
            try noteAll(&parser)
        } catch {
            found.cancel()
            started.join()
            throw error
        }
        started.join()
        let (noted, from, held) = found.taken
        defer { _ = index.keys.holdBeside(-held) }
        for n in noted {
            try index.note(entity: n.entity, identity: n.identity, isValid: n.isValid)
            order.note(n.entity)
        }
        guard let from else { return }
        guard var rest = try parser.reopened(at: from) else {
            throw TripError(.io, "\(parser.inputName): could not be read again from byte \(from)")
        }
        try noteAll(&rest)
    }

    /// The index's pass over what `parser` reads, with `index`'s configuration (nothing is noted in
    /// it here): each object given to `take`, which stops the pass by giving false (the parser's
    /// `offset` then says where it stopped); true at the end of the parser's input.
    private static func scan(_ parser: inout Parser, _ index: ObjectGraphIndex, take: (Noted) throws -> Bool) throws -> Bool {
        var checker = ObjectGraphDecoder(index, resolvesReferences: false)
        var check = ObjectGraphCheck(index)
        let referred = index.referred
        while let item = try parser.nextIndexed(&check) {
            let noted: Noted
            switch item {
            case .checked(let object):
                noted = Noted(entity: object.entity, identity: object.identity, isValid: object.isValid || !referred[object.entity])
            case .parsed(.rejected), .decoded:
                continue
            case .parsed(.object(let entity, let fields, let origin)):
                // Only an object others may refer to is checked: the index keeps only those.
                var isValid = !referred[entity]
                if isValid {
                    checker.skip(entity)
                } else if case .object = try checker.decode(entity: entity, fields: fields, origin: origin) {
                    isValid = true
                }
                noted = Noted(entity: entity, identity: index.identity(entity: entity, fields: fields, isValid: isValid), isValid: isValid)
            }
            guard try take(noted) else { return false }
        }
        return true
    }

    /// The bytes of `Noted` the second thread of an index's pass may keep: 32 MiB, less under a small budget.
    private static func tailBytes(_ keys: ObjectKeyTable) -> Int {
        keys.budgetBytes.map { min(32 << 20, max($0 / 8, 1 << 20)) } ?? 32 << 20
    }

    /// The heap bytes of a scalar's text (a `String` of more than 15 bytes).
    private static func heapBytes(_ s: GraphScalar) -> Int {
        switch s {
        case .number(let t), .string(let t): return t.utf8.count > 15 ? 32 + t.utf8.count : 0
        default: return 0
        }
    }

    /// What the second thread of an index's pass found, handed to the first when it ends: the objects
    /// it noted, and where the first reads on from (nil: nowhere, the second read to the end).
    private final class TailNotes: @unchecked Sendable {
        private let state = Mutex<(noted: [Noted], from: Int?, held: Int)>(([], nil, 0))
        private let cancelled = Atomic<Bool>(false)
        /// `held`: the bytes the second thread counted in the run's budget, given back when the notes are.
        func finish(_ noted: [Noted], from: Int?, held: Int) { state.withLock { $0 = (noted, from, held) } }
        func cancel() { cancelled.store(true, ordering: .relaxed) }
        var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
        var taken: (noted: [Noted], from: Int?, held: Int) {
            state.withLock { s in
                defer { s.noted = [] }
                return s
            }
        }
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
