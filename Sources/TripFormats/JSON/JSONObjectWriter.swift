import TripKit

/// Writes the objects of any model as JSON or JSON Lines, the shapes docs/DESIGN-NOTES.md lays down
/// ("The general object model"): JSON one document keyed by entity name, each an array of objects;
/// JSON Lines one object per line with `"@entity"` first.
///
/// ```
/// {"Item": [
/// {"name": "Iron", "weight": 7.5, "components": ["1B9FD00D-CB92-46CD-8711-5297025B7822"]}
/// ],
/// "Component": [
/// {"id": "1B9FD00D-CB92-46CD-8711-5297025B7822", "count": 1, "item": "Iron"}
/// ]}
/// ```
///
/// Each object: `"@key"` where its entity's family has no single unique attribute, then every
/// attribute (`null` when null: every object of an entity has the same members), then each
/// relationship: a to-one the reference or `null`, a to-many an array of references. A reference is
/// the destination's unique value, else its `@key` number. Every entity of the model has its array,
/// empty when it has no objects.
///
/// Objects come entity by entity in the model's order (an entity's array is closed and the next
/// opened when the entity changes), in one pass: the names of referred objects are noted as they pass
/// (`ObjectNaming`), and an object naming by value one not seen yet waits, with every object after
/// it, until the names it needs are known (`ObjectWriteOrder`); waiting objects and names spill past
/// the options' memory budget. The output is complete or absent.
public struct JSONObjectWriter: ObjectRecordWriter {
    private let output: ByteOutput
    private let isLines: Bool
    private let options: WriteOptions
    private var order: ObjectWriteOrder?
    private var received = -1
    private var layout: ObjectGraphLayout?
    /// Per entity: `"Name": [` (JSON) or `{"@entity": "Name"` (JSON Lines).
    private var heads: [[UInt8]] = []
    /// Per entity, what each object writes, read per object through pointers.
    private var shapes: JSONObjectShapes?
    private var current = -1
    private var inEntity = 0
    private var record = RecordBuffer()
    /// An object written straight from its source (`encodeRow`, `writeRow`): its head, `@key` and attributes.
    private var row = RecordBuffer()

    /// Opens an output for JSON (`format: .json`) or JSON Lines (`.jsonl`), with `options`' compression
    /// and memory budget.
    public init(_ location: OutputLocation, format: Format, options: WriteOptions = WriteOptions()) throws {
        guard format == .json || format == .jsonl else {
            throw TripError.usage("the JSON writer writes json or jsonl, not \(format.rawValue)")
        }
        output = try ByteOutput(location, compression: options.compression)
        isLines = format == .jsonl
        self.options = options
    }

    /// Works out each entity's member keys.
    public mutating func begin(_ model: ObjectModel) throws {
        let layout = ObjectGraphLayout(model)
        self.layout = layout
        order = ObjectWriteOrder(model, budget: options.budget)
        heads = layout.entities.map { e in
            isLines ? Array("{".utf8) + Self.key("@entity") + Self.literal(e.name) : Self.key(e.name).dropLast() + Array(" [".utf8)
        }
        let memberKeys = layout.entities.map { e in
            (e.writesKey ? [Self.key("@key")] : []) + e.attributes.map { Self.key($0.name) } + e.relationships.map { Self.key($0.name) }
        }
        shapes = JSONObjectShapes(layout, heads: heads, keys: memberKeys, slots: model.entities.indices.map(layout.attributeSlots))
    }

    /// Writes one object (or holds it until the names it needs are known), after closing the previous
    /// entity's array and opening its own (JSON).
    public mutating func write(_ object: ObjectRecord) throws {
        guard let layout, let order, let shapes else { throw TripError.usage("JSONObjectWriter.write before begin") }
        try layout.check(object, after: max(received, 0))
        received = object.entity
        try order.pass(object) { try put($0, shapes, order.naming) }
    }

