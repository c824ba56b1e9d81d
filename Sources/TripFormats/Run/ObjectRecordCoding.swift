import TripKit

/// An object record's bytes in a spill file: what `ObjectRecordQueue` writes and reads back.
enum ObjectRecordCoding {
    static func encode(_ o: ObjectRecord, to out: inout [UInt8]) {
        put(UInt64(o.entity), &out); put(UInt64(bitPattern: o.key), &out)
        put(UInt64(o.attributes.count), &out)
        for v in o.attributes {
            switch v {
            case .null: out.append(0)
            case .string(let s): out.append(1); putText(Array(s.utf8), &out)
            case .int(let i): out.append(2); put(UInt64(bitPattern: i), &out)
            case .double(let d): out.append(3); put(d.bitPattern, &out)
            case .decimal(let s): out.append(4); putText(Array(s.utf8), &out)
            case .bool(let b): out.append(b ? 6 : 5)
            case .date(let d): out.append(7); put(d.bitPattern, &out)
            case .data(let d): out.append(8); putText(d, &out)
            case .uuid(let u): out.append(9); out += u.bytes
            case .url(let s): out.append(10); putText(Array(s.utf8), &out)
            }
        }
        put(UInt64(o.relationships.count), &out)
        for r in o.relationships {
            put(UInt64(r.count), &out)
            for ref in r { put(UInt64(ref.entity), &out); put(UInt64(bitPattern: ref.key), &out) }
        }
        putText(Array(o.origin.source.utf8), &out)
        put(UInt64(o.origin.record), &out); put(UInt64(bitPattern: Int64(o.origin.line ?? -1)), &out)
        put(UInt64(bitPattern: Int64(o.origin.column ?? -1)), &out)
    }

    private static func put(_ v: UInt64, _ out: inout [UInt8]) {
        for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * k))) }
    }

    private static func putText(_ bytes: [UInt8], _ out: inout [UInt8]) {
        put(UInt64(bytes.count), &out); out += bytes
    }

    /// Reads one record's bytes back.
    struct Decoder {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        mutating func record() throws -> ObjectRecord {
            let entity = Int(try take()), key = Int64(bitPattern: try take())
            var attributes: [ObjectValue] = []
            for _ in 0..<Int(try take()) {
                let tag = try byte()
                switch tag {
                case 0: attributes.append(.null)
                case 1: attributes.append(.string(String(decoding: try text(), as: UTF8.self)))
                case 2: attributes.append(.int(Int64(bitPattern: try take())))
                case 3: attributes.append(.double(Double(bitPattern: try take())))
                case 4: attributes.append(.decimal(String(decoding: try text(), as: UTF8.self)))
                case 5, 6: attributes.append(.bool(tag == 6))
                case 7: attributes.append(.date(Double(bitPattern: try take())))
                case 8: attributes.append(.data(try text()))
                case 9: attributes.append(.uuid(UUIDBytes(try slice(16))!))
                default: attributes.append(.url(String(decoding: try text(), as: UTF8.self)))
                }
            }
            var relationships = ObjectRelationships()
            // Each list's count takes eight bytes: more lists than the bytes left hold is damage, not a size to allocate.
            let lists = try take()
            guard lists <= UInt64((bytes.count - at) / 8) else { throw TripError(.io, "temporary data ended early") }
            relationships.reset(count: Int(lists))
            for r in 0..<Int(lists) {
                for _ in 0..<Int(try take()) {
                    relationships.append(ObjectReference(entity: Int(try take()), key: Int64(bitPattern: try take())), to: r)
                }
            }
            let source = String(decoding: try text(), as: UTF8.self)
            let record = Int(try take()), line = Int64(bitPattern: try take()), column = Int64(bitPattern: try take())
            let origin = RecordOrigin(source: source, record: record, line: line < 0 ? nil : Int(line), column: column < 0 ? nil : Int(column))
            return ObjectRecord(entity: entity, key: key, attributes: attributes, relationships: relationships, origin: origin)
        }

        private mutating func slice(_ n: Int) throws -> [UInt8] {
            guard at + n <= bytes.count else { throw TripError(.io, "temporary data ended early") }
            defer { at += n }
            return Array(bytes[at..<(at + n)])
        }
        private mutating func byte() throws -> UInt8 { try slice(1)[0] }
        private mutating func take() throws -> UInt64 {
            let b = try slice(8)
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(b[k]) << (8 * k) }
            return v
        }
        private mutating func text() throws -> [UInt8] { try slice(Int(try take())) }
    }
}
