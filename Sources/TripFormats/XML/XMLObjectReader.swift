import TripKit

/// Reads the objects of a model given to it from an object document (`XMLObjectWriter`'s shape),
/// with the trips' libxml2 event parser (`XMLTripParser`), told that the root's children may have any
/// name.
///
/// A first pass reads every object's name (`key`, or its unique value, numbered 1, 2, … in document
/// order per family) into an `ObjectReferenceIndex` (in the run's key table: under the budget, spilled
/// past it); the second gives the objects in document order, and a later read of the run (a plan's
/// second pass) takes the first's index (`reopened`).
/// An object of an entity the model lacks, an unknown child, a value of the wrong kind
/// (`ObjectValueText`), a required attribute absent, or a repeated name sets the object aside with
/// its place (the line and column of its start tag), and only the objects the second pass takes are
/// in the first's index: a reference to no object in it is removed from its object, which is kept
/// (counted in `removals`, as the JSON reader does: DESIGN-NOTES, "A reference to an object not
/// written is removed"); a document that is
/// not well formed, or whose root is not `<objects>`, ends the read (exit 65) with the place.
struct XMLObjectReader: RewindingObjectReader {
    let model: ObjectModel
    private let path: String
    private let options: ReadOptions
    private let names: ObjectNaming
    private var index: ObjectReferenceIndex
    private let removals: ObjectReferenceRemovals
    private var elements: XMLObjectElements
    private var ordinal = 0
    /// The entities whose elements this read gives (a plan's first pass), nil for all. Set only
    /// through `restricted(to:)` and `reopened()` (`RewindingObjectReader`, for whose sake it is not private).
    var only: [Bool]?

    /// A reader of the document at `path`, of `model`'s objects, the references it removes counted in
    /// `removals` (its own when nil); an object repeating the unique value of an entity `repeatsUnique`
    /// marks is given, not refused.
    init(path: String, model: ObjectModel, options: ReadOptions, keys: ObjectKeyTable? = nil, removals: ObjectReferenceRemovals? = nil,
         repeatsUnique: [Bool]? = nil) throws {
        self.model = model; self.path = path; self.options = options
        self.removals = removals ?? ObjectReferenceRemovals()
        names = ObjectNaming(model) { _, _ in true }
        index = ObjectReferenceIndex(names, keys: keys)
        index.repeatsUnique = repeatsUnique ?? []
        elements = try XMLObjectElements(path: path, options: options)
        var first = try XMLObjectElements(path: path, options: options)
        var n = 0
        while let element = try first.next() {
            n += 1
            // Only an object the second pass takes is named: a reference to one it refuses names no object.
            guard case .object = try make(element, ordinal: n, resolving: false), let e = model.entityIndex(element.entity) else { continue }
            var value: ObjectValue?
            if let slot = names.uniqueSlot[e] {
                let a = model.allAttributes(of: e)[slot]
                value = element.children.first { $0.name == a.name }?.text.flatMap { ObjectValueText.value($0, kind: a.kind) }
            }
            _ = try index.add(entity: e, key: element.key.flatMap { Int64($0) }, value: value, ordinal: n)
        }
    }

    mutating func next() throws -> ObjectReadItem? {
        while let element = try elements.next() {
            ordinal += 1
            // A restricted read leaves out the elements of the entities it does not give, and those of no entity.
            if let only, model.entityIndex(element.entity).map({ $0 < only.count && only[$0] }) != true { continue }
            return try make(element, ordinal: ordinal, resolving: true)
        }
        return nil
    }

    /// The document read again from its start, with this read's index (`reopened`).
    mutating func rewind() throws {
        elements = try XMLObjectElements(path: path, options: options)
        ordinal = 0
    }

