#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TripKit
import TripThreads
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
/// moment: bytes and trips read, rate, ETA, current file; then, once an input is read, what the run
/// is doing (migrating it, deduplicating, writing: after a spill these take a while). Sizes are in
/// MiB, as the summary gives them, and the trips spilled are counted as the summary counts them.
/// Only where standard error is a terminal and -q was not given; never on a pipe.
final class ProgressBar: Sendable {
    private let totalBytes: Int
    private let started = monotonicSeconds()
    private struct State {
        var current = ""
        /// Nil while an input is being read.
        var phase: RunPhase?
        var finished = false
        var drawn = false
        var thread: StartedThread?
    }
    /// Held also while the bar is drawn, so `stop` clears it after the last drawing.
    private let state = Mutex(State())

    static func start(quiet: Bool, inputs: [RunInput]) -> ProgressBar? {
        guard !quiet, isatty(2) == 1 else { return nil }
        var total = 0
        for i in inputs {
            // A PostgreSQL store's address is no file: its bytes are the server's.
            if case .file(let path) = i.location, i.format != .postgresql, let size = FileSystem.size(path) { total += size }
        }
        let bar = ProgressBar(totalBytes: total)
        // No thread, no bar.
        guard let thread = Threads.start({ bar.loop() }) else { return nil }
        bar.state.withLock { $0.thread = thread }
        return bar
    }

    private init(totalBytes: Int) { self.totalBytes = totalBytes }

    /// An input's reading starts.
    func setCurrent(_ name: String) {
        state.withLock {
            $0.current = name
            $0.phase = nil
        }
    }

    /// The run has moved on from reading: the bar says so at once, past the first moment.
    func enter(_ phase: RunPhase) {
        let (done, name) = state.withLock { state -> (Bool, String) in
            state.phase = phase
            return (state.finished, state.current)
        }
        let elapsed = monotonicSeconds() - started
        if !done, elapsed > 0.5 { draw(elapsed: elapsed, name: name, phase: phase) }
    }

    private func loop() {
        while true {
            usleep(200_000)
            let (done, name, phase) = state.withLock { ($0.finished, $0.current, $0.phase) }
            if done { return }
            let elapsed = monotonicSeconds() - started
            guard elapsed > 0.5 else { continue }
            draw(elapsed: elapsed, name: name, phase: phase)
        }
    }

    private func draw(elapsed: Double, name: String, phase: RunPhase?) {
        let mebibyte = Double(1 << 20)
        let bytes = totalBytesRead.load(ordering: .relaxed)
        let trips = totalTripsRead.load(ordering: .relaxed)
        var line = "\r\u{1B}[K" + oneDecimal(Double(bytes) / mebibyte)
        if totalBytes > 0 {
            line += "/" + oneDecimal(Double(totalBytes) / mebibyte) + " MiB (\(min(100, bytes * 100 / max(totalBytes, 1)))%)"
        } else {
            line += " MiB"
        }
        line += "  \(trips) trips"
        if phase == nil {
            let rate = Double(bytes) / elapsed
            line += "  " + oneDecimal(rate / mebibyte) + " MiB/s"
            if totalBytes > bytes, rate > 0 { line += "  ETA \(Int((Double(totalBytes - bytes) / rate).rounded())) s" }
        }
        let spilled = SpilledSoFar.bytes.load(ordering: .relaxed)
        if spilled > 0 { line += "  spilled \(ConversionSummary.mebibytes(spilled)) MiB" }
        switch phase {
        case nil: if !name.isEmpty { line += "  " + name }
        case .migrating?: line += "  migrating " + name
        case .deduplicating?: line += "  deduplicating"
        case .writing?: line += "  writing"
        }
        state.withLock {
            // A drawing that comes after `stop` (from `enter`, on the run's thread) is not made.
            guard !$0.finished else { return }
            $0.drawn = true
            writeAll(2, line)
        }
    }

    /// Stops and clears the bar, so the summary line starts clean.
    func stop() {
        let (wasDrawn, thread) = state.withLock { state -> (Bool, StartedThread?) in
            let was = state.drawn && !state.finished
            state.finished = true
            defer { state.thread = nil }
            return (was, state.thread)
        }
        if wasDrawn { writeAll(2, "\r\u{1B}[K") }
        thread?.join()
    }
}

/// `12.3` with one decimal, without Foundation's String(format:).
func oneDecimal(_ x: Double) -> String {
    let tenths = Int((x * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}
