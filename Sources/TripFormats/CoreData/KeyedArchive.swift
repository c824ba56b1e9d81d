internal import CZlib
import TripKit

/// Raw DEFLATE (no zlib or gzip wrapper), as Core Data compresses `Z_MODELCACHE.Z_CONTENT`: inflated
/// whole, into at most `limit` bytes; anything past the limit, a stream that does not end, or bytes
/// zlib refuses is a `BinaryPropertyList.Failure`.
enum RawInflate {
    static func inflate(_ bytes: [UInt8], limit: Int = BinaryPropertyList.maximumBytes) throws -> [UInt8] {
        var stream = z_stream()
        guard tripconv_inflateInit2(&stream, -15) == Z_OK else { throw BinaryPropertyList.Failure("cannot start a DEFLATE decoder") }
        defer { inflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: min(limit, max(4096, bytes.count * 8)))
        var produced = 0
        var input = bytes
        return try input.withUnsafeMutableBufferPointer { inBuffer -> [UInt8] in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(inBuffer.count)
            while true {
                if produced == out.count {
                    guard out.count < limit else {
                        throw BinaryPropertyList.Failure("inflates to more than the limit of \(limit >> 20) MiB")
                    }
                    out.append(contentsOf: repeatElement(0, count: min(limit, out.count * 2) - out.count))
                }
                let room = out.count - produced
                let rc = out.withUnsafeMutableBufferPointer { o -> Int32 in
                    stream.next_out = o.baseAddress! + produced
                    stream.avail_out = uInt(room)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                produced += room - Int(stream.avail_out)
                switch rc {
                case Z_STREAM_END:
                    out.removeSubrange(produced...)
                    return out
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_out > 0:
                    throw BinaryPropertyList.Failure("the DEFLATE data ends early, after \(stream.total_in) bytes")
                case Z_BUF_ERROR:
                    continue
                default:
                    let why = stream.msg.map { String(cString: $0) } ?? "invalid data"
                    throw BinaryPropertyList.Failure("bad DEFLATE data at byte \(stream.total_in): \(why)")
                }
            }
        }
    }
}

/// An `NSKeyedArchiver` archive, read without Foundation: a binary property list whose `$objects`
/// array holds every archived object once, objects referring to each other by UID (an index into
/// `$objects`), each object's class a UID of a `{$classname, $classes}` dictionary, and `$top.root`
/// the archived root.
///
/// The archive is never unfolded into a tree (its objects refer to each other in cycles: an entity
/// names its model, a relationship its inverse): callers follow UIDs one step at a time with the
/// accessors here, which check every UID and every shape and throw `BinaryPropertyList.Failure`.
struct KeyedArchive {
    typealias Failure = BinaryPropertyList.Failure
    /// `$objects`; UID 0 is `$null`.
    let objects: [PropertyListValue]
    /// The UID of `$top.root`.
    let root: UInt64

    init(_ bytes: [UInt8]) throws {
        let top = try BinaryPropertyList.parse(bytes)
        guard top["$archiver"]?.stringValue == "NSKeyedArchiver" else { throw Failure("not an NSKeyedArchiver archive (no $archiver)") }
        guard let objects = top["$objects"]?.arrayValue, !objects.isEmpty else { throw Failure("an archive without $objects") }
        guard case .uid(let root)? = top["$top"]?["root"] else { throw Failure("an archive without $top.root") }
        self.objects = objects
        self.root = root
        _ = try object(root)
    }

    /// The object of a UID.
    func object(_ uid: UInt64) throws -> PropertyListValue {
        guard uid < UInt64(objects.count) else { throw Failure("UID \(uid) is past the \(objects.count) archived objects") }
        return objects[Int(uid)]
    }

    /// Whether a value is the null UID (or absent).
    static func isNull(_ value: PropertyListValue?) -> Bool {
        switch value {
        case nil, .null?: return true
        case .uid(let u)?: return u == 0
        default: return false
        }
    }

    /// The object a member of an archived dictionary refers to: the UID's object, or the value itself
    /// where it is inline (NSKeyedArchiver writes numbers and Booleans inline); nil for `$null`.
    func resolve(_ value: PropertyListValue?) throws -> PropertyListValue? {
        guard let value, !KeyedArchive.isNull(value) else { return nil }
        if case .uid(let u) = value {
            let o = try object(u)
            if case .string(let s) = o, s == "$null" { return nil }
            return o
        }
        return value
    }

