import Testing
import TripKit

/// Decoding ahead (trips decoded for a store writer on a thread of their own) must not change what is
/// written, rejected or thrown, nor its order.
@Suite("Decoding ahead on a thread")
struct DecodeAheadTests {
    /// Yields `count` items, every 37th a rejection, names repeating every 1000.
    struct ScriptedReader: RecordReader {
        var count: Int
        var position = 0
        var detection = Detection(format: "test", version: SchemaVersion(3, 0, 0))

        mutating func next() throws -> ReadItem? {
            guard position < count else { return nil }
            defer { position += 1 }
            let origin = RecordOrigin(source: "in", record: position + 1, line: position + 1)
            if position % 37 == 36 {
                return .rejected(SetAsideRecord(kind: .rejected, origin: origin, reason: "bad record \(position)"))
            }
            return .trip(TripRecord(object: object(TestTrip(name: "trip \(position % 1000)", destination: "d\(position)")),
                                    origin: origin))
        }
    }

    func run(_ count: Int, ahead: Bool, writer: CollectingWriter) throws -> (ConversionSummary, [String]) {
        var pipeline = Pipeline()
        pipeline.decodesAhead = ahead
        pipeline.keepsGoing = true
        var ledger: [String] = []
        let summary = try pipeline.run([PipelineInput(name: "in") { ScriptedReader(count: count) }], into: { writer }) { entry in
            ledger.append("\(entry.kind) \(entry.origin): \(entry.reason)")
        }
        return (summary, ledger)
    }

    @Test("a store writer is handed the same trips in order, and the ledger and counts are the same",
          arguments: [0, 1, 255, 256, 257, 513, 3000])
    func sameTrips(count: Int) throws {
        let here = CollectingWriter(), ahead = CollectingWriter()
        let (s1, l1) = try run(count, ahead: false, writer: here)
        let (s2, l2) = try run(count, ahead: true, writer: ahead)
        #expect(ahead.objects == here.objects)
        #expect(l2 == l1)
        #expect(s2.written == s1.written)
        #expect(s2.read == count)
        #expect(s2.read == s2.written + s2.merged + s2.dropped + s2.rejected)
        #expect(ahead.finished)
    }

    @Test("a store writer's error stops decoding ahead, aborts the writer and is thrown", arguments: [0, 255, 256, 900])
    func writerError(at failAt: Int) throws {
        let writer = CollectingWriter()
        writer.failAt = failAt
        #expect(throws: CollectingWriter.Failure.self) { try run(3000, ahead: true, writer: writer) }
        #expect(writer.objects.count == failAt)
        #expect(writer.aborted)
        #expect(!writer.finished)
    }
}
