/// The trips of a conversion, held compactly between reading and writing.
///
/// Deduplication needs every trip before the first can be written (a later duplicate changes an
/// earlier trip), so a conversion holds its whole input. A `ModelObject` graph costs about 1.3 KiB a
/// trip in heap objects (arrays of enums of strings, per trip and per item); here each object is
/// encoded once into large byte chunks, about as many bytes as its values, plus a 32-byte entry.
/// Objects are decoded one at a time where they are needed: to merge, to map, to write.
///
/// The encoding is self-describing and private to this file: a value is a tag byte and its payload;
/// an object is its attribute count and values, then its relationship count and each relationship.
struct ObjectArena {
    /// Where one live object's bytes are, and where its record came from.
    struct Entry {
        var chunk: UInt32
        var offset: UInt32
        var origin: PackedOrigin
    }

    /// A `RecordOrigin` without its own copy of the source name.
    struct PackedOrigin {
        var source: UInt32
        /// Column + 1; 0 when unknown.
        var column: UInt32
        var record: Int
        /// Line + 1; 0 when unknown.
        var line: Int
    }

    static let chunkSize = 1 << 20

    private(set) var chunks: [[UInt8]] = []
    /// The live objects, in order.
    var entries: [Entry] = []
    private var sources: [String] = []
    private var sourceIndex: [String: UInt32] = [:]

    init() {}

    var count: Int { entries.count }

    // MARK: Origins

    mutating func pack(_ origin: RecordOrigin) -> PackedOrigin {
        let source: UInt32
        if let last = sources.last, last == origin.source {
            source = UInt32(sources.count - 1)
        } else if let known = sourceIndex[origin.source] {
            source = known
        } else {
            source = UInt32(sources.count)
            sources.append(origin.source)
            sourceIndex[origin.source] = source
        }
        return PackedOrigin(source: source, column: origin.column.map { UInt32(clamping: $0 + 1) } ?? 0,
                            record: origin.record, line: origin.line.map { $0 + 1 } ?? 0)
    }

    func unpack(_ p: PackedOrigin) -> RecordOrigin {
        RecordOrigin(source: sources[Int(p.source)], record: p.record,
                     line: p.line == 0 ? nil : p.line - 1, column: p.column == 0 ? nil : Int(p.column) - 1)
    }

    func origin(at i: Int) -> RecordOrigin { unpack(entries[i].origin) }

    // MARK: Storing

    /// Encodes an object; returns where it is, with the given origin, without making it live.
    /// The encoding's size is counted first, so it is written once, in place, at the chunk's end.
    mutating func store(_ object: ModelObject, origin: PackedOrigin) -> Entry {
        let size = ObjectArena.encodedSize(object)
        let c = chunkWithRoom(for: size)
        let offset = chunks[c].count
        chunks[c].append(contentsOf: repeatElement(0, count: size))
        chunks[c].withUnsafeMutableBufferPointer { bytes in
            let start = bytes.baseAddress! + offset
            let end = ObjectArena.write(object, at: start)
            precondition(end - start == size, "ObjectArena: an encoding's size was miscounted")
        }
        return Entry(chunk: UInt32(c), offset: UInt32(offset), origin: origin)
    }

    /// The last chunk, or a new one when `size` more bytes would not fit in it.
    private mutating func chunkWithRoom(for size: Int) -> Int {
        if chunks.isEmpty || chunks[chunks.count - 1].count + size > ObjectArena.chunkSize {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(max(ObjectArena.chunkSize, size))
            chunks.append(chunk)
        }
        return chunks.count - 1
    }

    mutating func append(_ object: ModelObject, origin: RecordOrigin) {
        entries.append(store(object, origin: pack(origin)))
    }

    /// Moves another arena's objects after this one's, without copying their bytes.
    mutating func absorb(_ other: inout ObjectArena) {
        let base = UInt32(chunks.count)
        var sourceMap: [UInt32] = []
        for s in other.sources { sourceMap.append(pack(RecordOrigin(source: s, record: 0)).source) }
        chunks.append(contentsOf: other.chunks)
        entries.reserveCapacity(entries.count + other.entries.count)
        for var e in other.entries {
            e.chunk += base
            e.origin.source = sourceMap[Int(e.origin.source)]
            entries.append(e)
        }
        other = ObjectArena()
    }

    // MARK: Reading

    func object(_ e: Entry) -> ModelObject {
        chunks[Int(e.chunk)].withUnsafeBufferPointer { bytes in
            var at = Int(e.offset)
            return ObjectArena.decodeObject(bytes, &at)
        }
    }

    func object(at i: Int) -> ModelObject { object(entries[i]) }

    /// The encoded bytes of a root attribute's value (its tag and payload): equal bytes, equal values.
    func withValueBytes<R>(_ e: Entry, attribute index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        chunks[Int(e.chunk)].withUnsafeBufferPointer { bytes in
            var at = Int(e.offset)
            let n = ObjectArena.readCount(bytes, &at)
            guard index < n else { return body(UnsafeBufferPointer(rebasing: bytes[0..<0])) }
            for _ in 0..<index { ObjectArena.skipValue(bytes, &at) }
            let start = at
            ObjectArena.skipValue(bytes, &at)
            return body(UnsafeBufferPointer(rebasing: bytes[start..<at]))
        }
    }

