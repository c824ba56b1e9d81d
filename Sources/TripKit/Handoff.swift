#if canImport(Glibc)
import Glibc
#endif

/// Items made on a thread of their own and taken on the calling thread, in order and in batches,
/// with at most `window` batches waiting, so memory stays bounded.
///
/// The pipeline uses it to decode ahead: trips are decoded from the arena on the producer's thread
/// while the calling thread hands earlier ones to a store writer. The items and every error reach
/// the calling thread in the order they would without the thread; only the calling thread acts on
/// them. (Reading ahead the same way was measured slower and not kept: docs/BENCHMARKS.md.)
final class Handoff<Item>: @unchecked Sendable {
    private let monitor = Monitor()
    private var ready: [[Item]] = []
    private var ended = false
    private var failure: (any Error)?
    private var cancelled = false
    /// Batches the taker is done with, released on the producer's thread: memory is then freed
    /// by the thread that allocated it (freeing another thread's blocks costs malloc's locks).
    private var returned: [[Item]] = []
    private let window: Int
    private var thread = pthread_t()

    private init(window: Int) { self.window = window }

    /// Starts `produce` on a thread of its own; it hands over batches with `put` (which returns false
    /// once the taker has gone: stop then) and returns or throws at its end. Nil when no thread could
    /// be started: the caller then does the work itself.
    static func start(window: Int = 4, _ produce: @escaping (Handoff<Item>) throws -> Void) -> Handoff<Item>? {
        let handoff = Handoff(window: window)
        guard let thread = Threads.start({
            var failure: (any Error)?
            do { try produce(handoff) } catch { failure = error }
            handoff.monitor.withLock {
                handoff.ended = true
                handoff.failure = failure
                handoff.monitor.broadcast()
            }
        }) else { return nil }
        handoff.thread = thread
        return handoff
    }

    /// Hands a batch over; waits while `window` batches are waiting. False once `cancel` was called.
    func put(_ batch: [Item]) -> Bool {
        var done: [[Item]] = []
        let taken = monitor.withLock {
            while !cancelled, ready.count >= window { monitor.wait() }
            guard !cancelled else { return false }
            ready.append(batch)
            swap(&done, &returned)
            monitor.broadcast()
            return true
        }
        done = []  // released here, on the producer's thread
        return taken
    }

    /// Hands a taken batch back, to be released on the producer's thread.
    private func giveBack(_ batch: [Item]) {
        monitor.withLock { returned.append(batch) }
    }

    /// The next batch; nil at the end, after which the thread has ended and been joined. Throws what
    /// the producer threw, after every batch it handed over before.
    private func take() throws -> [Item]? {
        let next: [Item]? = try monitor.withLock {
            while ready.isEmpty, !ended { monitor.wait() }
            if !ready.isEmpty {
                monitor.broadcast()
                return ready.removeFirst()
            }
            if let failure { throw failure }
            return nil
        }
        if next == nil { pthread_join(thread, nil) }
        return next
    }

    /// Called by the taker that stops early (it threw): the producer stops at its next `put`, and its
    /// thread ends on its own; it is not waited for, so a producer blocked on something slow (a pipe)
    /// cannot hold up the error.
    func cancel() {
        monitor.withLock {
            cancelled = true
            ready = []
            monitor.broadcast()
        }
        pthread_detach(thread)
    }

    /// Takes every item in order, calling `body` with each; on an error (the producer's or `body`'s)
    /// cancels the producer and rethrows.
    func forEach(_ body: (Item) throws -> Void) throws {
        do {
            while let batch = try take() {
                for item in batch { try body(item) }
                giveBack(batch)
            }
        } catch {
            cancel()
            throw error
        }
    }
}
