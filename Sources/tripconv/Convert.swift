import ArgumentParser
import TripKit
import TripFormats

/// `tripconv convert`: inputs through the plan to one output.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert trips between formats and schema versions.",
        discussion: """
            No INPUT, or -, reads standard input; a directory means the files under it with known extensions, \
            in path order. Several inputs are read in order, each detected and migrated on its own, then \
            deduplicated across all of them. No -o, or -o -, writes standard output (JSON Lines unless --to says).
            """)

    @Argument(help: ArgumentHelp("Input files or directories; - or none for standard input.", valueName: "input"))
    var inputs: [String] = []

    @Option(name: .short, help: ArgumentHelp("The output file or store; - for standard output.", valueName: "output"))
    var output: String?

    @OptionGroup var reading: ReadingOptions

    @Option(name: .long, help: "The output format, where no extension says.")
    var to: Format?

    @Option(name: .long, help: ArgumentHelp("Write this schema version (an older one reverses the renames).", valueName: "version"))
    var targetVersion: SchemaVersion = TripMigrationPlan.currentSchema.versionIdentifier

    @Option(name: .long, help: ArgumentHelp("What to do with trips that share a name where names are unique: merge, last, first, fail.", valueName: "policy"))
    var dedupe: DeduplicationPolicy = .merge

    @Option(name: .long, help: ArgumentHelp("Set bad records aside in FILE (JSON Lines: kind, origin, reason and the record's source text) and go on.", valueName: "file"))
    var rejects: String?

    @Flag(name: .long, help: "Migrate an existing store older than the target version in place first.")
    var migrate = false

    @Option(name: .long, help: ArgumentHelp("CSV and TSV output: rows (one row per trip, the default) or tables (a directory with trips, bucket_list_items and living_accommodations joined by trip_id).", valueName: "layout"))
    var csvLayout: CSVLayout = .rows

    @Flag(name: .long, help: "CSV and TSV: write a field that starts with =, +, -, @ or ' behind a ', so spreadsheets do not run it as a formula, and read such fields back without it.")
    var csvSafeFormulas = false

    @Option(name: .long, help: ArgumentHelp("CSV output: the character between cells, when it differs from --csv-delimiter (which sets both).", valueName: "c"))
    var outputCsvDelimiter: CSVDelimiterArgument?

    /// What the readers are told: the shared reading options, and whether CSV cells are formula-safe.
    private var readOptions: ReadOptions {
        var o = reading.readOptions
        o.csvSafeFormulas = csvSafeFormulas
        o.parsesAhead = jobs > 1
        return o
    }

    private func writeOptions(_ schema: any VersionedSchema.Type) -> WriteOptions {
        WriteOptions(schema: schema, policy: dedupe, migrate: migrate, csvSafeFormulas: csvSafeFormulas,
                     csvDelimiter: (outputCsvDelimiter ?? reading.csvDelimiter)?.byte, csvLayout: csvLayout,
                     toolVersion: TripConv.version)
    }

    @Option(name: .long, help: ArgumentHelp("Convert each input to its own file in DIR (same base name, the output format's extension), each deduplicated on its own.", valueName: "dir"))
    var outputDir: String?

    @Option(name: .long, help: ArgumentHelp("With --output-dir: convert N inputs at once; else format JSON, JSON Lines and CSV rows on N threads, and with 2 or more decode trips for an SQLite store on a thread of their own. With 2 or more, XML and YAML are parsed on a thread of their own too (default: the number of cores; 1: one thread).", valueName: "n"))
    var jobs: Int = Threads.coreCount

    @Option(name: .long, help: ArgumentHelp("Write the accounting as JSON to FILE: totals (with replacedInStore: written trips that replaced a stored one), each input's format, version, evidence and counts, and each stage's counts.", valueName: "file"))
    var report: String?

    @Flag(name: .short, help: "Print no summary.")
    var quiet = false

    @Flag(name: .short, help: "Print a line per input and per record set aside.")
    var verbose = false

    func run() throws {
        TemporaryPaths.installSignalCleanup()
        let started = monotonicSeconds()
        if outputDir != nil { return try runBulk(started: started) }
        do {
            let summary = try convert(started: started)
            if let report { try RunReport.write(report, summary: summary, elapsed: monotonicSeconds() - started, error: nil) }
        } catch let error as ExitCode {
            throw error
        } catch {
            if let report { try? RunReport.write(report, summary: nil, elapsed: monotonicSeconds() - started, error: error) }
            throw Diagnostics.fail(error)
        }
    }

    private func convert(started: Double) throws -> ConversionSummary {
        do {
            let inputs = try InputResolver.resolve(self.inputs, from: reading.from)
            let outputLocation = OutputLocation(output)
            let outputFormat: Format
            if let to {
                outputFormat = to
            } else if csvLayout == .tables {
                outputFormat = .csv
            } else if case .file(let path) = outputLocation {
                guard let f = Format(path: path) else {
                    throw TripError.usage("\(path): no known extension tells the output format; pass --to FORMAT")
                }
                outputFormat = f
            } else {
                outputFormat = .jsonl
            }
            if outputFormat.isStore, outputLocation == .standardOutput {
                throw TripError.usage("a store cannot be written to standard output; give -o FILE")
            }
            guard let schema = TripMigrationPlan.schema(for: targetVersion) else {
                throw TripError.usage("unknown target version \(targetVersion)")
            }
            let readOptions = self.readOptions
            var pipeline = Pipeline()
            pipeline.targetVersion = targetVersion
            pipeline.policy = dedupe
            pipeline.keepsGoing = rejects != nil
            // JSON, JSON Lines and CSV rows are formatted on --jobs threads, and with 2 or more trips
            // for a store are decoded ahead on a thread of their own; only this thread writes.
            guard jobs >= 1 else { throw TripError.usage("--jobs takes a number of 1 or more") }
            pipeline.encodingThreads = jobs
            pipeline.decodesAhead = jobs > 1

            let rejectsOutput = try rejects.map { try ByteOutput(OutputLocation($0)) }
            var setAside = 0
            let writeOptions = self.writeOptions(schema)
            let summary: ConversionSummary
            let progress = ProgressBar.start(quiet: quiet, inputs: inputs)
            defer { progress?.stop() }
            do {
                summary = try pipeline.run(
                    inputs.map { input in
                        PipelineInput(name: input.location.name) {
                            progress?.setCurrent(input.location.name)
                            return CountingReader(base: try FormatFactory.makeReader(input.location, format: input.format, options: readOptions))
                        }
                    },
                    into: { try FormatFactory.makeWriter(outputLocation, format: outputFormat, options: writeOptions) },
                    setAside: { entry in
                        setAside += 1
                        if verbose { Diagnostics.print("tripconv: \(entry.origin): \(entry.kind.rawValue): \(entry.reason)") }
                        try rejectsOutput?.write(RejectsFile.line(entry))
                    })
            } catch {
                rejectsOutput?.discard()
                throw error
            }
            try rejectsOutput?.commit()
            if verbose {
                for i in summary.inputs {
                    let v = i.detection.version.map(\.description) ?? "no version"
                    Diagnostics.print("tripconv: \(i.name): \(i.detection.format) \(v) by \(i.detection.evidence); read \(i.read), rejected \(i.rejected); stages \(i.stages.isEmpty ? "none" : i.stages.joined(separator: ", "))")
                }
            }
            progress?.stop()
            if !quiet {
                Diagnostics.print("tripconv: " + summary.line(elapsedSeconds: monotonicSeconds() - started))
            }
            return summary
        }
    }

    private func runBulk(started: Double) throws {
        var outcomes: [BulkRun.Outcome] = []
        do {
            guard output == nil else { throw TripError.usage("give -o or --output-dir, not both") }
            guard jobs >= 1 else { throw TripError.usage("--jobs takes a number of 1 or more") }
            let inputs = try InputResolver.resolve(self.inputs, from: reading.from)
            if inputs.contains(where: { $0.location == .standardInput }) {
                throw TripError.usage("--output-dir converts files; standard input has no name to give its output")
            }
            let format = to ?? (csvLayout == .tables ? .csv : .jsonl)
            guard let schema = TripMigrationPlan.schema(for: targetVersion) else { throw TripError.usage("unknown target version \(targetVersion)") }
            var pipeline = Pipeline()
            pipeline.targetVersion = targetVersion
            pipeline.policy = dedupe
            pipeline.keepsGoing = rejects != nil
            let rejectsOutput = try rejects.map { try ByteOutput(OutputLocation($0)) }
            let progress = ProgressBar.start(quiet: quiet, inputs: inputs)
            let bulk = BulkRun(inputs: inputs, directory: outputDir!, format: format, jobs: jobs, pipeline: pipeline,
                               readOptions: readOptions, writeOptions: writeOptions(schema),
                               rejects: rejectsOutput, verbose: verbose, progress: progress)
            outcomes = try bulk.run()
            progress?.stop()
            try rejectsOutput?.commit()
            if verbose {
                for o in outcomes {
                    if let s = o.summary, let i = s.inputs.first {
                        Diagnostics.print("tripconv: \(o.input) -> \(o.output): \(i.detection.format) \(i.detection.version.map(\.description) ?? "no version"); read \(s.read), merged \(s.merged), dropped \(s.dropped), rejected \(s.rejected), wrote \(s.written)")
                    } else {
                        Diagnostics.print("tripconv: \(o.input): failed")
                    }
                }
            }
            if !quiet { Diagnostics.print("tripconv: " + BulkRun.line(outcomes, elapsed: monotonicSeconds() - started)) }
            if let report { try BulkRun.writeReport(report, outcomes, elapsed: monotonicSeconds() - started) }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw Diagnostics.fail(error)
        }
        if let failed = outcomes.first(where: { $0.error != nil }) {
            throw ExitCode(failed.error!.kind.rawValue)
        }
    }
}

/// The rejects file: one JSON object per line with kind, origin, reason and the record's text.
enum RejectsFile {
    static func line(_ r: SetAsideRecord) -> String {
        var pairs: [(String, JSONText.Node)] = [
            ("kind", .string(r.kind.rawValue)),
            ("source", .string(r.origin.source)),
            ("record", .int(r.origin.record)),
            ("line", r.origin.line.map { .int($0) } ?? .null),
            ("reason", .string(r.reason)),
        ]
        if let text = r.text { pairs.append(("text", .string(text))) }
        return JSONText.Node.object(pairs).render() + "\n"
    }
}
