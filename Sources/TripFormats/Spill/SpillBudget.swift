#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TripKit

/// How much memory the trips of one run may take, and where they go beyond it: shared by the
/// holdings of a run (one per input, and the one all inputs end in), so that together they stay
/// under `tripBytes`.
///
/// `--memory-limit` is the whole process's budget; trips held in memory get half of it, a
/// partition being deduplicated a third, and the rest is left for what every run holds besides
/// (readers' and writers' buffers, the set-aside records kept in memory, the program itself).
package final class SpillBudget: Sendable {
    /// The default `--memory-limit`: a quarter of the machine's memory, at most 1 GiB.
    package static var defaultLimit: Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        let physical = pages > 0 && size > 0 ? pages * size : 4 << 30
        return min(1 << 30, physical / 4)
    }

    /// The whole budget, as `--memory-limit` gave it.
    package let limit: Int
    /// Where spill files are made: `--temp-dir`, else `$TMPDIR`, else `/tmp`.
    package let directory: String
    /// How many bytes of trips the run's holdings may keep in memory together (and of values a
    /// `RepeatedValues` counts, `detect`'s names).
    package let tripBytes: Int
    /// How many bytes of trips one partition may have when it is deduplicated in memory.
    package let partitionBytes: Int
    /// How many set-aside records a holding keeps in memory before it writes them to a file.
    package let setAsideInMemory: Int

    private struct State {
        var hasSpilled = false
        var onFirstSpill: (@Sendable () -> Void)?
        var held = 0
        var spilledTrips = 0
        var spilledBytes = 0
        var roomGiven = 0
    }
    private let state = Mutex(State())

    package init(limit: Int, directory: String? = nil, setAsideInMemory: Int = 16_384) {
        self.limit = limit
        self.directory = directory ?? SpillBudget.temporaryDirectory
        tripBytes = max(limit / 2, 1)
        partitionBytes = max(limit / 3, 1)
        self.setAsideInMemory = max(setAsideInMemory, 1)
    }

    package static var temporaryDirectory: String {
        if let t = getenv("TMPDIR"), t.pointee != 0 { return String(cString: t) }
        return "/tmp"
    }

    /// Notes that a holding's memory grew (or shrank) by `delta` bytes; true when the run's
    /// holdings together are now over `tripBytes`.
    func hold(_ delta: Int) -> Bool {
        state.withLock { s in
            s.held += delta
            return s.held > tripBytes
        }
    }

    /// Up to `bytes` of room that a holding may reserve ahead of what it holds (counted in `hold` only
    /// as it fills): what is left of an eighth of `tripBytes` for the whole run, taken here.
    func room(_ bytes: Int) -> Int {
        state.withLock { s in
            let given = max(0, min(bytes, tripBytes / 8 - s.roomGiven))
            s.roomGiven += given
            return given
        }
    }

    /// The bytes the run's holdings count in the budget now.
    package var held: Int { state.withLock { $0.held } }

    /// Calls `body` when a holding of the run first goes to a temporary file (once per budget).
    package func onFirstSpill(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.onFirstSpill = body }
    }

    /// A holding is about to write its trips to a temporary file.
    func startingToSpill() {
        let call = state.withLock { s -> (@Sendable () -> Void)? in
            defer { s.hasSpilled = true }
            return s.hasSpilled ? nil : s.onFirstSpill
        }
        call?()
    }

    func noteSpill(trips: Int, bytes: Int) {
        state.withLock { s in s.spilledTrips += trips; s.spilledBytes += bytes }
    }

    /// How many trips went to temporary files, and their bytes there, once the holdings that sent
    /// them are gone (a run's, when it has returned).
    package var spilled: (trips: Int, bytes: Int) { state.withLock { ($0.spilledTrips, $0.spilledBytes) } }

    /// Reads a size: a number of bytes, or a number with K, M, G or T (powers of 1024), as
    /// `--memory-limit 256M`; at least 1 MiB.
    package static func parseSize(_ text: String, option: String = "--memory-limit", minimum: Int = 1 << 20) throws -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text.uppercased())
        if digits.hasSuffix("IB") { digits = digits.dropLast(2) } else if digits.hasSuffix("B") { digits = digits.dropLast() }
        var unit = 1
        if let last = digits.last, let u = units[last] { unit = u; digits = digits.dropLast() }
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), let n = Int(digits),
              n.multipliedReportingOverflow(by: unit).overflow == false else {
            throw TripError.usage("\(option) takes a size such as 256M, 2G or 1073741824, not \(text.quotedForMessage)")
        }
        guard n * unit >= minimum else {
            throw TripError.usage("--memory-limit \(text) is less than 1M: too little to read a record in")
        }
        return n * unit
    }
}
