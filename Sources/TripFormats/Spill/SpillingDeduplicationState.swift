#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TripKit

/// The state of an app's plan's deduplication (`ObjectDeduplicationState`) under the run's budget:
/// in memory (`InMemoryDeduplicationState`) while the run's holdings together stay under
/// `SpillBudget.tripBytes`, then, all at once and for the rest of the run, in a temporary SQLite
/// database in `--temp-dir` (`DeduplicationTable`). The resolver asks the same questions in the same
/// order either way, so the output, the records set aside and the first duplicate `fail` names are
/// the same (docs/DESIGN-NOTES.md, "The plan's deduplication in bounded memory").
package final class SpillingDeduplicationState: ObjectDeduplicationState {
    private let budget: SpillBudget
    private let memory: InMemoryDeduplicationState
    /// Read per look-up, by one thread at a time (as the memory state's dictionaries): unchecked.
    @exclusivity(unchecked) private var table: DeduplicationTable?
    /// What this state counts in the budget: the memory state's estimate, then the database's cache.
    private var held = 0

    /// An empty state of `deduplications` deduplications, under `budget`.
    package init(deduplications: Int, budget: SpillBudget) {
        self.budget = budget
        memory = InMemoryDeduplicationState(deduplications: deduplications)
    }

    /// Where this state says what it spilled when it ends before its run, and its place there (set
    /// by the holdings that made it).
    var ended: (EndedSpills, Int)?

    deinit {
        _ = budget.hold(-held)
        if table != nil, let (ledger, slot) = ended { ledger.note(slot, Self.part, entries: spilledEntries, bytes: spilledBytes) }
    }

    /// What the summary calls a plan's deduplication state when it spills.
    package static let part = "the plan's deduplication"

    /// Whether the state went to a temporary database, and how many groups, duplicates and merging
    /// survivors it held there then and since.
    package var spilled: Bool { table != nil }
    package var spilledEntries: Int { table?.entries ?? 0 }
    /// The bytes of the database (its pages).
    package var spilledBytes: Int { (try? table?.bytes()) ?? 0 }

    package func group(_ deduplication: Int, _ values: [ObjectValue]) throws -> Int? {
        if let table { return try table.group(deduplication, values) }
        return memory.group(deduplication, values)
    }

    package func add(_ group: ObjectDeduplicationGroup) throws -> Int {
        if let table { return try table.add(group) }
        let g = memory.add(group)
        try account()
        return g
    }

    package func group(_ deduplication: Int, _ values: [ObjectValue], orAdd survivor: ObjectReference, origin: RecordOrigin) throws -> Int? {
        if let table { return try table.group(deduplication, values, orAdd: survivor, origin: origin) }
        return try accounted(memory.group(deduplication, values, orAdd: survivor, origin: origin))
    }

    /// The memory state's room for `objects` groups, made at once and counted in the budget only as
    /// the groups come: taken, at 192 bytes a group (the room is 125 to 165: a slot of 80 bytes and a
    /// dictionary entry of 32 at a load of 3/8 to 3/4), from the run's allowance for such room, an
    /// eighth of its share (`SpillBudget.room`), whatever the number of deduplications and states;
    /// none once spilled.
    package func expect(_ deduplication: Int, objects: Int) {
        guard table == nil, objects > 0 else { return }
        memory.expect(deduplication, objects: budget.room(min(objects, Int.max / 192) * 192) / 192)
    }

    package func group(_ deduplication: Int, one value: ObjectValue, orAdd survivor: ObjectReference, origin: RecordOrigin) throws -> Int? {
        if let table { return try table.group(deduplication, [value], orAdd: survivor, origin: origin) }
        return try accounted(memory.group(deduplication, one: value, orAdd: survivor, origin: origin))
    }

    /// The memory state's answer to a group-or-add: a group added (nil) is counted in the budget.
    private func accounted(_ found: Int?) throws -> Int? {
        if found == nil { try account() }
        return found
    }

    package func group(at index: Int) throws -> ObjectDeduplicationGroup {
        if let table { return try table.group(at: index) }
        return memory.group(at: index)
    }

    package func survivor(ofGroup index: Int) throws -> ObjectReference {
        if let table { return try table.group(at: index).survivor }
        return memory.survivor(ofGroup: index)
    }

    package func later(ofGroup index: Int) throws -> ObjectRecord? {
        if let table { return try table.group(at: index).later }
        return memory.later(ofGroup: index)
    }

    package func replace(_ index: Int, with group: ObjectDeduplicationGroup) throws {
        if let table { return try table.replace(index, with: group) }
        memory.replace(index, with: group)
        try account()
    }

    package func setDuplicate(_ reference: ObjectReference, group: Int) throws {
        if let table { return try table.set(.duplicate, reference, group) }
        memory.setDuplicate(reference, group: group)
        try account()
    }

    package func duplicate(_ reference: ObjectReference) throws -> Int? {
        if let table { return try table.get(.duplicate, reference) }
        return memory.duplicate(reference)
    }

    package func setMerging(_ reference: ObjectReference, group: Int) throws {
        if let table { return try table.set(.merging, reference, group) }
        memory.setMerging(reference, group: group)
        try account()
    }

    package func merging(_ reference: ObjectReference) throws -> Int? {
        if let table { return try table.get(.merging, reference) }
        return memory.merging(reference)
    }

    package var hasDuplicates: Bool { table?.hasDuplicates ?? memory.hasDuplicates }

    package func append(_ reference: ObjectReference, to object: ObjectReference, in list: OwnershipList) throws {
        if let table { return try table.append(reference, to: object, in: list.rawValue) }
        memory.append(reference, to: object, in: list)
        try account()
    }

    package func references(of object: ObjectReference, in list: OwnershipList) throws -> [ObjectReference]? {
        if let table { return try table.references(of: object, in: list.rawValue) }
        return memory.references(of: object, in: list)
    }

    package func hasReferences(in list: OwnershipList) -> Bool {
        table?.hasReferences(in: list.rawValue) ?? memory.hasReferences(in: list)
    }

    /// Notes the memory state's growth in the budget, 64 KB at a time (as `ObjectKeyTable` does: the
    /// budget's lock is not taken per group or noted reference); past it, moves everything to a
    /// temporary database.
    private func account() throws {
        let delta = memory.bytes - held
        guard delta >= 64 << 10 || delta < 0 else { return }
        held = memory.bytes
        if budget.hold(delta) { try spill() }
    }

    private func spill() throws {
        budget.startingToSpill()
        let cache = TemporaryDatabase.cacheBytes(budget)
        let table = try DeduplicationTable(directory: budget.directory, cacheBytes: cache)
        for g in 0..<memory.count { try table.insert(g, memory.group(at: g)) }
        for (reference, g) in memory.duplicates { try table.set(.duplicate, reference, g) }
        for (reference, g) in memory.merging { try table.set(.merging, reference, g) }
        try memory.lists.forEach { l, object, references in
            for reference in references { try table.append(reference, to: object, in: l) }
        }
        self.table = table
        memory.removeAll()
        _ = budget.hold(cache - held)
        held = cache
    }
}

