import ArgumentParser
import TripKit
import TripFormats

/// `tripconv detect --model SWIFT|plan.json INPUT...`: which of the plan's versions each input's
/// objects are at, and what told it (issue 27).
extension Detect {
    /// Describes each input against the plan at `path`: a store as without `--model` (another app's, or
    /// SampleTrips'), then the plan's version; an export by the plan's version alone.
    func describeAgainstPlan(_ path: String, options: RunOptions, budget: SpillBudget) throws -> (lines: [String], nodes: [JSONText.Node]) {
        // A model that is not there is no input (66), as for convert and schema (was: 64, "takes an app's Swift source").
        _ = try FileSystem.kind(of: path, failing: .noInput)
        let swift = ModelPlanSource.isSwiftSource(path)
        guard let plan = try ModelPlanSource.versioned(path, isSwift: swift), !plan.isUnversioned else {
            throw TripError.usage("\(path): detect --model takes an app's Swift source (a .swift file or a folder), plan JSON or an .xcdatamodeld "
                                  + "of several versions, whose versions it tells apart",
                                  notes: ["a store's model, an Xcode model of one version, or source without a VersionedSchema is one version: "
                                           + "`tripconv detect STORE` describes a store"])
        }
        try InputResolver.refuseTerminal(inputs, usage: Self.usageString())
        var readOptions = reading.readOptions
        readOptions.copiesStores = true
        // A directory of CSV or TSV files is one input, a tables directory; any other is the files under it (a tables directory's one).
        let resolved = try InputResolver.resolveObjects(inputs, from: reading.from, options: readOptions)
        var expanded = ExpandedInputs(resolved, options: readOptions) { Diagnostics.print(InputResolver.nothingFound(in: $0, passedOver: $1)) }
        var lines: [String] = []
        var nodes: [JSONText.Node] = []
        while let input = try expanded.next() {
            let (line, node) = try describe(input, plan: plan, options: options, budget: budget)
            lines.append(line); nodes.append(node)
        }
        if expanded.given == 0 { throw TripError(.noInput, "nothing to read in the inputs given") }
        return (lines, nodes)
    }


    /// One input's line and JSON object; standard input or an archive's member from a temporary copy.
    private func describe(_ input: RunInput, plan: ModelPlan, options: RunOptions, budget: SpillBudget) throws -> (String, JSONText.Node) {
        guard case .file(let path) = input.location else {
            let copy = try InputCopy(input.location, temporaryDirectory: options.temporaryDirectory, options: reading.readOptions)
            defer { copy.remove() }
            return try copy.naming {
                guard let format = input.format else { throw TripError.usage("\(copy.name): its format cannot be told; pass --from") }
                let store = format.isStore || StoreModel.isStoreFile(copy.path)
                let copied = RunInput(.file(copy.path), format: format)
                return try describe(copied, at: copy.path, named: copy.name, isStore: store, plan: plan, options: options, budget: budget)
            }
        }
        let store = input.format?.isStore == true || Format.isPostgreSQLAddress(path) || StoreModel.isStoreFile(path)
        return try describe(input, at: path, named: input.location.name, isStore: store, plan: plan, options: options, budget: budget)
    }

    private func describe(_ input: RunInput, at path: String, named name: String, isStore: Bool, plan: ModelPlan,
                          options: RunOptions, budget: SpillBudget) throws -> (String, JSONText.Node) {
        let format = isStore ? nil : input.format
        let seen = try ObjectVersionDetection.evidence(input: path, format: format, plan: plan, options: options)
        let verdict = try ModelVersionDetection.detect(seen, plan: plan, input: name)
        let told = verdict.basis == .marker || verdict.basis == .versionHashes ? verdict.evidence.joined(separator: "; ")
            : "\(verdict.basis.rawValue): " + verdict.evidence.joined(separator: "; ")
        let planNode = JSONText.Node.object([
            ("version", .string(verdict.version)),
            ("basis", .string(verdict.basis.rawValue)),
            ("evidence", .array(verdict.evidence.map { .string($0) })),
            ("alike", .array(verdict.alike.map { .string($0) })),
        ])
        if isStore {
            var report = try InputReport.ofAnyStore(input, pgSchema: reading.pgSchema) ?? InputReport(input, options: reading.readOptions, budget: budget)
            report.name = name
            var node = report.node
            if case .object(var pairs) = node { pairs.append(("planVersion", planNode)); node = .object(pairs) }
            return (report.line + "; version \(verdict.version) of the plan (\(told))", node)
        }
        let formatName = (format ?? (FileSystem.kind(path) == .directory ? .csv : Format(streamPath: path)))?.rawValue ?? "objects"
        let looked = seen.objectsLooked
        let line = "\(name): \(formatName) objects, version \(verdict.version) of the plan (\(told)), "
            + (seen.looked == "the header of each table" ? "\(seen.entities.count) table\(seen.entities.count == 1 ? "" : "s") looked at"
               : "\(looked) object\(looked == 1 ? "" : "s") looked at")
        let node = JSONText.Node.object([
            ("input", .string(name)),
            ("format", .string(formatName)),
            ("looked", seen.looked.map { .string($0) } ?? .null),
            ("objectsLooked", .int(looked)),
            ("planVersion", planNode),
        ])
        return (line, node)
    }
}
