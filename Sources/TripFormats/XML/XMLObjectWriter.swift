import TripKit

/// Writes the objects of any model as one XML document (docs/DESIGN-NOTES.md, "The general object
/// model"):
///
/// ```xml
/// <?xml version="1.0" encoding="UTF-8"?>
/// <objects>
///   <Component key="1">
///     <count>1</count>
///     <item><ref>Iron</ref></item>
///   </Component>
/// </objects>
/// ```
///
/// An element per object, named by its entity, with `key` where its family has no unique attribute;
/// a child per stored attribute (absent when null, empty for the empty text; `ObjectValueText`
/// gives the text); a child per relationship holding one `<ref>` per reference, in order (absent
/// when it holds none). Text is escaped as the trips' writer escapes it (`XMLEscaping`); a value
/// XML 1.0 cannot carry is a data error naming the object and attribute. The output is complete or
/// absent; an object referring by value to one not seen yet waits (`ObjectNaming.waits`),
/// and with it every object after it, in an `ObjectRecordQueue` until `finish()`.
final class XMLObjectWriter: ObjectRecordWriter {
    private let output: ByteOutput
    private let options: WriteOptions
    private var model = ObjectModel(entities: [])
    private var names: ObjectNaming?
    private var waiting: ObjectRecordQueue?
    private var holding = false
    private var record = RecordBuffer()
    /// Per entity: its stored attributes (slot and description) and its relationships.
    private var attributes: [[(slot: Int, AttributeDescription)]] = []
    private var relationships: [[RelationshipDescription]] = []

    /// A writer of `location`, with `options`' compression and memory budget.
    init(_ location: OutputLocation, options: WriteOptions) throws {
        output = try ByteOutput(location, compression: options.compression)
        self.options = options
    }

    func begin(_ model: ObjectModel) throws {
        self.model = model
        names = ObjectNaming(model, budget: options.budget) { _, _ in true }
        attributes = model.entities.indices.map { e in
            model.allAttributes(of: e).enumerated().filter { !$0.element.isTransient }.map { ($0.offset, $0.element) }
        }
        relationships = model.entities.indices.map { model.allRelationships(of: $0) }
        waiting = ObjectRecordQueue(budget: options.budget ?? SpillBudget(limit: SpillBudget.defaultLimit))
        try output.write(Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<objects>\n".utf8))
    }

    func write(_ object: ObjectRecord) throws {
        guard let waiting, names != nil else { throw TripError.usage("the XML object writer is given objects before begin(_:)") }
        guard object.entity >= 0, object.entity < model.entities.count else {
            throw TripError.data("\(output.name): an object of entity \(object.entity), which the model does not have")
        }
        try names!.note(object)
        if names!.waits[object.entity] { holding = true }
        if holding { try waiting.append(object) } else { try put(object) }
    }

    private func put(_ object: ObjectRecord) throws {
        let entity = model.entities[object.entity], names = self.names!
        record.removeAll()
        record.append("  <"); record.append(Array(entity.name.utf8))
        if names.hasKey(object.entity) { record.append(Array(" key=\"\(object.key)\"".utf8)) }
        record.append(">\n")
        for (slot, a) in attributes[object.entity] {
            guard slot < object.attributes.count, let text = ObjectValueText.text(object.attributes[slot]) else { continue }
            try element(a.name, text, indent: "    ", object: object)
        }
        for (slot, r) in relationships[object.entity].enumerated() where slot < object.relationships.count {
            let refs = object.relationships[slot]
            guard !refs.isEmpty else { continue }
            record.append("    <"); record.append(Array(r.name.utf8)); record.append(">\n")
            for ref in refs { try element("ref", try names.name(of: ref, in: output.name), indent: "      ", object: object) }
            record.append("    </"); record.append(Array(r.name.utf8)); record.append(">\n")
        }
        record.append("  </"); record.append(Array(entity.name.utf8)); record.append(">\n")
        try output.write(record.bytes)
    }

    /// `<name>text</name>` on a line of its own.
    private func element(_ name: String, _ text: String, indent: StaticString, object: ObjectRecord) throws {
        record.append(indent); record.append(0x3C); record.append(Array(name.utf8)); record.append(0x3E)
        var text = text
        do {
            try text.withUTF8 { try XMLEscaping.append($0, to: &record, inAttribute: false) }
        } catch let problem as XMLWriteProblem {
            throw TripError.data("\(output.name): \(model.entities[object.entity].name) of key \(object.key): '\(name)': \(problem.what)",
                                 notes: ["XML 1.0 cannot carry control characters other than tab, line feed and carriage return, "
                                         + "even as character references; write these objects as JSON, YAML or SQLite instead"])
        }
        record.append(0x3C, 0x2F); record.append(Array(name.utf8)); record.append(0x3E, 0x0A)
    }

    func finish() throws {
        guard let waiting else { throw TripError.usage("the XML object writer is finished before begin(_:)") }
        do {
            try waiting.forEach { try put($0) }
            self.waiting = nil
            try output.write(Array("</objects>\n".utf8))
            try output.commit()
        } catch {
            abort()
            throw error
        }
    }

    func abort() {
        waiting = nil
        output.discard()
    }
}
