import TripKit

/// A run over the objects of another app's model (issue 26): one input (a Core Data or SwiftData
/// store, read with the model it carries or `--model`; or an export of such a store, read with
/// `--model`) to one output in any text format, every object written or set aside.
///
/// ```swift
/// let run = try ObjectConversion(input: "default.store", modelPath: nil, options: RunOptions())
/// let summary = try run.run(to: .file("objects.jsonl"), format: .jsonl) { rejected in print(rejected.reason) }
/// ```
public struct ObjectConversion {
    /// The model the objects are of, and where it came from.
    public let model: ObjectModel
    public let modelSource: StoreModel.Source
    /// The input, and its format (`.coredata` for a store).
    public let input: String
    public let format: Format
    private let entityNumbers: [String: Int64]?
    let options: RunOptions
    /// The app's plan when `--model` named Swift source or plan JSON, and its run from the input's
    /// version to the target (nil when they are the same version).
    public let plan: ModelPlan?
    public let migration: ObjectMigration?
    /// The version the input was read at, and how that was told (`the store's metadata`, `--source-version`).
    public let sourceVersion: String?
    public let sourceVersionEvidence: String?
    let policy: DeduplicationPolicy
    /// Whether a store's objects go to JSON or JSON Lines straight from its rows when no stage runs
    /// (`CoreDataJSONRun`); false sends them the general way (the tests compare the two).
    var writesRowsStraight = true
    /// The references the run's graph reader removed (they named no object it gives), for the summary.
    let referenceRemovals = ObjectReferenceRemovals()

    /// The formats an object run writes.
    public static let outputFormats: [Format] = [.json, .jsonl, .yaml, .xml, .csv, .tsv, .sqlite, .postgresql]

    /// Whether `path` is a Core Data store of some app other than SampleTrips (a file with Core Data's
    /// tables whose `Z_PRIMARYKEY` names no `Trip` entity), or a store of objects tripconv wrote
    /// (`tripconv_model`). SampleTrips stores go the trip path.
    public static func isOtherAppStore(_ path: String, pgSchema: String? = nil) -> Bool {
        if Format.isPostgreSQLAddress(path) { return PGObjectReader.isObjectStore(address: path, schema: pgSchema) }
        if isObjectStore(path) { return true }
        guard let names = StoreModel.entityNames(storeAt: path) else { return false }
        return !names.contains("Trip")
    }

    /// Whether `path` is a SQLite store of objects tripconv wrote (it carries its model).
    public static func isObjectStore(_ path: String) -> Bool { SQLiteObjectReader.isObjectStore(path) }

    /// The model of the PostgreSQL store of objects at `address` (in `schema`), with each entity's
    /// objects counted: what `detect` and `schema --model` say of one.
    public static func objectStoreModel(address: String, schema: String?) throws -> StoreModel {
        let reader = try PGObjectReader(address: address, schema: schema)
        var store = StoreModel(model: reader.model, source: .objectStore)
        store.versionIdentifiers = reader.model.versionIdentifiers
        store.objectCounts = try reader.objectCounts()
        return store
    }

    /// The model of a store of objects tripconv wrote, with each entity's objects counted: what
    /// `detect` and `schema --model` say of one.
    public static func objectStoreModel(_ path: String) throws -> StoreModel {
        let reader = try SQLiteObjectReader(path: path)
        var store = StoreModel(model: reader.model, source: .objectStore)
        store.versionIdentifiers = reader.model.versionIdentifiers
        store.objectCounts = try reader.objectCounts()
        return store
    }

