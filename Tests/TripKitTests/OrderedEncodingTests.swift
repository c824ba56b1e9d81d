import Testing
import TripKit
import TripTestSupport

/// Trips formatted on worker threads must come out exactly as one thread writes them, in order,
/// and a write error must stop the workers and reach the caller.
@Suite("Formatting on several threads")
struct OrderedEncodingTests {
    /// Writes each trip's name and destination on a line; fails on demand at the Nth trip.
    final class LineWriter: RecordEncoding {
        var bytes: [UInt8] = []
        var tripsWritten = 0
        var batches = 0
        var failAt: Int?
        var finished = false, aborted = false

        struct Failure: Error {}

        static func line(_ o: ModelObject, into out: inout [UInt8]) {
            out.append(contentsOf: (o.attributes[0].stringValue ?? "-").utf8)
            out.append(UInt8(ascii: "\t"))
            out.append(contentsOf: (o.attributes[1].stringValue ?? "-").utf8)
            out.append(10)
        }

        func write(_ object: ModelObject) throws {
            if let failAt, tripsWritten >= failAt { throw Failure() }
            LineWriter.line(object, into: &bytes)
            tripsWritten += 1
        }
        func makeEncoder() -> @Sendable (_ trip: (Int) -> ModelObject, _ range: Range<Int>, _ out: inout [UInt8]) -> Void {
            { trip, range, out in for i in range { LineWriter.line(trip(i), into: &out) } }
        }
        func writeEncoded(_ encoded: [UInt8], trips: Int) throws {
            if let failAt, tripsWritten + trips > failAt { throw Failure() }
            bytes += encoded
            tripsWritten += trips
            batches += 1
        }
        func finish() throws { finished = true }
        func abort() { aborted = true }
    }

    func run(trips n: Int, threads: Int, writer: LineWriter) throws -> ConversionSummary {
        let items: [ReadItem] = (0..<n).map { i in
            .trip(TripRecord(object: object(TestTrip(name: "trip \(i)", destination: "place \(i % 7) ü\"")),
                             origin: RecordOrigin(source: "in", record: i + 1)))
        }
        var pipeline = Pipeline()
        pipeline.encodingThreads = threads
        return try pipeline.run([PipelineInput(name: "in") {
            ArrayReader(items: items, detection: Detection(format: "test", version: SchemaVersion(3, 0, 0)))
        }], into: { writer })
    }

    @Test("the bytes are those of one thread, in order, at batch boundaries and beyond",
          arguments: [0, 1, 255, 256, 257, 513, 3000])
    func sameBytes(trips: Int) throws {
        let one = LineWriter()
        _ = try run(trips: trips, threads: 1, writer: one)
        #expect(one.tripsWritten == trips)
        #expect(one.batches == 0)  // one thread: trips go through write()
        for threads in [2, 3, 8] {
            let many = LineWriter()
            let summary = try run(trips: trips, threads: threads, writer: many)
            #expect(many.bytes == one.bytes)
            #expect(many.tripsWritten == trips)
            #expect(summary.written == trips)
            #expect(many.finished)
            if trips > 256 { #expect(many.batches == (trips + 255) / 256) }
        }
    }

    @Test("a write error stops the workers, aborts the writer and is thrown", arguments: [1, 300, 2000])
    func writeError(at failAt: Int) throws {
        let writer = LineWriter()
        writer.failAt = failAt
        #expect(throws: LineWriter.Failure.self) { try run(trips: 5000, threads: 4, writer: writer) }
        #expect(writer.aborted)
        #expect(!writer.finished)
        #expect(writer.tripsWritten <= failAt)
    }
}
