#if canImport(Glibc)
import Glibc
#endif

/// A mutex, without Foundation (which would add its start-up cost to every run).
final class Lock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(&mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }
    deinit { pthread_mutex_destroy(&mutex) }
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}

/// Runs a closure on a new thread with an 8 MiB stack; `join()` waits for it.
final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: () -> Void

    init(_ body: @escaping () -> Void) { self.body = body }

    func start() {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 8 << 20)
        let box = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, &attributes, { raw in
            let worker = Unmanaged<WorkerThread>.fromOpaque(raw!).takeRetainedValue()
            worker.body()
            return nil
        }, box)
        pthread_attr_destroy(&attributes)
    }

    func join() { pthread_join(thread, nil) }
}

/// The number of cores online.
var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

/// `12.3` with one decimal, without Foundation's String(format:).
func oneDecimal(_ x: Double) -> String {
    let tenths = Int((x * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}
