import TripKit
import TripFormats

/// `migrate --model PLAN STORE`: a tripconv SQLite or PostgreSQL store of another app's objects migrated
/// in place by that app's plan (`ObjectStoreMigration`), with the backup (SQLite), dry run, history and
/// summary of a SampleTrips store's migration.
extension Migrate {
    /// A store of another app's objects given without `--model`: say what it needs.
    func refuseObjectStoreWithoutModel() throws {
        let isPG = Format.isPostgreSQLAddress(store)
        guard isPG ? ObjectConversion.isOtherAppStore(store, pgSchema: pgSchema) : ObjectConversion.isObjectStore(store) else { return }
        throw TripError.usage("\(isPG ? Format.redactedPostgreSQLAddress(store) : store): "
                              + "a tripconv store of another app's objects (its model in tripconv_model): "
                              + "migrate it with --model naming that app's plan (its Swift source or plan JSON)")
    }

    func migrateObjects(model: String, options: RunOptions, started: Double) throws {
        let isPG = Format.isPostgreSQLAddress(store)
        // Messages name a PostgreSQL store by its address without the password.
        let store = isPG ? Format.redactedPostgreSQLAddress(self.store) : self.store
        if isPG, case .file = options.backup {
            throw TripError.usage("--backup: a PostgreSQL store is migrated in one transaction and not backed up; use pg_dump to keep a copy")
        }
        if !isPG && StoreModel.entityNames(storeAt: store) != nil {
            throw TripError.usage("\(store): a Core Data (SwiftData) store is not migrated in place: tripconv would have to write Core Data's "
                                  + "metadata and the entity version hashes the app checks when it opens the store",
                                  notes: ["write the objects at the plan's version to a new tripconv store: `tripconv \(store) --model \(model) -o new.sqlite`"])
        }
        if !isPG && StoreModel.isStoreFile(store) && !ObjectConversion.isObjectStore(store) {
            throw TripError.usage("\(store): not a store of another app's objects (it has no tripconv_model table); "
                                  + "a SampleTrips store is migrated without --model")
        }
        // A model that is not there is no input (66), as for convert and schema (was: 64, "migrate runs an app's plan").
        _ = try FileSystem.kind(of: model, failing: .noInput)
        let isSwift = ModelPlanSource.isSwiftSource(model)
        guard isSwift || ModelPlanSource.isPlanJSON(model) else {
            throw TripError.usage("--model \(model): migrate runs an app's plan: give its Swift source or its plan JSON")
        }
        let plan = try ModelPlanSource.read(model, isSwift: isSwift)
        if plan.isUnversioned {
            throw TripError.usage("--model \(model) declares no VersionedSchema: one model with no versions, so no plan to migrate a store by",
                                  notes: ["give --model the app's VersionedSchema enums and SchemaMigrationPlan"])
        }
        let timeout = Int((busyTimeout * 1000).rounded())
        guard let run = try ObjectStoreMigration(store: self.store, pgSchema: isPG ? pgSchema : nil, plan: plan, planName: model,
                                                 target: givenTargetVersion?.description, busyTimeoutMilliseconds: timeout,
                                                 temporaryDirectory: options.temporaryDirectory) else {
            let at = givenTargetVersion?.description ?? plan.current?.versionIdentifiers.first ?? ""
            if !quiet { Diagnostics.print("tripconv: \(store): already at \(at); nothing to do") }
            return
        }
        if dryRun {
            try previewObjects(run, name: store, options: options)
            if !quiet { Diagnostics.print("tripconv: \(store): dry run; nothing was changed (\(elapsed(started)) s)") }
            return
        }
        let rejectsFile = try rejects.map { try RejectsFile($0 == "-" ? .standardOutput : .file($0)) }
        let report: ObjectStoreMigration.Report
        do {
            report = try run.migrate(policy: dedupe, backup: options.backup, toolVersion: TripConv.version, busyTimeoutMilliseconds: timeout,
                                     temporaryDirectory: options.temporaryDirectory, memoryLimit: options.memoryLimit) { record in
                if verbose { Diagnostics.print("tripconv: \(record.kind.rawValue): \(record.place): \(record.reason)") }
                try rejectsFile?.write(record)
            }
            try rejectsFile?.commit()
        } catch {
            rejectsFile?.discard()
            throw error
        }
        if verbose {
            for (stage, sentence) in zip(report.stages, run.migration.stageSentences(policy: dedupe)) {
                Diagnostics.print("tripconv: \(store): stage \(stage.stages): \(Self.objects(stage.objectsBefore)) -> \(stage.objectsAfter); \(sentence)")
            }
        }
        if !quiet { Diagnostics.print(Self.summaryLine(report, store: store, run: run) + "; \(elapsed(started)) s") }
    }

