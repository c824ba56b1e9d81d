import Synchronization
import Testing
import TripKit
import TripFormats
import TripTestSupport

/// `RunOptions`, the one description of a run that `convert`, `--output-dir` and `migrate` build
/// from, and the bulk run it makes, without the command line.
@Suite("Run options")
struct RunOptionsTests {
    /// What an observer was told, in order.
    final class Recorder: RunObserver {
        private let events = Mutex<[String]>([])
        func starting(_ input: RunInput) { events.withLock { $0.append("start \(input.location.name)") } }
        func settingAside(_ record: SetAsideRecord) { events.withLock { $0.append("set aside \(record.origin.record)") } }
        func failed(_ input: RunInput, error: TripError) { events.withLock { $0.append("failed \(input.location.name)") } }
        var all: [String] { events.withLock { $0 } }
    }

    @Test("the readers, writers and pipeline take their options from the one description")
    func derived() throws {
        var options = RunOptions()
        options.reading.csvDelimiter = UInt8(ascii: ";")
        options.csvSafeFormulas = true
        options.jobs = 1
        options.rejects = "/dev/null"
        #expect(options.readOptions.parsesAhead == false && options.readOptions.csvSafeFormulas)
        #expect(options.writeOptions(try options.targetSchema()).csvDelimiter == UInt8(ascii: ";"))
        options.outputCSVDelimiter = UInt8(ascii: "|")
        options.jobs = 3
        #expect(options.readOptions.parsesAhead)
        #expect(options.writeOptions(try options.targetSchema()).csvDelimiter == UInt8(ascii: "|"))
        let one = options.pipeline(usingJobs: true), each = options.pipeline(usingJobs: false)
        #expect(one.keepsGoing && one.encodingThreads == 3 && one.decodesAhead)
        #expect(each.keepsGoing && each.encodingThreads == 1 && !each.decodesAhead)
        options.jobs = 0
        #expect(throws: TripError.self) { try options.conversion(to: .standardOutput) }
    }

    @Test("a bulk run converts each input to its own file, in order, and a bad input fails alone")
    func bulk() throws {
        let scratch = ScratchDirectory()
        var options = RunOptions()
        options.jobs = 2
        options.rejects = scratch.path("rejects.jsonl")
        let inputs = ["trips-v1.json", "broken.json", "bad-records.jsonl"].map {
            RunInput(.file(TestPaths.samples + "/" + $0), format: Format(path: $0)!)
        }
        let bulk = try options.bulkConversion(of: inputs, into: scratch.path("out"))
        let recorder = Recorder()
        let outcomes = try bulk.run(observer: recorder)
        try bulk.commitRejects()
        #expect(outcomes.map(\.output) == ["trips-v1.jsonl", "broken.jsonl", "bad-records.jsonl"].map { scratch.path("out/" + $0) })
        #expect(outcomes.map { $0.summary?.written } == [3, nil, 2])
        #expect(outcomes.map { $0.error?.kind } == [nil, .data, nil])
        #expect(recorder.all.filter { $0.hasPrefix("failed") } == ["failed \(inputs[1].location.name)"])
        #expect(recorder.all.filter { $0.hasPrefix("start") }.count == 3)
        #expect(scratch.contents("rejects.jsonl")?.split(separator: "\n").count == 3 + 2, "3 rejected, 2 merged")
        #expect(scratch.contents("out/broken.jsonl") == nil)
    }
}
