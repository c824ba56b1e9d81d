#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// Runs a producer of batches on a thread of its own and hands the batches to one consumer in
/// order, so that parsing and building trips overlap (the XML reader: libxml2 on one thread, the
/// trips built on the other).
///
/// The queue holds at most `capacity` batches, so memory stays bounded whatever the input's size.
/// The thread starts when the first batch is asked for. Dropping the pipe stops it at its next
/// batch, and lets it go: it holds its own reference to the producer, and waiting for it could
/// block on an input that never ends (stdin). If no thread can be made, or `threaded` is false,
/// the batches are produced on the consumer's thread.
///
/// The consumer may hand a batch back once it is done with it (`recycle`); the producer gets it
/// to fill again, so that its memory stays warm and is not allocated again.
final class BatchPipe<Batch>: @unchecked Sendable {
    typealias Produce = (_ recycled: Batch?) -> (batch: Batch, isLast: Bool)

    /// What both threads touch: the queues and the flags, always under `monitor`.
    private final class Shared: @unchecked Sendable {
        let produce: Produce
        let capacity: Int
        let monitor = Monitor()
        var queue: [Batch] = []
        var recycled: [Batch] = []
        var finished = false
        var cancelled = false

        init(capacity: Int, produce: @escaping Produce) {
            self.capacity = capacity
            self.produce = produce
            queue.reserveCapacity(capacity)
            recycled.reserveCapacity(capacity + 1)
        }

        func run() {
            var spare: Batch? = nil
            while true {
                let (batch, isLast) = produce(spare)
                monitor.lock()
                while queue.count >= capacity && !cancelled { monitor.wait() }
                if cancelled { monitor.unlock(); return }
                queue.append(batch)
                finished = isLast
                spare = recycled.popLast()
                monitor.broadcast()
                monitor.unlock()
                if isLast { return }
            }
        }
    }

    private let shared: Shared
    /// Whether the producer runs (or, before the first batch is asked for, will run) on a thread
    /// of its own.
    private(set) var threaded: Bool
    /// Whether the first batch was asked for: nothing is produced before.
    private(set) var started = false
    /// Without a thread: whether the last batch was produced.
    private var done = false

    init(capacity: Int = 4, threaded: Bool = true, produce: @escaping Produce) {
        shared = Shared(capacity: capacity, produce: produce)
        self.threaded = threaded
    }

    /// Starts the thread, when there is to be one; without it, batches are made in `next()`.
    private func start() {
        started = true
        guard threaded, let thread = Threads.start({ [shared] in shared.run() }) else {
            threaded = false
            return
        }
        pthread_detach(thread)
    }

    deinit {
        guard threaded, started else { return }
        shared.monitor.lock()
        shared.cancelled = true
        shared.monitor.broadcast()
        shared.monitor.unlock()
    }

    /// The next batch, waiting for it; nil after the last.
    func next() -> Batch? {
        if !started { start() }
        guard threaded else {
            guard !done else { return nil }
            let (batch, isLast) = shared.produce(shared.recycled.popLast())
            done = isLast
            return batch
        }
        shared.monitor.lock()
        defer { shared.monitor.unlock() }
        while shared.queue.isEmpty && !shared.finished { shared.monitor.wait() }
        guard !shared.queue.isEmpty else { return nil }
        let batch = shared.queue.removeFirst()
        shared.monitor.broadcast()
        return batch
    }

    /// Hands back a batch the consumer is done with (it must keep no reference to it).
    func recycle(_ batch: Batch) {
        guard threaded else {
            shared.recycled.append(batch)
            return
        }
        shared.monitor.lock()
        if shared.recycled.count <= shared.capacity { shared.recycled.append(batch) }
        shared.monitor.unlock()
    }
}