    /// A run reading `input`: a store (its own model, else `modelPath`'s, else its tables'), or an
    /// export in `format` (the format its extension names when nil) read with `modelPath`'s model.
    ///
    /// When `modelPath` is an app's Swift source or plan JSON, the input is read at its version
    /// (`ObjectConversion.sourceVersion`) and the plan's stages run from it to `targetVersion` (the
    /// current version when nil), duplicates resolved under `policy`.
    public init(input: String, format: Format? = nil, modelPath: String?, options: RunOptions,
                sourceVersion given: String? = nil, targetVersion: String? = nil, policy: DeduplicationPolicy = .merge) throws {
        self.input = input; self.options = options; self.policy = policy
        // A model that is not there is no input (66), whatever the input (was: ignored for a store of objects, which carries its own).
        if let modelPath, !Format.isPostgreSQLAddress(modelPath) { _ = try FileSystem.kind(of: modelPath, failing: .noInput) }
        let isSwift = modelPath.map { ModelPlanSource.isSwiftSource($0) } ?? false
        var plan = try modelPath.flatMap { try ModelPlanSource.versioned($0, isSwift: isSwift) }
        // Source without a VersionedSchema (or plan JSON of one unnamed version) is one model, read and
        // written as it is: no version to tell, no stage to run.
        var unversioned: ObjectModel?
        if let declared = plan, declared.isUnversioned, let modelPath {
            if let named = given ?? targetVersion {
                throw TripError.usage("\(modelPath) declares no VersionedSchema: it is one model with no versions, so there is no version \(named) to read or write at",
                                      notes: ["drop --source-version and --target-version, or give --model the app's VersionedSchema enums and SchemaMigrationPlan"])
            }
            unversioned = declared.current
            plan = nil
        }
        plan = try plan.map { try $0.givingDefaults(options.modelDefaults) }
        if plan == nil, let first = options.modelDefaults.first {
            throw TripError.usage("--default \(first.entity).\(first.attribute): defaults are given to an app's plan (--model naming its Swift "
                                  + "source, plan JSON or an .xcdatamodeld of several versions)")
        }
        self.plan = plan
        // The input's own model and version, where it carries them (a store), else the plan's version.
        var read: (model: ObjectModel, source: StoreModel.Source, numbers: [String: Int64]?, format: Format)
        if Format.isPostgreSQLAddress(input) {
            read = (try PGObjectReader(address: input, schema: options.reading.pgSchema).model, .objectStore, nil, .postgresql)
        } else if ObjectConversion.isObjectStore(input) {
            read = (try SQLiteObjectReader.model(storeAt: input), .objectStore, nil, .sqlite)
        } else if StoreModel.isStoreFile(input) {
            let store = try StoreModel.read(storeAt: input, modelPath: plan == nil ? modelPath : nil)
            read = (store.model, store.source, store.entityNumbers.mapValues(Int64.init), .coredata)
        } else if plan != nil || unversioned != nil, let modelPath {
            guard let current = unversioned ?? plan?.current else { throw TripError.data("\(modelPath): a plan without a version") }
            guard let f = format ?? Format(streamPath: input), ObjectConversion.outputFormats.contains(f) else {
                throw TripError.usage("\(input): objects of a model are read from JSON, JSON Lines, YAML, XML, or a CSV or TSV tables directory; pass --from")
            }
            read = (current, Self.planSource(modelPath, isSwift: isSwift), nil, f)
        } else {
            read = try ObjectConversion.exportModel(input, format: format, modelPath: modelPath)
        }
        self.format = read.format; entityNumbers = read.numbers
        if read.format == .csv || read.format == .tsv, FileSystem.kind(input) != .directory {
            throw TripError.usage("\(input): the objects of a model in \(read.format.rawValue) are a directory of tables, one file per entity; name the directory")
        }
        // An export's objects are deduplicated on what the model written makes unique (a store's were
        // kept unique by the framework or tripconv that wrote it): as SwiftData's insert of a second
        // object with a unique value updates the first, under --dedupe.
        let isExport = ![.coredata, .sqlite, .postgresql].contains(read.format)
        guard let plan else {
            model = read.model; modelSource = read.source
            migration = isExport ? ObjectMigration(deduplicating: read.model) : nil
            sourceVersion = nil; sourceVersionEvidence = nil
            return
        }
        let (version, evidence) = try ObjectConversion.sourceVersion(of: plan, input: input, format: read.format,
                                                                     storeVersions: [.coredata, .sqlite, .postgresql].contains(read.format)
                                                                        ? read.model.versionIdentifiers : [],
                                                                     given: given, options: options)
        sourceVersion = version; sourceVersionEvidence = evidence
        modelSource = modelPath.map { Self.planSource($0, isSwift: isSwift) } ?? .planJSON
        // tripconv's stores are read in the model they carry (matched to the version by names); a Core
        // Data store and an export in the plan's version.
        let own = read.format == .sqlite || read.format == .postgresql ? read.model : nil
        let target = targetVersion ?? plan.current?.versionIdentifiers.first ?? version
        let migration = try ObjectMigration(plan: plan, from: version, to: target, reading: own, deduplicatesTarget: isExport)
        model = migration.source
        self.migration = migration.stages.isEmpty && migration.deduplications.isEmpty ? nil : migration
    }

    /// Where a plan came from, as the run's model source says it.
    private static func planSource(_ path: String, isSwift: Bool) -> StoreModel.Source {
        isSwift ? .swiftSource : ModelPlanSource.isXcodeVersions(path) ? .xcodeVersions : .planJSON
    }

