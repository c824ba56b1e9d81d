import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The JSON writer writes integers and dates straight into its buffer (`JSONObjectWriter.append`):
/// the bytes must be those of `ObjectValueText.text`, the text every other writer gives.
@Suite("JSON of any model: integers and dates written in place")
struct JSONObjectValueTextTests {
    func written(_ value: ObjectValue) -> String {
        var out = RecordBuffer()
        JSONObjectWriter.append(value, to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    @Test("integers: the ends of Int64, powers of ten and their neighbours, random ones")
    func integers() {
        var values: [Int64] = [0, 1, -1, 9, 10, 99, 100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power + 1, -power, -power - 1]
        }
        var rng = SplitMix64(seed: 26)
        for _ in 0..<2000 { values.append(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64)) }
        for v in values { #expect(written(.int(v)) == String(v)) }
    }

    @Test("dates: whole seconds, milliseconds, nanoseconds, fractions no digits give back, the ends of the years, not finite")
    func dates() {
        var values: [Double] = [0, -0.0, 1, -1, 0.5, 100.5, -31622400.25, 1e-9, 7e8 + 0.123, -978307200, -63114076800, -63114076800.5,
                                252423993599, 252423993599.999, 252423993600, 1e300, -1e300, .nan, .infinity, -.infinity, .leastNonzeroMagnitude,
                                .greatestFiniteMagnitude]
        var rng = SplitMix64(seed: 27)
        for _ in 0..<3000 {
            let d = Double(rng.next() % 1_000_000_000_000) / 1000 - 5e8
            values += [d, d + Double(rng.next() % 1000) / 1e9, Double.random(in: -1e9...7e8, using: &rng), Double.random(in: -7e10...2.6e11, using: &rng)]
        }
        for v in values {
            #expect(written(.date(v)) == "\"" + ObjectValueText.text(.date(v))! + "\"", "\(v)")
        }
    }
}
