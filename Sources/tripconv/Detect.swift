import ArgumentParser
import TripKit
import TripFormats

/// `tripconv detect`: what each input is.
struct Detect: ParsableCommand {
    static let configuration = CommandConfiguration(
        // Named, not derived (Convert.swift says why).
        commandName: "detect",
        abstract: "Print each input's format, version and counts (an archive's members each, naming the archive); for a "
            + "Core Data or SwiftData store of another app, its entities with their objects, its model version and where its model came from "
            + "(a store on standard input or in an archive from a temporary copy in --temp-dir); with --model naming an app's Swift source, plan JSON or an "
            + ".xcdatamodeld of several versions, which of its versions each input's objects are at, and why.")

    @Argument(help: ArgumentHelp("Input files, directories or archives; - for standard input.", valueName: "input"))
    var inputs: [String] = []

    @OptionGroup var reading: ReadingOptions

    @Flag(name: .customLong("json"), help: "Print a JSON array with one object per input.")
    var json = false

    @Option(name: .customLong("model"), help: ArgumentHelp(
        "An app's Swift source (a .swift file or a folder), plan JSON or an .xcdatamodeld of several versions: say which of its versions each input's objects are at, and what "
            + "told it (a marker, else a Core Data store's NSStoreModelVersionHashes matched against an .xcdatamodeld's versions, else the names and "
            + "kinds seen, and a store's uniqueness), and which versions the data cannot tell apart "
            + "(the earliest is read).", valueName: "path"))
    var model: String?

    @OptionGroup var memory: MemoryOptions

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Print a line per input whose names went to temporary files, with how many.")
    var verbose = false

    func run() throws {
        // A store copied from standard input or an archive is removed on a signal too.
        TemporaryPaths.installSignalCleanup()
        try runReportingErrors {
            var options = RunOptions()
            memory.apply(to: &options)
            try options.checkTemporaryDirectory()
            let budget = options.spillBudget(usingJobs: true)
            if let model {
                // The inputs are read as convert --model reads them: --pg-schema, --csv-delimiter, --input-encoding, the expansion limits
                // (was: the defaults, so a store in --pg-schema's schema was looked for in the search path's).
                options.reading = reading.readOptions
                let (lines, nodes) = try describeAgainstPlan(model, options: options, budget: budget)
                writeAll(1, json ? JSONText.Node.array(nodes).render(indent: 2) + "\n" : lines.map { $0 + "\n" }.joined())
                return
            }
            try InputResolver.refuseTerminal(self.inputs, usage: Self.usageString())
            // A store on standard input or in an archive is described from a temporary copy.
            var readOptions = reading.readOptions
            readOptions.copiesStores = true
            let inputs = try InputResolver.resolve(self.inputs, from: reading.from, options: readOptions)
            var nodes: [JSONText.Node] = []
            var lines: [String] = []
            var expanded = ExpandedInputs(inputs, options: readOptions) {
                Diagnostics.print(InputResolver.nothingFound(in: $0, passedOver: $1))
            }
            while let input = try expanded.next() {
                let report = try InputReport.ofCopiedStore(input, options: reading.readOptions, budget: budget, temporaryDirectory: options.temporaryDirectory)
                    ?? InputReport.ofAnyStore(input, pgSchema: reading.pgSchema) ?? InputReport(input, options: reading.readOptions, budget: budget)
                if verbose, report.spilled.names > 0 {
                    Diagnostics.print("tripconv: \(report.name): " + ConversionSummary.spilledPhrase(report.spilled.names, "name", bytes: report.spilled.bytes))
                }
                nodes.append(report.node)
                lines.append(report.line)
            }
            // Every directory's and archive's files passed over: said above, and a failure.
            if expanded.given == 0 { throw TripError(.noInput, "nothing to read in the inputs given") }
            let text = json ? JSONText.Node.array(nodes).render(indent: 2) + "\n" : lines.map { $0 + "\n" }.joined()
            writeAll(1, text)
        }
    }
}

/// The facts `detect` reports of one input.
struct InputReport {
    var name: String
    var detection: Detection
    var trips = 0
    var rejected = 0
    var repeatedNames = 0
    /// The (name, count) records that went to temporary files, and their bytes there.
    var spilled = (names: 0, bytes: 0)
    /// The archive the input is a member of, if any.
    var member: ArchiveMember?
    /// How its bytes told its format, where neither its extension nor --from did.
    var sniffed: SniffedFormat?
    /// For a Core Data store of another app than SampleTrips: its model and what it says of itself.
    var store: StoreModel?

    /// The report of a Core Data store that holds no trips (another app's): its entities with their
    /// objects, its version, its framework, its `-wal`, where its model came from. Nil for any other input.
    static func ofAnyStore(_ input: RunInput, pgSchema: String?) throws -> InputReport? {
        if input.format == .postgresql, case .file(let address) = input.location, ObjectConversion.isOtherAppStore(address, pgSchema: pgSchema) {
            return InputReport(name: input.location.name, detection: Detection(format: Format.postgresql.rawValue), sniffed: input.sniffed,
                               store: try ObjectConversion.objectStoreModel(address: address, schema: pgSchema))
        }
        if input.format == .sqlite, case .file(let path) = input.location, ObjectConversion.isObjectStore(path) {
            return InputReport(name: input.location.name, detection: Detection(format: Format.sqlite.rawValue), sniffed: input.sniffed,
                               store: try ObjectConversion.objectStoreModel(path))
        }
        guard input.format == .coredata || input.format == .sqlite, case .file(let path) = input.location, let names = StoreModel.entityNames(storeAt: path),
              !names.contains(TripMigrationPlan.currentSchema.rootEntity.name) else { return nil }
        let store = try StoreModel.read(storeAt: path)
        return InputReport(name: input.location.name, detection: Detection(format: Format.coredata.rawValue), sniffed: input.sniffed, store: store)
    }