/// What one object run holds under its one budget and may spill, made in one place: each deduplicating
/// stage's `SpillingDeduplicationState` (`make`, what `ObjectMigrationReader` is given), the objects a
/// plan sets aside (`setAside`) and a graph reader's index of keys (`keys()`), both `ObjectKeyTable`s;
/// afterwards, what spilled (`ObjectConversionSummary.note(spilled:)`, with the writer's names and
/// waiting objects, which the budget counts).
///
/// The states and indexes it makes are held by their readers, not here (weakly here): one a reader
/// let go of before the run's end (a required relationship's reread, an append's store side) gives
/// its memory and its share of the budget back then, and says what it spilled (`EndedSpills`) for
/// these holdings' summary (another run's holdings may share the budget: their summary is their own).
package final class SpillingObjectHoldings {
    package let budget: SpillBudget
    /// A holding made, held weakly, and its place in `ended` (in the order made).
    private final class Made<Held: AnyObject> {
        weak var held: Held?
        let slot: Int
        init(_ held: Held, slot: Int) { self.held = held; self.slot = slot }
    }
    /// One entry per state or index made in the run (a few: one per read at most), kept when it ends
    /// so that the summary names every part in the same order however their readers let them go.
    private var madeStates: [Made<SpillingDeduplicationState>] = []
    private var madeIndexes: [Made<ObjectKeyTable>] = []
    private let ended = EndedSpills()
    /// The objects a plan's first pass sets aside (in the target's terms), references to which its second removes.
    package let setAside: ObjectKeyTable
    /// The objects rejected for a required to-one relationship (`ObjectRequiredRelationshipReader`).
    package let rejectedForRequired: ObjectKeyTable

    package init(budget: SpillBudget) {
        self.budget = budget
        setAside = ObjectKeyTable("the objects set aside", budget: budget)
        rejectedForRequired = ObjectKeyTable("the objects rejected for a required relationship", budget: budget)
    }

    /// A new state of `deduplications` deduplications under the budget.
    package func make(_ deduplications: Int) -> any ObjectDeduplicationState {
        let state = SpillingDeduplicationState(deduplications: deduplications, budget: budget)
        let slot = madeStates.count + madeIndexes.count
        state.ended = (ended, slot)
        madeStates.append(Made(state, slot: slot))
        return state
    }

    /// A new index of keys for a reader of names (JSON, JSON Lines, YAML, XML, a tables directory) under the budget.
    package func keys() -> ObjectKeyTable {
        let table = ObjectKeyTable("the reader's index of keys", budget: budget)
        let slot = madeStates.count + madeIndexes.count
        table.ended = (ended, slot)
        madeIndexes.append(Made(table, slot: slot))
        return table
    }

    /// The deduplication states made that are still held (by a reader).
    package var made: [SpillingDeduplicationState] { madeStates.compactMap(\.held) }
    /// The indexes of keys made that are still held (one per input read; a plan's second read reuses the first's).
    package var indexes: [ObjectKeyTable] { madeIndexes.compactMap(\.held) }

    /// What spilled, as (part, entries, bytes), in one order whatever ended when: the indexes of keys
    /// (in the order made), the objects set aside, those rejected for a required relationship, the
    /// deduplication states (in the order made); each still held as it is now, each that ended as it
    /// was then. Asked once the run's readers have ended (a read-ahead's thread is joined when its
    /// reader is let go), so that none ends while it is asked.
    package var spilledParts: [(part: String, entries: Int, bytes: Int)] {
        let before = ended.parts
        var parts: [(part: String, entries: Int, bytes: Int)] = []
        func take(_ table: ObjectKeyTable) {
            if table.spilled { parts.append((table.part, table.spilledEntries, table.spilledBytes)) }
        }
        for index in madeIndexes {
            if let table = index.held { take(table) } else if let part = before[index.slot] { parts.append(part) }
        }
        take(setAside)
        take(rejectedForRequired)
        for made in madeStates {
            if let state = made.held {
                if state.spilled { parts.append((SpillingDeduplicationState.part, state.spilledEntries, state.spilledBytes)) }
            } else if let part = before[made.slot] {
                parts.append(part)
            }
        }
        return parts
    }
}

/// What the spilled holdings of one run that ended before it held on disk last, as (part, entries,
/// bytes) by their place among the holdings made; noted from whichever thread lets a holding go.
package final class EndedSpills: Sendable {
    private let noted = Mutex<[Int: (part: String, entries: Int, bytes: Int)]>([:])

    func note(_ slot: Int, _ part: String, entries: Int, bytes: Int) { noted.withLock { $0[slot] = (part, entries, bytes) } }

    var parts: [Int: (part: String, entries: Int, bytes: Int)] { noted.withLock { $0 } }
}
