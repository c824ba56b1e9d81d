#if canImport(Glibc)
import Glibc
#endif

/// A mutex and a condition variable, for threads that wait for each other (pthreads, without
/// Foundation, which would add its start-up cost to every run). The package's one condition
/// variable: `Handoff` and `OrderedEncoding` wait on it; a lock that nobody waits on is a
/// `Synchronization.Mutex`. The mutex and the condition live in memory of their own (never in a
/// Swift stored property, whose address C must not keep).
package final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed); pthread_mutex_destroy(mutex)
        changed.deallocate(); mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
    /// Waits for a `broadcast`, with the lock held before and after.
    package func wait() { pthread_cond_wait(changed, mutex) }
    package func broadcast() { pthread_cond_broadcast(changed) }
    /// Waits as `wait` does, but no later than `deadline` (`Monitor.deadline(after:)`); false when
    /// the time ran out first.
    package func wait(until deadline: timespec) -> Bool {
        var deadline = deadline
        return pthread_cond_timedwait(changed, mutex, &deadline) != ETIMEDOUT
    }

    /// The time `seconds` from now on the clock `wait(until:)` counts by (CLOCK_REALTIME, the
    /// condition's default).
    package static func deadline(after seconds: Double) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanoseconds = Int(now.tv_nsec) + Int((seconds - seconds.rounded(.down)) * 1e9)
        return timespec(tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000,
                        tv_nsec: nanoseconds % 1_000_000_000)
    }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
