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
    /// Adds a group of one object; returns its number. Pass 1 adds through `group(_:_:orAdd:origin:)`,
    /// whose default calls this; the two states here (in memory, spilling) answer that in one look-up
    /// of their own, so this is the requirement a state that does not is built on.
    func add(_ group: ObjectDeduplicationGroup) throws -> Int
    /// As `group(_:_:)`, and where there is none, adds a group of one object, `survivor` at `origin`,
    /// and returns nil: what pass 1 asks of each object, in one look-up where the state can.
    func group(_ deduplication: Int, _ values: [ObjectValue], orAdd survivor: ObjectReference, origin: RecordOrigin) throws -> Int?
    /// `group(_:_:orAdd:origin:)` for a deduplication of one attribute, given its value: no array made
    /// per object where the state keys one value as itself (the usual unique attribute).
    func group(_ deduplication: Int, one value: ObjectValue, orAdd survivor: ObjectReference, origin: RecordOrigin) throws -> Int?
    /// Room for about `objects` more groups under `deduplication` (a hint, from a reader that knows
    /// how many objects may come: `ObjectRecordReader.expectedObjects`); a state that does not grow
    /// in memory ignores it.
    func expect(_ deduplication: Int, objects: Int)
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
    /// The survivor of the group numbered `index`, and what its later duplicates bring (merge): a
    /// group's parts pass 2 asks for per reference, without making the whole group.
    func survivor(ofGroup index: Int) throws -> ObjectReference
    func later(ofGroup index: Int) throws -> ObjectRecord?
    /// What pass 1 notes of ownership under `first` and `last` (`ObjectDeduplicator`, when it
    /// cascades): per object, references in each of a few lists, in the order noted. Held under the
    /// run's budget as the groups are.
    func append(_ reference: ObjectReference, to object: ObjectReference, in list: OwnershipList) throws
    /// The references noted for `object` in `list`, in the order noted; nil where there is none.
    func references(of object: ObjectReference, in list: OwnershipList) throws -> [ObjectReference]?
    /// Whether any reference was noted in `list`.
    func hasReferences(in list: OwnershipList) -> Bool
}

/// The lists of references an `ObjectDeduplicator` notes per object under `first` and `last`, so that
/// a dropped duplicate's owned objects go with it and both sides of a relationship agree.
public enum OwnershipList: Int, CaseIterable, Sendable {
    /// An object's owners, as its own to-ones (whose inverse cascades) name them.
    case ownersNamed
    /// An object's owners, as their cascading relationships list it.
    case ownersListing
    /// The objects of a deduplicated entity that name the object through a relationship with an inverse.
    case namedBy
}

extension ObjectDeduplicationState {
    /// No room made.
    public func expect(_ deduplication: Int, objects: Int) {}

    /// `group(_:_:orAdd:origin:)` of the tuple of `value`.
    public func group(_ deduplication: Int, one value: ObjectValue, orAdd survivor: ObjectReference, origin: RecordOrigin) throws -> Int? {
        try group(deduplication, [value], orAdd: survivor, origin: origin)
    }

    /// `group(_:_:)`, then `add(_:)` where it finds none.
    public func group(_ deduplication: Int, _ values: [ObjectValue], orAdd survivor: ObjectReference, origin: RecordOrigin) throws -> Int? {
        if let g = try group(deduplication, values) { return g }
        _ = try add(ObjectDeduplicationGroup(survivor: survivor, origin: origin, values: values, deduplication: deduplication))
        return nil
    }

    /// The survivor of the group numbered `index`, from the whole group.
    public func survivor(ofGroup index: Int) throws -> ObjectReference { try group(at: index).survivor }
    /// What the later duplicates of the group numbered `index` bring, from the whole group.
    public func later(ofGroup index: Int) throws -> ObjectRecord? { try group(at: index).later }
}

/// The state of a deduplication held in dictionaries, without bound: what a run without a budget
/// (the library's default) uses, and what the spilling state holds until its share of the budget.
///
/// Kept compact (docs/DESIGN-NOTES.md, "The plan's deduplication in bounded memory"): a group is a
/// `Slot` of about 80 bytes (its origin's optional line and column as plain integers, the merged
/// record of its later duplicates in a dictionary of its own, as only groups with duplicates under
/// merge have one), and a tuple of one value, the usual unique attribute, is that value, not an array.
public final class InMemoryDeduplicationState: ObjectDeduplicationState {
    /// A tuple of values as the index keys it: one value alone (no array to allocate), or several.
    enum Tuple: Hashable {
        case one(ObjectValue)
        case many([ObjectValue])

