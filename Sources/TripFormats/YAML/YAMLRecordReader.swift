import TripKit

/// Reads trips from YAML, event by event: a `schemaVersion`/`trips` mapping, a bare sequence of
/// trips, or a stream of documents each holding one trip or a sequence of trips.
///
/// The schema decides every scalar's type: plain scalars go to the builder as `.plain` (so `name: no`
/// is the string "no" and `~` is null), quoted and block scalars as `.string`. Tags `!!str`,
/// `!!bool`, `!!int`, `!!timestamp`, `!!null` (and `!!map`, `!!seq`, `!!merge` where they fit) are
/// honoured; any other tag is a data error. Merge keys (`<<`) are honoured in every mapping of a
/// trip, explicit keys winning. The reader keeps an explicit stack of frames, never recursion.
///
/// ```swift
/// var reader = try YAMLFormat.makeReader(.file("trips.yaml"), format: .yaml, options: ReadOptions())
/// while let item = try reader.next() { ... }
/// ```
struct YAMLRecordReader: RecordReader {
    var events: YAMLNodeStream<YAMLEventPipe>
    var builder: RecordBuilder
    let source: String
    /// Per entity of the vocabulary: a key code (of the parser's key table) to a field index, or -1.
    let fieldByCode: [[Int]]
    let fieldKinds: [[SchemaVocabulary.FieldKind]]
    let fieldNames: [[String]]

    var frames: [Frame] = [Frame(.stream)]
    /// Events to be read before the parser's: the merged keys of a mapping, stacked.
    var injections: [(events: [YAMLEvent], position: Int)] = []
    private var records = 0
    /// The byte offset where the open trip's text starts (-1: unknown), and where the document's
    /// root mapping starts, should it be a trip.
    var recordStart = -1
    private var rootMappingStart = -1
    private var done = false
    private var failure: Error?

    var detection: Detection { builder.detection }
    /// Whether the parser runs on a thread of its own.
    var parsesAhead: Bool { events.parser.isThreaded }

    /// `threaded: false` keeps the parser on the caller's thread (`ReadOptions.parsesAhead`).
    init(parser: YAMLEventParser, options: ReadOptions, threaded: Bool = true) {
        source = parser.name
        builder = RecordBuilder(source: parser.name, format: "yaml", options: options)
        let vocabulary = builder.vocabulary
        // Codes 0, 1 and 2 are the merge key and the wrapper's keys (`mergeKeyCode` ...).
        var names: [String] = ["<<", "schemaVersion", "trips"]
        for e in vocabulary.entities { for f in e.fields where !names.contains(f.name) { names.append(f.name) } }
        parser.keyTable = YAMLKeyTable(names)
        fieldByCode = vocabulary.entities.map { e in
            names.map { n in e.fields.firstIndex { $0.name == n } ?? -1 }
        }
        events = YAMLNodeStream(parser: YAMLEventPipe(parser: parser, threaded: threaded))
        fieldKinds = vocabulary.entities.map { $0.fields.map(\.kind) }
        fieldNames = vocabulary.entities.map { $0.fields.map(\.name) }
    }

    static let mergeKeyCode: Int16 = 0
    private static let versionKeyCode: Int16 = 1
    private static let tripsKeyCode: Int16 = 2

    // MARK: - Frames

    /// A frame is plain data (no references), so the stack is cheap to read and write; the rare
    /// extras of an object (unknown names, merge sources) live in `extras`, which is a stack too.
    struct Frame {
        enum Kind: UInt8 {
            /// Between documents.
            case stream
            /// A document: its root node, then its end.
            case document
            /// A document's root mapping, before its first key says whether it is a wrapper or a trip.
            case rootMapping
            /// The `schemaVersion`/`trips` mapping.
            case wrapper
            /// A sequence of trips.
            case tripList
            /// A trip, a bucket-list item or an accommodation.
            case object
            /// A sequence of related objects.
            case itemList
            /// The rest of a node nobody reads.
            case skip
            /// The value of a merge key, being collected into the object below.
            case mergeCollect
        }

