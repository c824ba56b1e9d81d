import Testing
import TripKit

/// Reading ahead (the reader on a thread of its own) and decoding ahead (trips decoded for a store
/// writer on another) must not change what is written, rejected or thrown, nor its order.
@Suite("Reading and decoding ahead on threads")
struct ReadAheadTests {
    struct ReaderFailure: Error, Equatable { var at: Int }

    /// Yields `count` items (every 37th a rejection); throws at `throwAt`; blocks at `blockAt` until
    /// `release` is called.
    struct ScriptedReader: RecordReader {
        var count: Int
        var throwAt: Int?
        var blockAt: Int?
        var gate: Gate?
        var position = 0
        var detection = Detection(format: "test", version: SchemaVersion(3, 0, 0))

        mutating func next() throws -> ReadItem? {
            if let throwAt, position == throwAt { throw ReaderFailure(at: position) }
            if let blockAt, position == blockAt { gate?.wait() }
            guard position < count else { return nil }
            defer { position += 1 }
            let origin = RecordOrigin(source: "in", record: position + 1, line: position + 1)
            if position % 37 == 36 {
                return .rejected(Rejection(kind: .rejected, origin: origin, reason: "bad record \(position)"))
            }
            return .trip(TripRecord(object: object(TestTrip(name: "trip \(position % 1000)", destination: "d\(position)")),
                                    origin: origin))
        }
    }

    /// A door a reader waits at until the test opens it.
    final class Gate: @unchecked Sendable {
        private let monitor = Monitor()
        private var open = false
        func wait() { monitor.withLock { while !open { monitor.wait() } } }
        func release() { monitor.withLock { open = true; monitor.broadcast() } }
    }

    struct Outcome: Equatable {
        var names: [String]
        var ledger: [String]
        var read = 0, written = 0, merged = 0, rejected = 0
    }

    func run(_ reader: ScriptedReader, ahead: Bool, keepsGoing: Bool = true, writer: CollectingWriter = CollectingWriter()) throws -> Outcome {
        var pipeline = Pipeline()
        pipeline.readsAhead = ahead
        pipeline.keepsGoing = keepsGoing
        var ledger: [String] = []
        let summary = try pipeline.run([PipelineInput(name: "in") { reader }], into: { writer }) { entry in
            ledger.append("\(entry.kind) \(entry.origin): \(entry.reason)")
        }
        return Outcome(names: writer.objects.map { $0.attributes[0].stringValue ?? "" }, ledger: ledger,
                       read: summary.inputs.map(\.read).reduce(0, +), written: summary.written,
                       merged: summary.merged, rejected: summary.inputs.map(\.rejected).reduce(0, +))
    }

    @Test("the trips, the ledger and the counts are those of reading here, at batch boundaries and beyond",
          arguments: [0, 1, 36, 37, 255, 256, 257, 3000])
    func sameOutcome(count: Int) throws {
        let here = try run(ScriptedReader(count: count), ahead: false)
        let ahead = try run(ScriptedReader(count: count), ahead: true)
        #expect(ahead == here)
        #expect(here.read == count)
        #expect(here.rejected == count / 37)
        #expect(here.written + here.merged + here.rejected == count)
    }

    @Test("a reader's error is thrown after every item before it was taken", arguments: [0, 1, 300, 2000])
    func readerError(at position: Int) throws {
        let writer = CollectingWriter()
        var rejectionsSeen = 0
        var pipeline = Pipeline()
        pipeline.readsAhead = true
        pipeline.keepsGoing = true
        #expect(throws: ReaderFailure(at: position)) {
            _ = try pipeline.run([PipelineInput(name: "in") { ScriptedReader(count: 5000, throwAt: position) }],
                                 into: { writer }) { _ in rejectionsSeen += 1 }
        }
        #expect(rejectionsSeen == position / 37)
        #expect(writer.aborted)
        #expect(!writer.finished)
    }

    @Test("a bad record without --rejects ends the run at once, without waiting for a stalled input",
          .timeLimit(.minutes(1)))
    func rejectionDoesNotWaitForInput() throws {
        let gate = Gate()
        defer { gate.release() }  // lets the abandoned reader thread end
        let writer = CollectingWriter()
        // Record 37 is a rejection; the input then stalls before record 41 (a half-filled batch).
        let reader = ScriptedReader(count: 5000, blockAt: 40, gate: gate)
        #expect(throws: TripError.self) { try run(reader, ahead: true, keepsGoing: false, writer: writer) }
        #expect(writer.aborted)
    }

    @Test("decoding ahead hands a store writer the same trips in order", arguments: [1, 256, 257, 3000])
    func decodeAhead(count: Int) throws {
        let here = CollectingWriter(), ahead = CollectingWriter()
        _ = try run(ScriptedReader(count: count), ahead: false, writer: here)
        _ = try run(ScriptedReader(count: count), ahead: true, writer: ahead)
        #expect(ahead.objects == here.objects)
        #expect(ahead.finished)
    }

    @Test("a store writer's error stops decoding ahead, aborts the writer and is thrown", arguments: [0, 255, 900])
    func writerError(at failAt: Int) throws {
        let writer = CollectingWriter()
        writer.failAt = failAt
        #expect(throws: CollectingWriter.Failure.self) { try run(ScriptedReader(count: 3000), ahead: true, writer: writer) }
        #expect(writer.objects.count == failAt)
        #expect(writer.aborted)
        #expect(!writer.finished)
    }
}
