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
        let namesShown = DuplicateResolver.namesShown
        var duplicateCount = 0
        var nameCount = 0
        var firstNames: [(position: Int, name: String)] = []
        let resolver = DuplicateResolver(policy: policy)
        try trips.deduplicate(attribute: key) { duplicate, decode in
            let value = duplicate.key.stringValue ?? duplicate.key.literal
            let decision = resolver.resolve(DuplicateResolver.Key(attribute: attributeName, value: value),
                                            kept: .earlier(firstSeen: duplicate.keptOrigin, standing: duplicate.standingOrigin),
                                            incoming: duplicate.origin)
            switch decision.outcome {
            case .refuse:
                duplicateCount += 1
                if duplicate.isFirstDuplicate {
                    nameCount += 1
                    if firstNames.count < namesShown || duplicate.position < firstNames[namesShown - 1].position {
                        firstNames.append((duplicate.position, value.quotedForMessage))
                        firstNames.sort { $0.position < $1.position }
                        if firstNames.count > namesShown { firstNames.removeLast() }
                    }
                }
                return (.keepKept, nil)
            case .keepKept:
                return (.keepKept, decision.setAside)
            case .takeIncoming:
                return (.takeDuplicate, decision.setAside)
            case .mergeIncomingIntoKept:
                return (.replaceKept(DuplicateResolver.merge(decode(.kept), with: decode(.duplicate), entity: entity)), decision.setAside)
            }
        } check: {
            if resolver.outcome == .refuse, nameCount > 0 {
                throw resolver.inputsRefusal(attribute: attributeName, names: firstNames.map(\.name), nameCount: nameCount, duplicateCount: duplicateCount)
            }
        }
    }

    /// How many values of the attribute occur more than once (for `detect`).
    public func repeatedValues(of attributeName: String) throws -> Int {
        guard let key = schema.rootEntity.attributeIndex(attributeName) else { return 0 }
        return try trips.repeatedValues(attribute: key)
    }
}
