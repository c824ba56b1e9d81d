import TripKit

/// Whether every key a relationship holds names a row of its destination (`CoreDataObjectLayout.Check`):
/// the destination's keys are set in a bitmap (a bit per key from the least to the greatest, at most
/// `maximumBits`: 8 MiB, held while the check runs), then one scan of the references tests each key
/// against it. SQLite's `NOT IN` kept the keys in a temporary index and probed it once per reference,
/// about twice the time (docs/BENCHMARKS.md). Where a reference names no row, where a key is not an
/// integer, or where the keys span more than the bitmap holds, the `NOT IN` statement itself is run,
/// so the row a message names is the one it always named.
enum CoreDataKeyCheck {
    static let maximumBits: Int64 = 1 << 26

    /// The first reference naming no row, (owner `Z_PK`, key), least owner first; nil when there is none.
    static func firstDangling(_ connection: SQLiteConnection, _ queries: CoreDataObjectLayout.CheckQueries) throws -> (owner: Int64, key: Int64)? {
        if try allFound(connection, queries) { return nil }
        let s = try connection.prepare(queries.first)
        return try s.step() ? (s.int64(0), s.int64(1)) : nil
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
