/// The one place the `--dedupe` policy is decided (docs/DESIGN-NOTES.md, "One duplicate resolver").
///
/// Every path that meets duplicates asks it: the in-memory and the spilled deduplication of trips
/// (`MigrationContext.deduplicate`), the SQLite and PostgreSQL writers appending into a store whose
/// name is unique (the stored row against the incoming trip), and the objects of any model
/// (`ObjectDeduplicator`). For a duplicate it says which of the two survives, whether they merge, what
/// is set aside with which kind and reason, and, under `fail`, the error. Each path carries the
/// decision out with its own mechanics (positions in memory, a partition on disk, a row replaced
/// under its id, set-based SQL) and keeps its own counts; none decides the policy itself.
///
/// The resolver is a pure value: it reads nothing and holds nothing but the policy.
public struct DuplicateResolver: Sendable, Hashable {
    /// The policy it decides for.
    public let policy: DeduplicationPolicy

    /// A resolver of `policy`.
    public init(policy: DeduplicationPolicy) { self.policy = policy }

    /// What becomes of a duplicate and the one it meets: the same for every path.
    public enum Outcome: Sendable, Hashable {
        /// The one kept (the first occurrence, the stored row) stays as it is; the duplicate goes (`first`).
        case keepKept
        /// The duplicate's record takes the kept one's place, which keeps its position (`last`).
        case takeIncoming
        /// The duplicate is merged into the kept one, in its place (`merge`): `merge(_:with:entity:)`.
        case mergeIncomingIntoKept
        /// Any duplicate refuses the whole run; nothing is written (`fail`).
        case refuse
    }

    /// What the policy does with every duplicate, whoever meets it.
    public var outcome: Outcome {
        switch policy {
        case .first: return .keepKept
        case .last: return .takeIncoming
        case .merge: return .mergeIncomingIntoKept
        case .fail: return .refuse
        }
    }

    /// What a trip's duplicate shares with the one it meets: the unique attribute and its value, as
    /// messages name them (`duplicate name "Rome"`).
    public struct Key: Sendable, Hashable {
        public var attribute: String
        /// The value as text, unquoted (a string's own text, another value's literal).
        public var value: String
        /// The attribute `attribute` holding `value`.
        public init(attribute: String, value: String) { self.attribute = attribute; self.value = value }
    }

    /// The one a trip's duplicate meets.
    public enum Kept: Sendable, Hashable {
        /// An earlier trip of the run's inputs: where it was first seen, and where the record standing
        /// for it now came from (a later duplicate's, once `last` took it; else the first).
        case earlier(firstSeen: RecordOrigin, standing: RecordOrigin)
        /// A trip the store being written holds, by its row id; `writtenThisRun` when this run wrote
        /// that row (a caller gave a name twice) rather than the store holding it before.
        case stored(rowID: Int64, writtenThisRun: Bool)
    }

    /// The policy's decision for one duplicate.
    public struct Decision: Sendable, Hashable {
        /// What becomes of the two.
        public var outcome: Outcome
        /// The record set aside: the duplicate, or under `last` the earlier trip it replaces; nil
        /// under `fail` and where `last` replaces a trip the store held before the run (counted as
        /// replaced, not set aside).
        public var setAside: SetAsideRecord?
        /// Whether `last` replaced a trip the store held before the run (the writers count these).
        public var replacesStoredTrip: Bool
    }

    /// The decision for a trip sharing `key` with `kept`; `incoming` is where the duplicate came from.
    public func resolve(_ key: Key, kept: Kept, incoming: RecordOrigin) -> Decision {
        let what = "duplicate \(key.attribute) \(key.value.quotedForMessage)"
        var decision = Decision(outcome: outcome, setAside: nil, replacesStoredTrip: false)
        switch (outcome, kept) {
        case (.refuse, _):
            break
        case (.keepKept, .earlier(let firstSeen, _)):
            decision.setAside = SetAsideRecord(kind: .dropped, origin: incoming,
                                               reason: "\(what): dropped, the first occurrence (\(firstSeen)) wins")
        case (.takeIncoming, .earlier(_, let standing)):
            decision.setAside = SetAsideRecord(kind: .dropped, origin: standing,
                                               reason: "\(what): dropped, a later occurrence (\(incoming)) wins")
        case (.mergeIncomingIntoKept, .earlier(let firstSeen, _)):
            decision.setAside = SetAsideRecord(kind: .merged, origin: incoming, reason: "\(what): merged into the trip first seen at \(firstSeen)")
        case (.keepKept, .stored(let id, _)):
            decision.setAside = SetAsideRecord(kind: .dropped, origin: incoming,
                                               reason: "\(what): dropped, the trip the store holds (row id \(id)) stays")
        case (.takeIncoming, .stored(let id, let writtenThisRun)):
            if writtenThisRun {
                // The two count as one written, one merged.
                decision.setAside = SetAsideRecord(kind: .merged, origin: incoming,
                                                   reason: "\(what): replaced the trip written before it in this run (row id \(id))")
            } else {
                decision.replacesStoredTrip = true
            }
        case (.mergeIncomingIntoKept, .stored(let id, _)):
            decision.setAside = SetAsideRecord(kind: .merged, origin: incoming, reason: "\(what): merged into the trip the store holds (row id \(id))")
        }
        return decision
    }