        init(_ values: [ObjectValue]) { self = values.count == 1 ? .one(values[0]) : .many(values) }

        var values: [ObjectValue] {
            switch self {
            case .one(let v): return [v]
            case .many(let vs): return vs
            }
        }
    }

    /// A group without its merged record: the survivor, its origin (nil line or column as `Int.min`).
    struct Slot {
        var entity: Int32
        var deduplication: Int32
        var key: Int64
        var source: String
        var record: Int
        var line: Int
        var column: Int
        var tuple: Tuple

        init(_ g: ObjectDeduplicationGroup) {
            self.init(survivor: g.survivor, origin: g.origin, deduplication: g.deduplication, tuple: Tuple(g.values))
        }

        init(survivor: ObjectReference, origin: RecordOrigin, deduplication: Int, tuple: Tuple) {
            entity = Int32(truncatingIfNeeded: survivor.entity); self.deduplication = Int32(truncatingIfNeeded: deduplication)
            key = survivor.key; source = origin.source; record = origin.record
            line = origin.line ?? .min; column = origin.column ?? .min
            self.tuple = tuple
        }

        func group(later: ObjectRecord?) -> ObjectDeduplicationGroup {
            ObjectDeduplicationGroup(survivor: ObjectReference(entity: Int(entity), key: key),
                                     origin: RecordOrigin(source: source, record: record, line: line == .min ? nil : line,
                                                          column: column == .min ? nil : column),
                                     values: tuple.values, deduplication: Int(deduplication), later: later)
        }
    }

    /// Used by one thread at a time, in calls that do not overlap (`ObjectDeduplicator`): no access
    /// check per look-up.
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private var laters: [Int: ObjectRecord] = [:]
    @exclusivity(unchecked) private var index: [[Tuple: Int]]
    @exclusivity(unchecked) package private(set) var duplicates: [ObjectReference: Int] = [:]
    @exclusivity(unchecked) package private(set) var merging: [ObjectReference: Int] = [:]
    /// Per `OwnershipList` (a space each), per object: its references, in the order noted.
    @exclusivity(unchecked) package private(set) var lists = ObjectReferenceLists(spaces: OwnershipList.allCases.count)
    /// An estimate of the bytes held (measured: a group of one 18-byte title about 190 bytes with its
    /// entry in the index; a duplicate's entry about 70).
    package private(set) var bytes = 0

    /// An empty state for `deduplications` deduplications.
    public init(deduplications: Int) { index = Array(repeating: [:], count: deduplications) }

    /// How many groups there are (numbered 0 up to this).
    package var count: Int { slots.count }

    /// The group of `values` under `deduplication`, from the dictionary.
    public func group(_ deduplication: Int, _ values: [ObjectValue]) -> Int? { index[deduplication][Tuple(values)] }

    /// Adds `group` as the next number.
    public func add(_ group: ObjectDeduplicationGroup) -> Int {
        let g = slots.count
        let slot = Slot(group)
        index[group.deduplication][slot.tuple] = g
        slots.append(slot)
        if let later = group.later { laters[g] = later }
        bytes += InMemoryDeduplicationState.estimate(group)
        return g
    }

    /// The group of `values`, or a new group of one object, `survivor` at `origin`, and nil: one
    /// look-up of the tuple in the dictionary (`subscript(_:default:)`'s modify finds or inserts).
    public func group(_ deduplication: Int, _ values: [ObjectValue], orAdd survivor: ObjectReference, origin: RecordOrigin) -> Int? {
        group(deduplication, Tuple(values), orAdd: survivor, origin: origin) { InMemoryDeduplicationState.estimate(values: values) }
    }

    /// `group(_:_:orAdd:origin:)` of the tuple of one value, keyed as itself.
    public func group(_ deduplication: Int, one value: ObjectValue, orAdd survivor: ObjectReference, origin: RecordOrigin) -> Int? {
        group(deduplication, .one(value), orAdd: survivor, origin: origin) { InMemoryDeduplicationState.estimate(value: value) }
    }

    /// The group of `tuple`, or a new one counted as `size()` bytes, and nil.
    private func group(_ deduplication: Int, _ tuple: Tuple, orAdd survivor: ObjectReference, origin: RecordOrigin,
                       size: () -> Int) -> Int? {
        let g = slots.count
        if let found = index[deduplication].findOrInsert(tuple, default: g, { $0 != g ? $0 : nil }) { return found }
        slots.append(Slot(survivor: survivor, origin: origin, deduplication: deduplication, tuple: tuple))
        bytes += size()
        return nil
    }

