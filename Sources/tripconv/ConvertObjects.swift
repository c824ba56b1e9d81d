import ArgumentParser
import TripKit
import TripFormats

/// `convert` of another app's objects (issue 26): stores read with their own model, or exports of one
/// read with `--model`, each to one output in any text format (ObjectInputs.swift reads the inputs).
/// No version is detected and no stage runs.
extension Convert {
    func runObjects(started: Double) throws {
        var outcomes: [ObjectOutcome] = []
        do {
            if csvLayout != .rows {
                throw TripError.usage("--csv-layout is SampleTrips' and not for another app's objects (CSV and TSV are written as tables, one per entity)")
            }
            // --source-version, --target-version and --migrate go with an app's plan (Swift source, plan JSON, an .xcdatamodeld's versions);
            // --dedupe with any model: an export's objects are deduplicated on what the model makes unique, an append's against the store.
            let hasPlan = model.map(ModelPlanSource.isVersioned) ?? false
            if !hasPlan && migrate {
                throw TripError.usage("--migrate migrates a store of an app's objects by that app's plan: give --model its Swift source, plan JSON "
                                      + "or an .xcdatamodeld of several versions")
            }
            if !hasPlan, targetVersion != nil || reading.sourceVersion != nil {
                throw TripError.usage("--source-version and --target-version are SampleTrips' and, with --model naming an app's "
                                      + "Swift source, plan JSON or an .xcdatamodeld of several versions, that app's plan's; a model without a plan has one version")
            }
            let format = try objectOutputFormat()
            if migrate && format != .sqlite && format != .postgresql {
                throw TripError.usage("--migrate migrates the tripconv SQLite or PostgreSQL store of the app's objects -o names")
            }
            try checkObjectOutputs(format)
            let rejectsFile = try rejects.map { try RejectsFile($0 == "-" ? .standardOutput : .file($0)) }
            do {
                outcomes = try convertObjectInputs(format: format, rejects: rejectsFile, started: started)
                try rejectsFile?.commit()
            } catch {
                rejectsFile?.discard()
                throw error
            }
            if let report { try RunReport.write(report, objects: outcomes, perInput: outputDir != nil, elapsed: monotonicSeconds() - started, error: nil) }
        } catch let error as ExitCode {
            throw error
        } catch {
            if let report {
                try? RunReport.write(report, objects: outcomes, perInput: outputDir != nil, elapsed: monotonicSeconds() - started, error: error)
            }
            throw Diagnostics.fail(error)
        }
        // With --output-dir, the first input that failed gives the status (each was said as it failed).
        if let failed = outcomes.first(where: { $0.error != nil })?.error {
            throw ExitCode((failed as? TripError)?.kind.rawValue ?? 70)
        }
    }

    /// The output format of an object run: `--to`, else what `-o` names, else JSON Lines.
    private func objectOutputFormat() throws -> Format {
        let named = output.flatMap { $0 == "-" ? nil : Format(streamPath: $0) }
        if let to = to?.format, let named, named != to {
            throw TripError.usage("-o \(output!) names \(named.rawValue) but --to says \(to.rawValue)")
        }
        let format = to?.format ?? named ?? .jsonl
        guard ObjectConversion.outputFormats.contains(format) else {
            throw TripError.usage("objects of another app's model are written to JSON, JSON Lines, YAML, XML, CSV or TSV "
                                  + "(a directory of tables), a SQLite store or a PostgreSQL store; writing them to a \(format.rawValue) store is not supported yet")
        }
        if (format == .csv || format == .tsv) && (output == nil || output == "-") && outputDir == nil {
            throw TripError.usage("objects are written to \(format.rawValue) as a directory of tables, one per entity: name it with -o DIR")
        }
        if format == .sqlite && (output == nil || output == "-") && outputDir == nil {
            throw TripError.usage("objects are written to a SQLite store in a file: name it with -o FILE")
        }
        if format == .postgresql && (output == nil || output == "-") {
            throw TripError.usage("objects are written to a PostgreSQL store named with -o ADDRESS (a postgresql:// URI or key=value pairs)")
        }
        return format
    }
}
