/// Batches made on a thread of their own and taken on the calling thread, in order, with at most
/// `window` batches waiting, so memory stays bounded.
///
/// The package's one producer/consumer hand-off, with three users: the pipeline decodes ahead
/// (trips decoded from the arena on the producer's thread while the calling thread hands earlier
/// ones to a store writer), and the XML and YAML readers parse ahead (libxml2 or libyaml on the
/// producer's thread, trips built from its events on the calling thread). Batches and the
/// producer's error reach the calling thread in the order they would without the thread; only the
/// calling thread acts on them.
///
/// Batches the taker is done with may go back to the producer (`giveBack`, returned by `put`), to
/// be filled again or dropped there: memory is then reused, or freed by the thread that allocated it
/// (freeing another thread's blocks costs malloc's locks). The XML reader and the decode-ahead give
/// batches back; the YAML reader does not (its producer makes each batch anew).
///
/// The producer's thread starts with `Threads.start`; the waiting is on a `Monitor`.
package final class Handoff<Batch>: @unchecked Sendable {
    private let monitor = Monitor()
    private var ready: [Batch] = []
    private var ended = false
    private var failure: (any Error)?
    private var cancelled = false
    private var returned: [Batch] = []
    private let window: Int
    private var thread: StartedThread?
    /// Whether the thread was joined or let go (by the taker's thread only).
    private var settled = false

    private init(window: Int) { self.window = window }

    /// Starts `produce` on a thread of its own, with a stack of `stackSize` bytes (the main thread's
    /// 8 MiB by default; nil: the system's default for a new thread); it hands over batches with
    /// `put` (which returns nil once the taker has gone: stop then) and returns or throws at its end.
    /// Nil when no thread could be started: the caller then does the work itself.
    package static func start(window: Int = 4, stackSize: Int? = 8 << 20,
                             _ produce: @escaping (Handoff<Batch>) throws -> Void) -> Handoff<Batch>? {
        let handoff = Handoff(window: window)
        guard let thread = Threads.start(stackSize: stackSize, {
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

    /// Hands a batch over; waits while `window` batches are waiting. Nil once `cancel` was called;
    /// else the batches the taker gave back since, for the producer to fill again or to drop.
    package func put(_ batch: Batch) -> [Batch]? {
        var back: [Batch] = []
        let taken = monitor.withLock {
            while !cancelled, ready.count >= window { monitor.wait() }
            guard !cancelled else { return false }
            ready.append(batch)
            swap(&back, &returned)
            monitor.broadcast()
            return true
        }
        return taken ? back : nil
    }

    /// Hands a taken batch back to the producer; the taker keeps no reference to it.
    package func giveBack(_ batch: Batch) {
        monitor.withLock { returned.append(batch) }
    }

    /// The next batch, waiting for it; nil at the end (and after it), when the thread has ended and
    /// been joined. Throws what the producer threw, after every batch it handed over before, once
    /// its thread has ended and been joined too: the thread lets go of what the producer held (a
    /// libxml2 parser) after it says it has ended, and a taker that threw on at once could reach
    /// `exit` while it did, where libxml2's own clean-up freed what the parser's release still used
    /// (a crash at exit, 1 run in about 600 of a truncated UTF-16 document).
    package func take() throws -> Batch? {
        var failure: (any Error)?
        let next: Batch? = monitor.withLock {
            while ready.isEmpty, !ended { monitor.wait() }
            if !ready.isEmpty {
                monitor.broadcast()
                return ready.removeFirst()
            }
            failure = self.failure
            return nil
        }
        if next == nil, !settled {
            // Ended: the thread has only its release of the producer left to do.
            settled = true
            thread?.join()
        }
        if let failure { throw failure }
        return next
    }

    /// Called by a taker that stops early (it threw, or was dropped): the producer stops at its next
    /// `put`. Its thread is joined if it ends within `waiting` seconds (it has said it ended, and has
    /// only its release left); else it ends on its own, not waited for, so that a producer blocked on
    /// something slow (a pipe) holds up the taker no longer than that. The XML reader waits (up to a
    /// second): its parse thread's release of the libxml2 parser must not run while the process
    /// exits, where libxml2's own clean-up frees what that release uses. Nothing to do once the
    /// thread was joined.
    package func cancel(waiting seconds: Double = 0) {
        let hasEnded = monitor.withLock {
            cancelled = true
            ready = []
            monitor.broadcast()
            if seconds > 0, !ended {
                let deadline = Monitor.deadline(after: seconds)
                while !ended, monitor.wait(until: deadline) {}
            }
            return ended
        }
        if !settled {
            settled = true
            if hasEnded { thread?.join() } else { thread?.detach() }
        }
    }
}

extension Handoff {
    /// Takes every item of every batch in order, calling `body` with each; on an error (the
    /// producer's or `body`'s) cancels the producer and rethrows.
    package func forEach<Item>(_ body: (Item) throws -> Void) throws where Batch == [Item] {
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
