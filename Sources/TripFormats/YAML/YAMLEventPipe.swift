#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs libyaml on a thread of its own and hands its events to the trip reader in batches, so
/// that parsing and building trips overlap: libyaml alone takes about half of a read's time.
///
/// The queue holds at most `capacity` batches, so memory stays bounded whatever the input's size;
/// events, then the end of the stream or an error, arrive in order. Dropping the pipe stops the
/// thread at its next batch. If no thread can be made, the pipe parses on the caller's thread.
final class YAMLEventPipe {
    static let batchSize = 4096
    static let capacity = 4

    /// What both threads touch, always under `mutex`.
    private final class Shared: @unchecked Sendable {
        // Touched for every event by one thread (the producer, or the caller without a thread).
        @exclusivity(unchecked) var parser: YAMLEventParser
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        var queue: [[YAMLEvent]] = []
        var finished = false
        var error: Error?
        var cancelled = false

        init(parser: YAMLEventParser) {
            self.parser = parser
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(changed, nil)
        }

        deinit {
            pthread_cond_destroy(changed); pthread_mutex_destroy(mutex)
            changed.deallocate(); mutex.deallocate()
        }

        /// The producer: parse and queue batches until the end, an error, or cancellation.
        func produce() {
            var batch: [YAMLEvent] = []
            batch.reserveCapacity(YAMLEventPipe.batchSize)
            while true {
                var failure: Error? = nil
                var end = false
                do {
                    batch.append(try parser.next())
                    end = batch[batch.count - 1].kind == .streamEnd
                } catch {
                    failure = error
                }
                if failure == nil && !end && batch.count < YAMLEventPipe.batchSize { continue }
                pthread_mutex_lock(mutex)
                while queue.count >= YAMLEventPipe.capacity && !cancelled { pthread_cond_wait(changed, mutex) }
                if cancelled { pthread_mutex_unlock(mutex); return }
                queue.append(batch)
                if failure != nil || end { finished = true; error = failure }
                pthread_cond_broadcast(changed)
                pthread_mutex_unlock(mutex)
                if failure != nil || end { return }
                batch = []
                batch.reserveCapacity(YAMLEventPipe.batchSize)
            }
        }
    }

    private let shared: Shared
    private var thread: pthread_t? = nil
    // The consumer's batch, reversed so that each event is moved out with popLast (no copy, no
    // reference counting), read for every event from one thread.
    @exclusivity(unchecked) private var batch: [YAMLEvent] = []

    let name: String
    let limits: YAMLLimits

    init(parser: YAMLEventParser) {
        name = parser.name
        limits = parser.limits
        shared = Shared(parser: parser)
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
        pthread_mutex_lock(shared.mutex)
        shared.cancelled = true
        pthread_cond_broadcast(shared.changed)
        pthread_mutex_unlock(shared.mutex)
        pthread_detach(thread)
    }

    /// The next event; after the stream's end, its end again; an error in its place.
    @inline(__always)
    func next() throws -> YAMLEvent {
        if let event = batch.popLast() { return event }
        return try refill()
    }

    private func refill() throws -> YAMLEvent {
        guard thread != nil else { return try shared.parser.next() }
        pthread_mutex_lock(shared.mutex)
        while shared.queue.isEmpty && !shared.finished { pthread_cond_wait(shared.changed, shared.mutex) }
        if shared.queue.isEmpty {
            let error = shared.error
            pthread_mutex_unlock(shared.mutex)
            if let error { throw error }
            return YAMLEvent(kind: .streamEnd)
        }
        batch = shared.queue.removeFirst()
        pthread_cond_broadcast(shared.changed)
        pthread_mutex_unlock(shared.mutex)
        batch.reverse()
        return try next()
    }
}
