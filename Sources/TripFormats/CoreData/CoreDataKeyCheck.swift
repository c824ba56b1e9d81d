import TripKit

/// Whether every key a relationship holds names a row of its destination (`CoreDataObjectLayout.Check`):
/// the destination's keys are set in a bitmap (`CoreDataKeyBits`), then one scan of the references tests
/// each key against it. SQLite's `NOT IN` kept the keys in a temporary index and probed it once per
/// reference, about twice the time (docs/BENCHMARKS.md). Where a reference names no row, where a key is
/// not an integer, or where the keys are too sparse for the bitmap, the `NOT IN` statement itself is
/// run, so the row a message names is the one it always named.
///
/// The reader (`CoreDataEntityCursor`) tests most references as it reads their rows instead of
/// scanning them here first (`bits(_:_:)` then `firstDangling` on a miss).
enum CoreDataKeyCheck {
    static let maximumBits: Int64 = 1 << 26

    /// The first reference naming no row, (owner `Z_PK`, key), least owner first; nil when there is none.
    static func firstDangling(_ connection: SQLiteConnection, _ queries: CoreDataObjectLayout.CheckQueries) throws -> (owner: Int64, key: Int64)? {
        if try allFound(connection, queries) { return nil }
        let s = try connection.prepare(queries.first)
        return try s.step() ? (s.int64(0), s.int64(1)) : nil
    }

    /// The destination's keys (`queries.keys`) as a bitmap; nil where they are not all integers or
    /// are too sparse for one (`CoreDataKeyBits.insert`).
    static func bits(_ connection: SQLiteConnection, _ queries: CoreDataObjectLayout.CheckQueries) throws -> CoreDataKeyBits? {
        var bits = CoreDataKeyBits()
        let keys = try connection.prepare(queries.keys)
        while try keys.step() {
            guard keys.storage(0) == .integer, bits.insert(keys.int64(0)) else { return nil }
        }
        return bits
    }

    /// True when every reference names a key; false when one may not (the `NOT IN` statement tells).
    private static func allFound(_ connection: SQLiteConnection, _ queries: CoreDataObjectLayout.CheckQueries) throws -> Bool {
        let range = try connection.prepare(queries.range)
        guard try range.step() else { return false }
        let references = try connection.prepare(queries.references)
        // No rows at all: any reference names no row.
        if range.isNull(0) { return try !references.step() }
        guard range.storage(0) == .integer, range.storage(1) == .integer else { return false }
        let low = range.int64(0)
        let (span, overflow) = range.int64(1).subtractingReportingOverflow(low)
        guard !overflow, span >= 0, span < maximumBits else { return false }
        var bits = [UInt64](repeating: 0, count: Int(span >> 6) + 1)
        let keys = try connection.prepare(queries.keys)
        while try keys.step() {
            guard keys.storage(0) == .integer else { return false }
            let k = UInt64(bitPattern: keys.int64(0) &- low)
            bits[Int(k >> 6)] |= 1 << (k & 63)
        }
        let limit = UInt64(span)
        while try references.step() {
            guard references.storage(0) == .integer else { return false }
            let k = UInt64(bitPattern: references.int64(0) &- low)
            guard k <= limit, bits[Int(k >> 6)] & (1 << (k & 63)) != 0 else { return false }
        }
        return true
    }
}

/// A set of row keys (`Z_PK`s) as a bitmap from the first key inserted: a bit per key up to the
/// greatest, built in ascending order. It refuses (`insert` false) a key below the first, or one
/// whose bit would make the map hold more than 64 bits per key inserted (plus 4,096) or more than
/// `CoreDataKeyCheck.maximumBits` (8 MiB): keys that sparse are checked by `NOT IN` instead.
struct CoreDataKeyBits {
    private var low: Int64 = 0
    private var words: [UInt64] = []
    private var count = 0

    /// Adds `key`; false when the map cannot hold it (then it is not to be used).
    mutating func insert(_ key: Int64) -> Bool {
        if count == 0 { low = key }
        let (offset, overflow) = key.subtractingReportingOverflow(low)
        guard !overflow, offset >= 0, offset < CoreDataKeyCheck.maximumBits, offset < 64 * Int64(count) + 4096 else { return false }
        let word = Int(offset >> 6)
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: max(word + 1 - words.count, words.count))) }
        words[word] |= 1 << UInt64(offset & 63)
        count += 1
        return true
    }

    /// Whether `key` was inserted.
    func contains(_ key: Int64) -> Bool {
        let k = UInt64(bitPattern: key &- low)
        let word = Int(truncatingIfNeeded: k >> 6)
        return k >> 6 < UInt64(words.count) && words[word] & (1 << (k & 63)) != 0
    }
}
