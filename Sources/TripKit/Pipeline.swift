// The whole tool on one screen:
//
//   inputs ──► Reader (one per format) ──► detect version ──► migration plan ──► dedupe ──► Writer
//
// Each input is read by its format's reader, which detects the input's version (a marker, else the
// field names) and yields trips in that version's schema, or rejections. Each input's trips are
// migrated on their own through the plan's stages to the target version (1.0.0 → 2.0.0 deduplicates
// by name), then all inputs are deduplicated together wherever the target's name is unique, and the
// writer gets one trip per name, in the order names first appeared. Where the target's name is not
// unique, nothing can merge across inputs, and each input's trips go to the writer as soon as its
// stages have run. Every trip read is accounted for: written, merged into another, dropped by the
// policy, or rejected.

/// An input to read: its name for messages, and how to open its reader.
public struct PipelineInput {
    public var name: String
    public var open: () throws -> any RecordReader
    /// An input named `name` (in messages and origins), whose reader `open` makes when the run gets to it.
    public init(name: String, open: @escaping () throws -> any RecordReader) { self.name = name; self.open = open }
}

/// One conversion: inputs through the plan to one writer.
///
/// Readers and writers come from TripFormats' `FormatFactory`; a library user's run of what
/// `tripconv old.json -o trips.csv --dedupe last --rejects bad.jsonl` does looks like this:
///
/// ```swift
/// var pipeline = Pipeline()
/// pipeline.policy = .last
/// pipeline.keepsGoing = true          // bad records go to `setAside`, the run goes on
/// let input = PipelineInput(name: "old.json") {
///     try FormatFactory.makeReader(.file("old.json"), format: .json, options: ReadOptions())
/// }
/// let summary = try pipeline.run([input], into: {
///     try FormatFactory.makeWriter(.file("trips.csv"), format: .csv, options: WriteOptions(policy: .last))
/// }, setAside: { record in print("\(record.place): \(record.kind): \(record.reason)") })
/// print(summary.read, summary.written)  // read = written + merged + dropped + rejected
/// ```
public struct Pipeline {
    public var targetVersion: SchemaVersion = TripMigrationPlan.currentSchema.versionIdentifier
    public var policy: DeduplicationPolicy = .merge
    /// Bad records go to the `setAside` callback and the run goes on; without it, the first one fails the run.
    public var keepsGoing = false
    /// Threads that format trips for writers that can take formatted bytes (JSON, JSON Lines, CSV
    /// rows); 1 formats on the calling thread. Only the calling thread writes.
    public var encodingThreads = 1
    /// Whether trips are decoded ahead on a thread of their own while this one hands earlier ones to
    /// a writer that takes objects (a store). Trips and errors arrive in the order they would without.
    public var decodesAhead = false
    /// Where each input's trips, then all of them, are held between reading and writing.
    package var holding: () -> any TripHolding = { InMemoryTrips() }
    /// Told as the run moves past reading an input (for a progress bar: after a spill these take a while).
    package var entering: (RunPhase) -> Void = { _ in }

    /// A conversion to the current schema under `--dedupe merge`, failing on the first bad record.
    public init() {}

    /// Runs the conversion. `setAside` receives every record not written as read: each one a reader
    /// rejected, as it is read (under `keepsGoing`); then, once the writer has finished, each one
    /// merged away or dropped, and each one the writer refused.
    /// On a thrown error the writer has been aborted: nothing of this run is visible.
    public func run(_ inputs: [PipelineInput], into makeWriter: () throws -> any RecordWriter,
                    setAside: (SetAsideRecord) throws -> Void = { _ in }) throws -> ConversionSummary {
        var remaining = inputs[...]
        return try run(inputs: { remaining.popFirst() }, into: makeWriter, setAside: setAside)
    }