    private mutating func put(_ object: ObjectRecord, _ shapes: JSONObjectShapes, _ naming: ObjectNaming) throws {
        frame(object.entity)
        try encode(object, shapes, naming)
        if isLines { record.append(0x0A) }
        try output.write(record.bytes)
    }

    /// Empties the record buffer and puts in it what comes before an object of `entity`: in JSON, the
    /// arrays closed and opened up to its entity's, else a comma, and a newline.
    private mutating func frame(_ entity: Int) {
        record.removeAll()
        if !isLines {
            if entity != current { openEntities(through: entity) } else { record.append(0x2C) }
            record.append(0x0A)
            inEntity += 1
        }
    }

    /// Closes the open array and opens the next entities' up to `entity`'s (those between stay empty).
    private mutating func openEntities(through entity: Int) {
        for e in (current + 1)...entity { openEntity(e) }
    }

    private mutating func openEntity(_ e: Int) {
        if e == 0 {
            record.append(0x7B)
        } else {
            if inEntity > 0 { record.append(0x0A) }
            record.append(Array("],\n".utf8))
        }
        record.append(heads[e])
        current = e
        inEntity = 0
    }

    /// Closes the document (JSON) and makes the output visible under its name.
    public mutating func finish() throws {
        if let shapes, let order { try order.finish { try put($0, shapes, order.naming) } }
        if !isLines, let layout {
            record.removeAll()
            if layout.entities.isEmpty {
                record.append(Array("{}\n".utf8))
            } else {
                for e in (current + 1)..<layout.entities.count { openEntity(e) }
                if inEntity > 0 { record.append(0x0A) }
                record.append(Array("]}\n".utf8))
            }
            try output.write(record.bytes)
        }
        try output.commit()
    }

    /// Throws the output away, leaving the target as it was.
    public mutating func abort() { output.discard() }

    // MARK: - Encoding

    private mutating func encode(_ object: ObjectRecord, _ shapes: JSONObjectShapes, _ naming: ObjectNaming) throws {
        let shape = shapes.entities[object.entity]
        object.attributes.withUnsafeBufferPointer { values in
            Self.lay(object.entity, key: object.key, shapes, isLines: isLines, into: &record) { n, out in Self.append(values[n], to: &out) }
        }
        try appendRelationships(object.relationships, shape, from: shape.firstMember + (shape.writesKey ? 1 : 0) + shape.slotCount, shapes, naming)
        record.append(0x7D)
    }

    /// Lays out, in a buffer of its own, the head, `@key` and attributes of an object of `entity` keyed
    /// `key` written straight from its source (then `writeRow` writes it whole): `value(n, &buffer)`
    /// appends the value of attribute `n` (a position in the entity's attributes) as `append` writes it.
    mutating func encodeRow(_ entity: Int, key: Int64, _ value: (Int, inout RecordBuffer) throws -> Void) rethrows {
        row.removeAll()
        try Self.lay(entity, key: key, shapes!, isLines: isLines, into: &row, value)
    }

    /// An object's head (`{`, or JSON Lines' `{"@entity": …`), its `@key` where its entity writes one,
    /// and its attributes' members, each value appended by `value`.
    private static func lay(_ entity: Int, key: Int64, _ shapes: JSONObjectShapes, isLines: Bool, into out: inout RecordBuffer,
                            _ value: (Int, inout RecordBuffer) throws -> Void) rethrows {
        let shape = shapes.entities[entity]
        var m = shape.firstMember
        if isLines { out.append(shapes.text(shape.head)) } else { out.append(0x7B) }
        func member() {
            if isLines || m > shape.firstMember { out.append(0x2C, 0x20) }
            out.append(shapes.text(shapes.spans[m])); m += 1
        }
        if shape.writesKey { member(); appendInteger(key, to: &out) }
        for s in shape.firstSlot..<(shape.firstSlot + shape.slotCount) {
            member()
            try value(shapes.ints[s], &out)
        }
    }

