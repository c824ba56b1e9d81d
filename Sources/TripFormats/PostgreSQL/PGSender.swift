import TripKit
import TripThreads

/// Sends a load's batches from a thread of its own, one at a time, so that the next batch is built
/// (and the input read) while the server writes the last one: a COPY returns only once the server
/// has written its rows, and a load built and sent its batches in turn would leave the server idle
/// while it builds one, and itself idle while the server writes.
///
/// The connection is used by one thread at a time: jobs run on the sender's thread, and the writer
/// uses the connection itself only after `drain()`, which waits for the job under way. A job's
/// error is thrown by the next `submit` or `drain`; no job runs after one failed.
///
/// Memory: the batch under way and the one being built (each at most 8 MiB of rows).
final class PGSender: @unchecked Sendable {
    private let monitor = Monitor()
    private var job: (() throws -> Void)?
    private var failure: (any Error)?
    private var stopping = false
    private var thread: StartedThread?

    /// Starts the thread; nil when none could be started (the caller then sends the batches itself).
    init?() {
        guard let thread = Threads.start(stackSize: nil, { [unowned self] in loop() }) else { return nil }
        self.thread = thread
    }

    deinit { stop() }

    private func loop() {
        while true {
            let next: (() throws -> Void)? = monitor.withLock {
                while job == nil, !stopping { monitor.wait() }
                return job
            }
            guard let next else { return }
            var error: (any Error)?
            do { try next() } catch let e { error = e }
            monitor.withLock {
                job = nil
                if failure == nil { failure = error }
                monitor.broadcast()
            }
        }
    }

    /// Hands a job over once the one under way has ended; throws an earlier job's error instead.
    func submit(_ body: @escaping () throws -> Void) throws {
        try monitor.withLock {
            while job != nil { monitor.wait() }
            if let failure { throw failure }
            job = body
            monitor.broadcast()
        }
    }

    /// Waits for the job under way; throws the error of any job that failed.
    func drain() throws {
        try monitor.withLock {
            while job != nil { monitor.wait() }
            if let failure { throw failure }
        }
    }

    /// Waits for the job under way and ends the thread. Idempotent.
    func stop() {
        let running: StartedThread? = monitor.withLock {
            while job != nil { monitor.wait() }
            stopping = true
            monitor.broadcast()
            defer { thread = nil }
            return thread
        }
        running?.join()
    }
}
