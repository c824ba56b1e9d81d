#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TripKit
import TripFormats

/// `--output-dir DIR`: each input converted to its own output file (same base name, the output
/// format's extension), each deduplicated on its own, `--jobs N` at once. One bad input does not stop
/// the others; the exit status is the first failed input's, and the report says which failed.
struct BulkRun {
    var inputs: [ResolvedInput]
    var directory: String
    var format: Format
    var jobs: Int
    var pipeline: Pipeline
    var readOptions: ReadOptions
    var writeOptions: WriteOptions
    var rejects: ByteOutput?
    var verbose: Bool
    var progress: ProgressBar?

    struct Outcome: Sendable {
        var input: String
        var output: String
        var summary: ConversionSummary?
        var error: TripError?
        var seconds: Double
    }

    /// The output path of an input: DIR/BASE.EXT.
    func outputPath(_ input: ResolvedInput) -> String {
        let name = input.location.name.split(separator: "/").last.map(String.init) ?? "stdin"
        var base = name
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { base = String(name[..<dot]) }
        let ext = writeOptions.csvLayout == .tables && (format == .csv || format == .tsv) ? "" : "." + format.extensions[0]
        return (directory.hasSuffix("/") ? directory : directory + "/") + base + ext
    }

    func run() throws -> [Outcome] {
        var st = stat()
        if stat(directory, &st) != 0 {
            guard mkdir(directory, 0o755) == 0 else {
                throw TripError(.cantCreate, "\(directory): cannot create: \(String(cString: strerror(errno)))")
            }
        } else if (st.st_mode & S_IFMT) != S_IFDIR {
            throw TripError(.cantCreate, "\(directory): exists and is not a directory")
        }
        let outputs = inputs.map(outputPath)
        if let clash = Dictionary(grouping: outputs.indices, by: { outputs[$0] }).first(where: { $0.value.count > 1 }) {
            throw TripError.usage("inputs \(clash.value.map { inputs[$0].location.name }.joined(separator: " and ")) would both be written to \(clash.key)")
        }
        let results = Results(count: inputs.count)
        let next = Counter()
        let work = { [self] in
            while let i = next.take(below: inputs.count) {
                results.set(i, convert(i, output: outputs[i], results: results))
            }
        }
        var workers: [StartedThread] = []
        for _ in 0..<max(1, min(jobs, inputs.count)) {
            guard let worker = Threads.start(work) else { break }
            workers.append(worker)
        }
        // No thread could be started: convert here.
        if workers.isEmpty { work() }
        for w in workers { w.join() }
        return results.all
    }

    private func convert(_ i: Int, output: String, results: Results) -> Outcome {
        let input = inputs[i]
        let started = monotonicSeconds()
        progress?.setCurrent(input.location.name)
        let readOptions = self.readOptions
        let writeOptions = self.writeOptions
        let format = self.format
        do {
            let summary = try pipeline.run(
                [PipelineInput(name: input.location.name) {
                    CountingReader(base: try FormatFactory.makeReader(input.location, format: input.format, options: readOptions))
                }],
                into: { try FormatFactory.makeWriter(.file(output), format: format, options: writeOptions) },
                setAside: { entry in try results.serialized { try rejects?.write(RejectsFile.line(entry)) } })
            return Outcome(input: input.location.name, output: output, summary: summary, error: nil, seconds: monotonicSeconds() - started)
        } catch {
            let e = error as? TripError ?? TripError(.io, "\(error)")
            results.serialized {
                Diagnostics.print("tripconv: \(e.message)")
                for n in e.notes { Diagnostics.print("note: \(n)") }
            }
            return Outcome(input: input.location.name, output: output, summary: nil, error: e, seconds: monotonicSeconds() - started)
        }
    }

