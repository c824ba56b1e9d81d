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
    /// The root objects (trips), where each came from, and those set aside: see `TripHolding`.
    package let trips: any TripHolding
    public let policy: DeduplicationPolicy

    /// Records merged into others or dropped by the policy, with where they came from. Each access
    /// collects them all: for small contexts and tests; the pipeline goes through `trips`.
    public var ledger: [SetAsideRecord] { get throws {
        var all: [SetAsideRecord] = []
        all.reserveCapacity(trips.setAsideCount)
        try trips.forEachSetAside { all.append($0) }
        return all
    } }

    /// A context holding `objects` (root objects of `schema`) in memory; `origins[i]` says where `objects[i]` came from (a record number by default).
    public convenience init(schema: any VersionedSchema.Type, policy: DeduplicationPolicy = .merge,
                            objects: [ModelObject] = [], origins: [RecordOrigin] = []) {
        let memory = InMemoryTrips()
        for (i, o) in objects.enumerated() {
            memory.put(o, origin: i < origins.count ? origins[i] : RecordOrigin(source: "", record: i + 1))
        }
        self.init(schema: schema, policy: policy, holding: memory)
    }

    /// A context whose trips are held by `holding`.
    package init(schema: any VersionedSchema.Type, policy: DeduplicationPolicy, holding: any TripHolding) {
        self.schema = schema; self.policy = policy; self.trips = holding
    }

    /// The root objects (trips), in input order. Each access decodes them all: for small contexts
    /// and tests; the pipeline goes through `forEach`.
    public var objects: [ModelObject] { get throws {
        var all: [ModelObject] = []
        all.reserveCapacity(trips.count)
        try trips.forEach { o, _ in all.append(o) }
        return all
    } }

    /// Where each root object came from (the first occurrence, after deduplication).
    public var origins: [RecordOrigin] { get throws { try (0..<trips.count).map(trips.origin(at:)) } }

    /// Where the root object at a position came from.
    public func origin(at index: Int) throws -> RecordOrigin { try trips.origin(at: index) }

    /// Adds a root object after the others.
    public func insert(_ object: ModelObject, origin: RecordOrigin) throws {
        try trips.put(object, origin: origin)
    }

    /// Moves another context's objects (already in the same schema) and ledger after this one's;
    /// `other` is empty afterwards.
    public func absorb(_ other: MigrationContext) throws {
        try trips.absorb(other.trips)
    }

    public var count: Int { trips.count }

    /// Calls `body` with each root object and its origin, in order.
    public func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) throws {
        try trips.forEach(body)
    }

    /// Replaces each root object by `transform(object)`.
    public func transform(_ transform: (ModelObject) throws -> ModelObject) throws {
        try trips.transform(transform)
    }

    /// The longest list of each root relationship over all objects (0 or 1 for a to-one), for
    /// writers whose layout depends on it.
    public func longestRelationships() throws -> [Int] { try trips.longestRelationships() }

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
        // Under `.fail`: how many duplicates and names, and the names whose first duplicates come
        // first (at most `namesShown`, by position: a holding may resolve names in any order).
        let namesShown = 5
        var duplicateCount = 0
        var nameCount = 0
        var firstNames: [(position: Int, name: String)] = []
        let policy = self.policy
        try trips.deduplicate(attribute: key) { duplicate, decode in
            let name = (duplicate.key.stringValue ?? duplicate.key.literal).quotedForMessage
            switch policy {
            case .fail:
                duplicateCount += 1
                if duplicate.isFirstDuplicate {
                    nameCount += 1
                    if firstNames.count < namesShown || duplicate.position < firstNames[namesShown - 1].position {
                        firstNames.append((duplicate.position, name))
                        firstNames.sort { $0.position < $1.position }
                        if firstNames.count > namesShown { firstNames.removeLast() }
                    }
                }
                return (.keepKept, nil)
            case .first:
                return (.keepKept, SetAsideRecord(kind: .dropped, origin: duplicate.origin,
                    reason: "duplicate \(attributeName) \(name): dropped, the first occurrence (\(duplicate.keptOrigin)) wins"))
            case .last:
                return (.takeDuplicate, SetAsideRecord(kind: .dropped, origin: duplicate.standingOrigin,
                    reason: "duplicate \(attributeName) \(name): dropped, a later occurrence (\(duplicate.origin)) wins"))
            case .merge:
                return (.replaceKept(merge(decode(.kept), with: decode(.duplicate), entity: entity)),
                        SetAsideRecord(kind: .merged, origin: duplicate.origin,
                    reason: "duplicate \(attributeName) \(name): merged into the trip first seen at \(duplicate.keptOrigin)"))
            }
        } check: {
            if policy == .fail, nameCount > 0 {
                let shown = firstNames.map(\.name).joined(separator: ", ")
                let more = nameCount > namesShown ? " and \(nameCount - namesShown) more" : ""
                throw TripError.data("\(nameCount) \(attributeName)\(nameCount == 1 ? " occurs" : "s occur") more than once (\(shown)\(more)); --dedupe fail writes nothing",
                                     notes: ["\(duplicateCount) duplicate record\(duplicateCount == 1 ? "" : "s"); use --dedupe merge, last or first to keep one per \(attributeName)"])
            }
        }
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
    public func repeatedValues(of attributeName: String) throws -> Int {
        guard let key = schema.rootEntity.attributeIndex(attributeName) else { return 0 }
        return try trips.repeatedValues(attribute: key)
    }
}