    /// The class name of an archived object (`$class` → `$classname`).
    func className(_ object: PropertyListValue) throws -> String {
        guard case .uid(let c)? = object["$class"] else { throw Failure("an archived object without $class") }
        guard let name = try self.object(c)["$classname"]?.stringValue else { throw Failure("class UID \(c) has no $classname") }
        return name
    }

    /// A string member (`NSEntityName`), through its UID; nil when null.
    func string(_ value: PropertyListValue?, _ what: String) throws -> String? {
        guard let o = try resolve(value) else { return nil }
        if case .string(let s) = o { return s }
        // NSString and NSMutableString archived as objects keep their text in NS.string.
        if let s = o["NS.string"]?.stringValue { return s }
        throw Failure("\(what) is not a string")
    }

    /// An integer member (`NSAttributeType`, `NSDeleteRule`), inline or through a UID; nil when absent.
    func integer(_ value: PropertyListValue?, _ what: String) throws -> Int64? {
        switch try resolve(value) {
        case nil: return nil
        case .int(let i)?: return i
        case .bool(let b)?: return b ? 1 : 0
        default: throw Failure("\(what) is not an integer")
        }
    }

    /// A Boolean member (`NSIsOptional`); nil when absent.
    func bool(_ value: PropertyListValue?, _ what: String) throws -> Bool? {
        try integer(value, what).map { $0 != 0 }
    }

    /// The UIDs an NSArray, NSSet, NSOrderedSet (or their mutable kinds) holds, in order.
    func elements(_ value: PropertyListValue?, _ what: String) throws -> [UInt64] {
        guard let o = try resolve(value) else { return [] }
        let name = try className(o)
        guard ["NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet"].contains(name) else {
            throw Failure("\(what) is an \(name), not an array or set")
        }
        return try uids(o["NS.objects"], what)
    }

    /// The members of an NSDictionary, NSMutableDictionary or NSKnownKeysDictionary1, in archived
    /// order: each key's text and its value's UID.
    func members(_ value: PropertyListValue?, _ what: String) throws -> [(key: String, value: UInt64)] {
        guard let o = try resolve(value) else { return [] }
        let name = try className(o)
        let keys: [UInt64], values: [UInt64]
        switch name {
        case "NSDictionary", "NSMutableDictionary":
            keys = try uids(o["NS.keys"], what); values = try uids(o["NS.objects"], what)
        case "NSKnownKeysDictionary1":
            // Keys in the mapping strategy's `keys` array, values in `values`, in the same order.
            guard case .uid(let mapping)? = o["searchMapping"] else { throw Failure("\(what) has no searchMapping") }
            keys = try elements(try self.object(mapping)["keys"], "\(what) keys")
            values = try elements(o["values"], "\(what) values")
        default:
            throw Failure("\(what) is an \(name), not a dictionary")
        }
        guard keys.count == values.count else { throw Failure("\(what) has \(keys.count) keys and \(values.count) values") }
        return try zip(keys, values).map { k, v in
            guard let key = try string(.uid(k), "a key of \(what)") else { throw Failure("a key of \(what) is null") }
            return (key, v)
        }
    }

    private func uids(_ value: PropertyListValue?, _ what: String) throws -> [UInt64] {
        guard let items = value?.arrayValue else { throw Failure("\(what) has no NS.objects array") }
        return try items.map { item in
            guard case .uid(let u) = item else { throw Failure("\(what) holds a value that is not a UID") }
            _ = try object(u)
            return u
        }
    }

