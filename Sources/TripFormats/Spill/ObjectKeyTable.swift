import TripKit

/// What an object run looks objects up by, under the run's budget: a map of (space, whole number) to
/// a whole number, of (space, text) to an object's reference, and of (space, object) to a list of
/// references in the order appended, or in reference order once its space is sorted (`sortLists`; the
/// three kinds' spaces are apart). A space is the caller's to choose
/// (a family of entities, an entity). In dictionaries while the run's holdings together stay under
/// `SpillBudget.tripBytes`, then, all at once and for the rest of the run, in a `TemporaryDatabase`
/// in `--temp-dir`, every later question asked of it. Held by a reader's index of keys
/// (`ObjectGraphIndex`, `ObjectReferenceIndex` with a tables directory's to-manys; from its first
/// pass to the run's end) and by a plan's run for the objects it
/// sets aside (`ObjectReferenceSet`); docs/DESIGN-NOTES.md, "Keys and set-aside objects in bounded memory".
///
/// A text is found by a hash of (space, text) with Swift's `Hasher` and compared with `==` as read
/// back, so texts are equal on disk exactly when they are in memory (canonical equivalence).
package final class ObjectKeyTable {
    /// What the table holds, as the summary names it when it spills ("the reader's index of keys").
    package let part: String
    private let budget: SpillBudget?
    /// Per space: read per object and per reference by the reading thread alone, no access checks.
    /// A space's numbers 0..<n are in `dense` (a value each, `absent` where none) while they come
    /// about in order (keys 1, 2, … as tripconv and most writers number objects); the others, and
    /// all of a space once one number came far out of order, in `numbers`. A number is in one of the two.
    @exclusivity(unchecked) private var dense: [[Int64]] = []
    @exclusivity(unchecked) private var numbers: [[Int64: Int64]] = []
    @exclusivity(unchecked) private var texts: [[String: ObjectReference]] = []
    @exclusivity(unchecked) private var lists = ObjectReferenceLists()
    /// The list spaces sorted (`sortLists`): in memory their lists are in order, on disk read in order.
    @exclusivity(unchecked) private var sortedSpaces: Set<Int> = []
    /// What this table counts in the budget (the dictionaries' estimate, then the database's cache),
    /// and what it grew by since it last told the budget.
    private var held = 0
    private var pending = 0
    private var memoryEntries = 0
    /// Read per look-up as `dense` is, by the reading thread alone: unchecked as it is.
    @exclusivity(unchecked) private var database: Database?

    /// An empty table named `part` under `budget`; nil keeps it in memory without bound.
    package init(_ part: String, budget: SpillBudget?) {
        self.part = part
        self.budget = budget
    }

    /// Where this table says what it spilled when it ends before its run, and its place there (set
    /// by the holdings that made it).
    var ended: (EndedSpills, Int)?

    deinit {
        _ = budget?.hold(-held)
        if database != nil, let (ledger, slot) = ended { ledger.note(slot, part, entries: spilledEntries, bytes: spilledBytes) }
    }

    /// The bytes the run's holdings may keep in memory (`SpillBudget.tripBytes`); nil without a budget.
    package var budgetBytes: Int? { budget?.tripBytes }

    /// Counts `bytes` more (fewer when negative) that a reader holds beside this table in the run's
    /// budget: true when the run's holdings are now over it (never without a budget). Safe from any
    /// thread (the budget's lock); touches nothing else of the table.
    package func holdBeside(_ bytes: Int) -> Bool { budget?.hold(bytes) ?? false }

    /// Whether the table went to a temporary database, the entries it held there, and its bytes.
    package var spilled: Bool { database != nil }
    package var spilledEntries: Int { database?.entries ?? 0 }
    package var spilledBytes: Int { (try? database.map { try TemporaryDatabase.bytes($0.connection) }) ?? 0 }
    /// Whether it holds nothing.
    package var isEmpty: Bool { database == nil ? memoryEntries == 0 : database!.entries == 0 }

    /// Sets `number`'s value in `space`; true when it had one (replaced).
    @discardableResult
    package func update(_ space: Int, _ number: Int64, _ value: Int64) throws -> Bool {
        if let database { return try database.update(space, number, value) }
        if space >= numbers.count {
            numbers += Array(repeating: [:], count: space + 1 - numbers.count)
            dense += Array(repeating: [], count: space + 1 - dense.count)
            denseEntries += Array(repeating: 0, count: space + 1 - denseEntries.count)
        }
        if number >= 0, number < dense[space].count {
            let had = dense[space][Int(number)] != Self.absent
            if value != Self.absent {
                dense[space][Int(number)] = value
                if !had {
                    denseEntries[space] += 1
                    try grew(0)
                }
                return had || numbers[space].removeValue(forKey: number) != nil
            }
            // Int64.min, `absent` itself, is kept in `numbers` (no key table's value is, today).
            if had {
                dense[space][Int(number)] = Self.absent
                denseEntries[space] -= 1
                numbers[space][number] = value
                return true
            }
        } else if value != Self.absent, number >= 0, numbers[space].isEmpty, let slots = denseGrowth(space, to: number) {
            for _ in dense[space].count..<Int(number) { dense[space].append(Self.absent) }
            dense[space].append(value)
            denseEntries[space] += 1
            // 8 bytes a slot, and as many again of the capacity the array grows ahead by.
            try grew(16 * slots)
            return false
        }
        guard numbers[space].updateValue(value, forKey: number) == nil else { return true }
        try grew(40)
        return false
    }

    /// No value, in `dense`.
    private static let absent = Int64.min
    /// Per space, the numbers `dense` holds.
    private var denseEntries: [Int] = []

    /// The slots `dense[space]` grows by to hold `number`, nil where that would leave it mostly empty
    /// (a slot an entry at most four, past the first 4,096): such a number goes to `numbers`.
    private func denseGrowth(_ space: Int, to number: Int64) -> Int? {
        // Past 2^40 first: `Int64.max` is a key a file may give.
        guard number < 1 << 40, number < 4096 || Int(number) + 1 <= 4 * (denseEntries[space] + 1) else { return nil }
        return Int(number) + 1 - dense[space].count
    }

    /// The value of `number` in `space`.
    package func value(_ space: Int, _ number: Int64) throws -> Int64? {
        if let database { return try database.value(space, number) }
        guard space < numbers.count else { return nil }
        if number >= 0, number < dense[space].count {
            let v = dense[space][Int(number)]
            if v != Self.absent { return v }
        }
        return numbers[space].isEmpty ? nil : numbers[space][number]
    }

    /// Notes `reference` for `text` in `space` unless the text has one already (the first stays).
    package func insert(_ space: Int, _ text: String, _ reference: ObjectReference) throws {
        if let database { return try database.insert(space, text, reference) }
        if space >= texts.count { texts += Array(repeating: [:], count: space + 1 - texts.count) }
        guard texts[space][text] == nil else { return }
        texts[space][text] = reference
        let n = text.utf8.count
        try grew(64 + (n > 15 ? 32 + n : 0))
    }

    /// The reference noted for `text` in `space`.
    package func reference(_ space: Int, _ text: String) throws -> ObjectReference? {
        if let database { return try database.reference(space, text) }
        return space < texts.count ? texts[space][text] : nil
    }

    /// Appends `reference` to `object`'s list in list space `space`: about 100 bytes for an object's
    /// first, 16 for each after.
    package func append(_ space: Int, _ object: ObjectReference, _ reference: ObjectReference) throws {
        assert(!sortedSpaces.contains(space), "an append to a sorted list space")
        if let database { return try database.append(space, object, reference) }
        try grew(lists.append(reference, to: object, in: space) ? 100 : 16)
    }

    /// `object`'s list in list space `space`, in the order appended (in reference order where the space
    /// is sorted); nil where none was.
    package func references(_ space: Int, _ object: ObjectReference) throws -> [ObjectReference]? {
        if let database { return try database.references(space, object, sorted: sortedSpaces.contains(space)) }
        return lists.references(of: object, in: space)
    }

    /// Puts the lists of list space `space`, complete (nothing is appended to it after), in reference
    /// order (`ObjectReference`'s `<`) for every later read: in memory each is sorted once, here (and
    /// so moved to a database if the table spills); in a database they are read in that order.
    package func sortLists(_ space: Int) {
        sortedSpaces.insert(space)
        if database == nil { lists.sort(space) }
    }

    /// Notes growth; tells the budget every 64 KiB, and past it moves everything to a database.
    private func grew(_ bytes: Int) throws {
        memoryEntries += 1
        pending += bytes
        guard pending >= 64 << 10, let budget else { return }
        held += pending
        defer { pending = 0 }
        if budget.hold(pending) { try spill(budget) }
    }

    private func spill(_ budget: SpillBudget) throws {
        budget.startingToSpill()
        let cache = TemporaryDatabase.cacheBytes(budget, share: 16)
        let database = try Database(directory: budget.directory, part: part, cacheBytes: cache)
        for (space, values) in dense.enumerated() {
            for (number, value) in values.enumerated() where value != Self.absent { _ = try database.update(space, Int64(number), value) }
        }
        for (space, map) in numbers.enumerated() {
            for (number, value) in map { _ = try database.update(space, number, value) }
        }
        for (space, map) in texts.enumerated() {
            for (text, reference) in map { try database.insert(space, text, reference) }
        }
        try lists.forEach { space, object, list in
            for reference in list { try database.append(space, object, reference) }
        }
        self.database = database
        numbers = []; dense = []; denseEntries = []; texts = []; lists = ObjectReferenceLists()
        memoryEntries = 0
        _ = budget.hold(cache - held)
        held = cache
    }

    /// The table on disk: `num(s, n, v)` keyed by space and number; `txt(h, s, t, e, k)` keyed by the
    /// text's hash, its space and text; the lists in `ObjectReferenceListTable`'s `lst`, a sorted
    /// space's read in reference order.
    private final class Database {
        let connection: SQLiteConnection
        let directory: String
        private let getNumber, setNumber, getText, setText: SQLiteStatement
        private let lists: ObjectReferenceListTable
        private(set) var entries = 0

        init(directory: String, part: String, cacheBytes: Int) throws {
            self.directory = directory
            let c = try TemporaryDatabase.open(directory: directory, prefix: "keys", cacheBytes: cacheBytes, schema: """
                CREATE TABLE num(s INTEGER NOT NULL, n INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY(s, n)) WITHOUT ROWID;
                CREATE TABLE txt(h INTEGER NOT NULL, s INTEGER NOT NULL, t TEXT NOT NULL, e INTEGER NOT NULL, k INTEGER NOT NULL,
                                 PRIMARY KEY(h, s, t)) WITHOUT ROWID;
                \(ObjectReferenceListTable.schema)
                """)
            connection = c
            do {
                getNumber = try c.prepare("SELECT v FROM num WHERE s = ? AND n = ?")
                setNumber = try c.prepare("INSERT OR REPLACE INTO num(s, n, v) VALUES (?, ?, ?)")
                getText = try c.prepare("SELECT t, e, k FROM txt WHERE h = ? AND s = ?")
                setText = try c.prepare("INSERT INTO txt(h, s, t, e, k) VALUES (?, ?, ?, ?, ?)")
                lists = try ObjectReferenceListTable(c)
            } catch let error as TripError {
                throw TemporaryDatabase.failure(error, directory: directory)
            }
        }

        private func io<T>(_ body: () throws -> T) throws -> T {
            do { return try body() } catch let error as TripError { throw TemporaryDatabase.failure(error, directory: directory) }
        }

        private static func hash(_ space: Int, _ text: String) -> Int64 {
            var h = Hasher()
            h.combine(space)
            h.combine(text)
            return Int64(truncatingIfNeeded: h.finalize())
        }

        func value(_ space: Int, _ number: Int64) throws -> Int64? {
            try io {
                try getNumber.bind(1, Int64(space)); try getNumber.bind(2, number)
                defer { getNumber.reset() }
                return try getNumber.step() ? getNumber.int64(0) : nil
            }
        }

        func update(_ space: Int, _ number: Int64, _ value: Int64) throws -> Bool {
            let had = try self.value(space, number) != nil
            try io {
                try setNumber.bind(1, Int64(space)); try setNumber.bind(2, number); try setNumber.bind(3, value)
                try setNumber.run()
            }
            if !had { entries += 1 }
            return had
        }

        func reference(_ space: Int, _ text: String) throws -> ObjectReference? {
            try reference(space, text, hash: Database.hash(space, text))
        }

        private func reference(_ space: Int, _ text: String, hash: Int64) throws -> ObjectReference? {
            try io {
                try getText.bind(1, hash); try getText.bind(2, Int64(space))
                defer { getText.reset() }
                while try getText.step() {
                    if getText.text(0) == text { return ObjectReference(entity: Int(getText.int64(1)), key: getText.int64(2)) }
                }
                return nil
            }
        }

        func insert(_ space: Int, _ text: String, _ reference: ObjectReference) throws {
            let h = Database.hash(space, text)
            guard try self.reference(space, text, hash: h) == nil else { return }
            try io {
                try setText.bind(1, h); try setText.bind(2, Int64(space)); try setText.bind(3, text)
                try setText.bind(4, Int64(reference.entity)); try setText.bind(5, reference.key)
                try setText.run()
            }
            entries += 1
        }

        func append(_ space: Int, _ object: ObjectReference, _ reference: ObjectReference) throws {
            try io { try lists.append(reference, to: object, in: space) }
            entries += 1
        }

        func references(_ space: Int, _ object: ObjectReference, sorted: Bool) throws -> [ObjectReference]? {
            try io { try lists.references(of: object, in: space, sorted: sorted) }
        }
    }
}

/// The objects a plan's run sets aside, as a set of references (`ObjectReferenceSet`) held in an
/// `ObjectKeyTable` under the run's budget: one space per entity.
extension ObjectKeyTable: ObjectReferenceSet {
    package func insert(_ reference: ObjectReference) throws { try update(reference.entity, reference.key, 0) }
    package func contains(_ reference: ObjectReference) throws -> Bool {
        reference.entity >= 0 ? try value(reference.entity, reference.key) != nil : false
    }
}
