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
    /// The directories this run made, so that those no output went into are removed at its end.
    let made = DirectoriesMade()

    /// What became of one input: its summary, or the error that failed it.
    public struct Outcome: Sendable {
        public var input: String
        public var output: String
        public var summary: ConversionSummary?
        public var error: TripError?
        public var seconds: Double
    }

    /// The output path of an input: DIR/BASE.EXT (a tables layout's directory has no extension);
    /// a file found under a directory given, under its path there (`subdirectory`); an archive's
    /// member's under its path in the archive, DIR/2019/BASE.EXT (and its archive's subdirectory).
    /// BASE is the name without its format's extension, and its compression's (`trips.jsonl.gz`
    /// gives `trips`).
    public func outputPath(_ input: RunInput) -> String {
        Self.outputPath(input, in: directory, format: format, tables: options.csvLayout == .tables, pgSchema: options.reading.pgSchema)
    }

    /// `outputPath(_:)`'s rule, for any run that writes each input to its own output in `directory`
    /// (an object run's too): `tables`, CSV and TSV are written as a directory without an extension.
    public static func outputPath(_ input: RunInput, in directory: String, format: Format, tables: Bool, pgSchema: String?) -> String {
        var base: String
        var under = input.subdirectory
        if input.format == .postgresql {
            // An address has no file name: the store's schema names the output, else the format.
            base = pgSchema ?? "postgresql"
        } else {
            var path = input.location.name
            if case .member(let member) = input.location {
                path = member.path
                if let slash = path.lastIndex(of: "/") { under += String(path[...slash]) }
            }
            if let named = Compression.named(by: path) { path = named.inner }
            let name = path.split(separator: "/").last.map(String.init) ?? "stdin"
            base = name
            if let dot = name.lastIndex(of: "."), dot != name.startIndex { base = String(name[..<dot]) }
        }
        let ext = tables && (format == .csv || format == .tsv) ? "" : "." + format.extensions[0]
        return (directory.hasSuffix("/") ? directory : directory + "/") + under + base + ext
    }

    /// Converts every input, in `options.jobs` workers; the outcomes are in the inputs' order, an
    /// archive's members in the archive's order in its place. An archive's members are converted
    /// one after another by one worker (they are read from the archive in turn). The directory,
    /// and those under it, are made as outputs need them: a run that writes nothing makes none.
    /// Throws only what stops every input, before any is read: inputs that would be written to the
    /// same file; and, after, `ExpandedInputs.nothingToRead` when no input or member was there to
    /// read. A member that would be written where another input is fails on its own.
    public func run(observer: some RunObserver) throws -> [Outcome] {
        if inputs.isEmpty { throw ExpandedInputs.nothingToRead }
        let outputs = inputs.map { $0.isArchive ? nil : outputPath($0) }
        try refuseClashes(outputs)
        // The outputs taken so far: members take theirs as they are met.
        let taken = Mutex(Set(outputs.compactMap { $0 }))
        // Held while an observer is told of a failed input, so its lines are not interleaved.
        let failing = Mutex(())
        let outcomes = WorkerPool.run(inputs.count, workers: options.jobs) { i in
            if let output = outputs[i] {
                if let failed = prepare(inputs[i], output: output, claimed: true, observer: observer, failing: failing) { return [failed] }
                return [convert(inputs[i], to: output, observer: observer, failing: failing)]
            }
            return convertMembers(of: inputs[i], taken: taken, observer: observer, failing: failing)
        }.flatMap { $0.get() }
        // A folder made for inputs that all failed is not left behind, empty.
        made.removeEmpty()
        if outcomes.isEmpty { throw ExpandedInputs.nothingToRead }
        return outcomes
    }

    /// Refuses inputs that would be written to the same file, naming every such file with how many
    /// inputs and which (the first in the message, any other in its notes).
    private func refuseClashes(_ outputs: [String?]) throws {
        var order: [String] = []
        var by: [String: [Int]] = [:]
        for (i, output) in outputs.enumerated() {
            guard let output else { continue }
            if by[output] == nil { order.append(output) }
            by[output, default: []].append(i)
        }
        let clashes = order.filter { by[$0]!.count > 1 }.map { output in
            let names = by[output]!.map { inputs[$0].location.name }
            let listed = names.count == 2 ? names.joined(separator: " and ")
                                          : names.dropLast().joined(separator: ", ") + " and " + names.last!
            return names.count == 2 ? "inputs \(listed) would both be written to \(output)"
                                    : "\(names.count) inputs, \(listed), would all be written to \(output)"
        }
        guard let first = clashes.first else { return }
        throw TripError.usage(first, notes: Array(clashes.dropFirst()))
    }

    /// Makes the directories an input's output goes in; nil when it may be written, else the
    /// input's failed outcome: the output was not `claimed` (another input's), or its directory
    /// cannot be made.
    private func prepare(_ input: RunInput, output: String, claimed: Bool, observer: some RunObserver,
                         failing: borrowing Mutex<Void>) -> Outcome? {
        do {
            guard claimed else {
                throw TripError.usage("\(input.location.name): another input is written to \(output)")
            }
            try makeDirectories(for: output)
            return nil
        } catch {
            let e = error as? TripError ?? TripError(.cantCreate, "\(error)")
            failing.withLock { _ in observer.failed(input, error: e) }
            return Outcome(input: input.location.name, output: output, summary: nil, error: e, seconds: 0)
        }
    }

    /// An archive's members, each to its own output, in the archive's order. The archive's own
    /// failure (it cannot be read on, or holds a refused member) is an outcome of its own, after
    /// the members converted before it.
    private func convertMembers(of archive: RunInput, taken: borrowing Mutex<Set<String>>, observer: some RunObserver,
                                failing: borrowing Mutex<Void>) -> [Outcome] {
        var outcomes: [Outcome] = []
        let started = monotonicSeconds()
        var members = ExpandedInputs([archive], options: options.readOptions) { observer.foundNothing(in: $0, passedOver: $1) }
        do {
            while let member = try members.next() {
                let output = outputPath(member)
                let claimed = taken.withLock { $0.insert(output).inserted }
                if let failed = prepare(member, output: output, claimed: claimed, observer: observer, failing: failing) {
                    outcomes.append(failed)
                    continue
                }
                outcomes.append(convert(member, to: output, observer: observer, failing: failing))
            }
        } catch {
            let e = error as? TripError ?? TripError(.io, "\(error)")
            failing.withLock { _ in observer.failed(archive, error: e) }
            outcomes.append(Outcome(input: archive.location.name, output: directory, summary: nil, error: e, seconds: monotonicSeconds() - started))
        }
        return outcomes
    }

    /// Makes `directory` and the directories between it and an output (a member's path's
    /// directories, which `ArchiveMembers` has checked climb nowhere; a file's under the directory
    /// given), each unless it is there; those it makes are noted in `made`.
    private func makeDirectories(for output: String) throws {
        let root = directory.hasSuffix("/") ? directory : directory + "/"
        var paths = [directory]
        var path = root
        for part in output.dropFirst(root.count).split(separator: "/").dropLast() {
            path += part
            paths.append(path)
            path += "/"
        }
        for path in paths where FileSystem.kind(path) == nil {
            do {
                try FileSystem.makeDirectory(path)
                made.add(path)
            } catch where FileSystem.kind(path) == .directory {
                // Another worker made it first.
            }
        }
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
                    observer.reading(try input.makeReader(options: readOptions))
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

/// The directories a bulk run made (workers add to it at once), removed at its end when empty.
final class DirectoriesMade: Sendable {
    private let paths = Mutex<[String]>([])

    func add(_ path: String) { paths.withLock { $0.append(path) } }

    /// Removes those that hold nothing, the deepest first (rmdir(2) leaves any that hold something).
    func removeEmpty() {
        for path in paths.withLock({ $0 }).sorted(by: { $0.count > $1.count }) { FileSystem.removeDirectory(path) }
    }
}
