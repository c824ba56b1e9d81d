/// A value of a property list.
enum PropertyListValue: Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case real(Double)
    /// Seconds since 2001-01-01.
    case date(Double)
    case data([UInt8])
    case string(String)
    case uid(UInt64)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let d) = self { return d[key] }
        return nil
    }

    var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    var arrayValue: [PropertyListValue]? { if case .array(let a) = self { return a } else { return nil } }
}

/// A reader of Apple's binary property lists (`bplist00`), as Core Data keeps its store metadata
/// (`Z_METADATA.Z_PLIST`): small and bounded, with no Foundation.
///
/// The format: an 8-byte header, the objects, a table of their offsets, and a 32-byte trailer that
/// gives the sizes of offsets and object references, the object count, the top object and where the
/// offset table starts. Each object starts with a marker byte: its type in the high nibble and a
/// count or size in the low one (0xF: an integer object with the count follows).
///
/// Bounded against hostile input: at most `maximumBytes`, `maximumObjects` objects, nesting to
/// `maximumDepth`, and `maximumVisits` objects visited in all (shared references cannot make the
/// tree explode); every offset and count is checked against the data before it is used.
struct BinaryPropertyList {
    struct Failure: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    static let maximumBytes = 4 << 20
    static let maximumObjects = 1 << 16
    static let maximumDepth = 32
    static let maximumVisits = 1 << 18

    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let tableStart: Int
    private var visits = 0

    /// Parses a whole binary property list and returns its top object.
    static func parse(_ bytes: [UInt8]) throws -> PropertyListValue {
        var list = try BinaryPropertyList(bytes)
        return try list.topObject()
    }

    private var top = 0

