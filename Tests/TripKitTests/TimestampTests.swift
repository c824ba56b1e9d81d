import Foundation
import Testing
import TripKit
import TripTestSupport

@Suite("Dates")
struct TimestampTests {
    @Test("dates are written in UTC with milliseconds only when they are not zero")
    func writing() {
        #expect(ts("2024-05-01T09:30:00Z").iso8601 == "2024-05-01T09:30:00Z")
        #expect(ts("2024-05-01T09:30:00.120Z").iso8601 == "2024-05-01T09:30:00.120Z")
        #expect(Timestamp(milliseconds: -1).iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(milliseconds: 0).iso8601 == "1970-01-01T00:00:00Z")
    }

    @Test("a date appended as bytes is its iso8601 text, after what the buffer held")
    func appendingBytes() {
        var out = Array("x,".utf8)
        Timestamp(milliseconds: 1_714_555_800_123).appendISO8601(to: &out)
        Timestamp(milliseconds: 0).appendISO8601(to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "x,2024-05-01T09:30:00.123Z1970-01-01T00:00:00Z")
    }

    @Test("formatting into a buffer gives what Foundation's ISO 8601 formatter gives, and parses back")
    func formattingIntoBuffer() {
        let foundation = ISO8601DateFormatter()
        foundation.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        foundation.timeZone = TimeZone(identifier: "UTC")
        // From 1600 on: before the Gregorian reform Foundation's calendar is not proleptic.
        let lowest: Int64 = -11_676_096_000_000, highest: Int64 = 253_402_300_799_999
        var random = SplitMix64(seed: 0x5EED)
        var samples: [Int64] = [0, -1, 1, 999, 1000, lowest, highest, 951_782_400_000, 1_714_555_800_250]
        for _ in 0..<5_000 {
            let ms = lowest + Int64(random.next() % UInt64(highest - lowest + 1))
            samples.append(ms)
            samples.append(ms - ms % 1000)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Timestamp.iso8601MaximumLength, alignment: 1)
        defer { buffer.deallocate() }
        var mismatches: [Int64] = []
        for ms in samples {
            let t = Timestamp(milliseconds: ms)
            let count = t.formatISO8601(into: buffer)
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            var expected = foundation.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
            if ms % 1000 == 0 { expected = expected.replacingOccurrences(of: ".000Z", with: "Z") }
            if text != expected || text != t.iso8601 || Timestamp(iso8601: text) != t { mismatches.append(ms) }
        }
        #expect(mismatches == [])
    }

    @Test("offsets are converted to UTC", arguments: [
        ("2024-05-01T11:30:00+02:00", "2024-05-01T09:30:00Z"),
        ("2024-05-01T04:30:00-0500", "2024-05-01T09:30:00Z"),
        ("2024-05-01T09:30:00.5+00", "2024-05-01T09:30:00.500Z"),
        ("2024-05-01", "2024-05-01T00:00:00Z"),
        ("2024-05-01 09:30:00", "2024-05-01T09:30:00Z"),
        ("2001-12-14 21:59:43.10 -5", "2001-12-15T02:59:43.100Z"),
        ("2001-12-14t21:59:43.10-05:00", "2001-12-15T02:59:43.100Z"),
    ])
    func offsets(input: String, expected: String) {
        #expect(Timestamp(iso8601: input)?.iso8601 == expected)
    }

    @Test("the other shapes read without the writers' form", arguments: [
        ("2024-05-01T09:30:00Z \t", "2024-05-01T09:30:00Z"),
        ("2001-12-14 1:59:43", "2001-12-14T01:59:43Z"),
        ("2024-05-01T24:00:00Z", "2024-05-02T00:00:00Z"),
        ("2024-05-01T09:30:60Z", "2024-05-01T09:30:59Z"),
        ("2024-05-01T09:30:00+0530", "2024-05-01T04:00:00Z"),
        ("2024-05-01T09:30:00,25Z", "2024-05-01T09:30:00.250Z"),
        ("2024-05-01T09:30:00.000000001Z", "2024-05-01T09:30:00Z"),
        ("2024-05-01T09:30", "2024-05-01T09:30:00Z"),
        ("2024-05-01T09:30:00 Z", "2024-05-01T09:30:00Z"),
        ("2024-05-01T09:30:00.123456+00:00", "2024-05-01T09:30:00.123Z"),
    ])
    func otherShapes(input: String, expected: String) {
        #expect(Timestamp(iso8601: input)?.iso8601 == expected)
        #expect(Timestamp(iso8601: input.dropFirst(0)) == Timestamp(iso8601: input), "a Substring reads the same")
    }