        var kind: Kind
        var isRoot = false
        var entity = 0
        /// object, wrapper: the field (or key code) whose value comes next; itemList: its field.
        var field = Frame.expectingKey
        /// object: the fields given, as bits; wrapper: the keys given.
        var given: UInt64 = 0
        /// skip, mergeCollect: the nesting still open.
        var depth = 0
        /// object: its index in `extras`, or -1.
        var extra = -1
        var line: Int32 = 0, column: Int32 = 0

        init(_ kind: Kind) { self.kind = kind }

        static let expectingKey = -1
        static let mergeValue = -2
        static let skipValue = -3
        static let versionValue = 1
        static let tripsValue = 2
    }

    struct FrameExtra {
        /// Unknown names given.
        var unknownGiven: [String] = []
        /// The merge sources, as events of complete nodes.
        var merges: [YAMLEvent]? = nil
    }

    var extras: [FrameExtra] = []

    /// The extras of the object frame at `index`, made on first use.
    mutating func extraIndex(_ index: Int) -> Int {
        if frames[index].extra < 0 {
            frames[index].extra = extras.count
            extras.append(FrameExtra())
        }
        return frames[index].extra
    }

    /// Pops the top frame, and its extras.
    @discardableResult
    mutating func popFrame() -> Frame {
        let frame = frames.removeLast()
        if frame.extra >= 0 { extras.removeLast() }
        return frame
    }

    // MARK: - Reading