    private init(_ bytes: [UInt8]) throws {
        guard bytes.count <= BinaryPropertyList.maximumBytes else {
            throw Failure("a property list of \(bytes.count) bytes is longer than the limit of \(BinaryPropertyList.maximumBytes >> 20) MiB")
        }
        guard bytes.count >= 8 + 1 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
            throw Failure("not a binary property list (no bplist00 header)")
        }
        self.bytes = bytes
        let t = bytes.count - 32
        offsetSize = Int(bytes[t + 6])
        referenceSize = Int(bytes[t + 7])
        let count = BinaryPropertyList.bigEndian(bytes, t + 8, 8)
        let topIndex = BinaryPropertyList.bigEndian(bytes, t + 16, 8)
        let table = BinaryPropertyList.bigEndian(bytes, t + 24, 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Failure("bad trailer: offset size \(offsetSize), reference size \(referenceSize)")
        }
        guard count >= 1, count <= UInt64(BinaryPropertyList.maximumObjects) else {
            throw Failure("bad trailer: \(count) objects")
        }
        guard topIndex < count else { throw Failure("bad trailer: top object \(topIndex) of \(count)") }
        guard table >= 8, table <= UInt64(t), UInt64(t) - table >= count * UInt64(offsetSize) else {
            throw Failure("bad trailer: offset table at \(table) does not fit")
        }
        objectCount = Int(count)
        tableStart = Int(table)
        top = Int(topIndex)
    }

    private mutating func topObject() throws -> PropertyListValue {
        try object(top, depth: 0)
    }

    static func bigEndian(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<size { v = v << 8 | UInt64(bytes[at + i]) }
        return v
    }

    /// The offset of object `index`, checked to lie among the objects.
    private func offset(_ index: Int) throws -> Int {
        guard index >= 0, index < objectCount else { throw Failure("reference \(index) is out of range") }
        let o = BinaryPropertyList.bigEndian(bytes, tableStart + index * offsetSize, offsetSize)
        guard o >= 8, o < UInt64(tableStart) else { throw Failure("object \(index) lies outside the objects") }
        return Int(o)
    }

    /// Checks that `count` bytes from `at` lie among the objects.
    private func need(_ at: Int, _ count: Int) throws {
        guard count >= 0, at >= 0, at <= tableStart, count <= tableStart - at else {
            throw Failure("an object runs past the objects")
        }
    }

    /// The count of a marker's low nibble, or of the integer object after it (0xF); and where the
    /// object's contents start.
    private func count(_ marker: UInt8, at offset: Int) throws -> (count: Int, start: Int) {
        let low = Int(marker & 0x0F)
        guard low == 0x0F else { return (low, offset + 1) }
        try need(offset + 1, 1)
        let intMarker = bytes[offset + 1]
        guard intMarker >> 4 == 0x1, intMarker & 0x0F <= 3 else { throw Failure("a count that is not an integer") }
        let size = 1 << Int(intMarker & 0x0F)
        try need(offset + 2, size)
        let n = BinaryPropertyList.bigEndian(bytes, offset + 2, size)
        guard n <= UInt64(tableStart) else { throw Failure("a count of \(n) is larger than the list") }
        return (Int(n), offset + 2 + size)
    }

    private mutating func object(_ index: Int, depth: Int) throws -> PropertyListValue {
        guard depth <= BinaryPropertyList.maximumDepth else { throw Failure("nested deeper than \(BinaryPropertyList.maximumDepth)") }
        visits += 1
        guard visits <= BinaryPropertyList.maximumVisits else { throw Failure("more than \(BinaryPropertyList.maximumVisits) objects visited") }
        let at = try offset(index)
        try need(at, 1)
        let marker = bytes[at]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00, 0x0F: return .null
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw Failure("unknown marker 0x\(String(marker, radix: 16))")
            }
        case 0x1:
            guard low <= 4 else { throw Failure("an integer of \(1 << low) bytes") }
            let size = 1 << low
            try need(at + 1, size)
            // 8 bytes are signed; 16-byte integers keep their low 8 bytes, as Foundation does for those in range.
            let raw = BinaryPropertyList.bigEndian(bytes, at + 1 + max(0, size - 8), min(size, 8))
            return .int(Int64(bitPattern: raw))
        case 0x2:
            guard low == 2 || low == 3 else { throw Failure("a real of \(1 << low) bytes") }
            try need(at + 1, 1 << low)
            let raw = BinaryPropertyList.bigEndian(bytes, at + 1, 1 << low)
            return .real(low == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            guard marker == 0x33 else { throw Failure("unknown marker 0x\(String(marker, radix: 16))") }
            try need(at + 1, 8)
            return .date(Double(bitPattern: BinaryPropertyList.bigEndian(bytes, at + 1, 8)))
        case 0x4:
            let (n, start) = try count(marker, at: at)
            try need(start, n)
            return .data(Array(bytes[start..<start + n]))
        case 0x5, 0x7:
            // ASCII, and the UTF-8 strings of later list versions.
            let (n, start) = try count(marker, at: at)
            try need(start, n)
            return .string(String(decoding: bytes[start..<start + n], as: UTF8.self))
        case 0x6:
            let (n, start) = try count(marker, at: at)
            guard n <= tableStart / 2 else { throw Failure("a string runs past the objects") }
            try need(start, 2 * n)
            var units: [UInt16] = []
            units.reserveCapacity(n)
            for i in 0..<n { units.append(UInt16(bytes[start + 2 * i]) << 8 | UInt16(bytes[start + 2 * i + 1])) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            try need(at + 1, low + 1)
            guard low + 1 <= 8 else { throw Failure("a UID of \(low + 1) bytes") }
            return .uid(BinaryPropertyList.bigEndian(bytes, at + 1, low + 1))
        case 0xA, 0xB, 0xC:
            let (n, start) = try count(marker, at: at)
            guard n <= objectCount else { throw Failure("an array of \(n) in a list of \(objectCount) objects") }
            try need(start, n * referenceSize)
            var items: [PropertyListValue] = []
            items.reserveCapacity(n)
            for i in 0..<n {
                let ref = Int(BinaryPropertyList.bigEndian(bytes, start + i * referenceSize, referenceSize))
                items.append(try object(ref, depth: depth + 1))
            }
            return .array(items)
        case 0xD:
            let (n, start) = try count(marker, at: at)
            guard n <= objectCount else { throw Failure("a dictionary of \(n) in a list of \(objectCount) objects") }
            try need(start, 2 * n * referenceSize)
            var entries: [String: PropertyListValue] = [:]
            for i in 0..<n {
                let keyRef = Int(BinaryPropertyList.bigEndian(bytes, start + i * referenceSize, referenceSize))
                let valueRef = Int(BinaryPropertyList.bigEndian(bytes, start + (n + i) * referenceSize, referenceSize))
                guard case .string(let key) = try object(keyRef, depth: depth + 1) else {
                    throw Failure("a dictionary key that is not a string")
                }
                entries[key] = try object(valueRef, depth: depth + 1)
            }
            return .dictionary(entries)
        default:
            throw Failure("unknown marker 0x\(String(marker, radix: 16))")
        }
    }
}
