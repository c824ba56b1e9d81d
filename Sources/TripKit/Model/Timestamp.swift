/// A point in time, in milliseconds since 1970-01-01T00:00:00Z; the precision tripconv keeps.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64
    /// The point `milliseconds` after 1970-01-01T00:00:00Z (before it, when negative).
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.milliseconds < b.milliseconds }

    /// Seconds between 1970-01-01 and 2001-01-01, Foundation's reference date.
    public static let referenceDateOffset: Int64 = 978_307_200

    public var description: String { iso8601 }
}

/// How a number in a date field counts time.
public enum DateEpoch: String, Sendable, CaseIterable {
    /// Seconds since 2001-01-01, what Swift's JSONEncoder writes by default.
    case reference
    /// Seconds since 1970-01-01.
    case unix
    /// Milliseconds since 1970-01-01.
    case unixMilliseconds = "unix-ms"
}

extension Timestamp {
    /// Reads a number of the given epoch, rounding finer fractions to the millisecond.
    public init?(number text: some StringProtocol, epoch: DateEpoch) {
        guard let value = Double(text), value.isFinite else { return nil }
        let ms: Double
        switch epoch {
        case .reference: ms = (value + Double(Timestamp.referenceDateOffset)) * 1000
        case .unix: ms = value * 1000
        case .unixMilliseconds: ms = value
        }
        let rounded = ms.rounded(.toNearestOrAwayFromZero)
        // Years 0001...9999 only, the range ISO 8601 text can say.
        guard rounded >= -62_135_596_800_000, rounded <= 253_402_300_799_999 else { return nil }
        self.init(milliseconds: Int64(rounded))
    }

    // MARK: - Calendar arithmetic (Howard Hinnant's days-from-civil)

    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
