#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TripKit
import TripFormats

/// Trips read so far by every reader of the run, for the progress bar.
let totalTripsRead = Atomic<Int>(0)

/// A reader that counts the trips it yields.
struct CountingReader: RecordReader {
    var base: any RecordReader
    mutating func next() throws -> ReadItem? {
        let item = try base.next()
        if item != nil { totalTripsRead.add(1, ordering: .relaxed) }
        return item
    }
    var detection: Detection { base.detection }
}

/// A progress bar on standard error, redrawn a few times a second once the work has taken more than a
/// moment: bytes and trips done, rate, ETA, current file. Only where standard error is a terminal and
/// -q was not given; never on a pipe.
final class ProgressBar: @unchecked Sendable {
    private let totalBytes: Int
    private let started = monotonicSeconds()
    private let lock = Lock()
    private var current = ""
    private var finished = false
    private var drawn = false
    private var thread: WorkerThread?

    static func start(quiet: Bool, inputs: [ResolvedInput]) -> ProgressBar? {
        guard !quiet, isatty(2) == 1 else { return nil }
        var total = 0
        for i in inputs {
            if case .file(let path) = i.location {
                var st = stat()
                if stat(path, &st) == 0 { total += Int(st.st_size) }
            }
        }
        let bar = ProgressBar(totalBytes: total)
        let t = WorkerThread { bar.loop() }
        bar.thread = t
        t.start()
        return bar
    }

    private init(totalBytes: Int) { self.totalBytes = totalBytes }

    func setCurrent(_ name: String) { lock.withLock { current = name } }

    private func loop() {
        while true {
            usleep(200_000)
            let (done, name) = lock.withLock { (finished, current) }
            if done { return }
            let elapsed = monotonicSeconds() - started
            guard elapsed > 0.5 else { continue }
            draw(elapsed: elapsed, name: name)
        }
    }

    private func draw(elapsed: Double, name: String) {
        let bytes = totalBytesRead.load(ordering: .relaxed)
        let trips = totalTripsRead.load(ordering: .relaxed)
        let rate = Double(bytes) / elapsed
        var line = "\r\u{1B}[K" + oneDecimal(Double(bytes) / 1e6)
        if totalBytes > 0 {
            line += "/" + oneDecimal(Double(totalBytes) / 1e6) + " MB (\(min(100, bytes * 100 / max(totalBytes, 1)))%)"
        } else {
            line += " MB"
        }
        line += "  \(trips) trips  " + oneDecimal(rate / 1e6) + " MB/s"
        if totalBytes > bytes, rate > 0 { line += "  ETA \(Int((Double(totalBytes - bytes) / rate).rounded())) s" }
        if !name.isEmpty { line += "  " + name }
        lock.withLock {
            drawn = true
            writeAll(2, line)
        }
    }

    /// Stops and clears the bar, so the summary line starts clean.
    func stop() {
        let wasDrawn = lock.withLock { () -> Bool in
            let was = drawn && !finished
            finished = true
            return was
        }
        if wasDrawn { writeAll(2, "\r\u{1B}[K") }
        thread?.join()
        thread = nil
    }
}