    /// Whether the objects of `entity` are written straight from their source (`encodeRow`, then
    /// `writeRow`) rather than passed as `ObjectRecord`s to `write`: its entity names by value none at or
    /// after it, and no object will wait for names when its first comes (those waiting then have every
    /// name they need: `ObjectWriteOrder.passesStraight`).
    func takesRows(of entity: Int) -> Bool {
        guard let layout, let order, entity >= max(received, 0), entity < layout.entities.count else { return false }
        return order.wouldPassStraight(entity)
    }

    /// Writes the object `encodeRow` laid out, of `entity` keyed `key`, with `relationships` (per
    /// relationship of the entity, its references), as `write` writes an object; its unique value
    /// `name` is noted where something refers to its entity by value. Only after `takesRows(of:)`.
    mutating func writeRow(_ entity: Int, key: Int64, relationships: ObjectRelationships, name: ObjectValue) throws {
        guard let order, let shapes else { throw TripError.usage("JSONObjectWriter.writeRow before begin") }
        // The objects waiting whose names are now all known go first, as `write` gives them before the next object.
        guard try order.passesStraight(entity, { try put($0, shapes, order.naming) }) else {
            throw TripError.usage("JSONObjectWriter.writeRow of an object that waits for names")
        }
        received = entity
        try order.naming.note(entity, key: key, value: name)
        let shape = shapes.entities[entity]
        frame(entity)
        record.append(row.bytes)
        try appendRelationships(relationships, shape, from: shape.firstMember + (shape.writesKey ? 1 : 0) + shape.slotCount, shapes, order.naming)
        record.append(0x7D)
        if isLines { record.append(0x0A) }
        try output.write(record.bytes)
    }

    /// The position among the attributes of `entity` of the unique value `writeRow` is to be given
    /// (`name`); nil where no name of its objects is noted (nothing refers to them by value).
    func notedSlot(of entity: Int) -> Int? { order?.naming.notedSlot(of: entity) }

    /// The relationships' members of an object of `shape` (the first `m`), and the object's closing brace.
    private mutating func appendRelationships(_ relationships: ObjectRelationships, _ shape: JSONObjectShapes.Entity,
                                              from first: Int, _ shapes: JSONObjectShapes, _ naming: ObjectNaming) throws {
        var m = first
        for r in 0..<shape.relationshipCount {
            if isLines || m > shape.firstMember { record.append(0x2C, 0x20) }
            record.append(shapes.text(shapes.spans[m])); m += 1
            let flags = shapes.ints[shape.firstRelationship + r], byValue = flags & 2 != 0
            try relationships.withList(r) { references in
                if flags & 1 != 0 {
                    record.append(0x5B)
                    for i in references.indices {
                        if i > 0 { record.append(0x2C, 0x20) }
                        try appendReference(references[i], byValue: byValue, naming)
                    }
                    record.append(0x5D)
                } else if let reference = references.first {
                    try appendReference(reference, byValue: byValue, naming)
                } else {
                    record.append("null")
                }
            }
        }
    }

    private mutating func appendReference(_ reference: ObjectReference, byValue: Bool, _ naming: ObjectNaming) throws {
        if byValue {
            Self.append(try naming.value(of: reference, in: output.name), to: &record)
        } else {
            Self.appendInteger(reference.key, to: &record)
        }
    }

    /// `"name": ` with the name escaped.
    static func key(_ name: String) -> [UInt8] { literal(name) + Array(": ".utf8) }

    /// A JSON string literal of `text`.
    static func literal(_ text: String) -> [UInt8] {
        var buffer = RecordBuffer()
        var s = text
        s.withUTF8 { JSONRecordWriter.appendString($0, to: &buffer) }
        return Array(buffer.bytes)
    }