    @Test("finer fractions are rounded to the millisecond")
    func rounding() {
        #expect(ts("2024-05-01T09:30:00.1234Z").iso8601 == "2024-05-01T09:30:00.123Z")
        #expect(ts("2024-05-01T09:30:00.9996Z").iso8601 == "2024-05-01T09:30:01Z")
    }

    @Test("malformed dates are refused", arguments: ["2024-13-01", "2024-02-30", "2024-05-01T25:00:00Z", "yesterday", "2024-05-01T09:30:00Q", "", "2024-05",
                                                    "2024-05-01T09:30:00+24:00", "2024-05-01T09:30:00.", "2024-05-01T09:30:00+05:60", "2024-05-01X",
                                                    "2024-05-01T24:00:01Z", " 2024-05-01"])
    func malformed(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test("numbers count from 2001 by default, or from 1970 in seconds or milliseconds")
    func epochs() {
        #expect(Timestamp(number: "0", epoch: .reference)?.iso8601 == "2001-01-01T00:00:00Z")
        #expect(Timestamp(number: "736252200", epoch: .reference)?.iso8601 == "2024-05-01T10:30:00Z")
        #expect(Timestamp(number: "1714555800", epoch: .unix)?.iso8601 == "2024-05-01T09:30:00Z")
        #expect(Timestamp(number: "1714555800123", epoch: .unixMilliseconds)?.iso8601 == "2024-05-01T09:30:00.123Z")
        #expect(Timestamp(number: "0.0004", epoch: .unix)?.milliseconds == 0)
        #expect(Timestamp(number: "1e300", epoch: .unix) == nil)
    }

    @Test("every day of four centuries survives format and parse")
    func calendar() {
        var day: Int64 = -25_000
        while day < 150_000 {
            let t = Timestamp(milliseconds: day * 86_400_000 + 45_296_789)
            #expect(Timestamp(iso8601: t.iso8601) == t)
            day += 7
        }
    }
}

@Suite("Messages")
struct MessageTests {
    @Test("a quoted value never breaks the one-line message: C0, C1 and line separators are escaped")
    func oneLine() {
        let quoted = "a\nb\u{85}c\u{2028}d\u{9F}e\u{7F}f".quotedForMessage
        #expect(quoted == #"'a\nb\u{85}c\u{2028}d\u{9f}e\u{7f}f'"#)
        #expect(!quoted.contains(where: { $0.isNewline }))
    }

    @Test("a long value is shortened")
    func short() {
        #expect(String(repeating: "x", count: 100).quotedForMessage == "'" + String(repeating: "x", count: 37) + "...'")
    }

    @Test("the plain-ASCII shortcut quotes as the general rule does: at 40 and 41 characters, quotes, DEL, non-ASCII")
    func shortcutAgrees() {
        let x40 = String(repeating: "x", count: 40), x41 = String(repeating: "x", count: 41)
        #expect(x40.quotedForMessage == "'" + x40 + "'")
        #expect(x41.quotedForMessage == "'" + String(repeating: "x", count: 37) + "...'")
        #expect("it's".quotedForMessage == #"'it\'s'"#)
        #expect("a\u{7F}b".quotedForMessage == #"'a\u{7f}b'"#)
        #expect("Café ~ {} Tromsø".quotedForMessage == "'Café ~ {} Tromsø'")
        #expect("a\u{85}b\u{A0}c".quotedForMessage == #"'a\u{85}b\#u{A0}c'"#)
        #expect("a\u{2028}b\u{2013}c".quotedForMessage == #"'a\u{2028}b\#u{2013}c'"#)
        // 40 characters but more than 40 bytes: not shortened.
        let accents = String(repeating: "é", count: 40)
        #expect(accents.quotedForMessage == "'" + accents + "'")
        #expect("".quotedForMessage == "''")
    }
}
