#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// Runs libyaml on a thread of its own and hands its events to the trip reader in batches, so
/// that parsing and building trips overlap: libyaml alone takes about half of a read's time.
/// The parse thread only copies each event's bytes; strings are made on the reader's side.
///
/// The queue holds at most `capacity` batches, so memory stays bounded whatever the input's size;
/// events, then the end of the stream or an error, arrive in order. Dropping the pipe stops the
/// thread at its next batch. If no thread can be made, the pipe parses on the caller's thread.
final class YAMLEventPipe {
    static let batchSize = 4096
    /// A batch is also handed over once its texts reach this many bytes.
    static let batchBytes = 1 << 20
    static let capacity = 4

    /// What both threads touch: the queue and the flags, always under `monitor`; the parser, only
    /// by the producer (or by the caller when there is no thread).
    private final class Shared: @unchecked Sendable {
        let parser: YAMLEventParser
        let monitor = Monitor()
        var queue: [(batch: YAMLEventBatch, input: YAMLBatchInput)] = []
        var finished = false
        var error: Error?
        var cancelled = false

        init(parser: YAMLEventParser) {
            self.parser = parser
        }


        /// The producer: parse and queue batches until the end, an error, or cancellation.
        func produce() {
            let parser = self.parser
            var batch = YAMLEventBatch.empty()
            var input = YAMLBatchInput(lowMark: parser.lowMark)
            while true {
                var failure: Error? = nil
                var end = false
                do {
                    end = try parser.parse(into: &batch) == .streamEnd
                } catch {
                    failure = error
                }
                if failure == nil && !end && batch.events.count < YAMLEventPipe.batchSize
                    && batch.bytes.count < YAMLEventPipe.batchBytes
                    && parser.unsealedInputBytes < YAMLEventPipe.batchBytes { continue }
                parser.seal(into: &input)
                monitor.lock()
                while queue.count >= YAMLEventPipe.capacity && !cancelled { monitor.wait() }
                if cancelled { monitor.unlock(); return }
                queue.append((batch, input))
                if failure != nil || end { finished = true; error = failure }
                monitor.broadcast()
                monitor.unlock()
                if failure != nil || end { return }
                batch = YAMLEventBatch.empty()
                input = YAMLBatchInput(lowMark: parser.lowMark)
            }
        }
    }

    private let shared: Shared
    private var thread: pthread_t? = nil
    /// Whether the parser runs on a thread of its own.
    var isThreaded: Bool { thread != nil }
    // The consumer's batch and position, read for every event from one thread.
    @exclusivity(unchecked) private var batch = YAMLEventBatch()
    @exclusivity(unchecked) private var position = 0
    private let keyTable: YAMLKeyTable?
    /// The input the batches brought, for the texts of rejected trips.
    @exclusivity(unchecked) private var window: SourceWindow

    let name: String
    let limits: YAMLLimits

    /// `threaded: false` parses on the caller's thread (for measurements).
    init(parser: YAMLEventParser, threaded: Bool = true) {
        name = parser.name
        limits = parser.limits
        keyTable = parser.keyTable
        window = SourceWindow(maxTextBytes: parser.limits.maxRecordTextBytes)
        shared = Shared(parser: parser)
        guard threaded else { return }
        let context = Unmanaged.passRetained(shared).toOpaque()
        var t = pthread_t()
        let status = pthread_create(&t, nil, { context in
            #if canImport(Darwin)
            let shared = Unmanaged<Shared>.fromOpaque(context).takeRetainedValue()
            #else
            let shared = Unmanaged<Shared>.fromOpaque(context!).takeRetainedValue()
            #endif
            shared.produce()
            return nil
        }, context)
        if status == 0 {
            thread = t
        } else {
            Unmanaged<Shared>.fromOpaque(context).release()
        }
    }

    /// Tells the thread to stop at its next batch and lets it go: it holds its own reference to
    /// the shared state, and waiting for it could block on an input that never ends (stdin).
    deinit {
        guard let thread else { return }
        shared.monitor.lock()
        shared.cancelled = true
        shared.monitor.broadcast()
        shared.monitor.unlock()
        pthread_detach(thread)
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
        guard thread != nil else {
            // Parsed here, one event at a time.
            let event = try shared.parser.next()
            takeInputParsedHere()
            return event
        }
        shared.monitor.lock()
        while shared.queue.isEmpty && !shared.finished { shared.monitor.wait() }
        if shared.queue.isEmpty {
            let error = shared.error
            shared.monitor.unlock()
            if let error { throw error }
            return YAMLEvent(kind: .streamEnd)
        }
        let taken = shared.queue.removeFirst()
        shared.monitor.broadcast()
        shared.monitor.unlock()
        batch = taken.batch
        takeInput(taken.input)
        position = 0
        return try next()
    }

    private func takeInput(_ input: YAMLBatchInput) {
        window.add(input.segments, lowMark: input.lowMark)
    }

    /// Without a thread: the input read for the event just parsed here, if any.
    private func takeInputParsedHere() {
        let input = shared.parser.lastInput
        if !input.segments.isEmpty { takeInput(input) }
    }

    // MARK: - Source text

    /// The byte offset of a mapping's start, or where a mapping's text ends, if `event` is the
    /// event this pipe gave last (and not one replayed for an alias); else -1.
    func mappingOffset(of event: YAMLEvent) -> Int {
        guard thread != nil else { return shared.parser.mappingOffset(of: event) }
        guard position > 0, position <= batch.events.count else { return -1 }
        return batch.mappingOffset(at: position - 1, of: event)
    }

    /// Keeps the input from `offset` on (a trip's start; -1 keeps nothing) until `releaseSourceText`.
    func keepSourceText(from offset: Int) { window.keep(from: offset) }

    func releaseSourceText() { window.release() }

    /// The input from `start` to `end` as text, if it was kept.
    func sourceText(from start: Int, to end: Int) -> String? { window.text(from: start, to: end) }
}
