import TripKit

/// How an export of a graph names the objects it refers to (docs/DESIGN-NOTES.md, "The general object
/// model"): by the unique attribute of the root of the destination's family (the entities sharing a
/// table: keys and unique values are unique across it) where the root has one, else by `@key`.
///
/// Objects come entity by entity, so an object may refer by value to one not seen yet (a later
/// entity, a later key of its own). `waits` says which entities' objects must wait for that; the
/// writers hold them (`ObjectRecordQueue`, spilling past the budget) and write them at the end.
/// The unique values themselves are kept, one text per object of a family something refers to
/// by value, in an `ObjectNameTable` that spills past the budget.
final class ObjectNaming {
    let model: ObjectModel
    /// Per entity: the position in its records' attributes of its root's unique attribute; nil
    /// when its objects are referred to by `@key`.
    let uniqueSlot: [Int?]
    /// Per entity: whether its objects must wait until every object has been seen, as it refers
    /// by value to an entity at or after it.
    let waits: [Bool]
    /// Per entity: the last position (in the model's order) of an entity whose names its objects
    /// write; -1 when they write none. An entity waits when this is at or after it.
    let lastNamed: [Int]
    /// Per entity: whether something refers to its objects by value (their names are kept).
    private let named: [Bool]
    /// Per entity: the kind of the unique attribute at `uniqueSlot`.
    private let uniqueKind: [AttributeKind?]
    private let names: ObjectNameTable

    /// The naming of `model`'s objects; `written(e, r)` says whether relationship `r` (a position
    /// in `allRelationships(of: e)`) of entity `e` is written as references. The names noted are
    /// held within `budget` (the default budget when nil), the rest in a spill file.
    init(_ model: ObjectModel, budget: SpillBudget? = nil, written: (Int, Int) -> Bool) {
        names = ObjectNameTable(budget: budget ?? SpillBudget(limit: SpillBudget.defaultLimit))
        self.model = model
        // The root's unique attribute, the same position in every entity of the family (root first):
        // the one rule the JSON and YAML layout uses too.
        let uniqueSlot = model.entities.indices.map(model.referenceAttribute)
        self.uniqueSlot = uniqueSlot
        uniqueKind = model.entities.indices.map { e in uniqueSlot[e].map { model.allAttributes(of: e)[$0].kind } }
        var named = [Bool](repeating: false, count: model.entities.count)
        var waits = named
        var last = [Int](repeating: -1, count: model.entities.count)
        for e in model.entities.indices {
            for (r, relationship) in model.allRelationships(of: e).enumerated() where written(e, r) {
                guard let d = model.entityIndex(relationship.destination) else { continue }
                let family = ObjectNaming.family(model, of: d)
                guard uniqueSlot[d] != nil else { continue }
                for f in family { named[f] = true }
                if family.contains(where: { $0 >= e }) { waits[e] = true }
                last[e] = max(last[e], family.max() ?? -1)
            }
        }
        self.named = named
        self.waits = waits
        lastNamed = last
    }

    /// The positions of the entities sharing `entity`'s root.
    static func family(_ model: ObjectModel, of entity: Int) -> [Int] {
        let root = model.lineage(of: entity)[0]
        return model.entities.indices.filter { model.lineage(of: $0)[0] == root }
    }

    /// Whether the objects of `entity` carry `@key` (its family has no unique attribute).
    func hasKey(_ entity: Int) -> Bool { uniqueSlot[entity] == nil }

    /// Notes an object's name, when something refers to its entity by value. An object whose
    /// unique value is null cannot be named; referring to it is then an error (`name(of:)`).
    func note(_ object: ObjectRecord) throws {
        guard named[object.entity], let slot = uniqueSlot[object.entity], slot < object.attributes.count else { return }
        try note(object.entity, key: object.key, value: object.attributes[slot])
    }

    /// Notes the name of the object of `entity` keyed `key` whose unique value is `value` (`note(_:)`
    /// for an object written straight from its source).
    func note(_ entity: Int, key: Int64, value: ObjectValue) throws {
        guard named[entity], let text = ObjectValueText.text(value) else { return }
        try names.add(ObjectReference(entity: entity, key: key), text)
    }

    /// Whether something refers to the objects of `entity` by value (their names are noted), and the
    /// position of their unique value among their attributes.
    func notedSlot(of entity: Int) -> Int? { named[entity] ? uniqueSlot[entity] : nil }

