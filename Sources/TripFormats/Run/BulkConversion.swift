import Synchronization
import TripKit

/// Each input converted to its own file in a directory (`convert --output-dir DIR`: same base
/// name, the output format's extension), each deduplicated on its own, `jobs` inputs at once on a
/// `WorkerPool`. One bad input does not stop the others: its outcome carries its error. Made by
/// `RunOptions.bulkConversion(of:into:)`, which has checked the options and opened the rejects file.
///
/// ```swift
/// let bulk = try options.bulkConversion(of: inputs, into: "converted")
/// let outcomes = try bulk.run(observer: .silent)
/// try bulk.commitRejects()
/// ```
public struct BulkConversion: Sendable {
    public let inputs: [RunInput]
    public let directory: String
    public let format: Format
    let options: RunOptions
    /// The target schema, looked up once: the writers' options are made from it.
    let schema: any VersionedSchema.Type
    let rejects: RejectsFile?

    /// What became of one input: its summary, or the error that failed it.
    public struct Outcome: Sendable {
        public var input: String
        public var output: String
        public var summary: ConversionSummary?
        public var error: TripError?
        public var seconds: Double
    }

    /// The output path of an input: DIR/BASE.EXT (a tables layout's directory has no extension).
    public func outputPath(_ input: RunInput) -> String {
        var base: String
        if input.format == .postgresql {
            // An address has no file name: the store's schema names the output, else the format.
            base = options.reading.pgSchema ?? "postgresql"
        } else {
            let name = input.location.name.split(separator: "/").last.map(String.init) ?? "stdin"
            base = name
            if let dot = name.lastIndex(of: "."), dot != name.startIndex { base = String(name[..<dot]) }
        }
        let ext = options.csvLayout == .tables && (format == .csv || format == .tsv) ? "" : "." + format.extensions[0]
        return (directory.hasSuffix("/") ? directory : directory + "/") + base + ext
    }

    /// Makes the directory if need be and converts every input, in `options.jobs` workers; the
    /// outcomes are in the inputs' order. Throws only what stops every input: a directory that
    /// cannot be made, or two inputs that would be written to the same file.
    public func run(observer: some RunObserver) throws -> [Outcome] {
        try FileSystem.makeDirectory(directory)
        let outputs = inputs.map(outputPath)
        if let clash = Dictionary(grouping: outputs.indices, by: { outputs[$0] }).first(where: { $0.value.count > 1 }) {
            throw TripError.usage("inputs \(clash.value.map { inputs[$0].location.name }.joined(separator: " and ")) would both be written to \(clash.key)")
        }
        // Held while an observer is told of a failed input, so its lines are not interleaved.
        let failing = Mutex(())
        return WorkerPool.run(inputs.count, workers: options.jobs) { i in
            convert(inputs[i], to: outputs[i], observer: observer, failing: failing)
        }.map { $0.get() }
    }

    /// Makes the rejects file visible, once every input is done.
    public func commitRejects() throws {
        try rejects?.commit()
    }

    private func convert(_ input: RunInput, to output: String, observer: some RunObserver, failing: borrowing Mutex<Void>) -> Outcome {
        let started = monotonicSeconds()
        observer.starting(input)
        let readOptions = options.readOptions
        let format = self.format, rejects = self.rejects
        do {
            let budget = options.spillBudget(usingJobs: false)
            let writeOptions = options.writeOptions(schema, budget: budget)
            budget.onFirstSpill { observer.spilling(memoryLimit: budget.limit, directory: budget.directory) }
            var summary = try options.pipeline(usingJobs: false, budget: budget).run(
                [PipelineInput(name: input.location.name) {
                    observer.reading(try FormatFactory.makeReader(input.location, format: input.format, options: readOptions))
                }],
                into: { try FormatFactory.makeWriter(.file(output), format: format, options: writeOptions) },
                setAside: { entry in try rejects?.write(entry) })
            (summary.spilledTrips, summary.spilledBytes) = budget.spilled
            return Outcome(input: input.location.name, output: output, summary: summary, error: nil, seconds: monotonicSeconds() - started)
        } catch {
            let e = error as? TripError ?? TripError(.io, "\(error)")
            failing.withLock { _ in observer.failed(input, error: e) }
            return Outcome(input: input.location.name, output: output, summary: nil, error: e, seconds: monotonicSeconds() - started)
        }
    }
}
