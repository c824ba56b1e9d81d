import TripKit

/// A scalar as a parser meets it, before any `String` is made: its bytes are the parser's, valid
/// until it moves on.
enum GraphRawScalar {
    case null
    case bool(Bool)
    case number(UnsafeRawBufferPointer)
    case string(UnsafeRawBufferPointer)

    /// The `GraphScalar` of these bytes.
    var scalar: GraphScalar {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let t):
            // A whole number whose text is its own (JSON's, but `-0`) is kept as the number: read once.
            if let i = ObjectGraphCheck.integer(t), i != 0 || t.count == 1 { return .int(i) }
            return .number(String(decoding: t, as: UTF8.self))
        case .string(let t): return .string(String(decoding: t, as: UTF8.self))
        }
    }
}

/// What the index's pass learns of one object of the input: its entity, whether the second pass
/// will take it (its own members; references are not looked at), and the scalar the index keeps it
/// by (its unique attribute's value, else its `@key`), when it has one.
struct GraphIndexedObject {
    var entity: Int
    var isValid: Bool
    var identity: GraphScalar?
}

/// The index pass's view of the next item of a graph's text: an object checked as it was parsed
/// (`ObjectGraphCheck`), or what `GraphParsing.next()` gives, for the index's pass to check.
enum GraphIndexItem {
    case checked(GraphIndexedObject)
    case parsed(GraphParsedItem)
    /// An object an objects' pass decoded as it was parsed (`GraphParsing.nextDecoded`).
    case decoded(ObjectReadItem)
}

/// The first pass's check of an object's own members, made as a parser meets them, without their
/// `GraphField`s, a `String` per name or text value, or a `GraphValue` per member: it refuses what
/// `ObjectGraphDecoder.decode` refuses with `resolvesReferences: false` (a member the entity does not
/// have or given twice, a value of the wrong kind, a null or missing required attribute, a missing or
/// bad `@key`), and keeps the scalar the index notes the object by. A parser calls `begin`, then per
/// member `member` and one of `scalar`, `list`, `other`, then `finish`.
struct ObjectGraphCheck: GraphMemberSink {
    /// What a member name is to an entity.
    enum Member: Equatable {
        case entity, key, unknown
        /// A position among the entity's attributes then relationships.
        case at(Int)
    }

    private struct Entity {
        /// Attribute then relationship names; whether they and the names met are compared as bytes
        /// (all ASCII: bytes equal exactly when the `String`s are), and whether they are distinct (a
        /// name is then looked for where the previous member's next one is first).
        var names: GraphNames
        var strings: [String]
        var isASCII: Bool
        var isDistinct: Bool
        var kinds: [AttributeKind]
        var optional: [Bool]
        /// The attributes an object must give: neither optional, transient nor defaulted.
        var required: [Int]
        var toMany: [Bool]
        var slot: Int?
        var referred: Bool
    }

    private let entities: [Entity]
    private var current = 0
    private var given = GivenMembers()
    private var hasKey = false
    /// The position after the last member found: where the next is looked for first.
    private var hint = 0
    /// The current entity's `isASCII`, `isDistinct` and whether it has no unique slot (so takes `@key`).
    private var isASCII = true, isDistinct = true, isKeyless = true
    /// Whether the object begun is valid so far, and the scalar the index keeps it by.
    private(set) var isValid = true
    private(set) var identity: GraphScalar?