    /// A root attribute's value.
    func value(_ e: Entry, attribute index: Int) -> Value {
        withValueBytes(e, attribute: index) { bytes in
            var at = 0
            return bytes.isEmpty ? .null : ObjectArena.decodeValue(bytes, &at)
        }
    }

    /// The number of objects in each of a root object's relationships (0 or 1 for a to-one).
    func relationshipCounts(_ e: Entry) -> [Int] {
        chunks[Int(e.chunk)].withUnsafeBufferPointer { ObjectArena.relationshipCounts($0, from: Int(e.offset)) }
    }

    /// The number of objects in each relationship of the object encoded at `start`.
    static func relationshipCounts(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> [Int] {
        var at = start
        let n = readCount(bytes, &at)
        for _ in 0..<n { skipValue(bytes, &at) }
        let r = readCount(bytes, &at)
        var counts: [Int] = []
        counts.reserveCapacity(r)
        for _ in 0..<r {
            let tag = bytes[at]; at += 1
            switch tag {
            case Tag.toOneNone: counts.append(0)
            case Tag.toOneSome: counts.append(1); skipObject(bytes, &at)
            default:
                let k = readCount(bytes, &at)
                counts.append(k)
                for _ in 0..<k { skipObject(bytes, &at) }
            }
        }
        return counts
    }

    /// Stores an object already encoded (by `TripBytes.append`), with its origin, and makes it live.
    mutating func appendEncoded(_ bytes: UnsafeBufferPointer<UInt8>, origin: RecordOrigin) {
        let c = chunkWithRoom(for: bytes.count)
        let offset = chunks[c].count
        chunks[c].append(contentsOf: bytes)
        entries.append(Entry(chunk: UInt32(c), offset: UInt32(offset), origin: pack(origin)))
    }

    /// The encoded bytes of a live object.
    func withEncoding<R>(_ e: Entry, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try chunks[Int(e.chunk)].withUnsafeBufferPointer { bytes in
            var end = Int(e.offset)
            ObjectArena.skipObject(bytes, &end)
            return try body(UnsafeBufferPointer(rebasing: bytes[Int(e.offset)..<end]))
        }
    }

    /// About how many bytes the arena holds, in constant time: its chunks (a chunk is rarely more
    /// than `chunkSize`) and its entries.
    var heldBytes: Int {
        chunks.count * ObjectArena.chunkSize + entries.capacity * MemoryLayout<Entry>.stride
    }

    /// Calls `body` with each live object and its origin, in order.
    func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) rethrows {
        for e in entries { try body(object(e), unpack(e.origin)) }
    }

    /// Replaces every live object by `transform(object)`, keeping order and origins, and frees each
    /// chunk of the old encoding as soon as no later object needs it.
    mutating func transform(_ transform: (ModelObject) throws -> ModelObject) rethrows {
        var lastUse = [Int](repeating: -1, count: chunks.count)
        for (i, e) in entries.enumerated() { lastUse[Int(e.chunk)] = i }
        var old = chunks
        chunks = []
        for c in old.indices where lastUse[c] < 0 { old[c] = [] }
        var freeAfter: [Int: [Int]] = [:]
        for (c, i) in lastUse.enumerated() where i >= 0 { freeAfter[i, default: []].append(c) }
        for i in entries.indices {
            let e = entries[i]
            let object = old[Int(e.chunk)].withUnsafeBufferPointer { bytes in
                var at = Int(e.offset)
                return ObjectArena.decodeObject(bytes, &at)
            }
            entries[i] = store(try transform(object), origin: e.origin)
            if let done = freeAfter[i] { for c in done { old[c] = [] } }
        }
    }

    // MARK: Encoding

    private enum Tag {
        static let null: UInt8 = 0, string: UInt8 = 1, date: UInt8 = 2, falseValue: UInt8 = 3, trueValue: UInt8 = 4, int: UInt8 = 5
        static let toOneNone: UInt8 = 0, toOneSome: UInt8 = 1, toMany: UInt8 = 2
    }

    /// How many bytes `write` puts down for an object.
    static func encodedSize(_ object: ModelObject) -> Int {
        var n = countSize(object.attributes.count) + countSize(object.relationships.count)
        for v in object.attributes { n += encodedSize(v) }
        for r in object.relationships {
            switch r {
            case .toOne(nil): n += 1
            case .toOne(let o?): n += 1 + encodedSize(o)
            case .toMany(let list):
                n += 1 + countSize(list.count)
                for o in list { n += encodedSize(o) }
            }
        }
        return n
    }

    /// How many bytes `write` puts down for a value.
    @inline(__always) static func encodedSize(_ value: Value) -> Int {
        switch value {
        case .string(let s): let k = s.utf8.count; return 1 + countSize(k) + k
        case .date, .int: return 9
        case .null, .bool: return 1
        }
    }

