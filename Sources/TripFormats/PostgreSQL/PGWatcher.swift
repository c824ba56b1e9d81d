#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit
import TripThreads

/// Watches a loader's first resolution round from a connection of its own: when the round waits
/// for a name that another loader holds, it cancels the statement and names that loader, so that
/// the round gives way to it alone. (Giving way to every loader holding names would make loaders
/// whose names never meet wait for each other: four loaders sharing names in a ring would run one
/// after another instead of two at a time.)
///
/// It looks every 20 ms while a statement is watched (`pg_blocking_pids` of the loader's backend
/// while it waits for a row or a transaction, kept to those holding the lock
/// `PGRecordWriter.holdingKey`; the same one twice in a row), and sleeps otherwise. A cancel is
/// sent only while the statement is watched: `end()` waits for one under way.
final class PGWatcher: @unchecked Sendable {
    private let monitor = Monitor()
    private let connection: PGConnection
    private let canceller: PGCanceller
    private let watched: Int
    private var watching = false
    private var stopping = false
    private var blocker: Int?
    private var thread: StartedThread?

    /// Connects to the store as the loader did; nil when that or the thread fails (the loader then
    /// gives way on its lock timeout alone).
    init?(address: String, schema: String?, watching loader: PGConnection) {
        guard let canceller = loader.canceller(), let connection = try? PGConnection(address, schema: schema) else { return nil }
        self.canceller = canceller
        self.connection = connection
        watched = loader.backendPID
        guard let thread = Threads.start(stackSize: nil, { [unowned self] in loop() }) else { return nil }
        self.thread = thread
    }

    deinit { stop() }

    private func loop() {
        // Waiting for a row or for a transaction's end (a name it inserted, a trip it locked), not
        // for a moment's lock such as extending a table: that would be no reason to give way.
        let look = """
            SELECT l.pid FROM pg_locks w, pg_locks l
            WHERE w.pid = $1 AND NOT w.granted AND w.locktype IN ('transactionid', 'tuple')
              AND l.pid = ANY(pg_blocking_pids($1)) AND \(PGRecordWriter.isHoldingLock("l"))
            LIMIT 1
            """
        var seen: Int?
        while true {
            let go = monitor.withLock {
                while !watching, !stopping { monitor.wait() }
                return !stopping
            }
            guard go else { return }
            let holder = (try? connection.query(look, [String(watched)]))?.textIfAny.flatMap { Int($0) }
            monitor.withLock {
                // Seen twice in a row (20 ms apart): a wait that lasts.
                if watching, blocker == nil, let holder, holder == seen {
                    canceller.cancel()
                    blocker = holder
                }
            }
            seen = holder
            usleep(20_000)
        }
    }

    /// Begins watching the loader's next statements.
    func begin() {
        monitor.withLock {
            blocker = nil
            watching = true
            monitor.broadcast()
        }
    }

    /// Stops watching; the backend of the loader a statement was cancelled for, if one was.
    @discardableResult
    func end() -> Int? {
        monitor.withLock {
            watching = false
            return blocker
        }
    }

    /// Ends the thread. Idempotent.
    func stop() {
        let running: StartedThread? = monitor.withLock {
            watching = false
            stopping = true
            monitor.broadcast()
            defer { thread = nil }
            return thread
        }
        running?.join()
    }
}
