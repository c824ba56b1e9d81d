import TripThreads
/// A writer whose trips are independent runs of bytes (JSON Lines, a JSON array's elements, CSV
/// rows): the pipeline can then format trips on several threads and hand the bytes over in order.
public protocol RecordEncoding: RecordWriter {
    /// Whether trips can be formatted apart now (a writer may need `expect` first).
    var encodesApart: Bool { get }
    /// A pure, thread-safe function appending the bytes of a batch of trips (`trip(i)` for each `i`
    /// of the range, in order), as `writeEncoded` expects them. Asked after `expect`, so it may
    /// depend on the shape; each call may keep scratch space of its own.
    func makeEncoder() -> @Sendable (_ trip: (Int) -> ModelObject, _ range: Range<Int>, _ out: inout [UInt8]) -> Void
    /// Writes the bytes the encoder made for the next `trips` trips, in order; the same as calling
    /// `write` for each of them.
    mutating func writeEncoded(_ bytes: [UInt8], trips: Int) throws
}

extension RecordEncoding {
    public var encodesApart: Bool { true }
}

/// Formats batches of trips on worker threads and writes each batch, in order, on the calling
/// thread, with at most a few batches waiting, so memory stays bounded.
///
/// Only the calling thread writes, so a write error (a full disk, a closed pipe) is thrown where it
/// would be without threads; the workers are stopped and joined before it is.
enum OrderedEncoding {
    static let batchSize = 256

    static func run(count: Int, threads: Int, encode: @escaping @Sendable (Range<Int>, inout [UInt8]) -> Void,
                    write: ([UInt8], Int) throws -> Void) throws {
        let batches = (count + batchSize - 1) / batchSize
        let range = { @Sendable (b: Int) -> Range<Int> in (b * batchSize)..<min(count, (b + 1) * batchSize) }
        func formatHere() throws {
            var bytes: [UInt8] = []
            for b in 0..<batches {
                bytes.removeAll(keepingCapacity: true)
                encode(range(b), &bytes)
                try write(bytes, range(b).count)
            }
        }
        guard threads > 1, batches > 1 else { return try formatHere() }
        let shared = Shared(window: 4 * threads)
        var workers: [StartedThread] = []
        for _ in 0..<threads {
            let job = Job(shared: shared, batches: batches, range: range, encode: encode)
            guard let thread = Threads.start({ job.run() }) else { break }
            workers.append(thread)
        }
        defer {
            shared.stop()
            for t in workers { t.join() }
        }
        // No thread could be started: format here.
        guard !workers.isEmpty else { return try formatHere() }
        for b in 0..<batches {
            let bytes = shared.take(b)
            try write(bytes, range(b).count)
        }
    }

    /// The state the writer and the workers share, under one `Monitor` (the workers wait for room in
    /// the window, the writer for the next batch).
    final class Shared: @unchecked Sendable {
        private let monitor = Monitor()
        private var next = 0
        private var taken = 0
        private var done: [Int: [UInt8]] = [:]
        private var stopped = false
        let window: Int

        init(window: Int) { self.window = window }

        /// The next batch to format, or nil to stop; waits while too many are ahead of the writer.
        func claim(below batches: Int) -> Int? {
            monitor.withLock {
                while !stopped, next < batches, next - taken >= window { monitor.wait() }
                guard !stopped, next < batches else { return nil }
                defer { next += 1 }
                return next
            }
        }

        func finished(_ batch: Int, _ bytes: [UInt8]) {
            monitor.withLock {
                done[batch] = bytes
                monitor.broadcast()
            }
        }

        /// Waits for a batch's bytes and takes them.
        func take(_ batch: Int) -> [UInt8] {
            monitor.withLock {
                while done[batch] == nil { monitor.wait() }
                taken = batch + 1
                monitor.broadcast()
                return done.removeValue(forKey: batch)!
            }
        }

        func stop() {
            monitor.withLock {
                stopped = true
                monitor.broadcast()
            }
        }
    }

    final class Job: @unchecked Sendable {
        let shared: Shared
        let batches: Int
        let range: @Sendable (Int) -> Range<Int>
        let encode: @Sendable (Range<Int>, inout [UInt8]) -> Void

        init(shared: Shared, batches: Int, range: @escaping @Sendable (Int) -> Range<Int>,
             encode: @escaping @Sendable (Range<Int>, inout [UInt8]) -> Void) {
            self.shared = shared; self.batches = batches; self.range = range; self.encode = encode
        }

        func run() {
            while let b = shared.claim(below: batches) {
                var bytes: [UInt8] = []
                let r = range(b)
                bytes.reserveCapacity(r.count * 512)
                encode(r, &bytes)
                shared.finished(b, bytes)
            }
        }
    }
}