    /// The version the objects of `input` are at, and how that was told: the one place a version is
    /// chosen for a plan's run. A store's own version identifiers (`Z_METADATA`'s
    /// `NSStoreModelVersionIdentifiers`, tripconv's store's `tripconv_model`) when the plan lists one,
    /// else `--source-version`, else what the data shows (`ObjectVersionDetection`: the names and
    /// kinds of an export's first objects, a store's tables), as the trip path detects a version.
    static func sourceVersion(of plan: ModelPlan, input: String, format: Format, storeVersions: [String],
                              given: String?, options: RunOptions) throws -> (String, String) {
        let listed = plan.versions.compactMap(\.versionIdentifiers.first)
        if let own = storeVersions.first(where: listed.contains) {
            if let given, given != own {
                throw TripError.usage("\(input): the store says it is at \(own), and --source-version says \(given)")
            }
            return (own, "the store's version identifier")
        }
        if let given {
            guard listed.contains(given) else {
                throw TripError.usage("--source-version \(given): the plan's versions are \(listed.joined(separator: ", "))")
            }
            return (given, "--source-version")
        }
        guard !listed.isEmpty else { throw TripError.data("\(input): the plan has no version") }
        let detected = try ObjectVersionDetection.detect(input: input, format: format, plan: plan, options: options)
        return (detected.version, detected.evidence.isEmpty ? "told by the data" : detected.evidence.joined(separator: "; "))
    }

    /// The model of an export read with `modelPath` (a store, tripconv's store, an Xcode model, model JSON).
    private static func exportModel(_ input: String, format: Format?, modelPath: String?) throws
        -> (model: ObjectModel, source: StoreModel.Source, numbers: [String: Int64]?, format: Format) {
        guard let modelPath else {
            throw TripError.usage("\(input): the objects of another app's model are read with --model naming that model "
                                  + "(the store they came from, an .xcdatamodeld, or model JSON from `tripconv schema --model STORE --json`)")
        }
        let file = try model(at: modelPath, pgSchema: nil, counting: false)
        guard let f = format ?? Format(streamPath: input), ObjectConversion.outputFormats.contains(f) else {
            throw TripError.usage("\(input): objects of a model are read from JSON, JSON Lines, YAML, XML, or a CSV or TSV tables directory; pass --from")
        }
        return (file.model, file.source, nil, f)
    }

    /// The model at `path`: a PostgreSQL or SQLite store of objects tripconv wrote (its model table;
    /// a PostgreSQL one's tables in `pgSchema`), a Core Data or SwiftData store (its model cache, else
    /// its tables, with its metadata), else a model file (`StoreModel.readModelFile`). `counting`
    /// counts the objects of each entity of tripconv's stores (a Core Data store's are counted always).
    static func model(at path: String, pgSchema: String?, counting: Bool) throws -> StoreModel {
        if Format.isPostgreSQLAddress(path) {
            if counting { return try objectStoreModel(address: path, schema: pgSchema) }
            return StoreModel(model: try PGObjectReader(address: path, schema: pgSchema).model, source: .objectStore)
        }
        if isObjectStore(path) {
            return try counting ? objectStoreModel(path) : StoreModel(model: SQLiteObjectReader.model(storeAt: path), source: .objectStore)
        }
        if StoreModel.isStoreFile(path) { return try StoreModel.read(storeAt: path) }
        let (model, file, source) = try StoreModel.readModelFile(path)
        return StoreModel(model: model, source: source, modelFile: file)
    }

    /// A reader of the input's objects; a store is opened at one snapshot each time. A graph reader's
    /// index of keys goes in `keys` (a run's, under its budget; in memory when nil).
    func reader(keys: ObjectKeyTable? = nil) throws -> any ObjectRecordReader {
        switch format {
        case .coredata:
            return try CoreDataObjectReader(path: input, model: model, entityNumbers: entityNumbers,
                                            temporaryDirectory: options.temporaryDirectory)
        case .json, .jsonl:
            return try JSONObjectReader(InputLocation(input), format: format, model: model, options: options.reading, keys: keys,
                                        removals: referenceRemovals, repeatsUnique: migration?.repeatsUnique)
        case .yaml:
            return try YAMLObjectReader(InputLocation(input), model: model, options: options.reading, keys: keys, removals: referenceRemovals,
                                        repeatsUnique: migration?.repeatsUnique)
        case .xml:
            return try XMLObjectReader(path: input, model: model, options: options.reading, keys: keys, removals: referenceRemovals,
                                       repeatsUnique: migration?.repeatsUnique)
        case .sqlite:
            return try SQLiteObjectReader(path: input, temporaryDirectory: options.temporaryDirectory)
        case .postgresql:
            return try PGObjectReader(address: input, schema: options.reading.pgSchema)
        case .csv, .tsv:
            return try CSVObjectTablesReader(directory: input, format: format, model: model, options: options.reading, keys: keys,
                                             removals: referenceRemovals,
                                             repeatsUnique: migration?.repeatsUnique)
        default:
            throw TripError.usage("\(input): \(format.rawValue) holds no objects of another app's model")
        }
    }