    /// Room in the index and the groups for `objects` more, made at once rather than by doubling as
    /// they come (each doubling rehashes every tuple: at a million objects, about 0.8 % of a plan's
    /// run). The room (125 to 165 bytes a group) is about what those groups count in `bytes` as they
    /// come; it is not counted before. The spilling state limits it (`SpillingDeduplicationState.expect`).
    public func expect(_ deduplication: Int, objects: Int) {
        guard objects > 0, deduplication >= 0, deduplication < index.count else { return }
        index[deduplication].reserveCapacity(index[deduplication].count + objects)
        slots.reserveCapacity(slots.count + objects)
    }

    /// The group numbered `index`.
    public func group(at index: Int) -> ObjectDeduplicationGroup { slots[index].group(later: laters[index]) }

    /// The survivor of the group numbered `index`, from its slot (no group made).
    public func survivor(ofGroup index: Int) -> ObjectReference { ObjectReference(entity: Int(slots[index].entity), key: slots[index].key) }
    /// The later duplicates' merged record of the group numbered `index`.
    public func later(ofGroup index: Int) -> ObjectRecord? { laters[index] }

    /// Replaces the group numbered `index`.
    public func replace(_ index: Int, with group: ObjectDeduplicationGroup) {
        bytes += InMemoryDeduplicationState.estimate(group.later) - InMemoryDeduplicationState.estimate(laters[index])
        let tuple = slots[index].tuple
        slots[index] = Slot(group)
        slots[index].tuple = tuple
        laters[index] = group.later
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

    /// Notes `reference` in `object`'s list `list`: about 100 bytes for an object's first (the
    /// dictionary's entry and the array), 24 for each after.
    public func append(_ reference: ObjectReference, to object: ObjectReference, in list: OwnershipList) {
        bytes += lists.append(reference, to: object, in: list.rawValue) ? 100 : 24
    }

    /// The references noted for `object` in `list`.
    public func references(of object: ObjectReference, in list: OwnershipList) -> [ObjectReference]? {
        lists.references(of: object, in: list.rawValue)
    }

    /// Whether any reference was noted in `list`.
    public func hasReferences(in list: OwnershipList) -> Bool { lists.count(in: list.rawValue) > 0 }

    /// Empties the state (its groups are elsewhere now).
    package func removeAll() {
        slots = []; laters = [:]; duplicates = [:]; merging = [:]
        lists = ObjectReferenceLists(spaces: OwnershipList.allCases.count)
        index = Array(repeating: [:], count: index.count)
        bytes = 0
    }

    private static func estimate(_ group: ObjectDeduplicationGroup) -> Int {
        estimate(values: group.values) + estimate(group.later)
    }

    /// A group of one object's bytes, by its tuple.
    private static func estimate(values: [ObjectValue]) -> Int {
        if values.count == 1 { return estimate(value: values[0]) }
        var size = 150 + (values.count > 1 ? 56 + 24 * values.count : 0)
        for v in values { size += textBytes(v) }
        return size
    }

    /// A group of one object's bytes, by its tuple of one value.
    private static func estimate(value: ObjectValue) -> Int { 150 + textBytes(value) }

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

/// Where an `ObjectMigrationReader` keeps the objects its first pass saw set aside or dropped (in the
/// target's terms), so that its second pass removes references to them. `InMemoryReferenceSet` holds
/// them in a `Set`; TripFormats has one that moves to a temporary database past the run's
/// `--memory-limit` (docs/DESIGN-NOTES.md, "Keys and set-aside objects in bounded memory").
public protocol ObjectReferenceSet: AnyObject {
    /// Adds `reference`.
    func insert(_ reference: ObjectReference) throws
    /// Whether `reference` was added.
    func contains(_ reference: ObjectReference) throws -> Bool
    /// Whether nothing was added.
    var isEmpty: Bool { get }
}

/// The objects set aside in a `Set`, without bound: the library's default.
public final class InMemoryReferenceSet: ObjectReferenceSet {
    private var references: Set<ObjectReference> = []

    /// An empty set.
    public init() {}

    /// Adds `reference`.
    public func insert(_ reference: ObjectReference) { references.insert(reference) }
    /// Whether `reference` was added.
    public func contains(_ reference: ObjectReference) -> Bool { references.contains(reference) }
    /// Whether nothing was added.
    public var isEmpty: Bool { references.isEmpty }
}
