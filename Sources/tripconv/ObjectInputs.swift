#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import TripKit
import TripFormats

/// The inputs of a run over another app's objects (`convert` with `--model`, or of another app's
/// store): several of them, standard input, archives' members; each converted on its own, to `-o`
/// (one input) or to its own output in `--output-dir`.
extension Convert {
    /// What became of one input of an object run.
    struct ObjectOutcome {
        var input: String
        var output: String?
        var summary: ObjectConversionSummary?
        var modelSource: String?
        var error: (any Error)?
        /// The store -o names, migrated in place first (`--migrate`): what its migration did, and the store as messages name it.
        var storeMigration: (report: ObjectStoreMigration.Report, run: ObjectStoreMigration, store: String)?
    }

    /// Whether standard input is the run's one input and holds a SQLite file (a piped store): such a
    /// store is read from a temporary copy, as another app's.
    var pipesStore: Bool {
        guard inputs.isEmpty || inputs == ["-"], isatty(0) == 0, reading.from == nil || reading.from?.isStore == true else { return false }
        return (try? ByteInput.peekStandardInput(16)) == Array("SQLite format 3\u{0}".utf8)
    }

    /// Whether an argument is, or is a directory holding (a file named as a store), a Core Data store of
    /// another app than SampleTrips: such a run reads objects.
    static func namesOtherAppStore(_ argument: String, pgSchema: String?) -> Bool {
        guard FileSystem.kind(argument) == .directory else { return ObjectConversion.isOtherAppStore(argument, pgSchema: pgSchema) }
        let files = (try? RunInput.listFiles(argument)) ?? []
        return files.contains { Format(path: $0)?.isStore == true && ObjectConversion.isOtherAppStore($0) }
    }

    /// Refuses what an object run cannot write: `-o` with several inputs (their keys are each input's
    /// own), both `-o` and `--output-dir`; then checks that every output can be made (exit 73).
    func checkObjectOutputs(_ format: Format) throws {
        if outputDir != nil, output != nil { throw TripError.usage("give -o or --output-dir, not both") }
        if outputDir == nil, inputs.count > 1 {
            throw TripError.usage("the objects of several inputs of another app's model go to --output-dir DIR, one output each; -o takes one input",
                                  notes: ["in one output their keys could name two objects alike: each store numbers its own objects "
                                          + "(the @key of an entity without a unique attribute) and two stores may hold the same unique value"])
        }
        if format == .postgresql, let output, inputs.contains(output), Format.isPostgreSQLAddress(output) {
            throw TripError.usage("\(Format.redactedPostgreSQLAddress(output)): the input and -o name the same PostgreSQL store; "
                                  + "write to another (--pg-schema names one schema for both)")
        }
        if let output, format == .sqlite, inputs.contains(where: { FileSystem.isSameFile($0, output) }) {
            throw TripError.usage("\(output): the input and -o name the same store; write to another")
        }
        if let outputDir {
            try FileSystem.checkCanWrite(in: outputDir)
        } else if let output, output != "-", format != .postgresql {
            try FileSystem.checkCanCreate(output, isDirectory: format == .csv || format == .tsv)
        }
        for file in [report, rejects].compactMap({ $0 }) where file != "-" { try FileSystem.checkCanCreate(file) }
    }

    /// Converts every input in turn. With `--output-dir`, an input that fails is said and the others go
    /// on (its output is absent); without it, the one input's error is thrown.
    func convertObjectInputs(format: Format, rejects: RejectsFile?, started: Double) throws -> [ObjectOutcome] {
        try InputResolver.refuseTerminal(inputs, usage: Self.usageString())
        var readOptions = reading.readOptions
        readOptions.copiesStores = true
        // A directory read as CSV or TSV, or holding .csv or .tsv files, is one input, a directory of
        // tables (as `detect --model` takes it); any other is the files under it, those of a directory
        // of tables under it that directory.
        let resolved = try InputResolver.resolveObjects(inputs, from: reading.from, options: readOptions)
        var expanded = ExpandedInputs(resolved, options: readOptions) { Diagnostics.print(InputResolver.nothingFound(in: $0, passedOver: $1)) }
        var outcomes: [ObjectOutcome] = []
        var taken: Set<String> = []
        while let input = try expanded.next() {
            let began = monotonicSeconds()
            var outcome = ObjectOutcome(input: input.location.name)
            let target = outputDir.map {
                BulkConversion.outputPath(input, in: $0, format: format, tables: true, pgSchema: nil)
            }
            do {
                if let target {
                    guard taken.insert(target).inserted else { throw TripError.usage("\(input.location.name): another input is written to \(target) already") }
                    try makeDirectories(above: target)
                }
                outcome.output = target ?? output
                try convertObjects(input, to: OutputLocation(target ?? output), format: format, rejects: rejects, into: &outcome)
            } catch {
                guard outputDir != nil else { throw error }
                outcome.error = error
                _ = Diagnostics.fail(error)
            }
            if verbose, let source = outcome.modelSource { Diagnostics.print("tripconv: \(outcome.input): the model from \(source)") }
            if verbose, let summary = outcome.summary {
                for note in summary.referenceRemovalNotes { Diagnostics.print("tripconv: reference removed: \(note)") }
                let more = summary.referencesRemoved - summary.referenceRemovalNotes.count
                if more > 0 { Diagnostics.print("tripconv: reference removed: \(more) more not shown") }
            }
            if !quiet, let summary = outcome.summary {
                let name = outputDir == nil ? "" : "\(outcome.input): "
                Diagnostics.print("tripconv: " + name + summary.line(elapsedSeconds: monotonicSeconds() - (outputDir == nil ? started : began)))
            }
            outcomes.append(outcome)
        }
        if expanded.given == 0 { throw ExpandedInputs.nothingToRead }
        return outcomes
    }