    /// The input's objects as the run writes them: through the plan's stages and the duplicates'
    /// resolution (a first pass over a reader of its own when needed, its state in `states`: in memory
    /// up to the budget and in a temporary database past it), or as read; and the plan's reader.
    /// `rowsStraight`: a Core Data store whose rows `CoreDataJSONRun` writes as they are read, on the
    /// writing thread: its reader as it is, not read ahead (with no plan to run).
    func openSource(_ holdings: SpillingObjectHoldings, rowsStraight: Bool = false) throws -> (any ObjectRecordReader, ObjectMigrationReader?) {
        // The model's required to-one relationships, enforced on the objects as written (after the plan's stages).
        guard !rowsStraight, let required = ObjectRequiredRelationships(migration?.target ?? model) else {
            return try opener(holdings, rowsStraight: rowsStraight)()
        }
        let open = try opener(holdings, rowsStraight: false)
        var last: ObjectMigrationReader?
        let removals = referenceRemovals
        let reader = try ObjectRequiredRelationshipReader(required, rejected: holdings.rejectedForRequired, removed: { object, name, target in
            let entity = required.model.entities[target.entity].name
            removals.add(object.origin, member: name, place: nil, reason: "the \(entity) it names is rejected for a required relationship")
        }, open: {
            let (r, plan) = try open()
            last = plan
            return r
        })
        return (reader, last)
    }

    /// What opens the input's objects as the run writes them, once or again from the start each time
    /// it is called (see `openSource`): through the plan's stages and the duplicates' resolution,
    /// or as read; and the plan's reader. A JSON, JSON Lines, YAML or XML input, or a tables directory,
    /// is read for its index once, every later read taking that index (`reopened`).
    private func opener(_ holdings: SpillingObjectHoldings, rowsStraight: Bool) throws
        -> () throws -> (any ObjectRecordReader, ObjectMigrationReader?) {
        // Each read of the input counts its removals anew (a plan's first read, an append's two): the last read's are the run's.
        let removals = referenceRemovals
        // JSON, JSON Lines, YAML, XML and tables: a later read takes the first's index of the objects (`reopened`).
        var graph: (any ReopenableObjectReader)?
        let ahead = readsAhead
        // A reader of the input from its start, given only the entities `only` marks (when not nil).
        let read: ([Bool]?) throws -> any ObjectRecordReader = { only in
            removals.reset()
            var r: any ObjectRecordReader
            if let again = try graph?.reopened() {
                r = again
                if let only, let g = r as? any ReopenableObjectReader { r = g.restricted(to: only) }
            } else {
                r = try reader(keys: holdings.keys())
                graph = r as? any ReopenableObjectReader
                if let only, let g = graph { r = g.restricted(to: only) }
            }
            return r
        }
        guard let migration else {
            return {
                // A store, JSON or JSON Lines is read on a thread of its own while this one writes (`--jobs 1`: on this one).
                let source = try read(nil)
                return (ahead && !rowsStraight ? ObjectReadAhead.reading(source) : source, nil)
            }
        }
        return {
            // Its first read gives only the objects the plan's first pass needs (`restricted`).
            // JSON, JSON Lines and YAML are read through their decoder, XML and tables by `ObjectValueText` as the
            // attribute's kind with required values checked: objects of the model's kinds and required values.
            let reading = try ObjectMigrationReader(migration, policy: policy, state: holdings.make, setAside: holdings.setAside,
                                                    keepsKinds: [.json, .jsonl, .yaml, .xml, .csv, .tsv].contains(format)) { only in
                let r = try read(only)
                return ahead ? ObjectReadAhead.reading(r) : r
            }
            // The second pass on three threads: its objects made on one, migrated and resolved on another, written on this one.
            return (ahead ? ObjectReadAhead.reading(reading) : reading, reading)
        }
    }

    /// Whether the input's objects are made on a thread of their own (`ObjectReadAhead`) while this
    /// one runs the stages and writes: a Core Data store's, JSON's and JSON Lines' (the second pass of
    /// a graph's text; its first, the index, runs before, on this thread), unless `--jobs 1`.
    private var readsAhead: Bool { [.coredata, .json, .jsonl].contains(format) && options.readOptions.parsesAhead }

