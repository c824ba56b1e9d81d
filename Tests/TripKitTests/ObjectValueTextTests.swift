import Testing
import TripKit

/// The text of general attribute values reads back to the same value, in every kind.
@Suite struct ObjectValueTextTests {
    @Test func datesReadBackToTheSameDouble() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            // SwiftData's Date.now: seconds since 2001 with sub-microsecond digits.
            let seconds = Double.random(in: -3e9...3e9, using: &rng)
            let text = ObjectValueText.text(.date(seconds))!
            #expect(ObjectValueText.value(text, kind: .date) == .date(seconds), "\(seconds) -> \(text)")
        }
        for seconds in [0, 0.5, 754_000_000, 754_000_000.123, 1e-12, -0.001, 5e15] {
            let text = ObjectValueText.text(.date(seconds))!
            #expect(ObjectValueText.value(text, kind: .date) == .date(seconds), "\(seconds) -> \(text)")
        }
    }

    @Test func datesUseTheFewestFractionDigits() {
        #expect(ObjectValueText.text(.date(0)) == "2001-01-01T00:00:00Z")
        #expect(ObjectValueText.text(.date(0.5)) == "2001-01-01T00:00:00.500Z")
        #expect(ObjectValueText.text(.date(-978_307_200)) == "1970-01-01T00:00:00Z")
        #expect(ObjectValueText.text(.date(0.25e-3)) == "2001-01-01T00:00:00.000250Z")
        // Too far out for ISO 8601's four-digit years: the number itself.
        #expect(ObjectValueText.text(.date(5e15)) == "5000000000000000.0")
        #expect(ObjectValueText.value("2001-01-01T02:00:00.5+02:00", kind: .date) == .date(0.5))
        #expect(ObjectValueText.value("2001-01-01T00:00:00.1234567891Z", kind: .date) == nil)
    }

    @Test func otherKindsReadBack() {
        let uuid = UUIDBytes(string: "1B9FD00D-CB92-46CD-8711-5297025B7822")!
        let cases: [(ObjectValue, AttributeKind)] = [
            (.string("a,\"b\"\n"), .string), (.int(-32768), .int16), (.int(Int64.max), .int64),
            (.double(0.1), .double), (.double(-.infinity), .double), (.decimal("-12.3400e-5"), .decimal),
            (.bool(true), .bool), (.bool(false), .bool), (.uuid(uuid), .uuid), (.url("https://e.x/a?b"), .uri),
            (.data([]), .binary), (.data([0]), .binary), (.data([1, 2]), .binary), (.data(Array(0...255)), .binary),
        ]
        for (value, kind) in cases {
            let text = ObjectValueText.text(value)!
            #expect(ObjectValueText.value(text, kind: kind) == value, "\(value) -> \(text)")
        }
        #expect(ObjectValueText.text(.uuid(uuid)) == "1B9FD00D-CB92-46CD-8711-5297025B7822")
        #expect(ObjectValueText.text(.data(Array("Man".utf8) + [0])) == "TWFuAA==")
        let nan = ObjectValueText.value("NaN", kind: .double)
        if case .double(let d) = nan { #expect(d.isNaN) } else { Issue.record("NaN read as \(String(describing: nan))") }
    }

    @Test func wrongTextIsNoValue() {
        #expect(ObjectValueText.value("40000", kind: .int16) == nil)
        #expect(ObjectValueText.value("1.5", kind: .int64) == nil)
        #expect(ObjectValueText.value("maybe", kind: .bool) == nil)
        #expect(ObjectValueText.value("1B9FD00D", kind: .uuid) == nil)
        #expect(ObjectValueText.value("TWFu=", kind: .binary) == nil)
        #expect(ObjectValueText.value("1.2.3", kind: .decimal) == nil)
        #expect(ObjectValueText.value("e5", kind: .decimal) == nil)
    }

    /// Nine fraction digits of a date of today (as near as a Double near 7.5e8 holds them) are text,
    /// not a number: the fraction is taken before
    /// the 1970 offset is added, which would round away digits past the seventh.
    @Test func nanosecondsOfTodayAreText() {
        let seconds = 752_000_000 + 123_456_789 / 1e9
        #expect(ObjectValueText.text(.date(seconds)) == "2024-10-30T16:53:20.123456836Z")
        #expect(ObjectValueText.value("2024-10-30T16:53:20.123456836Z", kind: .date) == .date(seconds))
        var bytes: [UInt8] = []
        ObjectValueText.appendText(.date(seconds), to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "2024-10-30T16:53:20.123456836Z")
    }
}
