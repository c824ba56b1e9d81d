/// What to do with trips that share a unique name.
public enum DeduplicationPolicy: String, Sendable, CaseIterable {
    /// One trip per name: the latest values, bucket lists united, the latest accommodation.
    case merge
    /// The whole record of the last occurrence wins.
    case last
    /// The whole record of the first occurrence wins.
    case first
    /// Any duplicate is an error; nothing is written.
    case fail
}

/// The objects being migrated, in one schema version at a time, as SwiftData's `ModelContext` in a
/// migration stage: `willMigrate` sees them in the source schema, `didMigrate` in the target one.
public final class MigrationContext {
    /// The schema the objects are in now.
    public internal(set) var schema: any VersionedSchema.Type
    /// The root objects (trips) and where each came from, held compactly (see `ObjectArena`).
    var arena = ObjectArena()
    public let policy: DeduplicationPolicy
    /// Records merged into others or dropped by the policy, with where they came from.
    public internal(set) var ledger: [SetAsideRecord] = []

    public init(schema: any VersionedSchema.Type, policy: DeduplicationPolicy = .merge,
                objects: [ModelObject] = [], origins: [RecordOrigin] = []) {
        self.schema = schema; self.policy = policy
        for (i, o) in objects.enumerated() {
            arena.append(o, origin: i < origins.count ? origins[i] : RecordOrigin(source: "", record: i + 1))
        }
    }

    /// The root objects (trips), in input order. Each access decodes them all: for small contexts
    /// and tests; the pipeline goes through `forEach`.
    public var objects: [ModelObject] {
        var all: [ModelObject] = []
        all.reserveCapacity(arena.count)
        arena.forEach { o, _ in all.append(o) }
        return all
    }

    /// Where each root object came from (the first occurrence, after deduplication).
    public var origins: [RecordOrigin] { arena.entries.indices.map(arena.origin(at:)) }

    /// Where the root object at a position came from.
    public func origin(at index: Int) -> RecordOrigin { arena.origin(at: index) }

    public func insert(_ object: ModelObject, origin: RecordOrigin) {
        arena.append(object, origin: origin)
    }

    /// Moves another context's objects (already in the same schema) and ledger after this one's.
    public func absorb(_ other: MigrationContext) {
        arena.absorb(&other.arena)
        ledger.append(contentsOf: other.ledger)
        other.ledger = []
    }

    public var count: Int { arena.count }

