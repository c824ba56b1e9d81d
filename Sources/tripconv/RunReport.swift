import ArgumentParser
import TripKit
import TripFormats

/// `--report FILE`: the run's accounting as JSON, written whether the run succeeded or not.
///
/// read = written + merged + dropped + rejected holds for every successful run. A store migrated in
/// place first (`--migrate`) has an object of its own, `storeMigration`, with `migrate`'s figures:
/// its trips are not the inputs'.
enum RunReport {
    static func write(_ path: String, summary: ConversionSummary?, migration: MigrationSummary? = nil, elapsed: Double,
                      error: (any Error)?) throws {
        var pairs: [(String, JSONText.Node)] = [("status", .string(error == nil ? "ok" : "failed"))] + failure(error)
        if let s = summary {
            pairs += [
                ("read", .int(s.read)), ("written", .int(s.written)), ("merged", .int(s.merged)),
                ("dropped", .int(s.dropped)), ("rejected", .int(s.rejected)),
                ("replacedInStore", .int(s.replacedInStore)),
                ("targetVersion", .string(s.targetVersion.description)), ("policy", .string(s.policy.rawValue)),
                ("deduplicatedAcrossInputs", .int(s.deduplicatedAcrossInputs)),
                ("inputs", .array(s.inputs.map { i in
                    .object([
                        ("input", .string(i.name)), ("format", .string(i.detection.format)),
                        ("version", i.detection.version.map { .string($0.description) } ?? .null),
                        ("evidence", .string(i.detection.evidence.description)),
                        ("read", .int(i.read)), ("rejected", .int(i.rejected)),
                        ("deduplicatedInStages", .int(i.deduplicatedInStages)),
                        ("transientIgnored", .int(i.detection.transientIgnored)),
                        ("stages", .array(i.stages.map { .string($0) })),
                    ])
                })),
                ("stages", .array(stageCounts(s))),
            ]
            if let migration { pairs.append(("storeMigration", migration.reportNode)) }
            if s.spilledTrips > 0 {
                // Only a run that spilled says so: the report of a run in memory is as it always was.
                pairs += [("spilledTrips", .int(s.spilledTrips)), ("spilledBytes", .int(s.spilledBytes))]
            }
        }
        pairs.append(("elapsedSeconds", .milliseconds(elapsed)))
        let output = try ByteOutput(.file(path))
        try output.write(JSONText.Node.object(pairs).render(indent: 2) + "\n")
        try output.commit()
    }

    /// The report of a run over another app's objects: for its one input (`-o`), its counts, per entity,
    /// and the model's source at the top; with `--output-dir` (`perInput`), the totals and `inputs`, each
    /// input's output, status (its error, if it failed) and those counts.
    static func write(_ path: String, objects outcomes: [Convert.ObjectOutcome], perInput: Bool, elapsed: Double, error: (any Error)?) throws {
        func counts(_ o: Convert.ObjectOutcome) -> [(String, JSONText.Node)] {
            guard let s = o.summary else { return [] }
            return [
                ("read", .int(s.read)), ("written", .int(s.written)), ("rejected", .int(s.rejected)),
                // Written objects that replaced a stored one (an append to a store of objects under --dedupe last), as a trip run's report.
                ("replacedInStore", .int(s.replacedInStore)),
                ("input", .string(o.input)), ("model", .string(o.modelSource ?? "")),
                ("entities", .array(zip(s.entities, s.counts).map { .object([("entity", .string($0)), ("written", .int($1))]) })),
            ] + planCounts(s) + spilled(s)
                // A plan's run counts them in its migration object.
                + (s.referencesRemoved > 0 && s.migration == nil ? [("referencesRemoved", .int(s.referencesRemoved))] : [])
        }
        var pairs: [(String, JSONText.Node)] = [("status", .string(error == nil && !outcomes.contains { $0.error != nil } ? "ok" : "failed"))]
            + failure(error ?? outcomes.first { $0.error != nil }?.error)
        if !perInput, let only = outcomes.first {
            pairs += counts(only) + storeMigration(only)
        } else if perInput {
            let summaries = outcomes.compactMap(\.summary)
            pairs += [("read", .int(summaries.map(\.read).reduce(0, +))), ("written", .int(summaries.map(\.written).reduce(0, +))),
                      ("rejected", .int(summaries.map(\.rejected).reduce(0, +))),
                      ("replacedInStore", .int(summaries.map(\.replacedInStore).reduce(0, +)))]
            if summaries.contains(where: { $0.migration != nil || $0.deduplicated }) {
                pairs += [("merged", .int(summaries.map(\.merged).reduce(0, +))), ("dropped", .int(summaries.map(\.dropped).reduce(0, +)))]
            }
            pairs.append(("inputs", .array(outcomes.map { o in
                .object([("input", .string(o.input)), ("output", o.output.map { .string($0) } ?? .null),
                         ("status", .string(o.error == nil ? "ok" : "failed"))] + failure(o.error) + counts(o).filter { $0.0 != "input" })
            })))
        }
        pairs.append(("elapsedSeconds", .milliseconds(elapsed)))
        let output = try ByteOutput(.file(path))
        try output.write(JSONText.Node.object(pairs).render(indent: 2) + "\n")
        try output.commit()
    }

