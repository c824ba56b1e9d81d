import TripKit

/// What the XML reader knows while it builds trips from the parse thread's events: the builder,
/// the open elements, the text being gathered, the trips ready to hand out, and the first error.
/// `apply` takes a batch of events (`XMLReadState+Events.swift` says what each means).
struct XMLReadState {
    let name: String
    let options: ReadOptions
    var builder: RecordBuilder

    // What the pull side sees.
    var ready: [ReadItem?] = []
    var readyHead = 0
    /// The first error; once set, every event is ignored and `next()` throws it.
    var failure: TripError?

    // The event state.
    var frames: [XMLFrame] = []
    var skipDepth = 0
    /// The text of the field element being read, gathered from libxml2's pieces (an array's append
    /// and keep-capacity removal cost several times the copy at a field's size).
    let text = ByteStorage(capacity: 256)
    var textFailed = false
    var recordCount = 0
    var recordFailed = false
    var unknownCount = 0
    var names: XMLNameResolver
    /// The input the batches brought, from the open trip's start on, for the texts of rejected trips.
    var window = SourceWindow(maxTextBytes: XMLLimits.maxRecordTextBytes)
    /// The input offset of the open trip's `<`, or -1.
    var recordStart = -1

    init(name: String, options: ReadOptions) {
        self.name = name
        self.options = options
        builder = RecordBuilder(source: name, format: "xml", options: options)
        names = XMLNameResolver(builder.vocabulary)
        frames.reserveCapacity(8)
    }

    /// The next trip or rejection a batch completed, if any.
    mutating func takeReady() -> ReadItem? {
        guard readyHead < ready.count else { return nil }
        // Moved out, not copied: no reference counting for the trip's arrays and strings.
        let item = ready[readyHead].take()
        readyHead += 1
        if readyHead == ready.count { ready.removeAll(keepingCapacity: true); readyHead = 0 }
        return item
    }

    /// Takes a batch's events in order, then its error, if no event of ours failed first.
    mutating func apply(_ batch: XMLEventBatch) {
        window.add(batch.source, lowMark: batch.lowMark)
        let bytes = batch.bytes, events = batch.events
        var i = 0
        while i < events.count, failure == nil {
            let event = events[i]
            switch event.kind {
            case .start:
                let end = i + 1 + Int(event.count)
                startElement(event, attributes: UnsafeBufferPointer(rebasing: events[(i + 1)..<end]), bytes)
                i = end
                continue
            case .end:
                endElement(event)
            case .text:
                characters(bytes + event.offset, Int(event.count))
            case .attribute:
                break  // taken with their start, above
            }
            i += 1
        }
        withExtendedLifetime(batch) {}
        if failure == nil, let error = batch.failure { failure = error }
    }

    /// Ends the read with an error of our own (the parse thread is stopped when the reader is dropped).
    mutating func stop(_ message: String, notes: [String] = []) {
        guard failure == nil else { return }
        failure = .data(message, notes: notes)
    }

    /// `FILE:LINE:COLUMN` of a start event that carries its place.
    func place(_ event: XMLEvent) -> String {
        event.line > 0 ? "\(name):\(event.line):\(event.column)" : name
    }
}
