import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

/// Measures the reader on a generated 100k-trip CSV. A measurement, not a check of speed (the machine is
/// shared): it runs when TRIPCONV_CSV_BENCH=1, best in a release build:
///
///     TRIPCONV_CSV_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter CSVBenchmark
@Suite("CSV benchmark")
struct CSVBenchmarkTests {
    static var enabled: Bool { ProcessInfo.processInfo.environment["TRIPCONV_CSV_BENCH"] == "1" }

    /// Realistic trips: short names, 0 to 5 items, an accommodation half the time.
    static func trips(_ count: Int) -> [ModelObject] {
        var random = SplitMix64(seed: 2024)
        let cities = ["Paris", "Rome", "Oslo", "New York", "Kyoto", "São Paulo", "Cape Town", "Reykjavík"]
        let things = ["Museum visit", "Dinner at the harbour", "Walk along the river, at dusk", "Concert \"live\"", "Day trip"]
        return (0..<count).map { i in
            let city = cities.randomElement(using: &random)!
            let items = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                CSVTrip.item(things.randomElement(using: &random)!, details: Bool.random(using: &random) ? "Booked via the hotel" : "",
                             reservation: Bool.random(using: &random), inPlan: Bool.random(using: &random))
            }
            let start = Int64.random(in: 1_600_000_000...1_800_000_000, using: &random) * 1000
            return CSVTrip.trip("Trip \(i) to \(city)", city, start: start, end: start + 432_000_000, items: items,
                                place: Bool.random(using: &random) ? CSVTrip.place("\(i) Main Street", "Hotel \(city)") : nil)
        }
    }

    @Test("reading a 100k-trip CSV: MB/s of the row reader and of the trip reader, in CPU time",
          .enabled(if: enabled, "a measurement, not a check: TRIPCONV_CSV_BENCH=1 runs it"))
    func measure() throws {
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = ProcessInfo.processInfo.environment["TRIPCONV_CSV_BENCH_FILE"] ?? dir.file("bench.csv")
        let trips = Self.trips(100_000)
        var clock = CPUClock.now
        var writer = try CSVFormat.makeWriter(.file(path), format: .csv, options: WriteOptions())
        for t in trips { try writer.write(t) }
        try writer.finish()
        let writeSeconds = Self.seconds(since: clock)
        let size = Double(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
        let mb = size / 1_000_000

        var best = (rows: Double.infinity, strings: Double.infinity, trips: Double.infinity)
        for _ in 0..<3 {
            clock = CPUClock.now
            let rows = CSVRowReader(try ByteInput(.file(path)), dialect: .csv)
            var cells = 0
            while try rows.nextRow() { cells += rows.cellCount }
            best.rows = min(best.rows, Self.seconds(since: clock))

            // The rows with every non-empty cell made a String: the reader's own work without the builder.
            clock = CPUClock.now
            let again = CSVRowReader(try ByteInput(.file(path)), dialect: .csv)
            var characters = 0
            while try again.nextRow() {
                for i in 0..<again.cellCount where !again.isEmpty(i) { characters += again.string(i).utf8.count }
            }
            best.strings = min(best.strings, Self.seconds(since: clock))
            #expect(characters > 0)

            clock = CPUClock.now
            var reader = try CSVFormat.makeReader(.file(path), format: .csv, options: ReadOptions())
            var count = 0
            while let item = try reader.next() { if case .trip = item { count += 1 } }
            best.trips = min(best.trips, Self.seconds(since: clock))
            #expect(count == trips.count)
            #expect(cells > trips.count * 6)
        }
        print(String(format: "CSV benchmark: %.1f MB, 100000 trips; write %.1f MB/s; rows %.1f MB/s; rows and strings %.1f MB/s; trips %.1f MB/s (%.0f trips/s)",
                     mb, mb / writeSeconds, mb / best.rows, mb / best.strings, mb / best.trips, Double(trips.count) / best.trips))
    }

    /// This thread's CPU time: the machine is shared, so wall time would count other processes' turns.
    struct CPUClock {
        static var now: Double {
            var t = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
    }

    static func seconds(since start: Double) -> Double { CPUClock.now - start }
}