    /// The summary line of a bulk run.
    static func line(_ outcomes: [Outcome], elapsed: Double) -> String {
        let ok = outcomes.filter { $0.error == nil }
        let read = ok.reduce(0) { $0 + ($1.summary?.read ?? 0) }
        let written = ok.reduce(0) { $0 + ($1.summary?.written ?? 0) }
        let merged = ok.reduce(0) { $0 + ($1.summary?.merged ?? 0) }
        let dropped = ok.reduce(0) { $0 + ($1.summary?.dropped ?? 0) }
        let rejected = ok.reduce(0) { $0 + ($1.summary?.rejected ?? 0) }
        return "converted \(ok.count) of \(outcomes.count) inputs, \(outcomes.count - ok.count) failed; read \(read); merged \(merged); dropped \(dropped); rejected \(rejected); wrote \(written); \(String(format3: elapsed)) s"
    }

    /// `--report` for a bulk run: per input its format, version, evidence, counts, time and status; and the totals.
    static func writeReport(_ path: String, _ outcomes: [Outcome], elapsed: Double) throws {
        let ok = outcomes.filter { $0.error == nil }
        func total(_ f: (ConversionSummary) -> Int) -> JSONText.Node { .int(ok.reduce(0) { $0 + ($1.summary.map(f) ?? 0) }) }
        let node = JSONText.Node.object([
            ("status", .string(ok.count == outcomes.count ? "ok" : "failed")),
            ("inputs", .int(outcomes.count)), ("converted", .int(ok.count)), ("failed", .int(outcomes.count - ok.count)),
            ("read", total { $0.read }), ("written", total { $0.written }), ("merged", total { $0.merged }),
            ("dropped", total { $0.dropped }), ("rejected", total { $0.rejected }),
            ("replacedInStore", total { $0.replacedInStore }),
            ("perInput", .array(outcomes.map { o in
                var pairs: [(String, JSONText.Node)] = [
                    ("input", .string(o.input)), ("output", .string(o.output)),
                    ("status", .string(o.error == nil ? "ok" : "failed")),
                    ("seconds", .string(String(format3: o.seconds))),
                ]
                if let e = o.error { pairs += [("error", .string(e.message)), ("exitStatus", .int(Int(e.kind.rawValue)))] }
                if let s = o.summary, let i = s.inputs.first {
                    pairs += [("format", .string(i.detection.format)),
                              ("version", i.detection.version.map { .string($0.description) } ?? .null),
                              ("evidence", .string(i.detection.evidence.description)),
                              ("read", .int(s.read)), ("written", .int(s.written)), ("merged", .int(s.merged)),
                              ("dropped", .int(s.dropped)), ("rejected", .int(s.rejected)),
                              ("replacedInStore", .int(s.replacedInStore)),
                              ("stages", .array(i.stages.map { .string($0) }))]
                }
                return .object(pairs)
            })),
            ("elapsedSeconds", .string(String(format3: elapsed))),
        ])
        let output = try ByteOutput(.file(path))
        try output.write(node.render(indent: 2) + "\n")
        try output.commit()
    }
}

/// The next index to convert, shared by the workers.
final class Counter: Sendable {
    private let value = Mutex(0)
    func take(below limit: Int) -> Int? {
        value.withLock { value in
            guard value < limit else { return nil }
            defer { value += 1 }
            return value
        }
    }
}

/// The outcomes, and the lock that serializes the shared rejects file and messages.
final class Results: Sendable {
    private let outcomes: Mutex<[BulkRun.Outcome?]>
    /// Held while a worker writes to the rejects file or prints a message.
    private let output = Mutex(())
    init(count: Int) { outcomes = Mutex(Array(repeating: nil, count: count)) }
    func set(_ i: Int, _ o: BulkRun.Outcome) { outcomes.withLock { $0[i] = o } }
    var all: [BulkRun.Outcome] { outcomes.withLock { $0.map { $0! } } }
    /// Runs `body` while no other worker writes to the rejects file or prints.
    func serialized<E: Error>(_ body: () throws(E) -> Void) throws(E) {
        try output.withLock { _ throws(E) in try body() }
    }
}