    /// Calls `body` with each root object and its origin, in order.
    public func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) rethrows {
        try arena.forEach(body)
    }

    /// Replaces each root object by `transform(object)`.
    public func transform(_ transform: (ModelObject) throws -> ModelObject) rethrows {
        try arena.transform(transform)
    }

    /// The longest list of each root relationship over all objects (0 or 1 for a to-one), for
    /// writers whose layout depends on it.
    public func longestRelationships() -> [Int] {
        var longest: [Int] = []
        let arena = self.arena
        for e in arena.entries {
            let counts = arena.relationshipCounts(e)
            if longest.count < counts.count { longest += [Int](repeating: 0, count: counts.count - longest.count) }
            for (i, n) in counts.enumerated() where n > longest[i] { longest[i] = n }
        }
        return longest
    }

    /// Leaves one object per value of the attribute, under the context's policy.
    ///
    /// Values are equal when their bytes are (a string's UTF-8, as SQLite's `UNIQUE` compares, not
    /// Swift's canonical equivalence). Output order is the order in which values first appear. Every
    /// object merged away or dropped goes to the ledger with its origin. Under `.fail`, any duplicate
    /// throws a data error naming the first few duplicate values and their count.
    public func deduplicate(_ entityName: String, by attributeName: String) throws {
        guard let entity = schema.entity(entityName), entity.name == schema.rootEntity.name,
              let key = entity.attributeIndex(attributeName) else {
            throw TripError.data("cannot deduplicate \(entityName) by \(attributeName) in \(schema.versionIdentifier)")
        }
        // Work on the arena as a local value (moved out, so appending merged trips copies no chunk):
        // a class's stored struct is otherwise re-read, retained and released at every access.
        var arena = self.arena
        self.arena = ObjectArena()
        defer { self.arena = arena }
        var index = KeyIndex(capacity: arena.count)
        // Per kept object: its current entry (origin: the first occurrence), the entry whose bytes
        // hold its key, and (for `.last`) the origin of the occurrence that now stands for it.
        var kept: [ObjectArena.Entry] = []
        var keyEntries: [ObjectArena.Entry] = []
        var latest: [ObjectArena.PackedOrigin] = []
        kept.reserveCapacity(arena.count)
        var duplicateNames: [String] = []
        var seenDuplicate = Set<String>()
        var duplicateCount = 0
        for e in arena.entries {
            let found: Int? = arena.withValueBytes(e, attribute: key) { bytes in
                let hash = KeyIndex.hash(bytes)
                var slot = index.start(hash)
                while let k = index.occupant(slot) {
                    if index.hashes[k] == UInt32(truncatingIfNeeded: hash),
                       arena.withValueBytes(keyEntries[k], attribute: key, { $0.elementsEqual(bytes) }) {
                        return k
                    }
                    slot = index.next(slot)
                }
                index.insert(kept.count, at: slot, hash: hash)
                return nil
            }
            guard let at = found else {
                kept.append(e); keyEntries.append(e)
                if policy == .last { latest.append(e.origin) }
                continue
            }
            let value = arena.value(e, attribute: key)
            let name = value.stringValue ?? value.literal
            let origin = arena.unpack(e.origin)
            switch policy {
            case .fail:
                duplicateCount += 1
                if seenDuplicate.insert(name).inserted { duplicateNames.append(name) }
            case .first:
                ledger.append(SetAsideRecord(kind: .dropped, origin: origin,
                    reason: "duplicate \(attributeName) \(name.quotedForMessage): dropped, the first occurrence (\(arena.unpack(kept[at].origin))) wins"))
            case .last:
                ledger.append(SetAsideRecord(kind: .dropped, origin: arena.unpack(latest[at]),
                    reason: "duplicate \(attributeName) \(name.quotedForMessage): dropped, a later occurrence (\(origin)) wins"))
                kept[at] = ObjectArena.Entry(chunk: e.chunk, offset: e.offset, origin: kept[at].origin)
                latest[at] = e.origin
            case .merge:
                ledger.append(SetAsideRecord(kind: .merged, origin: origin,
                    reason: "duplicate \(attributeName) \(name.quotedForMessage): merged into the trip first seen at \(arena.unpack(kept[at].origin))"))
                let merged = merge(arena.object(kept[at]), with: arena.object(e), entity: entity)
                kept[at] = arena.store(merged, origin: kept[at].origin)
            }
        }
        if policy == .fail, !duplicateNames.isEmpty {
            let shown = duplicateNames.prefix(5).map(\.quotedForMessage).joined(separator: ", ")
            let more = duplicateNames.count > 5 ? " and \(duplicateNames.count - 5) more" : ""
            throw TripError.data("\(duplicateNames.count) \(attributeName)\(duplicateNames.count == 1 ? " occurs" : "s occur") more than once (\(shown)\(more)); --dedupe fail writes nothing",
                                 notes: ["\(duplicateCount) duplicate record\(duplicateCount == 1 ? "" : "s"); use --dedupe merge, last or first to keep one per \(attributeName)"])
        }
        arena.entries = kept
    }

    /// The merge rule: scalars from the later object; to-many lists united in first-seen order, items
    /// equal in their first attribute (a bucket-list item's title) collapsing into the later one; a
    /// to-one from the later object unless it has none.
    func merge(_ earlier: ModelObject, with later: ModelObject, entity: Entity) -> ModelObject {
        var result = later
        for (i, r) in entity.relationships.enumerated() {
            switch (earlier.relationships[i], later.relationships[i]) {
            case (.toMany(let a), .toMany(let b)):
                result.relationships[i] = .toMany(unite(a, b))
            case (.toOne(let a), .toOne(let b)):
                result.relationships[i] = .toOne(b ?? a)
            default:
                _ = r
            }
        }
        return result
    }

    private func unite(_ a: [ModelObject], _ b: [ModelObject]) -> [ModelObject] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [ModelObject] = []
        out.reserveCapacity(a.count + b.count)
        if a.count + b.count <= 32 {
            // Short lists (bucket lists are): a linear search, without a key array per item.
            for item in a + b {
                let key = item.attributes.first ?? .null
                if let i = out.firstIndex(where: { MigrationContext.sameKey($0.attributes.first ?? .null, key) }) {
                    out[i] = item
                } else {
                    out.append(item)
                }
            }
            return out
        }
        var at: [[UInt8]: Int] = [:]
        for item in a + b {
            let key = ObjectArena.key(item.attributes.first ?? .null)
            if let i = at[key] { out[i] = item } else { at[key] = out.count; out.append(item) }
        }
        return out
    }

    /// Whether two values are the same key: strings byte for byte (their UTF-8), as `ObjectArena.key`
    /// compares them, not by canonical equivalence; other values exactly.
    static func sameKey(_ x: Value, _ y: Value) -> Bool {
        switch (x, y) {
        case (.string(let s), .string(let t)): return s.utf8.count == t.utf8.count && s.utf8.elementsEqual(t.utf8)
        case (.string, _), (_, .string): return false
        default: return x == y
        }
    }

    /// How many values of the attribute occur more than once (for `detect`).
    public func repeatedValues(of attributeName: String) -> Int {
        guard let key = schema.rootEntity.attributeIndex(attributeName) else { return 0 }
        var counts: [[UInt8]: Int] = [:]
        for e in arena.entries { counts[arena.withValueBytes(e, attribute: key) { Array($0) }, default: 0] += 1 }
        return counts.values.filter { $0 > 1 }.count
    }
}

/// An open-addressing index from a key's hash to the position of the object kept for it; the
/// caller compares keys (their bytes live in the arena), so the index holds no strings.
struct KeyIndex {
    private var slots: [Int32]
    private(set) var hashes: [UInt32] = []
    private let mask: Int

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
        hashes.reserveCapacity(capacity)
    }

    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = Hasher()
        h.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt64(bitPattern: Int64(h.finalize()))
    }

    func start(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 7) & mask }
    func next(_ slot: Int) -> Int { (slot + 1) & mask }
    func occupant(_ slot: Int) -> Int? { slots[slot] < 0 ? nil : Int(slots[slot]) }

    mutating func insert(_ position: Int, at slot: Int, hash: UInt64) {
        slots[slot] = Int32(position)
        hashes.append(UInt32(truncatingIfNeeded: hash))
    }
}