    /// Runs the conversion over the inputs `nextInput` gives one by one, until it gives nil: an
    /// input is read to its end before the next is asked for (an archive's members are read so).
    public func run(inputs nextInput: () throws -> PipelineInput?, into makeWriter: () throws -> any RecordWriter,
                    setAside: (SetAsideRecord) throws -> Void = { _ in }) throws -> ConversionSummary {
        guard let targetSchema = TripMigrationPlan.schema(for: targetVersion) else {
            throw TripError.usage("unknown target version \(targetVersion)")
        }
        let migrator = Migrator(TripMigrationPlan.self)
        var summary = ConversionSummary(targetVersion: targetVersion, policy: policy)
        var writer = try makeWriter()
        // Where the target's name is not unique, nothing merges across inputs: each input's trips
        // go to the writer as soon as its stages have run (its version is final only at its end),
        // unless the writer must know every trip's shape first.
        let streamsInputs = targetSchema.rootEntity.uniqueAttribute == nil && !writer.needsShape
        let speed = WritingSpeed(encodingThreads: encodingThreads, decodesAhead: decodesAhead)
        var streamed = 0
        do {
            let all = MigrationContext(schema: targetSchema, policy: policy, holding: holding())
            while let input = try nextInput() {
                // Read: one input, detected on its own.
                var reader = try input.open()
                // The layout is known once the reader has seen the records; the context takes it then.
                let context = MigrationContext(schema: targetSchema, policy: policy, holding: holding())
                var inputSummary = InputSummary(name: input.name)
                while let item = try reader.next() {
                    switch item {
                    case .trip(let record):
                        try context.insert(record.object, origin: record.origin)
                    case .rejected(let rejection):
                        guard keepsGoing else {
                            throw TripError.data("\(rejection.place): \(rejection.reason)",
                                                 notes: ["pass --rejects FILE to set bad records aside and go on"])
                        }
                        inputSummary.rejected += 1
                        try setAside(rejection)
                    }
                }
                let detection = reader.detection
                inputSummary.detection = detection
                entering(.migrating)
                inputSummary.read = context.count + inputSummary.rejected
                // Migrate: from the input's version through the plan's stages to the target.
                let version = detection.version ?? targetVersion
                let layout = detection.recordsVersion ?? version
                context.schema = TripMigrationPlan.schema(for: layout)!
                if layout != version {
                    let mapping = try LightweightMapping(from: context.schema, to: TripMigrationPlan.schema(for: version)!)
                    try context.transform(mapping.apply)
                    context.schema = TripMigrationPlan.schema(for: version)!
                }
                let before = context.trips.setAsideCount
                let steps = try migrator.migrate(context, to: targetVersion)
                inputSummary.stages = steps.map(\.description)
                inputSummary.deduplicatedInStages = context.trips.setAsideCount - before
                if streamsInputs {
                    entering(.writing)
                    writer = try context.trips.write(into: writer, speed: speed)
                    streamed += context.count
                    try context.trips.forEachSetAside { try all.trips.appendSetAside([$0]) }
                } else {
                    try all.absorb(context)
                }
                summary.inputs.append(inputSummary)
            }
            // Dedupe: one trip per name across all inputs, wherever the target says the name is unique.
            if let unique = targetSchema.rootEntity.uniqueAttribute {
                let before = all.trips.setAsideCount
                entering(.deduplicating)
                try all.deduplicate(targetSchema.rootEntity.name, by: unique.name)
                summary.deduplicatedAcrossInputs = all.trips.setAsideCount - before
            }
            // Write.
            if !streamsInputs {
                // The longest lists take a pass over the trips (over a spill file, a read of it all).
                entering(.writing)
                if writer.needsShape {
                    writer.expect(OutputShape(trips: all.count, longestRelationships: try all.longestRelationships()))
                }
                writer = try all.trips.write(into: writer, speed: speed)
            }
            try writer.finish()
            summary.written = all.count + streamed
            if let store = writer as? any LedgerKeeping {
                // Every entry is a trip the writer did not write as given: merged, dropped or rejected.
                // The holding keeps them with its own set-aside records (on disk past a bound).
                try store.forEachLedgerEntry { entry in
                    try all.trips.appendSetAside([entry])
                    summary.written -= 1
                }
                summary.replacedInStore = store.replacedStoredTrips
            }
            try all.trips.forEachSetAside { entry in
                switch entry.kind {
                case .merged: summary.merged += 1
                case .dropped: summary.dropped += 1
                case .rejected: summary.rejectedByWriter += 1
                }
                try setAside(entry)
            }
            return summary
        } catch {
            writer.abort()
            throw error
        }
    }

    /// The earlier spelling of `run(_:into:setAside:)`, whose callback gets merged and dropped records too.
    @available(*, deprecated, renamed: "run(_:into:setAside:)")
    @_disfavoredOverload
    public func run(_ inputs: [PipelineInput], into makeWriter: () throws -> any RecordWriter,
                    rejects: (SetAsideRecord) throws -> Void) throws -> ConversionSummary {
        try run(inputs, into: makeWriter, setAside: rejects)
    }
}

/// A writer that merges or drops records on its own (an upsert into an existing store) and says which.
/// An entry's origin is the one the trip was given to `write(_:origin:)` with (the pipeline gives
/// each trip's own: input file, line, record), or `record` N for the Nth trip given to `write(_:)`.
public protocol LedgerKeeping {
    /// Calls `body` with each trip the writer set aside, in the order it met them. A writer may
    /// keep them on disk past a bound, so going through them can fail.
    func forEachLedgerEntry(_ body: (SetAsideRecord) throws -> Void) throws
    /// Stored trips that written trips replaced (an upsert under `last`): the written trips count
    /// as written, and the replaced ones were no input's, so they are only counted here.
    var replacedStoredTrips: Int { get }
}

extension LedgerKeeping {
    /// None, for a writer that never replaces stored trips.
    public var replacedStoredTrips: Int { 0 }
    /// Every entry, in memory: for tests and small runs.
    public var ledger: [SetAsideRecord] {
        get throws {
            var all: [SetAsideRecord] = []
            try forEachLedgerEntry { all.append($0) }
            return all
        }
    }
}

/// What a run is doing once an input has been read, as `Pipeline` tells it.
public enum RunPhase: String, Sendable {
    /// Running an input's stages, just read, to the target version.
    case migrating
    /// Deduplicating the trips of every input by name.
    case deduplicating
    /// Writing the trips to the output.
    case writing
}