    /// The text a reference is written as: the destination's unique value, or its key.
    func name(of reference: ObjectReference, in output: String) throws -> String {
        guard reference.entity >= 0, reference.entity < uniqueSlot.count else {
            throw TripError.data("\(output): a reference to entity \(reference.entity), which the model does not have")
        }
        guard uniqueSlot[reference.entity] != nil else { return String(reference.key) }
        guard let text = try names.text(of: reference) else {
            let entity = model.entities[reference.entity]
            throw TripError.data("\(output): a reference to the \(entity.name) of key \(reference.key), which is not among the objects "
                                 + "or has no \(entity.uniqueAttribute?.name ?? "unique value") to be referred to by")
        }
        return text
    }

    /// The value a reference is written as where a writer writes it typed (JSON, YAML): the
    /// destination's unique value (its text read back as the attribute's kind), else its key.
    func value(of reference: ObjectReference, in output: String) throws -> ObjectValue {
        let text = try name(of: reference, in: output)
        guard let kind = uniqueKind[reference.entity] else { return .int(reference.key) }
        return ObjectValueText.value(text, kind: kind) ?? .string(text)
    }
}

/// Objects on their way to a writer that writes them entity by entity in the model's order (JSON,
/// JSON Lines, YAML): an object naming by value one not seen yet (`ObjectNaming.lastNamed`) waits
/// in an `ObjectRecordQueue`, and every object after it with it (the document's order), until an
/// object of an entity past every entity the waiting ones name comes: their names are then all
/// known, and the waiting objects are written before it. The rest wait for `finish`.
final class ObjectWriteOrder {
    let naming: ObjectNaming
    private let queue: ObjectRecordQueue
    /// While objects wait: the last entity whose names they need.
    private var until = -1

    init(_ model: ObjectModel, budget: SpillBudget?) {
        naming = ObjectNaming(model, budget: budget) { _, _ in true }
        queue = ObjectRecordQueue(budget: budget ?? SpillBudget(limit: SpillBudget.defaultLimit))
    }

    /// Notes `object`'s name and gives it (and, first, the objects whose names are now known) to `put`,
    /// or holds it.
    func pass(_ object: ObjectRecord, _ put: (ObjectRecord) throws -> Void) throws {
        if until >= 0, object.entity > until {
            try queue.drain(put)
            until = -1
        }
        try naming.note(object)
        let needs = naming.lastNamed[object.entity]
        if until >= 0 || needs >= object.entity {
            until = max(until, needs)
            try queue.append(object)
        } else {
            try put(object)
        }
    }

    /// Whether an object of `entity` goes out now without passing here (its name noted apart): the
    /// objects whose names are all known are given to `put` first, and then none waits and `entity`
    /// names by value no entity at or after it.
    func passesStraight(_ entity: Int, _ put: (ObjectRecord) throws -> Void) throws -> Bool {
        guard wouldPassStraight(entity) else { return false }
        if until >= 0 {
            try queue.drain(put)
            until = -1
        }
        return true
    }

    /// Whether `passesStraight(entity, _)` would be true: nothing waits by the time an object of
    /// `entity` comes, and `entity` names by value no entity at or after it.
    func wouldPassStraight(_ entity: Int) -> Bool { (until < 0 || entity > until) && naming.lastNamed[entity] < entity }

    /// Gives the objects still waiting to `put`.
    func finish(_ put: (ObjectRecord) throws -> Void) throws {
        try queue.drain(put)
        until = -1
    }
}

/// The names of objects, by reference: per entity in memory (keys and texts as they came, sorted
/// by key when first looked up) while the budget allows, then written to a spill file as runs
/// sorted by key, each found by binary search (`pread`) there. Objects come in key order, so a run
/// is usually sorted as written.
final class ObjectNameTable {
    private struct Run { var index: Int; var count: Int }
    private let budget: SpillBudget
    /// Per entity (by position, grown as entities come): keys, texts, whether they are out of key order.
    /// Read per reference written, by the writer's thread alone: no access checks.
    @exclusivity(unchecked) private var keys: [[Int64]] = []
    @exclusivity(unchecked) private var texts: [[String]] = []
    @exclusivity(unchecked) private var unsorted: [Bool] = []
    private var held = 0
    private var file: SpillFile?
    private var runs: [Int: [Run]] = [:]
    /// An entry of a run: key, offset of the text, its length.
    private static let entry = 20

