#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
import TripFormats

/// `WorkerPool`, on which `convert --output-dir` converts its inputs: each job runs once, the
/// results come back in the jobs' order, and a job's error is its own.
@Suite("Worker pool")
struct WorkerPoolTests {
    struct JobError: Error, Equatable {
        var job: Int
    }

    /// What the jobs of one run saw: which ran, on which threads, and how many ran at once.
    final class Log: Sendable {
        private struct State {
            var runs: [Int: Int] = [:]
            var order: [Int] = []
            var threads: Set<UInt> = []
            var running = 0
            var mostAtOnce = 0
        }
        private let state = Mutex(State())

        /// Notes a job's start, runs `body`, and notes its end.
        func job<T, E: Error>(_ i: Int, _ body: () throws(E) -> T) throws(E) -> T {
            state.withLock {
                $0.runs[i, default: 0] += 1
                $0.order.append(i)
                $0.threads.insert(UInt(pthread_self()))
                $0.running += 1
                $0.mostAtOnce = max($0.mostAtOnce, $0.running)
            }
            defer { state.withLock { $0.running -= 1 } }
            return try body()
        }

        var runs: [Int: Int] { state.withLock { $0.runs } }
        var order: [Int] { state.withLock { $0.order } }
        var threads: Int { state.withLock { $0.threads.count } }
        var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }
    }

    /// A short wait that varies by job, so later jobs often finish first.
    static func pause(_ i: Int) { usleep(useconds_t((i * 7919) % 5 * 1_000)) }

    @Test("the results come back in the jobs' order, whichever worker finished first")
    func order() {
        let results = WorkerPool.run(40, workers: 4) { i in
            WorkerPoolTests.pause(i)
            return i * i
        }
        #expect(results.map { $0.get() } == (0..<40).map { $0 * $0 })
    }

    @Test("a job's error is its result, and stops no other job")
    func errors() {
        let log = Log()
        let results = WorkerPool.run(30, workers: 3) { i throws(JobError) in
            try log.job(i) { () throws(JobError) -> String in
                WorkerPoolTests.pause(i)
                if i % 4 == 1 { throw JobError(job: i) }
                return "job \(i)"
            }
        }
        #expect(results.count == 30)
        for (i, result) in results.enumerated() {
            switch result {
            case .success(let text): #expect(i % 4 != 1 && text == "job \(i)")
            case .failure(let error): #expect(i % 4 == 1 && error == JobError(job: i))
            }
        }
        #expect(log.runs.count == 30, "every job ran, after the failures too")
    }

    @Test("every job runs exactly once", arguments: [(0, 3), (1, 1), (7, 2), (64, 5), (100, 2)])
    func eachOnce(jobs: Int, workers: Int) {
        let log = Log()
        let results = WorkerPool.run(jobs, workers: workers) { i in log.job(i) { i } }
        #expect(results.map { $0.get() } == Array(0..<jobs))
        #expect(log.runs == Dictionary(uniqueKeysWithValues: (0..<jobs).map { ($0, 1) }))
    }

    @Test("with more workers than jobs, no more threads run than there are jobs")
    func moreWorkersThanJobs() {
        let log = Log()
        let results = WorkerPool.run(3, workers: 16) { i in
            log.job(i) {
                usleep(20_000)
                return i
            }
        }
        #expect(results.map { $0.get() } == [0, 1, 2])
        #expect(log.threads <= 3)
        #expect(WorkerPool.run(0, workers: 16) { i in log.job(i) { i } }.isEmpty)
        #expect(log.runs.count == 3, "no job runs when there are none")
    }

    @Test("one worker runs the jobs one at a time, in order, on a thread of its own")
    func oneWorker() {
        let log = Log()
        let caller = UInt(pthread_self())
        let threads = WorkerPool.run(12, workers: 1) { i in
            log.job(i) {
                WorkerPoolTests.pause(i)
                return UInt(pthread_self())
            }
        }.map { $0.get() }
        #expect(log.order == Array(0..<12))
        #expect(log.mostAtOnce == 1)
        #expect(Set(threads).count == 1)
        #expect(threads[0] != caller)
    }

    @Test("several workers run jobs at once")
    func atOnce() {
        // The first two jobs wait (up to 10 s) until both have started: only two workers can do that.
        let started = Atomic<Int>(0)
        let waited = WorkerPool.run(6, workers: 2) { i -> Bool in
            guard i < 2 else { return true }
            started.add(1, ordering: .relaxed)
            for _ in 0..<10_000 where started.load(ordering: .relaxed) < 2 { usleep(1_000) }
            return started.load(ordering: .relaxed) >= 2
        }
        #expect(waited.map { $0.get() } == Array(repeating: true, count: 6))
    }
}
