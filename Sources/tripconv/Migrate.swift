import ArgumentParser
import TripKit
import TripFormats

/// `tripconv migrate`: a store through the plan's stages, in place, in one transaction.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        // Named, not derived (Convert.swift says why).
        commandName: "migrate",
        abstract: "Migrate a SQLite or PostgreSQL store in place, in one transaction.",
        discussion: """
            Runs the plan's stages from the store's version to the target: 1.0.0 -> 2.0.0 deduplicates the \
            trips by name under --dedupe and adds the unique index; 2.0.0 -> 3.0.0 rebuilds the tables with \
            the renamed date columns and cascading foreign keys, keeping every row and its id. The store is \
            backed up first (to STORE.VERSION.bak, such as trips.sqlite.1.0.0.bak, unless --backup or --no-backup \
            says otherwise; a backup never replaces a file, and a migration that fails leaves none), and each stage is \
            recorded in its history table. A store already at the target is left untouched. A PostgreSQL \
            store (a postgresql:// URI or libpq key=value address) is migrated in one transaction under its \
            exclusive lock, after the loads under way commit: the trips keep their ids, related rows are \
            numbered anew, and no backup is taken (its DDL is transactional; use pg_dump to keep a copy).

            With --model (an app's Swift source or plan JSON), STORE is a tripconv SQLite or PostgreSQL store of \
            that app's objects: the plan's stages run from the version its tripconv_model names (one the plan does \
            not list is exit 65) to the target, as convert --model runs them, into a new store beside it (for \
            PostgreSQL, a scratch schema inside the migration's transaction) whose tables then replace the store's \
            in one transaction under its write lock; the backup (SQLite only), history (objects before and after \
            each stage), --dry-run and -v are as above. A Core Data store is never migrated in place (tripconv \
            would have to write Core Data's metadata and the entity version hashes the app checks): `tripconv \
            STORE --model X -o new.sqlite` writes a migrated copy (64).
            """)

    @Argument(help: ArgumentHelp("The store to migrate: a SQLite file, or a PostgreSQL address.", valueName: "store"))
    var store: String

    @Option(name: .customLong("pg-schema"), help: ArgumentHelp("A PostgreSQL store: the schema its tables are in (default: the server's search path).", valueName: "name"))
    var pgSchema: String?

    @Option(name: .customLong("model"), help: ArgumentHelp("The store holds another app's objects (a tripconv SQLite or PostgreSQL store written by convert --model): migrate it with this app's plan, its Swift source or plan JSON.", valueName: "model"))
    var model: String?

    @Option(name: .customLong("target-version"), help: ArgumentHelp("Migrate to this schema version (default: the current version; with --model, the plan's last).", valueName: "version"))
    var givenTargetVersion: SchemaVersion?

    /// The version a SampleTrips store is migrated to.
    var targetVersion: SchemaVersion { givenTargetVersion ?? TripMigrationPlan.currentSchema.versionIdentifier }

    @Option(name: .customLong("dedupe"), help: ArgumentHelp("What to do with trips that share a name: merge, last, first, fail.", valueName: "policy"))
    var dedupe: DeduplicationPolicy = .merge

    @Flag(name: .customLong("dry-run"), help: "Change nothing; print the stages, the names several trips share and where they differ, and what would be merged or dropped (a dry run writes no rejects file and takes no backup, and says so when --rejects or --backup is given); a migration that would fail (--dedupe fail meeting duplicates, a PostgreSQL store of objects whose schema holds another table) fails as it would.")
    var dryRun = false

    @OptionGroup var backup: BackupOptions

    @Option(name: .customLong("rejects"), help: ArgumentHelp("Write the trips merged or dropped to FILE as JSON Lines, as convert's rejects file.", valueName: "file"))
    var rejects: String?

    @Option(name: .customLong("busy-timeout"), help: ArgumentHelp("How long to wait for another process's lock on the store (for PostgreSQL, for the loads under way to commit) before giving up (exit 75).", valueName: "seconds"))
    var busyTimeout: Double = 5

    @OptionGroup var memory: MemoryOptions

    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "Print no summary.")
    var quiet = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Print a line per stage and per trip merged or dropped.")
    var verbose = false

    func validate() throws {
        if !(busyTimeout >= 0 && busyTimeout <= 86_400) { throw ValidationError("--busy-timeout takes seconds from 0 to 86400") }
    }

    /// The options, described once: the run is built from them.
    private var options: RunOptions {
        var o = RunOptions()
        o.targetVersion = targetVersion
        o.policy = dedupe
        o.rejects = rejects
        o.toolVersion = TripConv.version
        memory.apply(to: &o)
        backup.apply(to: &o)
        return o
    }

    func run() throws {
        try runReportingErrors {
            let started = monotonicSeconds()
            let options = self.options
            if let model {
                try options.checkTemporaryDirectory()
                return try migrateObjects(model: model, options: options, started: started)
            }
            let target = try options.targetSchema()
            try options.checkTemporaryDirectory()
            try refuseObjectStoreWithoutModel()
            if Format.isPostgreSQLAddress(store) { return try migratePostgreSQL(target: target, options: options, started: started) }
            let timeout = Int((busyTimeout * 1000).rounded())
            // A first look that writes no byte of the store's files (a read-only SQLiteStore is a StoreSnapshot),
            // so a dry run or a store at the target changes nothing; but a journal a crash left behind is rolled
            // back only by a read-write open.
            let looked = try SQLiteStore.open(path: store, readOnly: !SQLiteStore.hasJournal(store), busyTimeoutMilliseconds: timeout,
                                              temporaryDirectory: options.temporaryDirectory)
            if looked.version == targetVersion {
                if !quiet { Diagnostics.print("tripconv: \(store): already at \(targetVersion); nothing to do") }
                return
            }
            if looked.version > targetVersion {
                throw TripError.usage("\(store): store is at \(looked.version), target is \(targetVersion); a store is never migrated down",
                                      notes: ["convert the store into a new file to get a \(targetVersion) copy: `tripconv \(store) --target-version \(targetVersion) -o FILE`"])
            }
            if dryRun {
                try preview(looked, target: target, options: options)
                if !quiet { Diagnostics.print("tripconv: \(store): dry run; nothing was changed (\(elapsed(started)) s)") }
                return
            }

            let opened = try SQLiteStore.open(path: store, readOnly: false, busyTimeoutMilliseconds: timeout)
            guard let report = try options.migrate(opened, observer: CommandLineObserver(listsSetAside: verbose)) else {
                // Another process migrated it between the first look and the lock.
                if !quiet { Diagnostics.print("tripconv: \(store): already at \(targetVersion); nothing to do") }
                return
            }
            printSummary(MigrationSummary(report: report, store: store, backsUp: true), started: started)
        }
    }

    /// Prints what a migration would do, on standard output, as it is found (a store of any size
    /// is previewed in bounded memory); a migration that would fail fails as it would.
    private func preview(_ opened: SQLiteStore, target: any VersionedSchema.Type, options: RunOptions) throws {
        let output = OutputLines()
        let emit = output.emit
        let p = try opened.previewMigration(to: target, policy: dedupe, memoryLimit: options.memoryLimit,
                                            temporaryDirectory: options.temporaryDirectory, summary: { p in
            emit("\(store): sqlite \(p.from) (\(opened.evidence)), \(p.tripsBefore) trip\(p.tripsBefore == 1 ? "" : "s")")
            emit("would migrate \(p.from) -> \(p.to) in place under --dedupe \(dedupe.rawValue):")
            for stage in p.stages { emit("  \(stage.description): \(stage.changes.joined(separator: "; "))") }
            let n = p.duplicateCount, attribute = target.rootEntity.uniqueAttribute?.name ?? "name"
            emit(n == 0 ? "no name is shared by several trips" : "\(n) \(attribute)\(n == 1 ? " is" : "s are") shared by several trips:")
        }, duplicate: { d in
            emit(Self.sharedLine(d))
        }, setAside: { entry in
            if verbose { emit("  would be \(entry.kind.rawValue): \(entry.place): \(entry.reason)") }
        })
        if p.failure == nil {
            emit("would merge \(p.merged) and drop \(p.dropped): \(p.tripsBefore) trip\(p.tripsBefore == 1 ? "" : "s") -> \(p.tripsAfter) at \(p.to)")
        } else {
            emit("would fail; the store would be left as it is")
        }
        if rejects != nil || backup.backup != nil { emit("(a dry run writes no rejects file and takes no backup)") }
        output.flush()
        if let failure = p.failure { throw failure }
    }

    /// A dry run's line for a name several trips share: their row ids and the fields that differ.
    private static func sharedLine(_ d: StoreMigrationPreview.DuplicateName) -> String {
        var line = "  \(d.value.quotedForMessage): \(d.rowIDs.count) trips (row ids \(d.rowIDs.map(String.init).joined(separator: ", ")))"
        if d.conflicts.isEmpty {
            line += "; no values differ"
        } else {
            for c in d.conflicts { line += "; \(c.field) differs: " + c.values.map(\.quotedForMessage).joined(separator: " / ") }
        }
        return line
    }

    /// A PostgreSQL store: migrated (or, with --dry-run, migrated and rolled back) in one transaction.
    private func migratePostgreSQL(target: any VersionedSchema.Type, options: RunOptions, started: Double) throws {
        var shared: [String] = []
        var sharedCount = 0
        let report = try options.migrate(postgreSQL: store, schema: pgSchema, dryRun: dryRun,
                                         busyTimeoutMilliseconds: Int((busyTimeout * 1000).rounded()),
                                         sharedName: dryRun ? { d in
                                             sharedCount += 1
                                             if shared.count < 10_000 { shared.append(Self.sharedLine(d)) }
                                         } : nil,
                                         observer: CommandLineObserver(listsSetAside: verbose))
        let name = Format.redactedPostgreSQLAddress(store)
        guard let report else {
            if !quiet { Diagnostics.print("tripconv: \(name): already at \(targetVersion); nothing to do") }
            return
        }
        if dryRun {
            var text = "would migrate \(report.from) -> \(report.to) in place under --dedupe \(dedupe.rawValue):\n"
            for s in report.stages { text += "  \(s.stages): \(s.tripsBefore) trip\(s.tripsBefore == 1 ? "" : "s") -> \(s.tripsAfter)\n" }
            text += sharedCount == 0 ? "no name is shared by several trips\n"
                : "\(sharedCount) name\(sharedCount == 1 ? " is" : "s are") shared by several trips:\n"
            text += shared.map { $0 + "\n" }.joined()
            if sharedCount > shared.count { text += "  and \(sharedCount - shared.count) more\n" }
            text += "would merge \(report.merged) and drop \(report.dropped): \(report.tripsBefore) trip\(report.tripsBefore == 1 ? "" : "s") -> \(report.tripsAfter) at \(report.to)\n"
            if rejects != nil { text += "(a dry run writes no rejects file)\n" }
            writeAll(1, text)
            if !quiet { Diagnostics.print("tripconv: \(name): dry run; nothing was changed (\(elapsed(started)) s)") }
            return
        }
        printSummary(MigrationSummary(report: report, store: name, backsUp: false), started: started)
    }

    /// A line per stage with -v, and the summary line unless -q: the same for both kinds of store
    /// (a PostgreSQL store takes no backup, so its line has no backup part), and as `convert
    /// --migrate` tells its migration.
    private func printSummary(_ migration: MigrationSummary, started: Double) {
        if verbose { for line in migration.stageLines { Diagnostics.print(line) } }
        if !quiet { Diagnostics.print(migration.line + "; \(elapsed(started)) s") }
    }

    func elapsed(_ started: Double) -> String {
        let ms = Int(((monotonicSeconds() - started) * 1000).rounded())
        let fraction = String(ms % 1000)
        return "\(ms / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