    mutating func next() throws -> ReadItem? {
        if let failure { throw failure }
        if done { return nil }
        do {
            while true {
                let event = try nextEvent()
                if let item = try handle(event) { return item }
                if done { return nil }
            }
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func nextEvent() throws -> YAMLEvent {
        while !injections.isEmpty {
            let top = injections.count - 1
            let position = injections[top].position
            if position < injections[top].events.count {
                injections[top].position = position + 1
                return injections[top].events[position]
            }
            injections.removeLast()
        }
        return try events.next()
    }

    private mutating func handle(_ event: YAMLEvent) throws -> ReadItem? {
        let top = frames.count - 1
        // The event's place, should the builder fail at it: a store per event, turned into a
        // line and column only for a rejection.
        builder.mark = RecordBuilder.mark(line: Int(event.line) &+ 1, column: Int(event.column) &+ 1)
        switch frames[top].kind {
        case .object: return try handleObject(event, top)
        case .itemList: try handleItemList(event, top)
        case .skip:
            _ = try tagKind(event)
            if event.isCollectionStart { frames[top].depth += 1 }
            else if event.isCollectionEnd {
                frames[top].depth -= 1
                if frames[top].depth == 0 { popFrame() }
            }
        case .mergeCollect:
            _ = try tagKind(event)
            extras[frames[top - 1].extra].merges!.append(event)
            if event.isCollectionStart { frames[top].depth += 1 }
            else if event.isCollectionEnd {
                frames[top].depth -= 1
                if frames[top].depth == 0 { popFrame() }
            }
        case .tripList: try handleTripList(event)
        case .stream:
            switch event.kind {
            case .documentStart: frames.append(Frame(.document))
            case .streamEnd: done = true
            default: break
            }
        case .document: try handleDocumentRoot(event)
        case .rootMapping: return try handleRootMapping(event, top)
        case .wrapper: try handleWrapper(event, top)
        }
        return nil
    }

    // MARK: - Documents and wrappers

    private mutating func handleDocumentRoot(_ event: YAMLEvent) throws {
        switch event.kind {
        case .documentEnd:
            popFrame()
        case .scalar:
            let tag = try tagKind(event)
            if tag == .null || (tag == .none && event.style == .plain && isYAMLNull(event.value)) { return }
            throw shapeError(event, expected: "a trip mapping or a sequence of trips")
        case .sequenceStart:
            try expectTag(event, .seq)
            frames.append(Frame(.tripList))
        case .mappingStart:
            try expectTag(event, .map)
            var frame = Frame(.rootMapping)
            frame.line = event.line; frame.column = event.column
            rootMappingStart = events.parser.mappingOffset(of: event)
            frames.append(frame)
        default:
            break
        }
    }

    private mutating func handleRootMapping(_ event: YAMLEvent, _ top: Int) throws -> ReadItem? {
        guard event.kind == .scalar else {
            if event.kind == .mappingEnd {
                throw TripError.data("\(place(frames[top].line, frames[top].column)): expected a trip mapping or a sequence of trips, found an empty mapping")
            }
            throw TripError.data("\(place(event.line, event.column)): expected a trip mapping or a sequence of trips, found a mapping whose key is \(describe(event))")
        }
        _ = try tagKind(event)
        if event.keyCode == Self.versionKeyCode || event.keyCode == Self.tripsKeyCode {
            frames[top].kind = .wrapper
            try handleWrapper(event, top)
            return nil
        }
        guard event.keyCode == Self.mergeKeyCode || fieldIndex(event, entity: builder.vocabulary.rootEntity) != nil else {
            throw TripError.data("\(place(event.line, event.column)): expected a trip mapping or a sequence of trips, found a mapping whose first key is \(event.value.quotedForMessage)",
                                 notes: ["a YAML trips file is a mapping of schemaVersion and trips, a sequence of trips, or a stream of documents of trips"])
        }
        beginTrip(line: frames[top].line, column: frames[top].column, offset: rootMappingStart, replacing: top)
        return try handleObject(event, top)
    }

    private mutating func handleWrapper(_ event: YAMLEvent, _ top: Int) throws {
        switch frames[top].field {
        case Frame.versionValue:
            frames[top].field = Frame.expectingKey
            guard event.kind == .scalar else {
                throw shapeError(event, expected: "a schema version such as \"3.0.0\"")
            }
            _ = try tagKind(event)
            try builder.setMarker(event.value, place: place(event.line, event.column))
        case Frame.tripsValue:
            frames[top].field = Frame.expectingKey
            switch event.kind {
            case .sequenceStart:
                try expectTag(event, .seq)
                frames.append(Frame(.tripList))
            case .scalar:
                let tag = try tagKind(event)
                if tag == .null || (tag == .none && event.style == .plain && isYAMLNull(event.value)) { return }
                throw shapeError(event, expected: "a sequence of trips")
            default:
                throw shapeError(event, expected: "a sequence of trips")
            }
        default:
            switch event.kind {
            case .mappingEnd:
                popFrame()
            case .scalar:
                _ = try tagKind(event)
                let code: Int
                switch event.value {
                case "schemaVersion": code = Frame.versionValue
                case "trips": code = Frame.tripsValue
                default:
                    throw TripError.data("\(place(event.line, event.column)): unknown top-level key \(event.value.quotedForMessage)",
                                         notes: ["the top-level mapping of a YAML trips file has the keys schemaVersion and trips"])
                }
                let bit = UInt64(1) << UInt64(code)
                if frames[top].given & bit != 0 {
                    throw TripError.data("\(place(event.line, event.column)): top-level key \(event.value.quotedForMessage) is given twice")
                }
                frames[top].given |= bit
                frames[top].field = code
            default:
                throw TripError.data("\(place(event.line, event.column)): expected a top-level key, found \(describe(event))")
            }
        }
    }

    private mutating func handleTripList(_ event: YAMLEvent) throws {
        switch event.kind {
        case .sequenceEnd:
            popFrame()
        case .mappingStart:
            try expectTag(event, .map)
            frames.append(Frame(.object))
            beginTrip(line: event.line, column: event.column, offset: events.parser.mappingOffset(of: event), replacing: frames.count - 1)
        default:
            throw shapeError(event, expected: "a trip mapping")
        }
    }

    private mutating func beginTrip(line: Int32, column: Int32, offset: Int, replacing index: Int) {
        records += 1
        recordStart = offset
        events.parser.keepSourceText(from: offset)
        builder.beginRecord(origin: RecordOrigin(source: source, record: records, line: Int(line) + 1, column: Int(column) + 1))
        var frame = Frame(.object)
        frame.entity = builder.vocabulary.rootEntity
        frame.isRoot = true
        frame.line = line; frame.column = column
        frames[index] = frame
    }
}