    init(budget: SpillBudget) { self.budget = budget }

    deinit { _ = budget.hold(-held) }

    func add(_ reference: ObjectReference, _ text: String) throws {
        let e = reference.entity
        if e >= keys.count {
            keys += Array(repeating: [], count: e + 1 - keys.count)
            texts += Array(repeating: [], count: e + 1 - texts.count)
            unsorted += Array(repeating: false, count: e + 1 - unsorted.count)
        }
        if let last = keys[e].last, last >= reference.key { unsorted[e] = true }
        keys[e].append(reference.key)
        texts[e].append(text)
        let size = 48 + text.utf8.count
        held += size
        // Over the budget, the names go to the file once they are a run worth writing (an eighth of the
        // holdings' share, at least 64 KiB): what else the run holds (a reader's index, a database's
        // cache) does not shrink when they go, and a run a name long would make every lookup search
        // thousands of runs.
        if budget.hold(size), held >= max(budget.tripBytes / 8, 64 << 10) { try spill() }
    }

    func text(of reference: ObjectReference) throws -> String? {
        let e = reference.entity
        if e >= 0, e < keys.count {
            if unsorted[e] { sortMemory(e) }
            if let i = keys[e].withUnsafeBufferPointer({ list in ObjectNameTable.search(list.count, reference.key, { list[$0] }) }) {
                return texts[e][i]
            }
        }
        guard let file else { return nil }
        for run in runs[e] ?? [] {
            var entries: [Int: [UInt8]] = [:]
            func entry(_ i: Int) throws -> [UInt8] {
                if let e = entries[i] { return e }
                let bytes = try file.bytes(at: run.index + i * ObjectNameTable.entry, count: ObjectNameTable.entry)
                entries[i] = bytes
                return bytes
            }
            var found: Int?
            var low = 0, high = run.count
            while low < high {
                let mid = (low + high) / 2
                let k = Int64(bitPattern: ObjectNameTable.number(try entry(mid), 0, 8))
                if k == reference.key { found = mid; break }
                if k < reference.key { low = mid + 1 } else { high = mid }
            }
            guard let found else { continue }
            let bytes = try entry(found)
            let offset = Int(ObjectNameTable.number(bytes, 8, 8)), length = Int(ObjectNameTable.number(bytes, 16, 4))
            return String(decoding: try file.bytes(at: offset, count: length), as: UTF8.self)
        }
        return nil
    }

    private static func search(_ count: Int, _ key: Int64, _ at: (Int) -> Int64) -> Int? {
        // Keys are mostly 1, 2, 3, …: where the first key says the position, no search.
        if count > 0 {
            let guess = key &- at(0)
            if guess >= 0, guess < count, at(Int(guess)) == key { return Int(guess) }
        }
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if at(mid) == key { return mid }
            if at(mid) < key { low = mid + 1 } else { high = mid }
        }
        return nil
    }

    private static func number(_ b: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<width { v |= UInt64(b[at + k]) << (8 * k) }
        return v
    }

    private func sortMemory(_ e: Int) {
        unsorted[e] = false
        let k = keys[e], t = texts[e]
        let order = k.indices.sorted { k[$0] < k[$1] }
        keys[e] = order.map { k[$0] }; texts[e] = order.map { t[$0] }
    }

    /// Writes every name held to the spill file, a sorted run per entity.
    private func spill() throws {
        budget.startingToSpill()
        if file == nil { file = try SpillFile(directory: budget.directory) }
        let file = self.file!
        let start = file.size
        for e in keys.indices where !keys[e].isEmpty {
            sortMemory(e)
            let k = keys[e], t = texts[e]
            var offsets: [Int] = []
            for text in t { offsets.append(file.size); try file.append(Array(text.utf8)) }
            let index = file.size
            var bytes: [UInt8] = []
            for (i, key) in k.enumerated() {
                for b in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: key) >> (8 * b))) }
                for b in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: offsets[i] >> (8 * b))) }
                for b in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: t[i].utf8.count >> (8 * b))) }
            }
            try file.append(bytes)
            runs[e, default: []].append(Run(index: index, count: k.count))
        }
        try file.flush()
        budget.noteSpill(trips: keys.reduce(0) { $0 + $1.count }, bytes: file.size - start)
        for e in keys.indices { keys[e] = []; texts[e] = [] }
        _ = budget.hold(-held)
        held = 0
    }
}