    init(_ index: ObjectGraphIndex) {
        let model = index.model
        entities = model.entities.indices.map { e in
            let attributes = index.attributes[e], relationships = model.allRelationships(of: e)
            let strings = attributes.map(\.name) + relationships.map(\.name)
            return Entity(names: GraphNames(strings), strings: strings,
                          isASCII: strings.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }, isDistinct: Set(strings).count == strings.count,
                          kinds: attributes.map(\.kind), optional: attributes.map(\.isOptional),
                          required: attributes.indices.filter {
                              !(attributes[$0].isOptional || attributes[$0].isTransient) && attributes[$0].defaultValue == nil
                          },
                          toMany: relationships.map(\.isToMany), slot: index.slots[e], referred: index.referred[e])
        }
    }

    /// Starts the check of an object of `entity`.
    mutating func begin(_ entity: Int) {
        current = entity
        given = GivenMembers()
        hasKey = false
        hint = 0
        isASCII = entities[entity].isASCII
        isDistinct = entities[entity].isDistinct
        isKeyless = entities[entity].slot == nil
        isValid = true
        identity = nil
    }

    /// What the member named by these (decoded UTF-8) bytes is: the first of the entity's members
    /// whose name is the same `String`, as the decoder looks it up.
    /// Names equal as bytes are equal `String`s; with ASCII names, bytes that match none are another
    /// name unless they are not ASCII (which may equal a name as a `String`: U+212A is `K`).
    mutating func member(_ name: UnsafeRawBufferPointer) -> Member {
        if isASCII {
            let head = GraphNames.head(name)
            if name.count == 7 && head == Self.entityHead { return .entity }
            if isKeyless && name.count == 4 && head == Self.keyHead { return .key }
            if let i = entities[current].names.find(name, head: head, from: isDistinct ? hint : nil) {
                hint = i + 1
                return .at(i)
            }
            if name.allSatisfy({ $0 < 0x80 }) { return .unknown }
        }
        let entity = entities[current]
        let text = String(decoding: name, as: UTF8.self)
        if text == "@entity" { return .entity }
        if entity.slot == nil && text == "@key" { return .key }
        return entity.strings.firstIndex(of: text).map(Member.at) ?? .unknown
    }

    /// The heads (`GraphNames.head`) of `@entity` and `@key`.
    static var entityHead: UInt64 { 0x0079_7469_746E_6540 }
    static var keyHead: UInt64 { 0x7965_6B40 }

    /// A scalar value of `member`.
    mutating func scalar(_ member: Member, _ value: GraphRawScalar) {
        guard isValid else { return }
        switch member {
        case .entity: return
        case .unknown: isValid = false
        case .key:
            guard !hasKey, case .number(let t) = value, Self.integer(t) != nil else { isValid = false; return }
            hasKey = true
            if entities[current].referred { identity = value.scalar }
        case .at(let m):
            guard given.insert(m) else { isValid = false; return }
            let entity = entities[current]
            guard m < entity.kinds.count else {
                // A to-one takes any scalar (null included), a to-many only an array.
                if entity.toMany[m - entity.kinds.count] { isValid = false }
                return
            }
            if case .null = value {
                if !entity.optional[m] { isValid = false }
                return
            }
            if !Self.isValue(value, entity.kinds[m]) { isValid = false; return }
            if m == entity.slot && entity.referred { identity = value.scalar }
        }
    }

    /// An array of scalars (`nested`: holding an array or object) as the value of `member`.
    mutating func list(_ member: Member, nested: Bool) {
        guard isValid else { return }
        switch member {
        case .entity: return
        case .at(let m) where given.insert(m):
            let entity = entities[current]
            if nested || m < entity.kinds.count || !entity.toMany[m - entity.kinds.count] { isValid = false }
        default: isValid = false
        }
    }

    /// An object as the value of `member`: taken only as `@entity`'s (whose value is not looked at).
    mutating func other(_ member: Member) {
        if member != .entity { isValid = false }
    }

    /// Ends the object's check: whether it is valid (its `@key` and required attributes given).
    mutating func finish() -> Bool {
        let entity = entities[current]
        if entity.slot == nil && !hasKey { isValid = false }
        if isValid, entity.required.contains(where: { !given.contains($0) }) { isValid = false }
        return isValid
    }

    /// Whether `ObjectGraphDecoder.value` gives a value of `kind` for this scalar (not null), without
    /// a `String` for a text or integer.
    private static func isValue(_ value: GraphRawScalar, _ kind: AttributeKind) -> Bool {
        switch (value, kind) {
        case (.string, .string), (.string, .uri), (.string, .undefined), (.string, .objectID), (.string, .composite):
            return true
        case (.number(let t), .int64):
            return integer(t) != nil
        case (.number(let t), .int32):
            return integer(t).map { Int64(Int32.min)...Int64(Int32.max) ~= $0 } ?? false
        case (.number(let t), .int16):
            return integer(t).map { Int64(Int16.min)...Int64(Int16.max) ~= $0 } ?? false
        default:
            return ObjectGraphDecoder.value(value.scalar, kind) != nil
        }
    }

    /// The `Int64` of a JSON number's text, as `Int64(_:)` reads it: an optional sign and digits,
    /// nil for a fraction, an exponent or a value out of range.
    static func integer(_ t: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        let negative = t.first == 0x2D
        if negative || t.first == 0x2B { i = 1 }
        guard i < t.count else { return nil }
        if t.count - i <= 18 {
            // No 18 digits overflow: the usual key, count or reference, read without the checks.
            var value: Int64 = 0
            while i < t.count {
                let d = t[i] &- 0x30
                guard d < 10 else { return nil }
                value = value &* 10 &+ Int64(d)
                i += 1
            }
            return negative ? 0 &- value : value
        }
        var magnitude: UInt64 = 0
        while i < t.count {
            let d = t[i] &- 0x30
            guard d < 10 else { return nil }
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(d))
            guard !o1, !o2 else { return nil }
            magnitude = sum
            i += 1
        }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}

