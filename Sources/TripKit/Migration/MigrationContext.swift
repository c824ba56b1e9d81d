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
    /// The root objects (trips), in input order.
    public internal(set) var objects: [ModelObject]
    /// Where each root object came from (the first occurrence, after deduplication).
    public internal(set) var origins: [RecordOrigin]
    public let policy: DeduplicationPolicy
    /// Records merged into others or dropped by the policy, with where they came from.
    public internal(set) var ledger: [Rejection] = []

    public init(schema: any VersionedSchema.Type, policy: DeduplicationPolicy = .merge,
                objects: [ModelObject] = [], origins: [RecordOrigin] = []) {
        self.schema = schema; self.policy = policy; self.objects = objects; self.origins = origins
    }

    public func insert(_ object: ModelObject, origin: RecordOrigin) {
        objects.append(object); origins.append(origin)
    }

    /// Appends another context's objects (already in the same schema).
    public func absorb(_ other: MigrationContext) {
        objects.append(contentsOf: other.objects)
        origins.append(contentsOf: other.origins)
        ledger.append(contentsOf: other.ledger)
    }

    public var count: Int { objects.count }

    /// Leaves one object per value of the attribute, under the context's policy.
    ///
    /// Output order is the order in which values first appear. Every object merged away or dropped
    /// goes to the ledger with its origin. Under `.fail`, any duplicate throws a data error naming
    /// the first few duplicate values and their count.
    public func deduplicate(_ entityName: String, by attributeName: String) throws {
        guard let entity = schema.entity(entityName), entity.name == schema.rootEntity.name,
              let key = entity.attributeIndex(attributeName) else {
            throw TripError.data("cannot deduplicate \(entityName) by \(attributeName) in \(schema.versionIdentifier)")
        }
        var firstIndex: [Value: Int] = [:]
        firstIndex.reserveCapacity(objects.count)
        var kept: [ModelObject] = []
        var keptOrigins: [RecordOrigin] = []
        var keptLatestOrigin: [RecordOrigin] = []
        kept.reserveCapacity(objects.count)
        var duplicateNames: [String] = []
        var duplicateCount = 0
        for (object, origin) in zip(objects, origins) {
            let value = object.attributes[key]
            guard let at = firstIndex[value] else {
                firstIndex[value] = kept.count
                kept.append(object); keptOrigins.append(origin); keptLatestOrigin.append(origin)
                continue
            }
            let name = value.stringValue ?? value.literal
            switch policy {
            case .fail:
                duplicateCount += 1
                if !duplicateNames.contains(name) { duplicateNames.append(name) }
            case .first:
                ledger.append(Rejection(kind: .dropped, origin: origin,
                    reason: "duplicate \(attributeName) \(name.quotedForMessage): dropped, the first occurrence (\(keptOrigins[at])) wins"))
            case .last:
                ledger.append(Rejection(kind: .dropped, origin: keptLatestOrigin[at],
                    reason: "duplicate \(attributeName) \(name.quotedForMessage): dropped, a later occurrence (\(origin)) wins"))
                kept[at] = object
                keptLatestOrigin[at] = origin
            case .merge:
                ledger.append(Rejection(kind: .merged, origin: origin,
                    reason: "duplicate \(attributeName) \(name.quotedForMessage): merged into the trip first seen at \(keptOrigins[at])"))
                kept[at] = merge(kept[at], with: object, entity: entity)
            }
        }
        if policy == .fail, !duplicateNames.isEmpty {
            let shown = duplicateNames.prefix(5).map(\.quotedForMessage).joined(separator: ", ")
            let more = duplicateNames.count > 5 ? " and \(duplicateNames.count - 5) more" : ""
            throw TripError.data("\(duplicateNames.count) \(attributeName)\(duplicateNames.count == 1 ? " occurs" : "s occur") more than once (\(shown)\(more)); --dedupe fail writes nothing",
                                 notes: ["\(duplicateCount) duplicate record\(duplicateCount == 1 ? "" : "s"); use --dedupe merge, last or first to keep one per \(attributeName)"])
        }
        objects = kept
        origins = keptOrigins
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
        var at: [Value: Int] = [:]
        for item in a + b {
            let key = item.attributes.first ?? .null
            if let i = at[key] { out[i] = item } else { at[key] = out.count; out.append(item) }
        }
        return out
    }

    /// How many values of the attribute occur more than once (for `detect`).
    public func repeatedValues(of attributeName: String) -> Int {
        guard let key = schema.rootEntity.attributeIndex(attributeName) else { return 0 }
        var counts: [Value: Int] = [:]
        for o in objects { counts[o.attributes[key], default: 0] += 1 }
        return counts.values.filter { $0 > 1 }.count
    }
}