    /// The report of a store on standard input or in an archive, read from a temporary copy (removed
    /// before this returns) as `detect STORE` reads a file, and named as the input; nil for any other input.
    static func ofCopiedStore(_ input: RunInput, options: ReadOptions, budget: SpillBudget, temporaryDirectory: String?) throws -> InputReport? {
        guard let format = input.format, format == .coredata || format == .sqlite else { return nil }
        if case .file = input.location { return nil }
        let copy = try InputCopy(input.location, temporaryDirectory: temporaryDirectory, options: options)
        defer { copy.remove() }
        return try copy.naming {
            let copied = RunInput(.file(copy.path), format: format)
            var report = try ofAnyStore(copied, pgSchema: nil) ?? InputReport(copied, options: options, budget: budget)
            report.name = copy.name
            report.sniffed = input.sniffed
            if case .member(let m) = input.location { report.member = m }
            return report
        }
    }

    private init(name: String, detection: Detection, sniffed: SniffedFormat?, store: StoreModel) {
        self.name = name; self.detection = detection; self.sniffed = sniffed; self.store = store
    }

    /// Reads the input through, counting names under `budget`.
    init(_ input: RunInput, options: ReadOptions, budget: SpillBudget) throws {
        name = input.location.name
        sniffed = input.sniffed
        if case .member(let m) = input.location { member = m }
        var reader = try input.makeReader(options: options)
        let names = RepeatedValues<NameBytes>(budget: budget)
        var nameSlot: Int?
        var layout: SchemaVersion?
        while let item = try reader.next() {
            switch item {
            case .trip(let record):
                trips += 1
                if nameSlot == nil || layout != (reader.detection.recordsVersion ?? reader.detection.version) {
                    layout = reader.detection.recordsVersion ?? reader.detection.version
                    nameSlot = layout.flatMap { TripMigrationPlan.schema(for: $0)?.rootEntity.attributeIndex("name") }
                }
                if let slot = nameSlot, let n = record.object.attributes[slot].stringValue { try names.add(name: n) }
            case .rejected:
                rejected += 1
            }
        }
        detection = reader.detection
        repeatedNames = try names.repeatedNames()
        spilled = (names.spilledValues, names.spilledBytes)
    }

    var line: String {
        if let store { return storeLine(store) }
        let version = detection.version.map(\.description) ?? "unknown"
        var s = "\(name): \(detection.format) \(version) (\(detection.evidence)), "
        if let sniffed { s += "format \(sniffed.phrase), " }
        if let c = detection.compression { s += "\(c)-compressed, " }
        if let member, let format = member.archiveFormat {
            s += "in a \(member.archiveCompression.map { "\($0.rawValue)-compressed " } ?? "")\(format.rawValue) archive, "
        }
        s += "\(trips) trip\(trips == 1 ? "" : "s"), \(repeatedNames) name\(repeatedNames == 1 ? "" : "s") repeated"
        if rejected > 0 { s += ", \(rejected) bad record\(rejected == 1 ? "" : "s")" }
        return s
    }

    var node: JSONText.Node {
        .object([
            ("input", .string(name)),
            ("format", .string(detection.format)),
            ("version", detection.version.map { .string($0.description) } ?? .null),
            ("evidence", .string(detection.evidence.description)),
            ("compression", detection.compression.map { .string($0) } ?? .null),
            ("sniffed", sniffed.map { .object([("evidence", .string($0.evidence)), ("assumed", .bool($0.isAssumed))]) } ?? .null),
            ("archive", member.map { m in
                .object([
                    ("path", .string(m.archiveName)),
                    ("format", m.archiveFormat.map { .string($0.rawValue) } ?? .null),
                    ("compression", m.archiveCompression.map { .string($0.rawValue) } ?? .null),
                    ("member", .string(m.path)),
                ])
            } ?? .null),
            ("trips", .int(trips)),
            ("repeatedNames", .int(repeatedNames)),
            ("badRecords", .int(rejected)),
        ] + (store.map { [("store", ModelDescription.storeNode($0))] } ?? []))
    }

    /// `default.store: coredata store of another app, model version 1.0.0, framework version 1345, model from …;
    /// 3 entities: Component 1, CraftingRecipe 2, Item 4 objects; a -wal beside it (read)`.
    func storeLine(_ store: StoreModel) -> String {
        var s = "\(name): \(detection.format) store of another app than SampleTrips, "
        let versions = store.versionIdentifiers.filter { !$0.isEmpty }
        s += versions.isEmpty ? "no model version" : "model version \(versions.joined(separator: ", "))"
        if let v = store.frameworkVersion { s += ", framework version \(v)" }
        if let sniffed { s += ", format \(sniffed.phrase)" }
        s += ", model from \(ModelDescription.origin(store))"
        let entities = store.model.entities
        s += "; \(entities.count) entit\(entities.count == 1 ? "y" : "ies"): "
            + entities.map { "\($0.name) \(store.objectCounts[$0.name] ?? 0)" }.joined(separator: ", ") + " objects"
        if store.hasPendingWAL { s += "; a -wal file beside it holds changes not yet checkpointed (read here)" }
        if !store.model.inferences.isEmpty { s += "; \(store.model.inferences.count) guesses (tripconv schema --model says them)" }
        return s
    }
}