/// What a parser gives an object's members to as it meets them, none made (`ObjectGraphCheck`, or
/// `GraphMemberSkip`): `begin`, then per member `member` and one of `scalar`, `list`, `other`, then `finish`.
protocol GraphMemberSink {
    associatedtype Member
    var identity: GraphScalar? { get }
    mutating func begin(_ entity: Int)
    mutating func member(_ name: UnsafeRawBufferPointer) -> Member
    mutating func scalar(_ member: Member, _ value: GraphRawScalar)
    mutating func list(_ member: Member, nested: Bool)
    mutating func other(_ member: Member)
    mutating func finish() -> Bool
}

/// A sink that looks at nothing: an object parsed only to be counted (a plan's first pass, for an
/// entity it does not need).
struct GraphMemberSkip: GraphMemberSink {
    var identity: GraphScalar? { nil }
    func begin(_ entity: Int) {}
    func member(_ name: UnsafeRawBufferPointer) {}
    func scalar(_ member: Void, _ value: GraphRawScalar) {}
    func list(_ member: Void, nested: Bool) {}
    func other(_ member: Void) {}
    func finish() -> Bool { false }
}

/// Names as bytes in one buffer, found by a name's bytes without making a `String`. Each name keeps
/// its length and its first eight bytes as one word, so that most comparisons are two integer
/// compares; only a longer name's rest is compared byte by byte.
struct GraphNames {
    private var bytes: [UInt8] = []
    private var keys: [(count: Int, head: UInt64, start: Int)] = []

    init(_ names: [String] = []) {
        for name in names { append(name.utf8) }
    }

    var count: Int { keys.count }

    mutating func append(_ name: some Collection<UInt8>) {
        let start = bytes.count
        bytes.append(contentsOf: name)
        let head = bytes.withUnsafeBytes { Self.head(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        keys.append((name.count, head, start))
    }

    /// The first eight bytes of `raw` (fewer zero-padded) as one little-endian word: byte 0 lowest.
    @inline(__always)
    static func head(_ raw: UnsafeRawBufferPointer) -> UInt64 {
        let n = raw.count
        guard let p = raw.baseAddress else { return 0 }
        if n >= 8 { return UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) }
        var word: UInt64 = 0, i = 0
        if n & 4 != 0 { word = UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self))); i = 4 }
        if n & 2 != 0 {
            word |= UInt64(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt16.self))) << (i &* 8)
            i &+= 2
        }
        if n & 1 != 0 { word |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) << (i &* 8) }
        return word
    }

    /// The first name whose bytes are `raw`'s, looked for at `hint` first (where the names are distinct).
    @inline(__always)
    func find(_ raw: UnsafeRawBufferPointer, from hint: Int?) -> Int? {
        find(raw, head: Self.head(raw), from: hint)
    }

    /// `find(_:from:)` with `raw`'s `head` already taken.
    @inline(__always)
    func find(_ raw: UnsafeRawBufferPointer, head: UInt64, from hint: Int?) -> Int? {
        keys.withUnsafeBufferPointer { k in
            @inline(__always) func matches(_ i: Int) -> Bool {
                k[i].count == raw.count && k[i].head == head
                    && (raw.count <= 8 || bytes.withUnsafeBytes {
                        JSONFieldTable.bytesEqual($0.baseAddress! + k[i].start + 8, raw.baseAddress! + 8, raw.count - 8)
                    })
            }
            if let hint, hint < k.count, matches(hint) { return hint }
            for i in 0..<k.count where matches(i) { return i }
            return nil
        }
    }
}
