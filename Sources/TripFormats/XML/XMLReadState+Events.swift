import TripKit

/// An open element the reader is inside of, and what it means.
struct XMLFrame {
    enum Kind {
        /// The document's root, any name.
        case root
        /// A `<trip>`: the builder's record is open.
        case trip
        /// An attribute's element: its text is being gathered.
        case scalar
        /// A to-many relationship's element whose children have not yet said whether they are
        /// items (`<item>`…) or the fields of one item (a repeated `<bucketListItem>` in a trip).
        case listUndecided
        /// A to-many relationship's element holding item elements.
        case listOfItems
        /// A to-many relationship's element that is itself one item: the builder's object is open.
        case listAsItem
        /// A related object (an item, the accommodation): the builder's object is open.
        case object
    }
    var kind: Kind
    /// The field (in the parent object's entity) this element gives.
    var field: Int
    /// The entity whose fields the element's children are (for lists, the items' entity).
    var entity: Int
    /// The element's local name, interned in libxml2's dictionary for the life of the context.
    var name: UnsafePointer<UInt8>
    /// Where the element starts, as the builder's mark (the input offset of its start tag), or
    /// `RecordBuilder.noMark` for the root and the trip.
    var mark = RecordBuilder.noMark
}

/// What an element or attribute name means in an entity.
enum XMLResolution {
    case unknown
    case attribute(Int, AttributeType)
    case transient(Int)
    case toMany(Int, destination: Int)
    case toOne(Int, destination: Int)
}

/// Resolves names to fields. libxml2 interns every name in its context's dictionary, so a name
/// seen before is recognized by its address: no string is made on the hot path.
struct XMLNameResolver {
    private let index: [[String: Int]]
    private let kinds: [[SchemaVocabulary.FieldKind]]
    /// The element names of an entity's items in a list: `item`, and the entity's own name in
    /// lower camel case (`bucketListItem`).
    private let itemNames: [[[UInt8]]]

    /// Names resolved before, by address and entity: an open-addressing table, never more than
    /// half full (past `cacheLimit` names, the rest are resolved each time, as a hostile document's
    /// endless new names would otherwise fill memory).
    private struct CacheSlot {
        var key: UnsafeRawPointer?
        var entity: Int
        var resolution: XMLResolution
        var isItemName: Bool
    }
    private var cache: [CacheSlot]
    private var cached = 0
    private static let cacheSlots = 256
    private static let cacheLimit = 128

    init(_ vocabulary: SchemaVocabulary) {
        index = vocabulary.entities.map { e in
            var d: [String: Int] = [:]
            for (i, f) in e.fields.enumerated() { d[f.name] = i }
            return d
        }
        kinds = vocabulary.entities.map { $0.fields.map(\.kind) }
        itemNames = vocabulary.entities.map { e in
            [Array("item".utf8), Array((e.name.prefix(1).lowercased() + e.name.dropFirst()).utf8)]
        }
        cache = Array(repeating: CacheSlot(key: nil, entity: 0, resolution: .unknown, isItemName: false),
                      count: XMLNameResolver.cacheSlots)
    }

    mutating func resolve(_ name: UnsafePointer<UInt8>, in entity: Int) -> XMLResolution {
        entry(name, entity).resolution
    }

    mutating func isItemName(_ name: UnsafePointer<UInt8>, of entity: Int) -> Bool {
        entry(name, entity).isItemName
    }

    @inline(__always)
    private mutating func entry(_ name: UnsafePointer<UInt8>, _ entity: Int) -> CacheSlot {
        let key = UnsafeRawPointer(name)
        let mask = XMLNameResolver.cacheSlots - 1
        let hash = (UInt(bitPattern: Int(bitPattern: key)) >> 3 &+ UInt(bitPattern: entity)) &* 0x9E37_79B9_7F4A_7C15
        var i = Int(hash >> 56) & mask
        while let k = cache[i].key {
            if k == key, cache[i].entity == entity { return cache[i] }
            i = (i + 1) & mask
        }
        let slot = CacheSlot(key: key, entity: entity, resolution: lookUp(name, entity),
                             isItemName: itemNames[entity].contains { cStringEquals(name, $0) })
        if cached < XMLNameResolver.cacheLimit {
            cache[i] = slot
            cached += 1
        }
        return slot
    }

    private func lookUp(_ name: UnsafePointer<UInt8>, _ entity: Int) -> XMLResolution {
        guard let f = index[entity][String(cString: name)] else { return .unknown }
        switch kinds[entity][f] {
        case .attribute(let type): return .attribute(f, type)
        case .transient: return .transient(f)
        case .toMany(let d): return .toMany(f, destination: d)
        case .toOne(let d): return .toOne(f, destination: d)
        }
    }
}