    private static func countSize(_ n: Int) -> Int {
        var v = UInt64(n), k = 1
        while v >= 0x80 { v >>= 7; k += 1 }
        return k
    }

    /// Writes an object's encoding at `p` (room for `encodedSize(object)` bytes); returns where it ends.
    static func write(_ object: ModelObject, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var p = start
        putCount(object.attributes.count, &p)
        for v in object.attributes { p = write(v, at: p) }
        putCount(object.relationships.count, &p)
        for r in object.relationships {
            switch r {
            case .toOne(nil): put(Tag.toOneNone, &p)
            case .toOne(let o?): put(Tag.toOneSome, &p); p = write(o, at: p)
            case .toMany(let list):
                put(Tag.toMany, &p)
                putCount(list.count, &p)
                for o in list { p = write(o, at: p) }
            }
        }
        return p
    }

    /// Writes a value's encoding (its tag and payload) at `p`; returns where it ends.
    @inline(__always) static func write(_ value: Value, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var p = start
        switch value {
        case .null: put(Tag.null, &p)
        case .string(var s):
            put(Tag.string, &p)
            s.withUTF8 { utf8 in
                putCount(utf8.count, &p)
                if let base = utf8.baseAddress { p.update(from: base, count: utf8.count) }
                p += utf8.count
            }
        case .date(let t): put(Tag.date, &p); putInt64(t.milliseconds, &p)
        case .bool(let b): put(b ? Tag.trueValue : Tag.falseValue, &p)
        case .int(let n): put(Tag.int, &p); putInt64(n, &p)
        }
        return p
    }

    @inline(__always) private static func put(_ b: UInt8, _ p: inout UnsafeMutablePointer<UInt8>) {
        p.pointee = b
        p += 1
    }

    @inline(__always) private static func putCount(_ n: Int, _ p: inout UnsafeMutablePointer<UInt8>) {
        var v = UInt64(n)
        while v >= 0x80 { put(UInt8(truncatingIfNeeded: v) | 0x80, &p); v >>= 7 }
        put(UInt8(v), &p)
    }

    @inline(__always) private static func putInt64(_ n: Int64, _ p: inout UnsafeMutablePointer<UInt8>) {
        var v = UInt64(bitPattern: n)
        for _ in 0..<8 { put(UInt8(truncatingIfNeeded: v), &p); v >>= 8 }
    }

    /// A value's encoding, as a key under which equal bytes are equal values.
    static func key(_ value: Value) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedSize(value)) { bytes, count in
            count = write(value, at: bytes.baseAddress!) - bytes.baseAddress!
        }
    }

    // MARK: Decoding

    static func readCount(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) -> Int {
        var v: UInt64 = 0, shift: UInt64 = 0
        while true {
            let byte = b[at]; at += 1
            v |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return Int(v) }
            shift += 7
        }
    }

    private static func readInt64(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) -> Int64 {
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(b[at + k]) << (8 * UInt64(k)) }
        at += 8
        return Int64(bitPattern: v)
    }

    private static func decodeValue(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) -> Value {
        let tag = b[at]; at += 1
        switch tag {
        case Tag.string:
            let n = readCount(b, &at)
            let s = String(decoding: UnsafeBufferPointer(rebasing: b[at..<(at + n)]), as: UTF8.self)
            at += n
            return .string(s)
        case Tag.date: return .date(Timestamp(milliseconds: readInt64(b, &at)))
        case Tag.falseValue: return .bool(false)
        case Tag.trueValue: return .bool(true)
        case Tag.int: return .int(readInt64(b, &at))
        default: return .null
        }
    }

    static func decodeObject(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) -> ModelObject {
        let n = readCount(b, &at)
        var attributes: [Value] = []
        attributes.reserveCapacity(n)
        for _ in 0..<n { attributes.append(decodeValue(b, &at)) }
        let r = readCount(b, &at)
        var relationships: [Related] = []
        relationships.reserveCapacity(r)
        for _ in 0..<r {
            let tag = b[at]; at += 1
            switch tag {
            case Tag.toOneNone: relationships.append(.toOne(nil))
            case Tag.toOneSome: relationships.append(.toOne(decodeObject(b, &at)))
            default:
                let k = readCount(b, &at)
                var list: [ModelObject] = []
                list.reserveCapacity(k)
                for _ in 0..<k { list.append(decodeObject(b, &at)) }
                relationships.append(.toMany(list))
            }
        }
        return ModelObject(attributes: attributes, relationships: relationships)
    }

    static func skipValue(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) {
        let tag = b[at]; at += 1
        switch tag {
        case Tag.string: let n = readCount(b, &at); at += n
        case Tag.date, Tag.int: at += 8
        default: break
        }
    }

    static func skipObject(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) {
        let n = readCount(b, &at)
        for _ in 0..<n { skipValue(b, &at) }
        let r = readCount(b, &at)
        for _ in 0..<r {
            let tag = b[at]; at += 1
            switch tag {
            case Tag.toOneNone: break
            case Tag.toOneSome: skipObject(b, &at)
            default:
                let k = readCount(b, &at)
                for _ in 0..<k { skipObject(b, &at) }
            }
        }
    }
}
