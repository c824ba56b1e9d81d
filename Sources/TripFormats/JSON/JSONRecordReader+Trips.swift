#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// One entity's field names as bytes, so a key is matched without making a String of it.
final class JSONFieldTable {
    struct Entry {
        /// Where the name's bytes are in `bytes` (followed there by a closing quote).
        let offset: Int, count: Int, first: UInt8
        /// The name can be matched in the input's raw bytes: it is ASCII with nothing to escape.
        let isPlain: Bool
        /// The field's index in the vocabulary entity: what the builder takes.
        let field: Int
        let kind: SchemaVocabulary.FieldKind
    }

    let names: [String]
    let entries: UnsafeMutableBufferPointer<Entry>
    private let bytes: UnsafeMutablePointer<UInt8>

    init(_ fields: SchemaVocabulary.EntityFields) {
        names = fields.fields.map(\.name)
        let all: [UInt8] = names.flatMap { Array($0.utf8) + [0x22] }
        bytes = .allocate(capacity: max(1, all.count))
        bytes.initialize(from: all, count: all.count)
        entries = .allocate(capacity: names.count)
        var offset = 0
        for (i, f) in fields.fields.enumerated() {
            let count = f.name.utf8.count
            let isPlain = count > 0 && f.name.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C }
            (entries.baseAddress! + i).initialize(to: Entry(offset: offset, count: count, first: f.name.utf8.first ?? 0,
                                                            isPlain: isPlain, field: i, kind: f.kind))
            offset += count + 1
        }
    }

    deinit {
        bytes.deallocate()
        entries.deallocate()
    }

    /// The index of the entry whose name is the key, if any.
    @inline(__always)
    func lookup(_ key: UnsafeRawBufferPointer) -> Int? {
        let count = key.count
        guard count > 0, let keyBase = key.baseAddress else { return nil }
        let first = keyBase.load(as: UInt8.self)
        for i in 0..<entries.count {
            let e = entries[i]
            if e.count == count, e.first == first, JSONFieldTable.bytesEqual(keyBase, bytes + e.offset, count) { return i }
        }
        return nil
    }

    /// The index of the entry whose name, then a closing quote, is at `p` (just past a key's
    /// opening quote), with `available` bytes readable there; `hint` is tried first. Nil when no
    /// name is there as it is: the key may be escaped, unknown, or go on past the bytes read.
    /// Such a key's text is exactly the name, so this gives what `readString` and `lookup` give.
    @inline(__always)
    func match(at p: UnsafePointer<UInt8>, available: Int, hint: Int) -> Int? {
        let n = entries.count
        guard available > 0 else { return nil }
        let first = p.pointee
        var i = hint < n ? hint : 0
        for _ in 0..<n {
            let e = entries[i]
            if e.first == first, e.count < available, e.isPlain,
               JSONFieldTable.bytesEqual(p, bytes + e.offset, e.count &+ 1) { return i }
            i = i &+ 1 == n ? 0 : i &+ 1
        }
        return nil
    }

    /// Compares short byte strings inline, a word at a time (a call to memcmp costs more than the work).
    @inline(__always)
    static func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
        var i = 0
        while i &+ 8 <= count {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i &+= 8
        }
        while i < count {
            if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
            i &+= 1
        }
        return true
    }

    @inline(__always)
    static func equals(_ key: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        key.count == name.utf8CodeUnitCount && (key.count == 0 || bytesEqual(key.baseAddress!, name.utf8Start, key.count))
    }
}

// MARK: - Trip objects into the builder

extension JSONRecordReader {
    /// Reads an object's members into the builder's current object, of vocabulary entity `entity`;
    /// `pos` is after its `{`, or after its first key when `firstKey` is given. `depth` counts the
    /// containers around the members, this object included. Recursion follows the schema's
    /// relationships, never the input, and `depth` is checked against the limit all the same.
    mutating func readMembers(entity: Int, depth: Int, firstKey: UnsafeRawBufferPointer?) throws {
        if depth > scanner.limits.maxDepth {
            throw scanner.error("nesting deeper than \(scanner.limits.maxDepth)", at: max(0, scanner.pos - 1))
        }
        var pendingKey = firstKey
        if pendingKey == nil {
            guard let b = try scanner.peek() else { throw scanner.unexpected("an object key or '}'") }
            if b == 0x7D {
                scanner.pos += 1
                return
            }
            guard b == 0x22 else { throw scanner.unexpected("an object key (a string)") }
        }
        let table = tables[entity]
        // Keys usually come in the order of the vocabulary: the one after the last is tried first.
        var hint = 0
        while true {
            var entry = -1
            if pendingKey == nil, let i = table.match(at: scanner.base + scanner.pos + 1,
                                                      available: scanner.end - scanner.pos - 1, hint: hint) {
                scanner.pos += table.entries[i].count + 2
                entry = i
            } else {
                let key: UnsafeRawBufferPointer
                let keyMark = pendingKey == nil ? scanner.mark : RecordBuilder.noMark
                if let pendingKey { key = pendingKey } else { key = try scanner.readString() }
                pendingKey = nil
                if let i = table.lookup(key) {
                    entry = i
                } else {
                    // The key's bytes are valid only until the scanner moves on.
                    let name = String(decoding: key, as: UTF8.self)
                    try readColon()
                    builder.mark = keyMark
                    builder.unknownField(name)
                    try scanner.skipValue(depth: depth)
                }
            }
            if entry >= 0 {
                hint = entry + 1
                try readColon()
                try readField(table, entry, startingWith: scanner.base[scanner.pos], depth: depth)
            }
            guard let c = try scanner.peek() else { throw scanner.unexpected("',' or '}' after an object member") }
            if c == 0x7D {
                scanner.pos += 1
                return
            }
            guard c == 0x2C else { throw scanner.unexpected("',' or '}' after an object member") }
            scanner.pos += 1
            guard try scanner.peek() == 0x22 else { throw scanner.unexpected("an object key (a string)") }
        }
    }