    /// The object `element` (the `ordinal`th) makes, or its rejection. `resolving` false (the first
    /// pass, whose index is not complete): its references are not looked up, nor is its name checked
    /// against earlier ones. A reference to no object in the index is removed, counted in `removals`.
    private func make(_ element: XMLObjectElement, ordinal: Int, resolving: Bool) throws -> ObjectReadItem {
        let origin = RecordOrigin(source: elements.name, record: ordinal, line: element.line, column: element.column)
        func reject(_ reason: String) -> ObjectReadItem { .rejected(SetAsideRecord(origin: origin, reason: reason)) }
        if let problem = element.problem { return reject(problem) }
        guard let e = model.entityIndex(element.entity) else { return reject("<\(element.entity)> is no entity of the model") }
        guard !model.entities[e].isAbstract else { return reject("<\(element.entity)> is abstract: its objects are of the entities under it") }
        let entity = model.entities[e]
        let attributes = model.allAttributes(of: e), relationships = model.allRelationships(of: e)
        var values = [ObjectValue](repeating: .null, count: attributes.count)
        var refs = [[ObjectReference]](repeating: [], count: relationships.count)
        var seen: Set<String> = []
        for child in element.children {
            guard seen.insert(child.name).inserted else { return reject("<\(child.name)> appears twice") }
            if let slot = attributes.firstIndex(where: { $0.name == child.name && !$0.isTransient }) {
                let a = attributes[slot]
                guard child.refs == nil, let text = child.text else { return reject("<\(a.name)>: expected a \(a.kind), found elements") }
                guard let value = ObjectValueText.value(text, kind: a.kind) else {
                    return reject("<\(a.name)>: expected a \(a.kind), found \(text.quotedForMessage)")
                }
                values[slot] = value
            } else if let slot = relationships.firstIndex(where: { $0.name == child.name }) {
                let r = relationships[slot]
                let list = child.refs ?? (child.text.map { $0.isEmpty } == true ? [] : nil)
                guard let list, let d = model.entityIndex(r.destination) else { return reject("<\(r.name)>: expected <ref> elements") }
                guard r.isToMany || list.count <= 1 else { return reject("<\(r.name)>: a to-one relationship holds \(list.count) references") }
                for text in list where resolving {
                    guard let target = try index.resolve(text, destination: d) else {
                        removals.add(origin, member: r.name, place: nil, reason: "\(text.quotedForMessage) names no \(r.destination)")
                        continue
                    }
                    refs[slot].append(target.reference)
                }
            } else if !options.ignoreUnknown {
                return reject("<\(child.name)> is no attribute or relationship of a \(entity.name)")
            }
        }
        // An attribute with a default, not given, takes it (as the JSON and YAML readers do).
        for (slot, a) in attributes.enumerated() where !a.isTransient && !seen.contains(a.name) {
            if let d = a.defaultValue { values[slot] = d }
        }
        for (slot, a) in attributes.enumerated() where !a.isOptional && !a.isTransient && values[slot].isNull {
            return reject("<\(a.name)>: a \(entity.name) must have one")
        }
        let found: (reference: ObjectReference, ordinal: Int)?
        if !resolving {
            guard names.uniqueSlot[e] != nil || element.key.flatMap({ Int64($0) }) != nil else { return reject("no key") }
            return .object(ObjectRecord(entity: e, key: 0, attributes: values, relationships: ObjectRelationships(refs), origin: origin))
        }
        if let slot = names.uniqueSlot[e] {
            guard let text = ObjectValueText.text(values[slot]) else { return reject("<\(attributes[slot].name)>: no value to refer to the \(entity.name) by") }
            found = try index.resolve(text, destination: e)
        } else {
            guard let key = element.key, Int64(key) != nil else {
                return reject("expected a key=\"…\" attribute (a whole number), found \((element.key ?? "none").quotedForMessage)")
            }
            found = try index.resolve(key, destination: e)
        }
        if let found, found.ordinal != ordinal, let own = try index.repeated(e, ordinal: ordinal) {
            return .object(ObjectRecord(entity: e, key: own.key, attributes: values, relationships: ObjectRelationships(refs), origin: origin))
        }
        guard let found, found.ordinal == ordinal else { return reject("the same name as an earlier \(entity.name)") }
        return .object(ObjectRecord(entity: e, key: found.reference.key, attributes: values, relationships: ObjectRelationships(refs), origin: origin))
    }
}

