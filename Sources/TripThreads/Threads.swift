#if canImport(Glibc)
import Glibc
#endif

/// Starting a thread: the one place that calls `pthread_create` (pthreads, not Foundation's
/// `Thread`, which would add Foundation's start-up cost to every run).
///
/// Every thread of the package starts here: the parse threads of XML and YAML and the decode-ahead
/// thread (through `Handoff`), the second thread of a JSON Lines index's pass, the encoding workers
/// (`OrderedEncoding`), and the bulk workers (TripFormats' WorkerPool) and progress bar. Locks are
/// `Synchronization.Mutex`; where a thread must wait for another, the
/// one condition variable is `Monitor`.
package enum Threads {
    /// 8 MiB: what the main thread has by default, so depth limits tested there hold on a thread.
    package static let mainStackSize = 8 << 20

    /// The number of cores online (`--jobs`' default).
    package static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Runs `body` on a new thread with a stack of `stackSize` bytes (nil: the system's default for
    /// a new thread); nil when no thread could be started, and `body` was not run. The thread must
    /// be joined or detached, once.
    package static func start(stackSize: Int? = mainStackSize, _ body: @escaping () -> Void) -> StartedThread? {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
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
        return StartedThread(id: thread)
    }
}

/// A thread `Threads.start` started: join it (wait for its end) or detach it (let it end on its
/// own), once.
package struct StartedThread: Sendable {
    fileprivate let id: pthread_t

    package func join() { pthread_join(id, nil) }
    package func detach() { pthread_detach(id) }
}

private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
