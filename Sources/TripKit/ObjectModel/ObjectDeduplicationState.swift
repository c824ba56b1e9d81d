/// A group of duplicates an `ObjectDeduplicator` found: the tuple of values they share, the object kept
/// and where it came from, and under merge what the duplicates after the first bring.
public struct ObjectDeduplicationGroup: Sendable, Hashable {
    /// The object kept, and its place in the input.
    public var survivor: ObjectReference
    public var origin: RecordOrigin
    /// The tuple of values, in the order of the deduplication's attributes.
    public var values: [ObjectValue]
    /// The deduplication (a position in the resolver's `deduplications`) the tuple is of.
    public var deduplication: Int
    /// What the duplicates after the first bring (merge); nil until one comes.
    public var later: ObjectRecord?

    /// A group of one object, `survivor`, at `origin`, of `values` under deduplication `deduplication`.
    public init(survivor: ObjectReference, origin: RecordOrigin, values: [ObjectValue], deduplication: Int, later: ObjectRecord? = nil) {
        self.survivor = survivor; self.origin = origin; self.values = values; self.deduplication = deduplication; self.later = later
    }
}

/// Where an `ObjectDeduplicator` keeps what its first pass learns and its second reads: the groups (by
/// tuple and by number), each duplicate's group, and under merge each survivor's group. The in-memory
/// state is `InMemoryDeduplicationState`; TripFormats has one that moves to a temporary database past
/// the run's `--memory-limit` (docs/DESIGN-NOTES.md, "The plan's deduplication in bounded memory").
/// Groups are numbered 0, 1, 2, … in the order they are added.
public protocol ObjectDeduplicationState: AnyObject {
    /// The group of the tuple `values` under deduplication `deduplication`, if one was added (tuples
    /// compare as `[ObjectValue]`'s `==` does).
    func group(_ deduplication: Int, _ values: [ObjectValue]) throws -> Int?
    /// Adds a group of one object; returns its number.
    func add(_ group: ObjectDeduplicationGroup) throws -> Int
    /// The group numbered `index`.
    func group(at index: Int) throws -> ObjectDeduplicationGroup
    /// Replaces the group numbered `index` (its tuple and deduplication stay).
    func replace(_ index: Int, with group: ObjectDeduplicationGroup) throws
    /// Notes that `reference` is a duplicate in group `group`.
    func setDuplicate(_ reference: ObjectReference, group: Int) throws
    /// The group `reference` is a duplicate in, if it is one.
    func duplicate(_ reference: ObjectReference) throws -> Int?
    /// Notes that `reference` is the survivor of group `group`, which has duplicates to merge.
    func setMerging(_ reference: ObjectReference, group: Int) throws
    /// The group `reference` survives with duplicates to merge, if it does.
    func merging(_ reference: ObjectReference) throws -> Int?
    /// Whether any duplicate was noted.
    var hasDuplicates: Bool { get }
}

/// The state of a deduplication held in dictionaries, without bound: what a run without a budget
/// (the library's default) uses, and what the spilling state holds until its share of the budget.
public final class InMemoryDeduplicationState: ObjectDeduplicationState {
    package private(set) var groups: [ObjectDeduplicationGroup] = []
    private var index: [[[ObjectValue]: Int]]
    package private(set) var duplicates: [ObjectReference: Int] = [:]
    package private(set) var merging: [ObjectReference: Int] = [:]
    /// An estimate of the bytes held (measured: a group of one 18-byte title about 330 bytes with its
    /// entry in the index; a duplicate's entry about 70).
    package private(set) var bytes = 0

    /// An empty state for `deduplications` deduplications.
    public init(deduplications: Int) { index = Array(repeating: [:], count: deduplications) }

    /// The group of `values` under `deduplication`, from the dictionary.
    public func group(_ deduplication: Int, _ values: [ObjectValue]) -> Int? { index[deduplication][values] }

    /// Adds `group` as the next number.
    public func add(_ group: ObjectDeduplicationGroup) -> Int {
        let g = groups.count
        index[group.deduplication][group.values] = g
        groups.append(group)
        bytes += InMemoryDeduplicationState.estimate(group)
        return g
    }

    /// The group numbered `index`.
    public func group(at index: Int) -> ObjectDeduplicationGroup { groups[index] }

    /// Replaces the group numbered `index`.
    public func replace(_ index: Int, with group: ObjectDeduplicationGroup) {
        bytes += InMemoryDeduplicationState.estimate(group.later) - InMemoryDeduplicationState.estimate(groups[index].later)
        groups[index] = group
    }

    /// Notes a duplicate in `group`.
    public func setDuplicate(_ reference: ObjectReference, group: Int) {
        if duplicates.updateValue(group, forKey: reference) == nil { bytes += 72 }
    }

    /// The group `reference` is a duplicate in.
    public func duplicate(_ reference: ObjectReference) -> Int? { duplicates[reference] }

    /// Notes the survivor of `group`, which merges.
    public func setMerging(_ reference: ObjectReference, group: Int) {
        if merging.updateValue(group, forKey: reference) == nil { bytes += 72 }
    }

    /// The group `reference` survives with duplicates to merge.
    public func merging(_ reference: ObjectReference) -> Int? { merging[reference] }

    /// Whether any duplicate was noted.
    public var hasDuplicates: Bool { !duplicates.isEmpty }

    /// Empties the state (its groups are elsewhere now).
    package func removeAll() {
        groups = []; duplicates = [:]; merging = [:]
        index = Array(repeating: [:], count: index.count)
        bytes = 0
    }

    private static func estimate(_ group: ObjectDeduplicationGroup) -> Int {
        var size = 260 + 24 * group.values.count
        for v in group.values { size += textBytes(v) }
        return size + estimate(group.later)
    }

    private static func estimate(_ record: ObjectRecord?) -> Int {
        guard let record else { return 0 }
        var size = 120 + 24 * record.attributes.count + 32 * record.relationships.count
        for v in record.attributes { size += textBytes(v) }
        for r in record.relationships { size += 16 * r.count }
        return size
    }

    /// The heap bytes of a value's text past what a String holds inline (15 bytes).
    private static func textBytes(_ v: ObjectValue) -> Int {
        switch v {
        case .string(let s), .decimal(let s), .url(let s): let n = s.utf8.count; return n > 15 ? 32 + n : 0
        case .data(let d): return 32 + d.count
        case .uuid: return 48
        default: return 0
        }
    }
}
