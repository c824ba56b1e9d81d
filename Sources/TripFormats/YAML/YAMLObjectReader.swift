import TripKit

/// Reads the objects of a given model from YAML in the shape `YAMLObjectWriter` writes (by tripconv
/// or any other tool, block or flow style): a mapping of entity names to sequences of object
/// mappings. Scalars are typed by the YAML 1.2 core schema, as the trip reader types them; the
/// model then takes or refuses them as the JSON reader does (`ObjectGraphDecoder`), and reads the
/// input twice as it does. A document that does not parse, or is not that shape, stops the read
/// (exit 65, with `file:line:column`); an object the model refuses is a rejection with its place.
///
/// ```swift
/// var reader = try YAMLObjectReader(.file("graph.yaml"), model: model)
/// ```
public struct YAMLObjectReader: ObjectRecordReader, ReopenableObjectReader {
    /// The model the objects are read in.
    public let model: ObjectModel
    private var passes: ObjectGraphPasses<YAMLGraphParser>

    /// Opens `input` (a file) as YAML of `model`'s objects.
    public init(_ input: InputLocation, model: ObjectModel, options: ReadOptions = ReadOptions()) throws {
        try self.init(input, model: model, options: options, keys: nil)
    }

    /// Opens `input`, the index's entries kept in `keys` (a run's, under its budget; in memory when nil),
    /// the references it removes counted in `removals` (its own when nil), a second object with the
    /// unique value of an entity `repeatsUnique` marks given rather than refused.
    package init(_ input: InputLocation, model: ObjectModel, options: ReadOptions, keys: ObjectKeyTable?,
                 removals: ObjectReferenceRemovals? = nil, repeatsUnique: [Bool]? = nil) throws {
        guard input != .standardInput else {
            throw TripError.usage("objects are read from a file, which is read twice (references may come before the objects they name), not from standard input")
        }
        self.model = model
        passes = try ObjectGraphPasses(model: model, keys: keys, removals: removals, repeatsUnique: repeatsUnique) {
            YAMLGraphParser(try ByteInput(input, options: options), model: model)
        }
    }

    /// The next object or rejection, entity by entity in the model's order; nil at the end.
    public mutating func next() throws -> ObjectReadItem? { try passes.next() }

    /// Per entity, at most how many objects of it the input holds, as the index's pass counted them.
    public var expectedObjects: [Int]? { passes.expectedObjects }

    /// A reader of the same input from its start, with this one's index (as `JSONObjectReader.reopened`).
    func reopened() throws -> YAMLObjectReader {
        var again = self
        again.passes = try passes.restarted()
        return again
    }

    /// This reader giving only the objects of the entities marked (a plan's first pass).
    func restricted(to entities: [Bool]) -> YAMLObjectReader {
        var out = self
        out.passes = passes.restricted(to: entities)
        return out
    }
}

/// The YAML shape of a graph, parsed into members per object from the resolved events.
struct YAMLGraphParser: GraphParsing {
    private var events: YAMLNodeStream<YAMLEventParser>
    private let model: ObjectModel
    private let name: String
    private enum Phase { case start, entities, objects, done }
    private var phase = Phase.start
    private var entity = -1
    private var record = 0

    init(_ input: ByteInput, model: ObjectModel) {
        events = YAMLNodeStream(parser: YAMLEventParser(input: input))
        self.model = model
        name = input.name
    }

    private func fail(_ event: YAMLEvent, _ message: String) -> TripError {
        TripError.data("\(events.place(of: event)): \(message)")
    }

    mutating func next() throws -> GraphParsedItem? {
        while true {
            switch phase {
            case .done:
                return nil
            case .start:
                let event = try events.next()
                switch event.kind {
                case .streamStart, .documentStart: continue
                case .streamEnd: phase = .done
                case .mappingStart: phase = .entities
                default: throw fail(event, "expected a mapping of entity names to sequences of objects")
                }
            case .entities:
                let event = try events.next()
                if event.kind == .mappingEnd {
                    let end = try events.next()
                    guard end.kind == .documentEnd else { throw fail(end, "expected the end of the document") }
                    let stream = try events.next()
                    guard stream.kind == .streamEnd else { throw fail(stream, "expected one document only") }
                    phase = .done
                    continue
                }
                guard event.kind == .scalar else { throw fail(event, "expected an entity name") }
                guard let e = model.entityIndex(event.value) else {
                    throw fail(event, "the model has no entity \(event.value.quotedForMessage)")
                }
                entity = e
                let list = try events.next()
                guard list.kind == .sequenceStart else { throw fail(list, "expected a sequence of \(event.value) objects") }
                phase = .objects
            case .objects:
                let event = try events.next()
                if event.kind == .sequenceEnd { phase = .entities; continue }
                record += 1
                let origin = RecordOrigin(source: name, record: record, line: Int(event.line) + 1, column: Int(event.column) + 1)
                guard event.kind == .mappingStart else {
                    try skip(event)
                    return .rejected(SetAsideRecord(origin: origin, reason: "expected a \(model.entities[entity].name) mapping"))
                }
                return .object(entity: entity, fields: try readMapping(), origin: origin)
            }
        }
    }

    /// Skips the node `event` starts.
    private mutating func skip(_ event: YAMLEvent) throws {
        guard event.isCollectionStart else { return }
        var depth = 1
        while depth > 0 {
            let e = try events.next()
            if e.isCollectionStart { depth += 1 } else if e.isCollectionEnd { depth -= 1 }
        }
    }

    private mutating func readMapping() throws -> [GraphField] {
        var fields: [GraphField] = []
        while true {
            let key = try events.next()
            if key.kind == .mappingEnd { return fields }
            let valueEvent = try events.next()
            let line = Int(valueEvent.line) + 1, column = Int(valueEvent.column) + 1
            guard key.kind == .scalar else {
                try skip(key); try skip(valueEvent)
                fields.append(GraphField(name: "<a collection as key>", value: .other("a collection"), line: line, column: column))
                continue
            }
            let value: GraphValue
            switch valueEvent.kind {
            case .scalar: value = .scalar(Self.scalar(valueEvent))
            case .sequenceStart:
                var items: [(GraphScalar, line: Int, column: Int)] = []
                var nested = false
                while true {
                    let item = try events.next()
                    if item.kind == .sequenceEnd { break }
                    if item.kind == .scalar {
                        items.append((Self.scalar(item), Int(item.line) + 1, Int(item.column) + 1))
                    } else {
                        nested = true
                        try skip(item)
                    }
                }
                value = nested ? .other("a sequence holding a collection") : .list(items)
            default:
                try skip(valueEvent)
                value = .other("a mapping")
            }
            fields.append(GraphField(name: key.value, value: value, line: line, column: column))
        }
    }

    /// A scalar typed by the core schema (`YAMLValueLoader.resolve`), a number keeping its text.
    static func scalar(_ event: YAMLEvent) -> GraphScalar {
        switch YAMLValueLoader.resolve(event) {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number: return .number(event.value)
        default: return .string(event.value)
        }
    }
}