/// A start event's attribute events.
typealias XMLAttributes = UnsafeBufferPointer<XMLEvent>

private let schemaVersionName = Array("schemaVersion".utf8)

// MARK: - Events

extension XMLReadState {
    /// An element starts. Elements are known by their local name, whatever their namespace, so a
    /// document with a default namespace (`<trips xmlns="urn:…">`) reads as one without. The parse
    /// thread has checked the depth, and that the root's children are `<trip>` elements.
    mutating func startElement(_ event: XMLEvent, attributes: XMLAttributes, _ bytes: UnsafePointer<UInt8>) {
        let localname = event.name!
        if skipDepth > 0 { skipDepth += 1; return }
        // Where the element is (an input offset), should the builder fail at it.
        builder.mark = event.source
        let attributes = (events: attributes, bytes: bytes)
        guard let top = frames.last else {
            startRoot(event, attributes)
            return
        }
        switch top.kind {
        case .root:
            startTrip(event, attributes)
        case .trip, .object, .listAsItem:
            startField(localname, in: top.entity, attributes)
        case .listUndecided, .listOfItems:
            startListChild(localname, list: top, attributes)
        case .scalar:
            if !textFailed {
                textFailed = true
                failRecord("field '\(XMLReadState.display(top.name))': expected text, found the element <\(XMLReadState.display(localname))>")
            }
            skipDepth = 1
        }
    }

    /// An element ends; libxml2 has checked that it is the one that started last.
    mutating func endElement(_ event: XMLEvent) {
        if skipDepth > 0 { skipDepth -= 1; return }
        guard let frame = frames.popLast() else { return }
        switch frame.kind {
        case .scalar:
            // The builder makes a date or a Boolean straight from the bytes.
            builder.mark = frame.mark
            if !textFailed { builder.set(frame.field, text: text.bytes) }
        case .object, .listAsItem:
            builder.endObject()
        case .listUndecided:
            builder.markPresent(frame.field)
        case .listOfItems:
            break
        case .trip:
            ready.append(endRecord(at: event.source))
        case .root:
            break
        }
    }

    /// Text, whitespace or CDATA, in pieces: a field's text may come in several. (Text between
    /// trips never comes here: the parse thread allows only whitespace there, and drops it.)
    mutating func characters(_ bytes: UnsafePointer<UInt8>, _ count: Int) {
        guard skipDepth == 0, let top = frames.last, top.kind != .root else { return }
        builder.mark = top.mark
        if top.kind == .scalar {
            guard !textFailed else { return }
            guard text.count + count <= XMLLimits.maxTextBytes else {
                textFailed = true
                text.removeAll()
                failRecord("field '\(XMLReadState.display(top.name))': text longer than \(XMLLimits.maxTextBytes) bytes")
                return
            }
            text.append(bytes, count: count)
            return
        }
        // Between elements only whitespace is allowed, and it means nothing.
        let i = XMLText.blankPrefix(bytes, count)
        guard i < count, !recordFailed else { return }
        let found = XMLText.excerpt(bytes, count, from: i)
        let element = XMLReadState.display(top.name)
        switch top.kind {
        case .listUndecided, .listOfItems:
            failRecord("field '\(element)': expected item elements, found the text \(found)")
        default:
            failRecord("unexpected text \(found) in <\(element)>")
        }
    }

    // MARK: - Elements by place

    private mutating func startRoot(_ event: XMLEvent, _ attributes: Attributes) {
        frames.append(XMLFrame(kind: .root, field: -1, entity: builder.vocabulary.rootEntity, name: event.name!))
        XMLReadState.forEachAttribute(attributes) { name, value in
            guard cStringEquals(name, schemaVersionName) else { return }
            do {
                try builder.setMarker(value(), place: place(event))
            } catch let error as TripError {
                stop(error.message, notes: error.notes)
            } catch {
                stop("\(place(event)): \(error)")
            }
        }
    }

    /// A child of the root: the parse thread has checked that it is a `<trip>`.
    private mutating func startTrip(_ event: XMLEvent, _ attributes: Attributes) {
        recordCount += 1
        recordFailed = false
        unknownCount = 0
        let line = Int(event.line), column = Int(event.column)
        builder.mark = RecordBuilder.noMark
        beginRecordText(at: event.source)
        builder.beginRecord(origin: RecordOrigin(source: name, record: recordCount, line: line > 0 ? line : nil,
                                                 column: line > 0 ? column : nil))
        let root = builder.vocabulary.rootEntity
        frames.append(XMLFrame(kind: .trip, field: -1, entity: root, name: event.name!))
        setFields(fromAttributes: attributes, in: root)
    }

