#if canImport(Glibc)
import Glibc
#endif

/// A mutex and a condition variable, for threads that hand work to each other (pthreads, without
/// Foundation, which would add its start-up cost to every run).
public final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed); pthread_mutex_destroy(mutex)
        changed.deallocate(); mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Waits for a `broadcast`, with the lock held before and after.
    public func wait() { pthread_cond_wait(changed, mutex) }
    public func broadcast() { pthread_cond_broadcast(changed) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Starting a thread with pthreads.
enum Threads {
    /// Runs `body` on a new thread with an 8 MiB stack (what the main thread has by default, so
    /// depth limits tested there hold); nil when no thread could be started.
    static func start(_ body: @escaping () -> Void) -> pthread_t? {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 8 << 20)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        let rc = pthread_create(&thread, &attributes, { raw in
            Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            return nil
        }
        return thread
    }
}

private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
