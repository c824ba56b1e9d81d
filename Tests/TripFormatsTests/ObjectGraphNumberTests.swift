import Testing
import TripKit
@testable import TripFormats

/// A JSON whole number is kept as the integer it is (`GraphScalar.int`, issue 27's speed item) only
/// where its text is `String(i)`, and every kind takes or refuses it exactly as it takes or refuses
/// the number's text, so nothing read, refused or said changes.
@Suite struct ObjectGraphNumberTests {
    static func scalar(_ text: String) -> GraphScalar {
        Array(text.utf8).withUnsafeBytes { GraphRawScalar.number($0).scalar }
    }

    @Test func aWholeNumberIsReadOnceAndTakenAsItsText() {
        let texts = ["0", "-0", "7", "-7", "32767", "32768", "-32769", "2147483648", "9223372036854775807", "-9223372036854775808",
                     "9223372036854775808", "-9223372036854775809", "1.0", "1e2", "-1.5E-3", "1000000000000000000000"]
        var integers = 0
        for text in texts {
            let s = Self.scalar(text)
            if case .int(let i) = s {
                integers += 1
                #expect(String(i) == text)
            } else {
                guard case .number(let t) = s else { Issue.record("\(text): not a number"); continue }
                #expect(t == text)
            }
            #expect(ObjectGraphDecoder.integer(s) == Int64(text), "\(text)")
            #expect(ObjectGraphDecoder.describe(.scalar(s)) == "a number \(text)")
            for kind in AttributeKind.allCases {
                #expect(ObjectGraphDecoder.value(s, kind) == ObjectGraphDecoder.value(.number(text), kind), "\(text) as \(kind)")
            }
        }
        // "-0" and the numbers past Int64, with a fraction or an exponent stay text.
        #expect(integers == 9)
        if case .int = Self.scalar("-0") { Issue.record("-0 is kept as its text") }
    }
}
