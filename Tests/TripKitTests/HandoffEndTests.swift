import Foundation
import Synchronization
import Testing
import TripThreads

/// Whether a `SlowRelease` was released.
private final class ReleaseFlag: Sendable {
    private let released = Mutex(false)
    var isSet: Bool { released.withLock { $0 } }
    func set() { released.withLock { $0 = true } }
}

/// What a producer holds (as the XML reader's parse thread holds its libxml2 parser), whose release
/// takes a while.
private final class SlowRelease: Sendable {
    let flag: ReleaseFlag
    init(_ flag: ReleaseFlag) { self.flag = flag }
    deinit {
        usleep(200_000)
        flag.set()
    }
}

/// The producer's thread lets go of what the producer held after it says it has ended. A taker that
/// threw the producer's error on at once could reach `exit` while that release ran: with the XML
/// reader, libxml2's clean-up at exit freed what the parser's release still used, and 1 run in about
/// 600 of a truncated UTF-16 document (libxml2's must-reject/truncated-utf16.xml) crashed at exit.
@Suite("Handoff: the producer's thread has let go of what it held when the taker hears of its end")
struct HandoffEndTests {
    struct Refused: Error {}

    /// A handoff whose producer holds a `SlowRelease` (and nothing else does), with its flag.
    private static func start(_ produce: @escaping (Handoff<[Int]>) throws -> Void) throws -> (Handoff<[Int]>, ReleaseFlag) {
        let flag = ReleaseFlag()
        var held: SlowRelease? = SlowRelease(flag)
        let started = Handoff<[Int]>.start { [held] (handoff: Handoff<[Int]>) throws in
            _ = held
            try produce(handoff)
        }
        held = nil
        return (try #require(started), flag)
    }

    @Test("the producer's error reaches the taker after its thread released what the producer held")
    func errorAfterRelease() throws {
        let (handoff, flag) = try Self.start { handoff in
            _ = handoff.put([1])
            throw Refused()
        }
        #expect(try handoff.take() == [1])
        #expect(throws: Refused.self) { try handoff.take() }
        #expect(flag.isSet, "the error was thrown while the producer's thread still held what it had")
        // Taken again, the end is still the error.
        #expect(throws: Refused.self) { try handoff.take() }
    }

    @Test("the end without an error comes after the release too")
    func endAfterRelease() throws {
        let (handoff, flag) = try Self.start { handoff in
            _ = handoff.put([1, 2])
        }
        var items: [Int] = []
        try handoff.forEach { (item: Int) in items.append(item) }
        #expect(items == [1, 2])
        #expect(flag.isSet, "the end was told while the producer's thread still held what it had")
    }

    @Test("a taker that stops early waits, up to its bound, for a producer about to end, and its release")
    func cancelWaitsForTheEnd() throws {
        let (handoff, flag) = try Self.start { handoff in
            _ = handoff.put([1])
            usleep(100_000)  // the rest of the input's parse
        }
        #expect(try handoff.take() == [1])
        handoff.cancel(waiting: 10)
        #expect(flag.isSet, "the taker went on while the producer's thread still held what it had")
    }

    @Test("a producer that does not end within the bound is let go, and ends on its own")
    func cancelLetsABlockedProducerGo() throws {
        let goOn = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let (handoff, flag) = try Self.start { handoff in
            _ = handoff.put([1])
            goOn.wait()  // a read from a pipe that stays open
            ended.signal()
        }
        #expect(try handoff.take() == [1])
        let start = DispatchTime.now().uptimeNanoseconds
        handoff.cancel(waiting: 0.3)
        let waited = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        #expect(waited >= 0.25 && waited < 5, "cancel waited \(waited) s")
        #expect(!flag.isSet)
        goOn.signal()
        #expect(ended.wait(timeout: .now() + 10) == .success)
    }

    @Test("deadlines carry past a whole second")
    func deadlines() {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        for seconds in [0.001, 0.5, 0.999_999_999, 1, 1.75, 30.25] {
            let d = Monitor.deadline(after: seconds)
            #expect(d.tv_nsec >= 0 && d.tv_nsec < 1_000_000_000, "\(seconds)")
            let ahead = Double(d.tv_sec - now.tv_sec) + Double(d.tv_nsec - now.tv_nsec) / 1e9
            #expect(ahead >= seconds && ahead < seconds + 1, "\(seconds): \(ahead)")
        }
    }
}
