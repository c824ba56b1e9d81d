import TripKit
import TripThreads

/// Reads trips from XML, one `<trip>` at a time, through libxml2's streaming SAX2 push parser.
///
/// The root may have any name; its `schemaVersion` attribute is the version marker. Each child of
/// the root must be a `<trip>`, whose fields are child elements (or attributes), whose bucket list
/// holds `<item>` (or `<bucketListItem>`) elements, and whose accommodation is one element of fields.
/// Memory holds the trips of a few 64 KB chunks at most, never the document.
///
/// ```swift
/// var reader = try XMLRecordReader(.file("trips.xml"))
/// while let item = try reader.next() {
///     if case .trip(let record) = item { print(record.object.attributes[0]) }
/// }
/// print(reader.detection.version ?? "no trips")
/// ```
public struct XMLRecordReader: RecordReader {
    private let engine: XMLTripReader

    /// Opens an input; an unknown `inputEncoding` is a `.usage` error, a missing file a `.noInput`
    /// one, and nothing is parsed until `next()`.
    /// libxml2 parses on a thread of its own unless `options.parsesAhead` is false.
    public init(_ input: InputLocation, options: ReadOptions = ReadOptions()) throws {
        try self.init(input, options: options, threaded: options.parsesAhead)
    }

    /// `threaded: false` parses on the caller's thread.
    init(_ input: InputLocation, options: ReadOptions, threaded: Bool) throws {
        try self.init(ByteInput(input, options: options), options: options, threaded: threaded)
    }

    /// Reads an opened input.
    init(_ bytes: ByteInput, options: ReadOptions, threaded: Bool) throws {
        let encoding = try TextEncoding.of(options)
        engine = XMLTripReader(parser: try XMLTripParser(input: bytes, options: options, encoding: encoding), threaded: threaded)
        engine.state.builder.compression = bytes.compression?.rawValue
    }

    /// The next trip or rejected record; nil at the end. A document that is not well-formed, or not
    /// a list of trips, or that declares entities, throws a `.data` error naming the place.
    public mutating func next() throws -> ReadItem? {
        try engine.next()
    }

    public var detection: Detection { engine.state.builder.detection }

    /// Whether libxml2 runs on a thread of its own.
    var parsesAhead: Bool { engine.parsesAhead }
    /// Whether anything was parsed yet.
    var hasStarted: Bool { engine.hasStarted }
}

/// The reader's engine: libxml2 parses (`XMLTripParser`) on a thread of its own, handing batches of
/// events over through a `Handoff`, and the trips are built here from them (`XMLReadState`).
/// libxml2 takes about half of a read's time; this way the building overlaps it. The thread starts
/// at the first `next()`; without one (`threaded: false`, or none could be started), each batch is
/// parsed here when it is needed.
final class XMLTripReader {
    private let parser: XMLTripParser
    private let threaded: Bool
    private var handoff: Handoff<XMLEventBatch>?
    private(set) var hasStarted = false
    /// Without a thread: whether the last batch was parsed, and the batch to fill again.
    private var parsedLast = false
    private var spare: XMLEventBatch?
    @exclusivity(unchecked) var state: XMLReadState

    init(parser: XMLTripParser, threaded: Bool) {
        self.parser = parser
        self.threaded = threaded
        state = XMLReadState(name: parser.input.name, options: parser.options)
    }

    /// The parse thread, if it runs on, is waited for up to a second (`Handoff.cancel(waiting:)`).
    deinit { handoff?.cancel(waiting: 1) }

    /// Whether libxml2 runs (or, before the first `next()`, will run) on a thread of its own.
    var parsesAhead: Bool { hasStarted ? handoff != nil : threaded }

    func next() throws -> ReadItem? {
        while true {
            if let item = state.takeReady() { return item }
            if let failure = state.failure { throw failure }
            guard let batch = try nextBatch() else { return nil }
            state.apply(batch)
            batch.source = []
            if let handoff { handoff.giveBack(batch) } else { spare = batch }
        }
    }

    private func nextBatch() throws -> XMLEventBatch? {
        if !hasStarted { start() }
        if let handoff { return try handoff.take() }
        guard !parsedLast else { return nil }
        let batch = parser.parseChunk(reusing: spare.take())
        parsedLast = batch.isLast
        return batch
    }

    private func start() {
        hasStarted = true
        guard threaded else { return }
        handoff = Handoff.start { [parser] handoff in
            var spares: [XMLEventBatch] = []
            while true {
                let batch = parser.parseChunk(reusing: spares.popLast())
                guard let back = handoff.put(batch) else { return }
                // Two spares keep the thread from allocating; any more are freed here.
                spares.append(contentsOf: back.prefix(max(0, 2 - spares.count)))
                if batch.isLast { return }
            }
        }
    }
}
