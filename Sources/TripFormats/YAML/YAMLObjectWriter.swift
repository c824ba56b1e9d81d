import TripKit

/// Writes the objects of any model as YAML: the JSON document's shape (docs/DESIGN-NOTES.md, "The
/// general object model") in block style, a mapping of entity names to sequences of objects.
///
/// ```yaml
/// Item:
///   - name: Iron
///     added: "2024-05-01T09:30:00.123456789Z"
///     components:
///       - 1B9FD00D-CB92-46CD-8711-5297025B7822
/// Component: []
/// ```
///
/// Members, nulls and references as `JSONObjectWriter` writes them (`"@key"` quoted: `@` cannot start
/// a plain scalar). Strings are plain only where every YAML 1.1 and 1.2 reader reads them back as
/// that string (`YAMLScalarText`). Dates and Decimals are double-quoted strings: a YAML 1.1 reader
/// (PyYAML) would otherwise make a timestamp of a date and drop its digits past the microsecond, and
/// a float of a Decimal. A Double is a plain float (`1.0e-05`, with the `.0` YAML 1.1 needs before
/// an exponent); one not finite is the string `"NaN"`, `"Infinity"` or `"-Infinity"`, as in JSON.
/// It names and holds objects as the JSON writer does (one pass, `ObjectWriteOrder`); the output is
/// complete or absent.
public struct YAMLObjectWriter: ObjectRecordWriter {
    private let output: ByteOutput
    private let options: WriteOptions
    private var order: ObjectWriteOrder?
    private var received = -1
    private var layout: ObjectGraphLayout?
    private var slots: [[Int]] = []
    private var current = -1
    private var bytes: [UInt8] = []

    /// Opens an output for YAML, with `options`' compression and memory budget.
    public init(_ location: OutputLocation, options: WriteOptions = WriteOptions()) throws {
        output = try ByteOutput(location, compression: options.compression)
        self.options = options
    }

    /// Works out each entity's members.
    public mutating func begin(_ model: ObjectModel) throws {
        let layout = ObjectGraphLayout(model)
        self.layout = layout
        order = ObjectWriteOrder(model, budget: options.budget)
        slots = model.entities.indices.map(layout.attributeSlots)
    }

    /// Writes one object (or holds it until the names it needs are known), after the entity keys up
    /// to its entity's.
    public mutating func write(_ object: ObjectRecord) throws {
        guard let layout, let order else { throw TripError.usage("YAMLObjectWriter.write before begin") }
        try layout.check(object, after: max(received, 0))
        received = object.entity
        try order.pass(object) { try put($0, layout, order.naming) }
    }

    private mutating func put(_ object: ObjectRecord, _ layout: ObjectGraphLayout, _ naming: ObjectNaming) throws {
        bytes.removeAll(keepingCapacity: true)
        if object.entity != current {
            for e in (current + 1)..<object.entity { appendEntityKey(layout.entities[e].name, empty: true) }
            appendEntityKey(layout.entities[object.entity].name, empty: false)
            current = object.entity
        }
        try append(object, layout, naming)
        try output.write(bytes)
    }

    /// Writes the keys of the entities with no objects after the last and makes the output visible.
    public mutating func finish() throws {
        if let layout, let order { try order.finish { try put($0, layout, order.naming) } }
        if let layout {
            bytes.removeAll(keepingCapacity: true)
            for e in (current + 1)..<layout.entities.count { appendEntityKey(layout.entities[e].name, empty: true) }
            if layout.entities.isEmpty { bytes.append(contentsOf: "{}\n".utf8) }
            try output.write(bytes)
        }
        try output.commit()
    }

    /// Throws the output away, leaving the target as it was.
    public mutating func abort() { output.discard() }

    private mutating func appendEntityKey(_ name: String, empty: Bool) {
        YAMLScalarText.append(name, to: &bytes)
        bytes.append(contentsOf: (empty ? ": []\n" : ":\n").utf8)
    }

    private mutating func append(_ object: ObjectRecord, _ layout: ObjectGraphLayout, _ naming: ObjectNaming) throws {
        let e = layout.entities[object.entity]
        var first = true
        func key(_ name: String) {
            bytes.append(contentsOf: (first ? "  - " : "    ").utf8)
            first = false
            YAMLScalarText.append(name, to: &bytes)
            bytes.append(58)
        }
        if e.writesKey {
            key("@key"); bytes.append(32)
            ObjectValueText.appendText(.int(object.key), to: &bytes)
            bytes.append(10)
        }
        for (slot, attribute) in zip(slots[object.entity], e.attributes) {
            key(attribute.name); bytes.append(32)
            appendValue(object.attributes[slot])
            bytes.append(10)
        }
        for (r, relationship) in e.relationships.enumerated() {
            key(relationship.name)
            let references = object.relationships[r]
            if relationship.isToMany {
                if references.isEmpty { bytes.append(contentsOf: " []\n".utf8); continue }
                bytes.append(10)
                for reference in references {
                    bytes.append(contentsOf: "      - ".utf8)
                    try appendReference(reference, relationship, naming)
                    bytes.append(10)
                }
            } else if let reference = references.first {
                bytes.append(32)
                try appendReference(reference, relationship, naming)
                bytes.append(10)
            } else {
                bytes.append(contentsOf: " null\n".utf8)
            }
        }
        if first { bytes.append(contentsOf: "  - {}\n".utf8) }
    }

    private mutating func appendReference(_ reference: ObjectReference, _ relationship: ObjectGraphLayout.Relationship,
                                          _ naming: ObjectNaming) throws {
        if relationship.byValue {
            appendValue(try naming.value(of: reference, in: output.name))
        } else {
            ObjectValueText.appendText(.int(reference.key), to: &bytes)
        }
    }

    private mutating func appendValue(_ value: ObjectValue) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .int, .bool: ObjectValueText.appendText(value, to: &bytes)
        case .double(let d) where d.isFinite:
            let text = d.description
            if text.contains("e") && !text.contains(".") {
                // YAML 1.1 reads `1e-05` as a string: its floats have a point.
                let parts = text.split(separator: "e", maxSplits: 1)
                bytes.append(contentsOf: "\(parts[0]).0e\(parts[1])".utf8)
            } else {
                bytes.append(contentsOf: text.utf8)
            }
        case .string(let s), .url(let s): YAMLScalarText.append(s, to: &bytes)
        case .date, .decimal, .double:
            YAMLScalarText.appendDoubleQuoted(ObjectValueText.text(value) ?? "", to: &bytes)
        case .uuid, .data: YAMLScalarText.append(ObjectValueText.text(value) ?? "", to: &bytes)
        }
    }
}