    /// Reads every object into `output` in `format`, each set-aside record to `setAside`; the output is
    /// complete or absent. CSV and TSV write a directory of tables (`output` names it).
    public func run(to output: OutputLocation, format out: Format, setAside: (SetAsideRecord) throws -> Void) throws -> ObjectConversionSummary {
        var summary = ObjectConversionSummary()
        // One budget for the run: the reader's index, the plan's deduplication state and set-aside
        // objects, the writer's names and queues.
        let budget = SpillBudget(limit: options.memoryLimit, directory: options.temporaryDirectory)
        let holdings = SpillingObjectHoldings(budget: budget)
        // A store to JSON or JSON Lines with no stage: its rows written as they are read, on this thread.
        let rowsStraight = migration == nil && writesRowsStraight && format == .coredata && (out == .json || out == .jsonl)
            && ObjectRequiredRelationships(model) == nil
        let opened = try openSource(holdings, rowsStraight: rowsStraight)
        if rowsStraight, let store = opened.0 as? CoreDataObjectReader {
            var writer = try JSONObjectWriter(output, format: out, options: options.writeOptions(TripMigrationPlan.currentSchema, budget: budget))
            try CoreDataJSONRun.run(store, into: &writer, summary: &summary, setAside: setAside)
            summary.note(spilled: holdings)
            return summary
        }
        var source = opened.0
        let planReader = opened.1
        let writeOptions = options.writeOptions(TripMigrationPlan.currentSchema, budget: budget)
        switch out {
        case .yaml:
            var writer = try YAMLObjectWriter(output, options: writeOptions)
            try ObjectPipeline.run(&source, into: &writer, summary: &summary, setAside: setAside)
        case .json, .jsonl:
            var writer = try JSONObjectWriter(output, format: out, options: writeOptions)
            try ObjectPipeline.run(&source, into: &writer, summary: &summary, setAside: setAside)
        case .xml:
            var writer = try XMLObjectWriter(output, options: writeOptions)
            try ObjectPipeline.run(&source, into: &writer, summary: &summary, setAside: setAside)
        case .csv, .tsv:
            guard case .file(let directory) = output else {
                throw TripError.usage("objects are written to CSV and TSV as a directory of tables, one per entity: name it with -o DIR")
            }
            var writer = CSVObjectTablesWriter(directory: directory, format: out, options: writeOptions)
            try ObjectPipeline.run(&source, into: &writer, summary: &summary, setAside: setAside)
        case .sqlite:
            guard case .file(let path) = output else {
                throw TripError.usage("objects are written to a SQLite store in a file: name it with -o FILE")
            }
            var writer = SQLiteObjectWriter(path: path)
            try ObjectPipeline.run(&source, into: &writer, summary: &summary, setAside: setAside)
        case .postgresql:
            guard case .file(let address) = output else {
                throw TripError.usage("objects are written to a PostgreSQL store named with -o ADDRESS (a postgresql:// URI or key=value pairs)")
            }
            var writer = PGObjectWriter(address: address, schema: options.reading.pgSchema)
            try ObjectPipeline.run(&source, into: &writer, summary: &summary, setAside: setAside)
        default:
            throw TripError.usage("objects of another app's model are written to JSON, JSON Lines, YAML, XML, CSV, TSV, SQLite or PostgreSQL; "
                                  + "\(out.rawValue) is not one yet")
        }
        if let planReader { summary.note(planReader) }
        summary.note(removed: referenceRemovals)
        summary.note(spilled: holdings)
        return summary
    }
}

extension ObjectConversionSummary {
    /// Takes in the references a run's reader removed: with the stages' own when a plan ran.
    mutating func note(removed removals: ObjectReferenceRemovals) {
        let n = removals.count
        guard n > 0 else { return }
        referencesRemoved = n
        referenceRemovalNotes = removals.firstMessages
        updateMigrationCounts { $0.referencesRemoved += n }
    }

    /// Takes in what a run's holdings moved to temporary files: the entries and bytes of each that
    /// spilled (the reader's index, the plan's deduplication, the objects set aside, the writer's names
    /// and waiting objects, which the budget counts), and their names for the summary and the report.
    mutating func note(spilled holdings: SpillingObjectHoldings) {
        var parts = holdings.spilledParts
        let written = holdings.budget.spilled
        if written.trips > 0 { parts.append(("the writer's holdings", written.trips, written.bytes)) }
        for (part, entries, bytes) in parts {
            if !spilledParts.contains(part) { spilledParts.append(part) }
            spilledEntries += entries; spilledBytes += bytes
        }
    }
}
