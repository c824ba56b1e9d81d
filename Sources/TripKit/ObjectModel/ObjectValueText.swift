/// The text of an attribute value in every text format (JSON, JSON Lines, YAML, XML, CSV, TSV), as
/// docs/DESIGN-NOTES.md ("The general object model") lays down: one writer and one reader of it, so
/// that every format gives back the value it was given.
///
/// ```swift
/// ObjectValueText.text(.date(0), kind: .date)                 // "2001-01-01T00:00:00Z"
/// ObjectValueText.value("2001-01-01T00:00:00.5Z", kind: .date) // .date(0.5)
/// ```
public enum ObjectValueText {
    /// The text of `value` (nil for `.null`). Integers, Doubles and Decimals are numbers' text, a Double
    /// that is not finite `NaN`, `Infinity` or `-Infinity`; a Date ISO 8601 in UTC with the fewest
    /// fraction digits (0, 3, 6, 9) that read back to the same Double, else its seconds since
    /// 2001-01-01 as a number; a UUID upper case; Data base64.
    public static func text(_ value: ObjectValue) -> String? {
        switch value {
        case .null: return nil
        case .string(let s), .decimal(let s), .url(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return numberText(d)
        case .bool(let b): return b ? "true" : "false"
        case .date(let seconds): return dateText(seconds)
        case .data(let bytes): return Base64.encode(bytes)
        case .uuid(let u): return u.description
        }
    }

    /// Appends the UTF-8 of `text(value)` to `bytes` (nothing for `.null`) without making a String
    /// where it can: the writers' hot path (a date, an integer, a UUID).
    public static func appendText(_ value: ObjectValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: return
        case .date(let seconds): appendDate(seconds, to: &bytes)
        case .int(let i):
            if i < 0 { bytes.append(UInt8(ascii: "-")) }
            let start = bytes.count
            var rest = i.magnitude
            repeat { bytes.append(UInt8(48 + rest % 10)); rest /= 10 } while rest > 0
            bytes[start...].reverse()
        case .uuid(let u):
            let digits: StaticString = "0123456789ABCDEF"
            for (i, b) in u.bytes.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(digits.withUTF8Buffer { $0[Int(b >> 4)] }); bytes.append(digits.withUTF8Buffer { $0[Int(b & 15)] })
            }
        case .string(var s), .decimal(var s), .url(var s): s.withUTF8 { bytes.append(contentsOf: $0) }
        default: bytes.append(contentsOf: (text(value) ?? "").utf8)
        }
    }

    /// Whether a format that tells numbers from strings (JSON, YAML) writes `value` as a bare number.
    public static func isNumber(_ value: ObjectValue) -> Bool {
        switch value {
        case .int: return true
        case .double(let d): return d.isFinite
        case .decimal: return true
        default: return false
        }
    }

    /// The value of `kind` that `text` says, nil when it says none of that kind. A Date is ISO 8601
    /// (any zone) or a number of seconds since 2001-01-01; a Bool `true`/`false` (also `1`/`0`,
    /// `YES`/`NO`); a Decimal digits with an optional sign, point and exponent.
    public static func value(_ text: String, kind: AttributeKind) -> ObjectValue? {
        switch kind {
        case .string, .undefined, .objectID, .composite: return .string(text)
        case .uri: return .url(text)
        case .int16, .int32, .int64:
            guard let i = Int64(text) else { return nil }
            let range: ClosedRange<Int64> = kind == .int16 ? Int64(Int16.min)...Int64(Int16.max)
                : kind == .int32 ? Int64(Int32.min)...Int64(Int32.max) : Int64.min...Int64.max
            return range.contains(i) ? .int(i) : nil
        case .double, .float:
            switch text {
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            default: return Double(text).map(ObjectValue.double)
            }
        case .decimal:
            return isDecimal(text) ? .decimal(text) : nil
        case .bool:
            switch text {
            case "true", "1", "YES": return .bool(true)
            case "false", "0", "NO": return .bool(false)
            default: return nil
            }
        case .date:
            if let d = Double(text), d.isFinite { return .date(d) }
            return dateValue(text).map(ObjectValue.date)
        case .binary, .transformable:
            return Base64.decode(text).map(ObjectValue.data)
        case .uuid:
            return UUIDBytes(string: text).map(ObjectValue.uuid)
        }
    }

    /// The shortest text that reads back to `d` (Swift's own), or the JSON-safe names of the others.
    static func numberText(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return "\(d)"
    }

    private static let unixOffset = Double(Timestamp.referenceDateOffset)
    private static let powers: [Double] = [1, 1e3, 1e6, 1e9]

    /// ISO 8601 text of `seconds` since 2001, or its number when no 0-9 digit fraction gives it back.
    static func dateText(_ seconds: Double) -> String {
        var bytes: [UInt8] = []
        appendDate(seconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends what `dateText` gives, without making a String.
    static func appendDate(_ seconds: Double, to bytes: inout [UInt8]) {
        guard let (wholeSeconds, digits, n) = dateParts(seconds) else {
            bytes.append(contentsOf: numberText(seconds).utf8)
            return
        }
        Timestamp(milliseconds: wholeSeconds * 1000).appendISO8601(to: &bytes)
        bytes.removeLast()
        if n > 0 {
            bytes.append(UInt8(ascii: "."))
            var divisor = Int64(powers[n]) / 10
            while divisor > 0 { bytes.append(UInt8(48 + (digits / divisor) % 10)); divisor /= 10 }
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The whole Unix seconds, fraction digits and groups of three of them (0-3) that give back
    /// `seconds` exactly; nil when none does (or the year is outside 0001...9999).
    private static func dateParts(_ seconds: Double) -> (Int64, Int64, Int)? {
        guard seconds.isFinite else { return nil }
        // The fraction is taken from the seconds since 2001, not since 1970: adding the offset first
        // would round away digits past the 7th (a Double near 1.7e9 is spaced 2.4e-7 apart).
        let whole = seconds.rounded(.down)
        // Years 0001...9999 only, as `Timestamp` says them.
        guard whole + unixOffset >= -62_135_596_800, whole + unixOffset <= 253_402_300_799 else { return nil }
        let wholeSeconds = Int64(whole) + Timestamp.referenceDateOffset
        for (n, power) in powers.enumerated() {
            let digits = ((seconds - whole) * power).rounded()
            guard digits < power else { continue }
            guard combine(wholeSeconds, Int64(digits), n) == seconds else { continue }
            return (wholeSeconds, Int64(digits), n)
        }
        return nil
    }

    /// The Double a date's whole Unix seconds and `n` groups of three fraction digits make: how
    /// `dateText` checks its text and `dateValue` reads it, so the two agree to the last bit.
    private static func combine(_ wholeUnixSeconds: Int64, _ digits: Int64, _ n: Int) -> Double {
        Double(wholeUnixSeconds - Timestamp.referenceDateOffset) + Double(digits) / powers[n]
    }

    /// Seconds since 2001 of ISO 8601 text; fraction digits past the ninth are refused.
    static func dateValue(_ text: String) -> Double? {
        // The fraction, if any, is read here; the rest (date, time, zone) by Timestamp.
        let bytes = Array(text.utf8)
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")), dot > 10 else {
            return Timestamp(iso8601: text).map { Double($0.milliseconds / 1000 - Timestamp.referenceDateOffset) }
        }
        var end = dot + 1
        while end < bytes.count, bytes[end] >= 48, bytes[end] <= 57 { end += 1 }
        let fraction = bytes[(dot + 1)..<end]
        guard !fraction.isEmpty, fraction.count <= 9 else { return nil }
        let rest = String(decoding: bytes[..<dot] + bytes[end...], as: UTF8.self)
        guard let t = Timestamp(iso8601: rest) else { return nil }
        let n = (fraction.count + 2) / 3
        var digits: Int64 = 0
        for b in fraction { digits = digits * 10 + Int64(b - 48) }
        for _ in fraction.count..<(3 * n) { digits *= 10 }
        return combine(t.milliseconds / 1000, digits, n)
    }

    /// Whether `seconds` since 2001 says the instant ISO 8601 `text` says to every fraction digit it
    /// has (in any zone): what it reads as, written back at its precision, gives its digits. False for
    /// text that is no date, or whose digits past what a Double holds there are lost (a Double near
    /// 2024 is spaced about 1.2e-7 s apart, so `.123456789` does not come back).
    static func isSameInstant(_ seconds: Double, as text: String) -> Bool {
        guard seconds.isFinite else { return false }
        let bytes = Array(text.utf8)
        var rest = text, fraction: ArraySlice<UInt8> = []
        if let dot = bytes.firstIndex(of: UInt8(ascii: ".")), dot > 10 {
            var end = dot + 1
            while end < bytes.count, bytes[end] >= 48, bytes[end] <= 57 { end += 1 }
            fraction = bytes[(dot + 1)..<end]
            while fraction.last == UInt8(ascii: "0") { fraction = fraction.dropLast() }
            guard end > dot + 1, fraction.count <= 9 else { return false }
            rest = String(decoding: bytes[..<dot] + bytes[end...], as: UTF8.self)
        }
        guard let t = Timestamp(iso8601: rest) else { return false }
        let whole = seconds.rounded(.down)
        guard Int64(exactly: whole).map({ $0 + Timestamp.referenceDateOffset }) == t.milliseconds / 1000 else { return false }
        guard !fraction.isEmpty else { return seconds == whole }
        var digits = 0.0, power = 1.0
        for b in fraction { digits = digits * 10 + Double(b - 48); power *= 10 }
        return ((seconds - whole) * power).rounded() == digits
    }

    private static func isDecimal(_ text: String) -> Bool {
        var s = Substring(text)
        if s.first == "-" || s.first == "+" { s = s.dropFirst() }
        let parts = s.split(separator: "e", maxSplits: 1, omittingEmptySubsequences: false)
        let mantissa = parts[0].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !mantissa.joined().isEmpty, mantissa.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }) else { return false }
        guard parts.count == 2 else { return true }
        var e = parts[1]
        if e.first == "-" || e.first == "+" { e = e.dropFirst() }
        return !e.isEmpty && e.allSatisfy(\.isASCIIDigit)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Base64 (RFC 4648, with padding), for Data in text formats.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The base64 text of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 3) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 15) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of base64 `text` (padding required, no blanks), nil when it is not base64.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            var v: [UInt8] = []
            var pad = 0
            for k in 0..<4 {
                let c = chars[i + k]
                if c == UInt8(ascii: "="), i + 4 == chars.count, k >= 2 { pad += 1; v.append(0); continue }
                guard pad == 0, let x = value(c) else { return nil }
                v.append(x)
            }
            out.append(v[0] << 2 | v[1] >> 4)
            if pad < 2 { out.append(v[1] << 4 | v[2] >> 2) }
            if pad < 1 { out.append(v[2] << 6 | v[3]) }
            i += 4
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - 65
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - 97 + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - 48 + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