    /// What an app's plan did in an object run (nothing without a plan): read = written + merged +
    /// dropped + rejected, and the stages' own counts.
    private static func planCounts(_ s: ObjectConversionSummary) -> [(String, JSONText.Node)] {
        guard let (versions, stages, c) = s.migration else {
            // Deduplicated with no stage: what --dedupe merged and dropped.
            return s.deduplicated ? [("merged", .int(s.merged)), ("dropped", .int(s.dropped))] : []
        }
        return [
            ("merged", .int(s.merged)), ("dropped", .int(s.dropped)),
            ("migration", .object([
                ("versions", .string(versions)), ("stages", .array(stages.map { .string($0) })),
                ("converted", .int(c.converted)), ("filled", .int(c.filled)), ("setAside", .int(c.setAside)),
                ("droppedByPolicy", .int(c.dropped)), ("droppedWithRemovedEntities", .int(c.removed)),
                ("referencesRemoved", .int(c.referencesRemoved)),
            ])),
        ]
    }

    /// `storeMigration` of an object run whose store -o names was migrated in place first (`--migrate`):
    /// `migrate --model`'s figures, as a trip run's object has `migrate`'s (objects for trips; a
    /// PostgreSQL store's has no backup, as its summary line has none).
    private static func storeMigration(_ o: Convert.ObjectOutcome) -> [(String, JSONText.Node)] {
        guard let (report, run, store) = o.storeMigration else { return [] }
        let s = report.summary
        var pairs: [(String, JSONText.Node)] = [
            ("store", .string(store)), ("from", .string(run.from)), ("to", .string(run.to)),
            ("stages", .array(report.stages.map { stage in
                .object([("stage", .string(stage.stages)), ("objectsBefore", .int(stage.objectsBefore)), ("objectsAfter", .int(stage.objectsAfter))])
            })),
            ("read", .int(s.read)), ("merged", .int(s.merged)), ("dropped", .int(s.dropped)), ("rejected", .int(s.rejected)),
            ("objectsAfter", .int(s.written)),
            ("entities", .array(zip(s.entities, s.counts).map { .object([("entity", .string($0)), ("objects", .int($1))]) })),
        ]
        if !Format.isPostgreSQLAddress(run.store) { pairs.append(("backup", report.backup.map { .string($0) } ?? .null)) }
        return [("storeMigration", .object(pairs))]
    }

    /// What an object run moved to temporary files, as a trip run's report says it (`spilledBytes`),
    /// with its entries and what held them; nothing for a run that stayed in memory.
    private static func spilled(_ s: ObjectConversionSummary) -> [(String, JSONText.Node)] {
        guard s.spilledEntries > 0 else { return [] }
        return [("spilledEntries", .int(s.spilledEntries)), ("spilledBytes", .int(s.spilledBytes)),
                ("spilled", .array(s.spilledParts.map { .string($0) }))]
    }

    /// A failed run's error and exit status; none for a run that did not fail.
    static func failure(_ error: (any Error)?) -> [(String, JSONText.Node)] {
        guard let error else { return [] }
        let e = error as? TripError
        return [("error", .string(e?.message ?? "\(error)")), ("exitStatus", .int(Int(e?.kind.rawValue ?? 70)))]
    }

    /// Per stage: how many inputs ran it, how many trips went through it, and how many it merged or dropped.
    static func stageCounts(_ s: ConversionSummary) -> [JSONText.Node] {
        var order: [String] = []
        var inputs: [String: Int] = [:], trips: [String: Int] = [:], deduplicated: [String: Int] = [:]
        for i in s.inputs {
            for stage in i.stages {
                if inputs[stage] == nil { order.append(stage) }
                inputs[stage, default: 0] += 1
                trips[stage, default: 0] += i.read - i.rejected
                // Only a custom stage deduplicates; its count is the input's.
                if stage.contains("(custom)") { deduplicated[stage, default: 0] += i.deduplicatedInStages }
            }
        }
        return order.map { st in
            .object([("stage", .string(st)), ("inputs", .int(inputs[st] ?? 0)), ("trips", .int(trips[st] ?? 0)),
                     ("mergedOrDropped", .int(deduplicated[st] ?? 0))])
        }
    }
}
