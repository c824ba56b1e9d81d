import TripKit

/// Every input through the pipeline into one output, ready to run: made by
/// `RunOptions.conversion(to:)`, which has checked the options and opened the rejects file.
///
/// ```swift
/// let summary = try options.conversion(to: .standardOutput).run(inputs, observer: .silent)
/// ```
public struct Conversion {
    /// Where the trips go, and in which format.
    public let output: OutputLocation
    public let format: Format
    let pipeline: Pipeline
    /// The memory budget the pipeline's holdings share (and record their spills in).
    let budget: SpillBudget
    let readOptions: ReadOptions
    let writeOptions: WriteOptions
    let rejects: RejectsFile?

    /// Reads the inputs in order and writes the trips, each record set aside going to the
    /// observer and then to the rejects file. The rejects file is committed when the run succeeds,
    /// and discarded when it fails, as the output is.
    ///
    /// An existing store migrated in place first (`migratesStore`) is accounted for as `tripconv
    /// migrate` accounts for it, before any input is read: `migrated` gets the migration's report
    /// (its stages, counts and backup), then the stored trips it merged or dropped go to the
    /// observer and the rejects file, ahead of the inputs' records. They are not the inputs' trips,
    /// so the summary's counts leave them out. The migration and its backup are undone when the
    /// run fails.
    public func run(_ inputs: [RunInput], observer: some RunObserver = .silent,
                    migrated: (StoreMigrationReport) -> Void = { _ in }) throws -> ConversionSummary {
        let readOptions = self.readOptions, writeOptions = self.writeOptions
        let output = self.output, format = self.format, rejects = self.rejects
        var summary: ConversionSummary
        let budget = self.budget
        budget.onFirstSpill { observer.spilling(memoryLimit: budget.limit, directory: budget.directory) }
        var pipeline = self.pipeline
        pipeline.entering = { observer.entering($0) }
        do {
            if inputs.isEmpty { throw ExpandedInputs.nothingToRead }
            // An archive's members are inputs of their own, met as the run gets to them.
            var expanded = ExpandedInputs(inputs, options: readOptions) { observer.foundNothing(in: $0, passedOver: $1) }
            summary = try pipeline.run(
                inputs: {
                    guard let input = try expanded.next() else {
                        // Nothing at all to read (every archive's files passed over): the output is not made.
                        if expanded.given == 0 { throw ExpandedInputs.nothingToRead }
                        return nil
                    }
                    return PipelineInput(name: input.location.name) {
                        observer.starting(input)
                        return observer.reading(try input.makeReader(options: readOptions))
                    }
                },
                into: {
                    let writer = try FormatFactory.makeWriter(output, format: format, options: writeOptions)
                    if let store = writer as? any InPlaceMigrating, let report = store.migration {
                        migrated(report)
                        try store.forEachMigrationEntry { entry in
                            observer.settingAside(entry)
                            try rejects?.write(entry)
                        }
                    }
                    return writer
                },
                setAside: { entry in
                    observer.settingAside(entry)
                    try rejects?.write(entry)
                })
        } catch {
            rejects?.discard()
            throw error
        }
        try rejects?.commit()
        (summary.spilledTrips, summary.spilledBytes) = budget.spilled
        return summary
    }
}
