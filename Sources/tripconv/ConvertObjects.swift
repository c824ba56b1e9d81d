import ArgumentParser
import TripKit
import TripFormats

/// `convert` of another app's objects (issue 26): a store read with its own model, or an export of one
/// read with `--model`, to one output in any text format. No version is detected and no stage runs.
extension Convert {
    func runObjects(started: Double) throws {
        var run: ObjectConversion?
        var summary: ObjectConversionSummary?
        do {
            guard inputs.count == 1, inputs[0] != "-" else {
                throw TripError.usage("the objects of another app's model are read from one named input at a time (a store, or an export with --model)")
            }
            if migrate, let output, Format(streamPath: output)?.isStore == true || to?.format.isStore == true {
                throw TripError.usage("--migrate is SampleTrips' own: a store of another app's objects is written as the model is, "
                                      + "and migrating one is not supported yet")
            }
            if migrate || csvLayout != .rows || targetVersion != TripMigrationPlan.currentSchema.versionIdentifier || dedupe != .merge {
                throw TripError.usage("--migrate, --csv-layout, --target-version and --dedupe are SampleTrips' and not for another app's objects"
                                      + " (CSV and TSV are written as tables, one per entity)")
            }
            let format = try objectOutputFormat()
            if format == .postgresql, output == inputs[0], Format.isPostgreSQLAddress(inputs[0]) {
                throw TripError.usage("\(Format.redactedPostgreSQLAddress(inputs[0])): the input and -o name the same PostgreSQL store; "
                                      + "write to another (--pg-schema names one schema for both)")
            }
            if let output, output != "-", format != .postgresql { try FileSystem.checkCanCreate(output, isDirectory: format == .csv || format == .tsv) }
            for file in [report, rejects].compactMap({ $0 }) where file != "-" { try FileSystem.checkCanCreate(file) }
            let conversion = try ObjectConversion(input: inputs[0], format: reading.from, modelPath: model, options: options)
            run = conversion
            let rejectsFile = try rejects.map { try RejectsFile($0 == "-" ? .standardOutput : .file($0)) }
            do {
                summary = try conversion.run(to: OutputLocation(output), format: format) { record in
                    if verbose { Diagnostics.print("tripconv: \(record.kind.rawValue): \(record.place): \(record.reason)") }
                    try rejectsFile?.write(record)
                }
                try rejectsFile?.commit()
            } catch {
                rejectsFile?.discard()
                throw error
            }
            if verbose { Diagnostics.print("tripconv: \(inputs[0]): the model from \(conversion.modelSource.rawValue)") }
            if !quiet, let summary {
                Diagnostics.print("tripconv: " + summary.line(elapsedSeconds: monotonicSeconds() - started))
            }
            if let report {
                try RunReport.write(report, objects: summary, input: inputs[0], modelSource: run?.modelSource.rawValue,
                                    elapsed: monotonicSeconds() - started, error: nil)
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            if let report {
                try? RunReport.write(report, objects: summary, input: inputs.first ?? "", modelSource: run?.modelSource.rawValue,
                                     elapsed: monotonicSeconds() - started, error: error)
            }
            throw Diagnostics.fail(error)
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
        if (format == .csv || format == .tsv) && (output == nil || output == "-") {
            throw TripError.usage("objects are written to \(format.rawValue) as a directory of tables, one per entity: name it with -o DIR")
        }
        if format == .sqlite && (output == nil || output == "-") {
            throw TripError.usage("objects are written to a SQLite store in a file: name it with -o FILE")
        }
        if format == .postgresql && (output == nil || output == "-") {
            throw TripError.usage("objects are written to a PostgreSQL store named with -o ADDRESS (a postgresql:// URI or key=value pairs)")
        }
        return format
    }
}