    /// A child of a trip or of an object: one of its entity's fields.
    private mutating func startField(_ localname: UnsafePointer<UInt8>, in entity: Int, _ attributes: Attributes) {
        switch names.resolve(localname, in: entity) {
        case .unknown:
            noteUnknown(localname)
            skipDepth = 1
        case .transient(let f):
            builder.set(f, .text(""))
            skipDepth = 1
        case .attribute(let f, _):
            frames.append(XMLFrame(kind: .scalar, field: f, entity: entity, name: localname, mark: builder.mark))
            text.removeAll()
            textFailed = false
            XMLReadState.forEachAttribute(attributes) { name, _ in
                guard !textFailed else { return }
                textFailed = true
                failRecord("field '\(XMLReadState.display(localname))': expected text, found the attribute '\(XMLReadState.display(name))'")
            }
        case .toMany(let f, let d):
            frames.append(XMLFrame(kind: .listUndecided, field: f, entity: d, name: localname, mark: builder.mark))
            // Attributes that are fields of an item make the element one item itself.
            XMLReadState.forEachAttribute(attributes) { name, value in
                let top = frames.count - 1
                if case .unknown = names.resolve(name, in: d) {
                    failRecord("field '\(XMLReadState.display(localname))': expected item elements, found the attribute '\(XMLReadState.display(name))'")
                    return
                }
                if frames[top].kind == .listUndecided {
                    builder.beginObject(f)
                    frames[top].kind = .listAsItem
                }
                setField(name, value(), in: d)
            }
        case .toOne(let f, let d):
            builder.beginObject(f)
            frames.append(XMLFrame(kind: .object, field: f, entity: d, name: localname, mark: builder.mark))
            setFields(fromAttributes: attributes, in: d)
        }
    }

    private mutating func startListChild(_ localname: UnsafePointer<UInt8>, list: XMLFrame, _ attributes: Attributes) {
        let top = frames.count - 1
        if names.isItemName(localname, of: list.entity) {
            frames[top].kind = .listOfItems
            builder.beginObject(list.field)
            frames.append(XMLFrame(kind: .object, field: list.field, entity: list.entity, name: localname, mark: builder.mark))
            setFields(fromAttributes: attributes, in: list.entity)
            return
        }
        if list.kind == .listUndecided {
            if case .unknown = names.resolve(localname, in: list.entity) {} else {
                // A field of an item: this list element is one item (`<bucketListItem><title>…`).
                frames[top].kind = .listAsItem
                builder.beginObject(list.field)
                startField(localname, in: list.entity, attributes)
                return
            }
        }
        failRecord("field '\(XMLReadState.display(list.name))': expected an <item> element, found <\(XMLReadState.display(localname))>")
        skipDepth = 1
    }

    // MARK: - Record problems

    /// Marks the record bad; only its first problem is reported, so later ones are not even made.
    private mutating func failRecord(_ reason: @autoclosure () -> String) {
        guard !recordFailed else { return }
        recordFailed = true
        builder.fail(reason())
    }

    /// Notes a field no version declares. A record that is rejected for its unknown fields names a
    /// few of them; past that, more names would only cost time.
    private mutating func noteUnknown(_ name: UnsafePointer<UInt8>) {
        unknownCount += 1
        guard options.ignoreUnknown || unknownCount <= 16 else { return }
        builder.unknownField(XMLParseState.shortened(String(cString: name)))
    }

    // MARK: - Attributes

    /// An element's attribute events, and the batch's bytes their values lie in.
    typealias Attributes = (events: XMLAttributes, bytes: UnsafePointer<UInt8>)

    /// Calls `body` with each attribute (the parse thread has left out those in another namespace
    /// than their element's, such as `xml:lang` or `xsi:type`: they are about the document, not
    /// the trip; and has decoded the `&` libxml2 hands over escaped), and a way to make its value.
    private static func forEachAttribute(_ attributes: Attributes, _ body: (UnsafePointer<UInt8>, () -> String) -> Void) {
        for a in attributes.events {
            let value = UnsafeBufferPointer(start: attributes.bytes + a.offset, count: Int(a.count))
            body(a.name!) { String(decoding: value, as: UTF8.self) }
        }
    }

    private mutating func setFields(fromAttributes attributes: Attributes, in entity: Int) {
        XMLReadState.forEachAttribute(attributes) { name, value in setField(name, value(), in: entity) }
    }

    /// Sets a field of the builder's current object (of `entity`) from an attribute.
    private mutating func setField(_ name: UnsafePointer<UInt8>, _ value: String, in entity: Int) {
        switch names.resolve(name, in: entity) {
        case .unknown: noteUnknown(name)
        case .attribute(let f, _), .transient(let f), .toMany(let f, _), .toOne(let f, _): builder.set(f, .text(value))
        }
    }

    /// A name for a message, cut short when long.
    private static func display(_ name: UnsafePointer<UInt8>) -> String {
        XMLParseState.shortened(String(cString: name))
    }
}