    /// One input to `output`: a file in place; standard input or an archive's member from a temporary
    /// copy, removed when this returns (on an error too), its errors naming the input.
    private func convertObjects(_ input: RunInput, to output: OutputLocation, format: Format, rejects: RejectsFile?,
                                into outcome: inout ObjectOutcome) throws {
        let setAside: (SetAsideRecord) throws -> Void = { record in
            // As a run of trips: without --rejects a bad record stops the run, nothing written (merged and dropped ones go on).
            guard rejects != nil || record.kind != .rejected else {
                throw TripError.data("\(record.place): \(record.reason)", notes: ["pass --rejects FILE to set bad records aside and go on"])
            }
            if verbose { Diagnostics.print("tripconv: \(record.kind.rawValue): \(record.place): \(record.reason)") }
            try rejects?.write(record)
        }
        guard case .file(let path) = input.location else {
            let copy = try InputCopy(input.location, temporaryDirectory: options.temporaryDirectory, options: reading.readOptions)
            defer { copy.remove() }
            try copy.naming {
                if StoreModel.isStoreFile(copy.path), model == nil, !ObjectConversion.isOtherAppStore(copy.path) {
                    throw TripError.usage("\(copy.name): a SampleTrips store is read in place, not from a copy; name its file")
                }
                let store = StoreModel.isStoreFile(copy.path)
                let conversion = try ObjectConversion(input: copy.path, format: store ? nil : input.format, modelPath: modelPath(forStore: store),
                                                      options: options, sourceVersion: reading.sourceVersion?.description,
                                                      targetVersion: targetVersion?.description, policy: dedupe)
                try run(conversion, to: output, format: format, setAside: setAside, into: &outcome)
            }
            return
        }
        let conversion = try ObjectConversion(input: path, format: input.format.flatMap { $0.isStore ? nil : $0 },
                                              modelPath: modelPath(forStore: StoreModel.isStoreFile(path)), options: options,
                                              sourceVersion: reading.sourceVersion?.description, targetVersion: targetVersion?.description,
                                              policy: dedupe)
        try run(conversion, to: output, format: format, setAside: setAside, into: &outcome)
    }

    /// Runs one conversion; with a plan, says (unless `-q`) the version read and each stage's sentence first.
    private func run(_ conversion: ObjectConversion, to output: OutputLocation, format: Format,
                     setAside: (SetAsideRecord) throws -> Void, into outcome: inout ObjectOutcome) throws {
        // An existing store of objects is appended to: refused before anything is said or read into it when it cannot take them.
        var append: ObjectStoreAppend?
        if case .file(let store) = output, ObjectConversion.appendsTo(output, format: format, pgSchema: reading.pgSchema) {
            append = try conversion.appending(into: store, migrate: migrate, planName: model)
        }
        // With a plan, an input read at another version than the current says which.
        let source = conversion.modelSource.rawValue, current = "the current version of "
        if let version = conversion.sourceVersion, version != conversion.plan?.current?.versionIdentifiers.first, source.hasPrefix(current) {
            outcome.modelSource = "version \(version) of " + source.dropFirst(current.count)
        } else {
            outcome.modelSource = source
        }
        if let version = conversion.sourceVersion, !quiet {
            let name = outputDir == nil ? "" : "\(outcome.input): "
            let to = conversion.migration?.target.versionIdentifiers.first ?? version
            Diagnostics.print("tripconv: \(name)read at \(version) (\(conversion.sourceVersionEvidence ?? "")), written at \(to)")
            for sentence in conversion.migration?.stageSentences(policy: dedupe) ?? [] { Diagnostics.print("tripconv: \(name)\(sentence)") }
        } else if let migration = conversion.migration, verbose {
            // No plan: what the model makes unique, deduplicated.
            let name = outputDir == nil ? "" : "\(outcome.input): "
            for sentence in migration.stageSentences(policy: dedupe) { Diagnostics.print("tripconv: \(name)\(sentence)") }
        }
        guard let append else {
            outcome.summary = try conversion.run(to: output, format: format, setAside: setAside)
            return
        }
        let report = try conversion.append(append, setAside: setAside)
        if let done = report.migration, let run = append.migration {
            if verbose {
                for (stage, sentence) in zip(done.stages, run.migration.stageSentences(policy: dedupe)) {
                    Diagnostics.print("tripconv: \(append.name): stage \(stage.stages): \(Migrate.objects(stage.objectsBefore)) -> \(stage.objectsAfter); \(sentence)")
                }
            }
            if !quiet { Diagnostics.print(Migrate.summaryLine(done, store: append.name, run: run)) }
            outcome.storeMigration = (done, run, append.name)
        }
        outcome.summary = report.summary
    }

    /// The model an input is read with: `--model`'s, except that a store among the inputs of a run whose
    /// `--model` names a store (the model of its exports) is read with the model it carries itself.
    private func modelPath(forStore isStore: Bool) -> String? {
        guard let model, isStore, StoreModel.isStoreFile(model) else { return model }
        return nil
    }

    /// Makes the directories between `--output-dir` and an output (a file found under a directory
    /// keeps its path there).
    private func makeDirectories(above target: String) throws {
        guard let outputDir else { return }
        let root = outputDir.hasSuffix("/") ? outputDir : outputDir + "/"
        var path = outputDir
        if FileSystem.kind(path) == nil { try FileSystem.makeDirectory(path) }
        path = root
        for part in target.dropFirst(root.count).split(separator: "/").dropLast() {
            path += part
            if FileSystem.kind(path) == nil { try FileSystem.makeDirectory(path) }
            path += "/"
        }
    }
}
