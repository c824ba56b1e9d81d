import Synchronization
import TripKit
import TripThreads

/// A few worker threads that share out numbered jobs: each worker takes the next number when it is
/// done with one, until none is left (`convert --output-dir`, an input a job).
///
/// ```swift
/// let sizes = WorkerPool.run(paths.count, workers: 4) { i throws(TripError) in try fileSize(paths[i]) }
/// // sizes[i] is the result of paths[i]: its size, or its error
/// ```
public enum WorkerPool {
    /// Runs `job` once for each number in `0..<count` on `workers` threads (fewer when there are
    /// fewer jobs; at least one) and gives back every job's result in the order of the numbers,
    /// once all are done. A job that throws stops no other: its error is its result. Workers start
    /// in `Threads.start`, with the main thread's stack; when none can be started, the jobs run
    /// here, in order. `job` runs on several threads at once: what it shares, it must lock.
    public static func run<Value: Sendable, Failure: Error>(
        _ count: Int, workers: Int, _ job: @Sendable (Int) throws(Failure) -> Value
    ) -> [Result<Value, Failure>] {
        guard count > 0 else { return [] }
        let shared = Shared<Value, Failure>(count: count)
        return withoutActuallyEscaping(job) { job in
            let work = {
                while let i = shared.take(below: count) {
                    let result = Result { () throws(Failure) in try job(i) }
                    shared.results.withLock { $0[i] = result }
                }
            }
            var started: [StartedThread] = []
            for _ in 0..<max(1, min(workers, count)) {
                guard let thread = Threads.start(work) else { break }
                started.append(thread)
            }
            // No thread could be started: the jobs run here.
            if started.isEmpty { work() }
            // Every worker is joined before `job` goes out of scope: it never escapes this call.
            for thread in started { thread.join() }
            return shared.results.withLock { $0.map { $0! } }
        }
    }

    /// What the workers share: the next job's number, and the results so far.
    private final class Shared<Value: Sendable, Failure: Error>: Sendable {
        let results: Mutex<[Result<Value, Failure>?]>
        private let next = Mutex(0)

        init(count: Int) { results = Mutex(Array(repeating: nil, count: count)) }

        /// The next job's number, or nil when every job below `count` has been taken.
        func take(below count: Int) -> Int? {
            next.withLock { n in
                guard n < count else { return nil }
                defer { n += 1 }
                return n
            }
        }
    }
}
