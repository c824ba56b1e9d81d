import TripKit

extension JSONGraphParser {
    /// The object at `pos` (its `{`, the line's first value) decoded as it is parsed, when its first
    /// member is `"@entity"` naming an entity `taking` takes and `decoder` takes every member as it
    /// is; else nil, with `pos` where it was, and the line is read by `readObject` and given to
    /// `decode`, which says why it refuses what it refuses (a line that does not parse as well).
    mutating func decodeLine(_ decoder: inout ObjectGraphDecoder, taking: (Int) -> Bool, origin: RecordOrigin) throws -> ObjectReadItem? {
        let start = scanner.pos
        do {
            if let item = try decodeMembers(&decoder, taking: taking, origin: origin) { return item }
        } catch is JSONSyntaxError {}
        scanner.pos = start
        return nil
    }

    private mutating func decodeMembers(_ decoder: inout ObjectGraphDecoder, taking: (Int) -> Bool, origin: RecordOrigin) throws -> ObjectReadItem? {
        scanner.pos += 1
        guard try scanner.peek() == 0x22, JSONFieldTable.equals(try scanner.readPlainString(), "@entity"),
              try scanner.peek() == 0x3A else { return nil }
        scanner.pos += 1
        guard try scanner.peek() == 0x22, let e = entityIndex(try scanner.readPlainString()), taking(e) else { return nil }
        var object = decoder.begin(e, origin: origin)
        while true {
            guard var b = try scanner.peek() else { return nil }
            if b == 0x7D { scanner.pos += 1; break }
            guard b == 0x2C else { return nil }
            scanner.pos += 1
            b = try scanner.peek() ?? 0
            guard b == 0x22 else { return nil }
            let member = decoder.member(try scanner.readPlainString())
            guard try scanner.peek() == 0x3A else { return nil }
            scanner.pos += 1
            guard let v = try scanner.peek() else { return nil }
            if v == 0x5B {
                guard let r = decoder.list(member, &object) else { return nil }
                scanner.pos += 1
                var first = true
                while true {
                    guard var c = try scanner.peek() else { return nil }
                    if c == 0x5D {
                        scanner.pos += 1
                        decoder.endList(r, &object)
                        break
                    }
                    if !first {
                        guard c == 0x2C else { return nil }
                        scanner.pos += 1
                        c = try scanner.peek() ?? 0
                    }
                    first = false
                    guard c != 0x5B, c != 0x7B, try decoder.listItem(r, try readRawScalar(c), &object) else { return nil }
                }
            } else {
                guard v != 0x7B, try decoder.scalar(member, try readRawScalar(v), &object) else { return nil }
            }
        }
        guard try scanner.peek() == nil else { return nil }
        return try decoder.finish(&object)
    }
}