/// Objects a writer holds until the end, in order: in memory while the run's budget allows, then
/// in a spill file (`SpillFile`, gone with the queue).
final class ObjectRecordQueue {
    private let budget: SpillBudget
    private var memory: [ObjectRecord] = []
    private var held = 0
    private var file: SpillFile?
    private var onFile = 0
    private var scratch: [UInt8] = []

    init(budget: SpillBudget) { self.budget = budget }

    deinit { _ = budget.hold(-held) }

    var isEmpty: Bool { memory.isEmpty && onFile == 0 }

    func append(_ object: ObjectRecord) throws {
        if file != nil { try spill(object); return }
        memory.append(object)
        let size = ObjectRecordQueue.estimate(object)
        held += size
        if budget.hold(size) {
            budget.startingToSpill()
            file = try SpillFile(directory: budget.directory)
            for o in memory { try spill(o) }
            memory = []
            _ = budget.hold(-held)
            held = 0
        }
    }

    /// Calls `body` with every object, in the order they came.
    func forEach(_ body: (ObjectRecord) throws -> Void) throws {
        if let file {
            try file.flush()
            var reader = file.reader()
            for _ in 0..<onFile {
                guard let head = try reader.read(4) else { throw TripError(.io, "temporary data ended early") }
                let length = Int(head[0]) | Int(head[1]) << 8 | Int(head[2]) << 16 | Int(head[3]) << 24
                guard let bytes = try reader.read(length) else { throw TripError(.io, "temporary data ended early") }
                var decoder = ObjectRecordCoding.Decoder(bytes: bytes)
                try body(decoder.record())
            }
        }
        try memory.forEach(body)
    }

    /// Calls `body` with every object, in the order they came, and empties the queue.
    func drain(_ body: (ObjectRecord) throws -> Void) throws {
        try forEach(body)
        memory = []
        file = nil
        onFile = 0
        _ = budget.hold(-held)
        held = 0
    }

    private func spill(_ object: ObjectRecord) throws {
        scratch.removeAll(keepingCapacity: true)
        scratch += [0, 0, 0, 0]
        ObjectRecordCoding.encode(object, to: &scratch)
        let n = scratch.count - 4
        for k in 0..<4 { scratch[k] = UInt8(truncatingIfNeeded: n >> (8 * k)) }
        try file!.append(scratch)
        onFile += 1
        budget.noteSpill(trips: 1, bytes: scratch.count)
    }

    private static func estimate(_ o: ObjectRecord) -> Int {
        var size = 96 + 24 * o.attributes.count + 16 * o.relationships.count
        for v in o.attributes {
            switch v {
            case .string(let s), .decimal(let s), .url(let s): size += s.utf8.count
            case .data(let d): size += d.count
            default: break
            }
        }
        for r in o.relationships { size += 16 * r.count }
        return size
    }
}

/// The other side of `ObjectNaming`, for a reader of an export: every object's name (its
/// unique value or `@key`) and the reference it stands for, so that a reference written as a name
/// resolves to an entity and key. Objects of a family named by value are numbered 1, 2, … in the
/// order they are added. Built in a first pass over the input; it holds two entries per object (three
/// for a repeat of a unique value), for the whole run, in `keys`: an `ObjectKeyTable`, in memory under the
/// run's budget and in a temporary database past it, as the JSON and YAML readers' index is
/// (docs/DESIGN-NOTES.md, "The XML and tables readers' index under the budget").
///
/// Its spaces, for `n` entities, per family root `r` and entity `e`: numbers `r` (a `@key` to its
/// entity) and `n + r` (a `@key` to its ordinal); texts `r` (a unique value's `keyText` to its
/// reference) and numbers `2n + r` (that reference's key to its ordinal); numbers `3n + e` (a repeat's
/// ordinal to the key it was given).
struct ObjectReferenceIndex {
    let names: ObjectNaming
    /// Shared by the copies of the index (a reader's, and the readers that reopen the input): written
    /// by the first pass alone.
    let keys: ObjectKeyTable
    private let roots: [Int]
    /// Per family root: the objects named by value so far.
    private var counts: [Int64]
    /// Per entity: whether an object repeating an earlier one's unique value is given a key of its
    /// own (the run deduplicates on that value) rather than refused; references find the first.
    var repeatsUnique: [Bool] = []