    /// The summary line, as a SampleTrips store's: versions, stages, objects read, merged, dropped and
    /// rejected, the objects after (per entity), the backup (a SQLite store's).
    static func summaryLine(_ report: ObjectStoreMigration.Report, store: String, run: ObjectStoreMigration) -> String {
        let s = report.summary
        let per = zip(s.entities, s.counts).map { "\($0) \($1)" }.joined(separator: ", ")
        var parts = [
            "migrated \(run.from) -> \(run.to) in place", "stages \(report.stages.map(\.stages).joined(separator: ", "))",
            "read \(objects(s.read))", "merged \(s.merged)", "dropped \(s.dropped)", "rejected \(s.rejected)",
            "\(objects(s.written)) at \(run.to)" + (per.isEmpty ? "" : " (\(per))"),
        ]
        // A PostgreSQL store is not backed up (as its trips' line, the line has no backup part).
        if !Format.isPostgreSQLAddress(run.store) { parts.append(report.backup.map { "backup \($0)" } ?? "no backup") }
        return "tripconv: \(store): " + parts.joined(separator: "; ") + s.spilledPhrase
    }

    static func objects(_ n: Int) -> String { "\(n) object\(n == 1 ? "" : "s")" }

    /// What the migration would do, on standard output: the store, the stages with their derived
    /// steps, each object that would be merged, dropped or rejected (`-v`), and the counts.
    private func previewObjects(_ run: ObjectStoreMigration, name store: String, options: RunOptions) throws {
        let output = OutputLines()
        let emit = output.emit
        let total = run.objectCounts.reduce(0) { $0 + $1.count }
        emit("\(store): tripconv object store at \(run.from) (its tripconv_model), \(Self.objects(total))"
             + (run.objectCounts.isEmpty ? "" : " (" + run.objectCounts.map { "\($0.entity) \($0.count)" }.joined(separator: ", ") + ")"))
        emit("would migrate \(run.from) -> \(run.to) in place under --dedupe \(dedupe.rawValue):")
        for sentence in run.migration.stageSentences(policy: dedupe) { emit("  " + sentence) }
        do {
            let s = try run.preview(policy: dedupe, busyTimeoutMilliseconds: Int((busyTimeout * 1000).rounded()),
                                    temporaryDirectory: options.temporaryDirectory, memoryLimit: options.memoryLimit) { record in
                if verbose { emit("  would be \(record.kind.rawValue): \(record.place): \(record.reason)") }
            }
            emit("would merge \(s.merged), drop \(s.dropped) and reject \(s.rejected): \(Self.objects(s.read)) -> \(s.written) at \(run.to)")
        } catch {
            emit("would fail; the store would be left as it is")
            output.flush()
            throw error
        }
        if Format.isPostgreSQLAddress(run.store) {
            if rejects != nil { emit("(a dry run writes no rejects file)") }
        } else if rejects != nil || backup.backup != nil {
            emit("(a dry run writes no rejects file and takes no backup)")
        }
        output.flush()
    }
}
