import TripKit
import TripThreads

/// Runs libyaml on a thread of its own and hands its events to the trip reader in batches, so
/// that parsing and building trips overlap: libyaml alone takes about half of a read's time.
/// The parse thread only copies each event's bytes; strings are made on the reader's side.
///
/// The thread and the queue are a `Handoff` (the one the XML reader and the decode-ahead use): at
/// most `window` batches wait, so memory stays bounded whatever the input's size; events, then the
/// end of the stream or an error, arrive in order. The thread starts with the pipe; dropping the
/// pipe cancels the hand-off, and the thread stops at its next batch. Each batch is made anew by
/// the producer (none is given back). Without a thread (`threaded: false`, or none could be
/// started) the pipe parses on the caller's thread, one event at a time.
final class YAMLEventPipe {
    static let batchSize = 4096
    /// A batch is also handed over once its texts reach this many bytes.
    static let batchBytes = 1 << 20
    /// The batches that may wait for the reader.
    static let window = 4

    /// Events parsed together, and the input read meanwhile.
    struct Batch {
        var events: YAMLEventBatch
        var input: YAMLBatchInput
    }

    /// Touched by the parse thread only, when there is one; else by the caller.
    private let parser: YAMLEventParser
    private let handoff: Handoff<Batch>?
    /// Whether the parser runs on a thread of its own.
    var isThreaded: Bool { handoff != nil }
    // The consumer's batch and position, read for every event from one thread.
    @exclusivity(unchecked) private var batch = YAMLEventBatch()
    @exclusivity(unchecked) private var position = 0
    private let keyTable: YAMLKeyTable?
    /// The input the batches brought, for the texts of rejected trips.
    @exclusivity(unchecked) private var window: SourceWindow

    let name: String
    let limits: YAMLLimits

    /// `threaded: false` parses on the caller's thread (`ReadOptions.parsesAhead`, measurements).
    init(parser: YAMLEventParser, threaded: Bool = true) {
        name = parser.name
        limits = parser.limits
        keyTable = parser.keyTable
        window = SourceWindow(maxTextBytes: parser.limits.maxRecordTextBytes)
        self.parser = parser
        // libyaml does not recurse, so the thread keeps the system's default stack.
        handoff = threaded
            ? Handoff.start(window: YAMLEventPipe.window, stackSize: nil) { try YAMLEventPipe.produce(parser, into: $0) }
            : nil
    }

    /// Stops the thread at its next batch and lets it go: waiting for it could block on an input
    /// that never ends (stdin).
    deinit { handoff?.cancel() }

    /// The producer: parses and hands over batches until the end, an error (thrown after the batch
    /// that holds the events before it), or the reader's going.
    private static func produce(_ parser: YAMLEventParser, into handoff: Handoff<Batch>) throws {
        while true {
            var batch = YAMLEventBatch.empty()
            var input = YAMLBatchInput(lowMark: parser.lowMark)
            var failure: Error? = nil
            var end = false
            repeat {
                do {
                    end = try parser.parse(into: &batch) == .streamEnd
                } catch {
                    failure = error
                }
            } while failure == nil && !end && batch.events.count < batchSize
                && batch.bytes.count < batchBytes && parser.unsealedInputBytes < batchBytes
            parser.seal(into: &input)
            guard handoff.put(Batch(events: batch, input: input)) != nil else { return }
            if let failure { throw failure }
            if end { return }
        }
    }

    /// The next event; after the stream's end, its end again; an error in its place.
    @inline(__always)
    func next() throws -> YAMLEvent {
        if position < batch.events.count {
            position += 1
            return batch.event(at: position - 1, keyTable: keyTable)
        }
        return try refill()
    }

    private func refill() throws -> YAMLEvent {
        guard let handoff else {
            // Parsed here, one event at a time.
            let event = try parser.next()
            takeInputParsedHere()
            return event
        }
        guard let taken = try handoff.take() else { return YAMLEvent(kind: .streamEnd) }
        batch = taken.events
        takeInput(taken.input)
        position = 0
        return try next()
    }

    private func takeInput(_ input: YAMLBatchInput) {
        window.add(input.segments, lowMark: input.lowMark)
    }

    /// Without a thread: the input read for the event just parsed here, if any.
    private func takeInputParsedHere() {
        let input = parser.lastInput
        if !input.segments.isEmpty { takeInput(input) }
    }

    // MARK: - Source text

    /// The byte offset of a mapping's start, or where a mapping's text ends, if `event` is the
    /// event this pipe gave last (and not one replayed for an alias); else -1.
    func mappingOffset(of event: YAMLEvent) -> Int {
        guard handoff != nil else { return parser.mappingOffset(of: event) }
        guard position > 0, position <= batch.events.count else { return -1 }
        return batch.mappingOffset(at: position - 1, of: event)
    }

    /// Keeps the input from `offset` on (a trip's start; -1 keeps nothing) until `releaseSourceText`.
    func keepSourceText(from offset: Int) { window.keep(from: offset) }

    func releaseSourceText() { window.release() }

    /// The input from `start` to `end` as text, if it was kept.
    func sourceText(from start: Int, to end: Int) -> String? { window.text(from: start, to: end) }
}