    /// Moves past the `:` after a key, and the whitespace after it; a value follows.
    @inline(__always)
    private mutating func readColon() throws {
        guard try scanner.peek() == 0x3A else { throw scanner.unexpected("':' after an object key") }
        scanner.pos += 1
        guard try scanner.peek() != nil else { throw scanner.unexpected("a JSON value") }
    }

    /// Reads a known field's value, starting with `v` at `pos`.
    @inline(__always)
    private mutating func readField(_ table: JSONFieldTable, _ index: Int, startingWith v: UInt8, depth: Int) throws {
        let isNested = v == 0x7B || v == 0x5B
        let entry = table.entries[index]
        // Where the value starts, should the builder fail at it (made a line and column only then).
        builder.mark = scanner.mark
        switch entry.kind {
        case .attribute(let type):
            if isNested {
                builder.fail("field '\(table.names[index])': expected \(Self.expectation(type)), found \(JSONScanner.kindOfValue(startingWith: v))")
                try scanner.skipValue(depth: depth)
            } else if v == 0x22 {
                // The builder takes the string's bytes: a date is read from them, with no String made.
                builder.set(entry.field, string: try scanner.readPlainString())
            } else if v == 0x74 || v == 0x66 {
                // `t` or `f`: true, false, or an error.
                builder.set(entry.field, bool: try scanner.readLiteral() == .true)
            } else {
                builder.set(entry.field, try readScalar(v))
            }
        case .transient:
            // The builder counts the field and ignores its value, whatever it is.
            if isNested {
                builder.set(entry.field, .null)
                try scanner.skipValue(depth: depth)
            } else {
                builder.set(entry.field, try readScalar(v))
            }
        case .toMany(let destination):
            if v == 0x5B {
                try readList(table, index, destination: destination, depth: depth)
            } else if v == 0x7B {
                builder.fail("field '\(table.names[index])': expected a list of objects, found an object")
                try scanner.skipValue(depth: depth)
            } else {
                builder.set(entry.field, try readScalar(v))
            }
        case .toOne(let destination):
            if v == 0x7B {
                scanner.pos += 1
                builder.beginObject(entry.field)
                try readMembers(entity: destination, depth: depth + 1, firstKey: nil)
                builder.endObject()
            } else if v == 0x5B {
                builder.fail("field '\(table.names[index])': expected an object or null, found an array")
                try scanner.skipValue(depth: depth)
            } else {
                builder.set(entry.field, try readScalar(v))
            }
        }
    }

    /// Reads a to-many relationship's array at `pos`: each element an object of `destination`.
    private mutating func readList(_ table: JSONFieldTable, _ index: Int, destination: Int, depth: Int) throws {
        let entry = table.entries[index]
        if depth + 1 > scanner.limits.maxDepth {
            throw scanner.error("nesting deeper than \(scanner.limits.maxDepth)", at: scanner.pos)
        }
        scanner.pos += 1
        guard var b = try scanner.peek() else { throw scanner.unexpected("an object or ']'") }
        if b == 0x5D {
            scanner.pos += 1
            builder.markPresent(entry.field)
            return
        }
        while true {
            builder.mark = scanner.mark
            if b == 0x7B {
                scanner.pos += 1
                builder.beginObject(entry.field)
                try readMembers(entity: destination, depth: depth + 2, firstKey: nil)
                builder.endObject()
            } else {
                builder.fail("field '\(table.names[index])': expected a list of objects, found \(JSONScanner.kindOfValue(startingWith: b)) in the list")
                try scanner.skipValue(depth: depth + 1)
            }
            guard let c = try scanner.peek() else { throw scanner.unexpected("',' or ']' after an array element") }
            if c == 0x5D {
                scanner.pos += 1
                return
            }
            guard c == 0x2C else { throw scanner.unexpected("',' or ']' after an array element") }
            scanner.pos += 1
            guard let next = try scanner.peek() else { throw scanner.unexpected("a JSON value") }
            b = next
        }
    }

    /// Reads a scalar starting with `v` at `pos`, as the builder takes it.
    @inline(__always)
    private mutating func readScalar(_ v: UInt8) throws -> ScalarToken {
        switch v {
        case 0x22:
            return .string(String(decoding: try scanner.readString(), as: UTF8.self))
        case 0x2D, 0x30...0x39:
            return .number(String(decoding: try scanner.readNumber(), as: UTF8.self))
        case 0x74, 0x66, 0x6E:
            switch try scanner.readLiteral() {
            case .true: return .bool(true)
            case .false: return .bool(false)
            case .null: return .null
            }
        default:
            throw scanner.unexpected("a JSON value")
        }
    }

    /// What an attribute of a type takes, in the builder's words.
    static func expectation(_ type: AttributeType) -> String {
        switch type {
        case .string: return "a string"
        case .date: return "a date"
        case .bool: return "true or false"
        case .int: return "an integer"
        }
    }
}