/// One object element of a document, as read: its entity's name, `key`, place and children.
struct XMLObjectElement {
    struct Child {
        var name: String
        /// Its text, when it has no child elements.
        var text: String?
        /// The texts of its `<ref>` children, when it has some.
        var refs: [String]?
    }
    var entity: String
    var key: String?
    var line: Int
    var column: Int
    var children: [Child] = []
    /// Why the element cannot be an object (an unexpected attribute, child or nesting).
    var problem: String?
}

/// The object elements of a document, one at a time, from the parser's event batches.
struct XMLObjectElements {
    private let parser: XMLTripParser
    let name: String
    private var ready: [XMLObjectElement] = []
    private var current: XMLObjectElement?
    private var depth = 0
    private var text: [UInt8] = []
    private var childHasElements = false
    private var refs: [String] = []
    private var finished = false
    private var failure: TripError?

    init(path: String, options: ReadOptions) throws {
        let input = try ByteInput(.file(path), options: options)
        parser = try XMLTripParser(input: input, options: options, encoding: try TextEncoding.of(options), recordElement: nil)
        name = input.name
    }

    mutating func next() throws -> XMLObjectElement? {
        while ready.isEmpty {
            if finished { return nil }
            let batch = parser.parseChunk(reusing: nil)
            apply(batch)
            if let failure = failure ?? batch.failure { throw failure }
            if batch.isLast { finished = true }
        }
        return ready.removeFirst()
    }

    private mutating func apply(_ batch: XMLEventBatch) {
        let events = batch.events
        var i = 0
        while i < events.count {
            let event = events[i]
            switch event.kind {
            case .start:
                depth += 1
                let elementName = String(cString: event.name!)
                let attributes = Int(event.count)
                var attributeList: [(String, String)] = []
                for k in 0..<attributes {
                    let a = events[i + 1 + k]
                    attributeList.append((String(cString: a.name!),
                                          String(decoding: UnsafeBufferPointer(start: batch.bytes + a.offset, count: Int(a.count)), as: UTF8.self)))
                }
                i += attributes
                start(elementName, attributeList, line: Int(event.line), column: Int(event.column))
            case .text:
                if depth >= 3 { text += UnsafeBufferPointer(start: batch.bytes + event.offset, count: Int(event.count)) }
                // Whitespace between elements means nothing (the parse thread drops it, but not
                // when a chunk ends between it and the next start tag).
                else if depth == 2, XMLText.blankPrefix(batch.bytes + event.offset, Int(event.count)) < Int(event.count) {
                    note("text between the elements of an object")
                }
            case .end:
                end()
                depth -= 1
            case .attribute:
                break
            }
            i += 1
        }
    }

    private mutating func start(_ element: String, _ attributes: [(String, String)], line: Int, column: Int) {
        switch depth {
        case 1:
            if element != "objects" {
                failure = failure ?? TripError.data("\(name):\(line):\(column): expected the root <objects>, found <\(element)>")
            }
        case 2:
            var object = XMLObjectElement(entity: element, line: line, column: column)
            for (n, v) in attributes {
                if n == "key" { object.key = v } else { object.problem = object.problem ?? "an attribute \(n.quotedForMessage) on <\(element)>" }
            }
            current = object
        case 3:
            text = []; childHasElements = false; refs = []
            current?.children.append(XMLObjectElement.Child(name: element))
            if !attributes.isEmpty { note("an attribute on <\(element)>") }
        case 4:
            childHasElements = true
            if element != "ref" { note("<\(element)> inside a relationship: expected <ref>") }
            text = []
        default:
            note("<\(element)> nested too deep: an object's children hold text or <ref> elements")
        }
    }

    /// Notes why the current object cannot be read (the first reason only).
    private mutating func note(_ problem: String) {
        guard var object = current, object.problem == nil else { return }
        object.problem = problem
        current = object
    }

    private mutating func end() {
        switch depth {
        case 2:
            if let current { ready.append(current) }
            current = nil
        case 3:
            guard var child = current?.children.popLast() else { return }
            if childHasElements { child.refs = refs } else { child.text = String(decoding: text, as: UTF8.self) }
            current?.children.append(child)
        case 4:
            refs.append(String(decoding: text, as: UTF8.self))
            text = []
        default:
            break
        }
    }
}