    /// The index of `names`' model's objects, its entries in `keys` (in memory without bound when nil).
    init(_ names: ObjectNaming, keys: ObjectKeyTable? = nil) {
        self.names = names
        self.keys = keys ?? ObjectKeyTable("the reader's index of keys", budget: nil)
        let model = names.model
        roots = model.entities.indices.map { model.lineage(of: $0)[0] }
        counts = Array(repeating: 0, count: model.entities.count)
    }

    private var n: Int { roots.count }

    /// The reference a repeat of a unique value (`add` with `repeatsUnique`) was given, by its ordinal.
    func repeated(_ entity: Int, ordinal: Int) throws -> ObjectReference? {
        try keys.value(3 * n + entity, Int64(ordinal)).map { ObjectReference(entity: entity, key: $0) }
    }

    /// Adds the object of `entity` named `value` (its unique value, for a family named by value) or
    /// `key`; `ordinal` tells it from others (its place in the input). Nil when the name repeats.
    mutating func add(entity: Int, key: Int64?, value: ObjectValue?, ordinal: Int) throws -> ObjectReference? {
        let r = roots[entity]
        if names.uniqueSlot[entity] != nil {
            guard let value, !value.isNull else { return nil }
            // A value equal to none (NaN) names an object no reference finds, as in a dictionary.
            let text = Self.keyText(value)
            let isRepeat = try text.map { try keys.reference(r, $0) != nil } ?? false
            guard !isRepeat || (entity < repeatsUnique.count && repeatsUnique[entity]) else { return nil }
            counts[r] += 1
            let next = counts[r]
            let reference = ObjectReference(entity: entity, key: next)
            if isRepeat {
                try keys.update(3 * n + entity, Int64(ordinal), next)
            } else {
                if let text { try keys.insert(r, text, reference) }
                try keys.update(2 * n + r, next, Int64(ordinal))
            }
            return reference
        }
        guard let key, try keys.value(r, key) == nil else { return nil }
        try keys.update(r, key, Int64(entity))
        try keys.update(n + r, key, Int64(ordinal))
        return ObjectReference(entity: entity, key: key)
    }

    /// The object a name written for a reference to `destination` stands for, and the ordinal it was
    /// added with; nil when the text is not a name of that kind, or no object of `destination` (or
    /// an entity under it) has it.
    func resolve(_ text: String, destination: Int) throws -> (reference: ObjectReference, ordinal: Int)? {
        let r = roots[destination]
        let found: (reference: ObjectReference, ordinal: Int)?
        if let slot = names.uniqueSlot[destination] {
            let kind = names.model.allAttributes(of: destination)[slot].kind
            guard let value = ObjectValueText.value(text, kind: kind), let key = Self.keyText(value),
                  let reference = try keys.reference(r, key), let ordinal = try keys.value(2 * n + r, reference.key) else { return nil }
            found = (reference, Int(ordinal))
        } else {
            guard let key = Int64(text), let entity = try keys.value(r, key), let ordinal = try keys.value(n + r, key) else { return nil }
            found = (ObjectReference(entity: Int(entity), key: key), Int(ordinal))
        }
        guard let found, names.model.lineage(of: found.reference.entity).contains(destination) else { return nil }
        return found
    }

    /// The text a unique value is keyed by: equal texts exactly where the values are equal as
    /// `ObjectValue`s (`==`), so that the index finds what a dictionary keyed by the value would. Its
    /// kind first (`.int(1)` is not `.string("1")`); a Double or Date by its bits, `-0.0` as `0.0`, NaN
    /// none (equal to nothing); a String as it is (texts compare with `==`: canonical equivalence).
    static func keyText(_ value: ObjectValue) -> String? {
        func bits(_ tag: String, _ d: Double) -> String? { d.isNaN ? nil : tag + String(d == 0 ? 0 : d.bitPattern) }
        switch value {
        case .null: return nil
        case .string(let s): return "s" + s
        case .decimal(let s): return "d" + s
        case .url(let s): return "l" + s
        case .int(let i): return "i" + String(i)
        case .double(let d): return bits("f", d)
        case .date(let d): return bits("t", d)
        case .bool(let b): return b ? "b1" : "b0"
        case .data(let bytes): return "x" + Base64.encode(bytes)
        case .uuid(let u): return "u" + u.description
        }
    }
}