    /// An archived value as an attribute's default: NSString, NSNumber (inline), NSUUID, NSDate,
    /// NSData, NSURL, NSDecimalNumber; nil for null, and for classes it does not know.
    func value(_ value: PropertyListValue?, kind: AttributeKind) throws -> ObjectValue? {
        guard let o = try resolve(value) else { return nil }
        switch o {
        case .string(let s):
            if kind == .uri { return .url(s) }
            if kind == .decimal { return .decimal(s) }
            return .string(s)
        case .int(let i):
            switch kind {
            case .bool: return .bool(i != 0)
            case .double, .float: return .double(Double(i))
            case .decimal: return .decimal(String(i))
            case .date: return .date(Double(i))
            default: return .int(i)
            }
        case .real(let d):
            // A whole number stored as a real, for an integer attribute; none where it is not one.
            if kind.isInteger { return Int64(exactly: d).map(ObjectValue.int) }
            if kind == .decimal { return d.isFinite ? .decimal("\(d)") : nil }
            return kind == .date ? .date(d) : .double(d)
        case .bool(let b): return kind.isInteger ? .int(b ? 1 : 0) : .bool(b)
        case .data(let d): return .data(d)
        case .date(let d): return .date(d)
        case .dictionary:
            switch try className(o) {
            case "NSUUID":
                guard case .data(let b)? = o["NS.uuidbytes"], let u = UUIDBytes(b) else { throw Failure("an NSUUID without 16 bytes") }
                return .uuid(u)
            case "NSDate":
                guard case .real(let t)? = o["NS.time"] else { return .date(0) }
                return .date(t)
            case "NSData", "NSMutableData":
                if case .data(let d)? = o["NS.data"] { return .data(d) }
                return nil
            case "NSURL":
                return try string(o["NS.relative"], "an NSURL").map(ObjectValue.url)
            case "NSString", "NSMutableString":
                return o["NS.string"]?.stringValue.map(ObjectValue.string)
            case "NSDecimalNumber":
                return .decimal(try decimalText(o))
            default:
                return nil
            }
        default:
            return nil
        }
    }

    /// An archived `NSDecimalNumber` as decimal text (`-12.5`): `NSDecimalNumber`'s `encodeWithCoder:`
    /// writes `NS.mantissa`, 16 bytes of eight 16-bit words (little-endian where `NS.mantissa.bo` is 1,
    /// the only order written), of which `NS.length` are used, `NS.exponent` and `NS.negative`; the
    /// value is mantissa × 10^exponent. A length of 0 with `NS.negative` is NaN, which no Decimal text says.
    func decimalText(_ o: PropertyListValue) throws -> String {
        guard case .data(let bytes)? = o["NS.mantissa"], bytes.count >= 2, bytes.count % 2 == 0 else {
            throw Failure("an NSDecimalNumber without its NS.mantissa bytes")
        }
        let exponent = try integer(o["NS.exponent"], "an NSDecimalNumber's NS.exponent") ?? 0
        let length = try integer(o["NS.length"], "an NSDecimalNumber's NS.length") ?? Int64(bytes.count / 2)
        let negative = try bool(o["NS.negative"], "an NSDecimalNumber's NS.negative") ?? false
        let bigEndian = (try integer(o["NS.mantissa.bo"], "an NSDecimalNumber's NS.mantissa.bo") ?? 1) != 1
        guard (0...Int64(bytes.count / 2)).contains(length), (-128...127).contains(exponent) else {
            throw Failure("an NSDecimalNumber of length \(length) and exponent \(exponent)")
        }
        if length == 0 && negative { throw Failure("an NSDecimalNumber that is NaN") }
        var words: [UInt32] = (0..<Int(length)).map { i in
            let a = UInt32(bytes[2 * i]), b = UInt32(bytes[2 * i + 1])
            return bigEndian ? a << 8 | b : b << 8 | a
        }
        // The mantissa's decimal digits, by long division of its words (least significant first) by 10.
        var digits: [UInt8] = []
        while words.contains(where: { $0 != 0 }) {
            var remainder: UInt32 = 0
            for i in words.indices.reversed() {
                let current = remainder << 16 | words[i]
                words[i] = current / 10; remainder = current % 10
            }
            digits.append(UInt8(ascii: "0") + UInt8(remainder))
        }
        if digits.isEmpty { return "0" }
        var text = String(decoding: digits.reversed(), as: UTF8.self)
        if exponent > 0 {
            text += String(repeating: "0", count: Int(exponent))
        } else if exponent < 0 {
            let places = Int(-exponent)
            if text.count <= places { text = String(repeating: "0", count: places - text.count + 1) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -places))
        }
        return negative ? "-" + text : text
    }
}
