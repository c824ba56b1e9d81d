#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
@testable import TripKit
import TripThreads

/// `Threads.start`, the one place threads are started: each caller's stack size reaches the thread,
/// and a thread can be joined or let go.
@Suite("Starting threads")
struct ThreadsTests {
    /// glibc's `pthread_getattr_np`, which Swift's Glibc module leaves out (it is a GNU extension).
    typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32

    /// The stack size of the thread it runs on.
    static func ownStackSize() -> Int {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_getattr_np") else { return -1 }
        let getAttributes = unsafeBitCast(symbol, to: GetAttributes.self)
        var attributes = pthread_attr_t()
        guard getAttributes(pthread_self(), &attributes) == 0 else { return -1 }
        defer { pthread_attr_destroy(&attributes) }
        var size = 0
        pthread_attr_getstacksize(&attributes, &size)
        return size
    }

    /// What a new thread gets when nobody asks for a size.
    static func defaultStackSize() -> Int {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        var size = 0
        pthread_attr_getstacksize(&attributes, &size)
        return size
    }

    /// glibc may hand a new thread the cached stack of a thread that ended, if it is at least as large
    /// (up to four times), so a thread's stack is at least the size asked for; 16 MiB is more than any
    /// default, so it shows the size reaching the thread.
    @Test("a thread gets at least the stack size asked for (the main thread's 8 MiB by default, nil: the system's)",
          arguments: [Threads.mainStackSize, 16 << 20, 1 << 20, nil] as [Int?])
    func stackSize(asked: Int?) throws {
        let seen = Mutex(0)
        let body = { seen.withLock { $0 = ThreadsTests.ownStackSize() } }
        let started = asked == Threads.mainStackSize ? Threads.start(body) : Threads.start(stackSize: asked, body)
        let thread = try #require(started)
        thread.join()
        let size = seen.withLock { $0 }
        #expect(size >= (asked ?? Self.defaultStackSize()))
    }

    @Test("join waits for the body's end; a detached thread runs its body to the end on its own")
    func joinAndDetach() throws {
        let count = Mutex(0)
        var threads: [StartedThread] = []
        for _ in 0..<8 {
            threads.append(try #require(Threads.start { usleep(2_000); count.withLock { $0 += 1 } }))
        }
        for t in threads { t.join() }
        #expect(count.withLock { $0 } == 8)

        let monitor = Monitor()
        var finished = false
        let detached = try #require(Threads.start {
            usleep(2_000)
            monitor.withLock { finished = true; monitor.broadcast() }
        })
        detached.detach()
        monitor.withLock { while !finished { monitor.wait() } }
        #expect(monitor.withLock { finished })
    }
}