    /// Appends a value as docs/DESIGN-NOTES.md says: numbers bare (a Double not finite, and a
    /// Decimal whose text is not a JSON number, as a string), every other value a string.
    static func append(_ value: ObjectValue, to out: inout RecordBuffer) {
        switch value {
        case .null: out.append("null")
        case .int(let i): appendInteger(i, to: &out)
        case .bool(let b): out.append(b ? "true" : "false")
        case .double(let d) where d.isFinite:
            var text = d.description
            text.withUTF8 { out.append(UnsafeRawBufferPointer($0)) }
        case .decimal(var text):
            let isNumber = text.withUTF8 { JSONScanner.numberSyntaxError(UnsafeRawBufferPointer($0)) == nil }
            if isNumber { text.withUTF8 { out.append(UnsafeRawBufferPointer($0)) } } else { appendString(text, to: &out) }
        case .string(let s), .url(let s): appendString(s, to: &out)
        case .date(let seconds): appendDate(seconds, to: &out)
        case .uuid(let u): u.bytes.withUnsafeBytes { appendUUID($0, to: &out) }
        case .double, .data: appendString(ObjectValueText.text(value) ?? "", to: &out)
        }
    }

    /// A Date (seconds since 2001) as a string of its ISO 8601 text, formatted straight into the buffer.
    static func appendDate(_ seconds: Double, to out: inout RecordBuffer) {
        out.reserve(ObjectValueText.dateMaximumLength + 2)
        let room = out.spare(ObjectValueText.dateMaximumLength + 2)
        if let n = ObjectValueText.formatDate(seconds, into: UnsafeMutableRawBufferPointer(rebasing: room[1...])) {
            // The text needs no escaping.
            room[0] = 0x22
            room[n + 1] = 0x22
            out.count += n + 2
        } else {
            out.put(0x22)
            var text = seconds.isFinite ? seconds.description : ObjectValueText.numberText(seconds)
            text.withUTF8 { out.put(UnsafeRawBufferPointer($0)) }
            out.put(0x22)
        }
    }

    /// A UUID's 16 bytes as a string of its text (`1B9FD00D-CB92-…`, upper case), which needs no escaping.
    static func appendUUID(_ bytes: UnsafeRawBufferPointer, to out: inout RecordBuffer) {
        out.reserve(38)
        let p = out.spare(38).baseAddress!.assumingMemoryBound(to: UInt8.self)
        let digits = hexDigits.utf8Start
        p[0] = 0x22
        var at = 1
        for i in 0..<16 {
            if i == 4 || i == 6 || i == 8 || i == 10 { p[at] = 0x2D; at += 1 }
            let b = bytes[i]
            p[at] = digits[Int(b >> 4)]; p[at + 1] = digits[Int(b & 15)]
            at += 2
        }
        p[at] = 0x22
        out.count += 38
    }

    private static let hexDigits: StaticString = "0123456789ABCDEF"

    private static func appendString(_ text: String, to out: inout RecordBuffer) {
        var s = text
        s.withUTF8 { JSONRecordWriter.appendString($0, to: &out) }
    }

    /// Appends the decimal digits of `n`: its length found first, then two digits at a time written
    /// from the last, straight into the buffer.
    static func appendInteger(_ n: Int64, to out: inout RecordBuffer) {
        out.reserve(21)
        if n < 0 { out.put(0x2D) }
        var m = n.magnitude
        var length = 1
        var bound: UInt64 = 10
        while length < 20, m >= bound {
            length += 1
            bound &*= 10
        }
        let p = out.spare(length).baseAddress!.assumingMemoryBound(to: UInt8.self)
        let pairs = digitPairs.utf8Start
        var i = length
        while m >= 100 {
            let r = Int(m % 100)
            m /= 100
            i -= 2
            p[i] = pairs[2 * r]; p[i + 1] = pairs[2 * r + 1]
        }
        if m >= 10 {
            p[0] = pairs[2 * Int(m)]; p[1] = pairs[2 * Int(m) + 1]
        } else {
            p[0] = UInt8(truncatingIfNeeded: 48 + m)
        }
        out.count += length
    }

    /// "00", "01", … "99": the two digits of each number below 100.
    private static let digitPairs: StaticString = """
        0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
        5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899
        """
}