    /// The record of an object of any model set aside as a duplicate (`ObjectDeduplicator`), once
    /// its group's survivor is known: `described` names the entity, the shared values and the
    /// version that makes them unique; `survivor` is where the object that stays came from. Nil
    /// under `fail`, which sets nothing aside.
    public func setAsideObject(at origin: RecordOrigin, described: String, survivor: RecordOrigin) -> SetAsideRecord? {
        switch outcome {
        case .refuse:
            return nil
        case .mergeIncomingIntoKept:
            return SetAsideRecord(kind: .merged, origin: origin, reason: "another \(described): merged into the one at \(survivor)")
        case .keepKept, .takeIncoming:
            return SetAsideRecord(kind: .dropped, origin: origin,
                                  reason: "another \(described): dropped under --dedupe \(policy.rawValue), which keeps the one at \(survivor)")
        }
    }

    // MARK: - Refusals under `fail`

    /// How many names a refusal shows; the rest are counted.
    public static let namesShown = 5

    /// `fail`'s error for duplicates among the run's inputs: `names` (quoted, at most `namesShown`,
    /// those whose first duplicates come first) of `nameCount` values of `attribute` occurring more
    /// than once, in `duplicateCount` duplicate records.
    public func inputsRefusal(attribute: String, names: [String], nameCount: Int, duplicateCount: Int) -> TripError {
        let more = nameCount > Self.namesShown ? " and \(nameCount - Self.namesShown) more" : ""
        let records = "\(duplicateCount) duplicate record\(duplicateCount == 1 ? "" : "s")"
        return TripError.data("\(nameCount) \(attribute)\(nameCount == 1 ? " occurs" : "s occur") more than once (\(names.joined(separator: ", "))\(more)); "
                              + "--dedupe fail writes nothing",
                              notes: ["\(records); use --dedupe merge, last or first to keep one per \(attribute)"])
    }

    /// `fail`'s error for incoming trips whose names the store at `place` holds: `names` (unquoted,
    /// the first `namesShown` are shown) of `nameCount`; `incomingCount`, where the writer counts
    /// them, how many incoming trips met them.
    public func storeRefusal(place: String, attribute: String, names: [String], nameCount: Int, incomingCount: Int?) -> TripError {
        let shown = names.prefix(Self.namesShown).map(\.quotedForMessage).joined(separator: ", ")
        let more = nameCount > Self.namesShown ? " and \(nameCount - Self.namesShown) more" : ""
        let note = incomingCount.map { "\($0) incoming trip\($0 == 1 ? "" : "s") would have changed stored ones; use --dedupe merge, last or first to let them" }
            ?? "use --dedupe merge, last or first to let them change stored trips"
        return TripError.data("\(place): \(nameCount) \(attribute)\(nameCount == 1 ? " is" : "s are") already in the store (\(shown)\(more)); "
                              + "--dedupe fail writes nothing", notes: [note])
    }

    /// `fail`'s error for an object of any model at `origin` that is a second `described`, the first at `first`.
    public func objectRefusal(at origin: RecordOrigin, described: String, first: RecordOrigin) -> TripError {
        TripError.data("\(origin): a second \(described); the first is at \(first) (--dedupe fail: nothing is written)")
    }

    // MARK: - The merge of two trips

    /// The merge rule: scalars from the later object; to-many lists united in first-seen order, items
    /// equal in their first attribute (a bucket-list item's title) collapsing into the later one; a
    /// to-one from the later object unless it has none.
    public static func merge(_ earlier: ModelObject, with later: ModelObject, entity: Entity) -> ModelObject {
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

    private static func unite(_ a: [ModelObject], _ b: [ModelObject]) -> [ModelObject] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [ModelObject] = []
        out.reserveCapacity(a.count + b.count)
        if a.count + b.count <= 32 {
            // Short lists (bucket lists are): a linear search, without a key array per item.
            for item in a + b {
                let key = item.attributes.first ?? .null
                if let i = out.firstIndex(where: { sameKey($0.attributes.first ?? .null, key) }) {
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
}
