import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Throughput, in a release build: a generated 100k-trip file written and read,
/// `TRIPCONV_YAML_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter YAMLPerformance`;
/// with `TRIPCONV_YAML_BENCH_FILE=PATH` also, a given file read with and without the parse thread,
/// and parsed alone (the parse thread's share). Run the tests one at a time (`--filter readOnly`):
/// swift-testing runs them in parallel.
@Suite("YAMLPerformance", .enabled(if: ProcessInfo.processInfo.environment["TRIPCONV_YAML_BENCH"] != nil,
                                    "set TRIPCONV_YAML_BENCH=1 (and build for release) to measure YAML throughput"))
struct YAMLPerformanceTests {
    static func makeTrips(_ count: Int) -> [ModelObject] {
        let words = ["Paris", "Lisbon", "Tokyo", "Visit the museum", "Eat pastries: twice", "Walk by the river", "no"]
        var rng = SplitMix64(seed: 7)
        return (0..<count).map { i in
            let items = (0..<Int.random(in: 0...4, using: &rng)).map { j in
                ModelObject(attributes: [.string("\(words[Int.random(in: 0..<words.count, using: &rng)]) \(j)"),
                                         .string("Book ahead: \(j)"), .bool(Bool.random(using: &rng)), .bool(false)])
            }
            let accommodation = Bool.random(using: &rng) ? ModelObject(attributes: [.string("12 Rue de Rivoli"), .string("Hotel du Louvre")]) : nil
            return ModelObject(attributes: [.string("Trip number \(i)"), .string(words[i % words.count]),
                                            .date(Timestamp(milliseconds: 1_714_555_800_000)),
                                            .date(Timestamp(milliseconds: 1_715_191_200_250)), .int(0)],
                               relationships: [.toMany(items), .toOne(accommodation)])
        }
    }

    @Test("reading a given file is measured", .enabled(if: ProcessInfo.processInfo.environment["TRIPCONV_YAML_BENCH_FILE"] != nil,
                                                      "set TRIPCONV_YAML_BENCH_FILE to a YAML trips file to time reading it alone"))
    func readOnly() throws {
        let path = ProcessInfo.processInfo.environment["TRIPCONV_YAML_BENCH_FILE"]!
        let start = Date()
        var reader = try FormatFactory.makeReader(.file(path), format: .yaml, options: ReadOptions())
        var count = 0
        while let item = try reader.next() {
            if case .trip = item { count += 1 }
        }
        #expect(count > 0)
        print("YAML read \(count) trips in \(String(format: "%.3f", Date().timeIntervalSince(start))) s")
    }

    @Test("reading a given file on one thread is measured", .enabled(if: ProcessInfo.processInfo.environment["TRIPCONV_YAML_BENCH_FILE"] != nil,
                                                                    "set TRIPCONV_YAML_BENCH_FILE to a YAML trips file to time reading it alone"))
    func readOneThread() throws {
        let path = ProcessInfo.processInfo.environment["TRIPCONV_YAML_BENCH_FILE"]!
        let start = Date()
        var reader = YAMLRecordReader(parser: YAMLEventParser(input: try ByteInput(.file(path))), options: ReadOptions(), threaded: false)
        var count = 0
        while let item = try reader.next() {
            if case .trip = item { count += 1 }
        }
        #expect(count > 0)
        print("YAML read \(count) trips on one thread in \(String(format: "%.3f", Date().timeIntervalSince(start))) s")
    }

    @Test("libyaml with the copy into batches alone (the parse thread's share) is measured",
          .enabled(if: ProcessInfo.processInfo.environment["TRIPCONV_YAML_BENCH_FILE"] != nil,
                   "set TRIPCONV_YAML_BENCH_FILE to a YAML trips file to time its parse alone"))
    func parseOnly() throws {
        let path = ProcessInfo.processInfo.environment["TRIPCONV_YAML_BENCH_FILE"]!
        let start = Date()
        let parser = YAMLEventParser(input: try ByteInput(.file(path)))
        var count = 0
        var batch = YAMLEventBatch()
        while try parser.parse(into: &batch) != .streamEnd {
            count += 1
            if batch.events.count == YAMLEventPipe.batchSize {
                // As the parse thread does: hand over the input read meanwhile (kept for rejected trips' text).
                var input = YAMLBatchInput(lowMark: parser.lowMark)
                parser.seal(into: &input)
                batch = YAMLEventBatch()
            }
        }
        #expect(count > 0)
        print("YAML parsed \(count) events in \(String(format: "%.3f", Date().timeIntervalSince(start))) s")
    }

    @Test("reading and writing 100k trips is measured")
    func throughput() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("yaml-bench-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trips = Self.makeTrips(100_000)

        let writeStart = Date()
        var writer = try FormatFactory.makeWriter(.file(path), format: .yaml, options: WriteOptions())
        for t in trips { try writer.write(t) }
        try writer.finish()
        let writeSeconds = Date().timeIntervalSince(writeStart)
        let size = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0)

        var best = Double.infinity
        for _ in 0..<3 {
            let start = Date()
            var reader = try FormatFactory.makeReader(.file(path), format: .yaml, options: ReadOptions())
            var count = 0
            while let item = try reader.next() {
                if case .trip = item { count += 1 }
            }
            best = min(best, Date().timeIntervalSince(start))
            #expect(count == trips.count)
        }
        let mb = size / 1_000_000
        print("YAML \(String(format: "%.1f", mb)) MB: read \(String(format: "%.1f", mb / best)) MB/s (\(String(format: "%.3f", best)) s), write \(String(format: "%.1f", mb / writeSeconds)) MB/s")
    }
}
