/// The whole flow for objects of any model: a reader's objects to a writer, every record accounted
/// for (read = written + rejected). No version is detected and no stage runs: a store of another app
/// is read at the version it is (issue 27 brings that app's plan).
///
/// ```swift
/// var summary = ObjectConversionSummary()
/// try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { rejected in log(rejected) }
/// print(summary.line(elapsedSeconds: 0.1))
/// ```
public enum ObjectPipeline {
    /// Reads every object of `reader` into `writer`, counting into `summary`; a record the reader sets
    /// aside goes to `setAside`. On an error the writer is aborted (it leaves no output) and the error
    /// rethrown.
    public static func run<R: ObjectRecordReader, W: ObjectRecordWriter>(
        _ reader: inout R, into writer: inout W, summary: inout ObjectConversionSummary,
        setAside: (SetAsideRecord) throws -> Void
    ) throws {
        let model = reader.model
        summary.prepare(for: model)
        let required = requiredAttributes(model)
        do {
            try writer.begin(model)
            while let item = try reader.next() {
                try pass(item, model, required: required, into: &writer, summary: &summary, setAside: setAside)
            }
            try writer.finish()
        } catch {
            writer.abort()
            throw error
        }
    }

    /// Per entity of `model`, the attributes an object must have a value of (not optional, not
    /// transient): their positions in the entity's attributes, and names.
    public static func requiredAttributes(_ model: ObjectModel) -> [[(Int, String)]] {
        model.entities.indices.map { e in
            model.allAttributes(of: e).enumerated().filter { !$0.element.isOptional && !$0.element.isTransient }.map { ($0.offset, $0.element.name) }
        }
    }

    /// One item of a reader given to `writer` (an object) or `setAside` (a record set aside, or an
    /// object lacking a value of `required`, `requiredAttributes(model)`), counted into `summary`.
    public static func pass<W: ObjectRecordWriter>(_ item: ObjectReadItem, _ model: ObjectModel, required: [[(Int, String)]], into writer: inout W,
                                                   summary: inout ObjectConversionSummary, setAside: (SetAsideRecord) throws -> Void) throws {
        switch item {
        case .object(let object):
            summary.read += 1
            if let missing = required[object.entity].first(where: { object.attributes[$0.0].isNull }) {
                // A store row the model forbids (Core Data never writes one): set aside, never written.
                summary.rejected += 1
                try setAside(lacking(model, object.entity, missing.1, origin: object.origin))
                return
            }
            try writer.write(object)
            summary.written += 1
            summary.counts[object.entity] += 1
        case .rejected(let record):
            // A plan's run (`ObjectMigrationReader`) gives duplicates and removed entities' objects here too.
            summary.read += 1
            switch record.kind {
            case .rejected: summary.rejected += 1
            case .merged: summary.merged += 1
            case .dropped: summary.dropped += 1
            }
            try setAside(record)
        }
    }

    /// The record set aside for an object of `entity` (at `origin`) with no value of its required `attribute`.
    public static func lacking(_ model: ObjectModel, _ entity: Int, _ attribute: String, origin: RecordOrigin) -> SetAsideRecord {
        SetAsideRecord(origin: origin, reason: "\(model.entities[entity].name).\(attribute): no value, and the model requires one")
    }
}

/// What a run over objects of any model did: read = written + merged + dropped + rejected, and the
/// objects written per entity.
public struct ObjectConversionSummary: Sendable, Hashable {
    public var read = 0
    public var written = 0
    public var rejected = 0
    /// Duplicates merged into another, and objects dropped: duplicates by the policy, or of an entity
    /// the plan removes. Both 0 unless a plan ran or the objects were deduplicated.
    public var merged = 0
    public var dropped = 0
    /// The plan's run: the versions read and written ("1.0.0 -> 3.0.0"), one sentence per stage, and
    /// what the stages did (nil when no stage ran).
    public var migration: (String, [String], ObjectMigration.Counts)? {
        get { migrationValue.map { ($0.versions, $0.stages, $0.counts) } }
        set { migrationValue = newValue.map { MigrationRun(versions: $0.0, stages: $0.1, counts: $0.2) } }
    }
    private var migrationValue: MigrationRun?
    /// Changes what the plan's run counted (nothing when no stage ran): what a run meets after the
    /// stages (references removed by its reader, duplicates met against a store) is counted there too.
    public mutating func updateMigrationCounts(_ update: (inout ObjectMigration.Counts) -> Void) {
        guard migrationValue != nil else { return }
        update(&migrationValue!.counts)
    }
    /// Whether the objects were deduplicated on their model's uniqueness with no stage run (an
    /// export read with a model of one version, or at the plan's target): `merged` and `dropped` say
    /// what it did.
    public var deduplicated = false
    private struct MigrationRun: Sendable, Hashable {
        var versions: String
        var stages: [String]
        var counts: ObjectMigration.Counts
    }
    /// The model's entity names, and the objects written of each, in the model's order.
    public var entities: [String] = []
    public var counts: [Int] = []
    /// What the run's holdings moved to temporary files past `--memory-limit`: their names ("the
    /// reader's index of keys", "the objects set aside", "the plan's deduplication", "the writer's holdings":
    /// its names and waiting objects), their entries together (keys, groups, duplicates, survivors that merge,
    /// names, objects) and their files' bytes; empty and 0 when everything stayed in memory.
    public var spilledParts: [String] = []
    public var spilledEntries = 0
    public var spilledBytes = 0
    /// Objects written into an existing store in place of stored ones (`--dedupe last`).
    public var replacedInStore = 0
    /// References a reader removed from the objects that made them, as naming no object it gives
    /// (none has that key, or the one that has it was refused), and the place and reason of the first
    /// few (for `-v`). A plan's run counts them in its migration's too, with those its stages removed.
    public var referencesRemoved = 0
    public var referenceRemovalNotes: [String] = []

    /// `; spilled the plan's deduplication (3 entries, 0.1 MiB) to temporary files`, or nothing when
    /// nothing spilled: the end of the summary line.
    public var spilledPhrase: String {
        guard spilledEntries > 0 else { return "" }
        let parts = spilledParts.count < 2 ? spilledParts.joined()
            : spilledParts.dropLast().joined(separator: ", ") + " and " + spilledParts[spilledParts.count - 1]
        return "; spilled \(parts) (\(spilledEntries) entries, \(ConversionSummary.mebibytes(spilledBytes)) MiB) to temporary files"
    }

    /// A summary before any object is read.
    public init() {}

    /// Names the entities of `model` and counts none of their objects yet, where not done before.
    public mutating func prepare(for model: ObjectModel) {
        if entities.isEmpty { entities = model.entities.map(\.name) }
        if counts.count < model.entities.count { counts += Array(repeating: 0, count: model.entities.count - counts.count) }
    }

    /// The line printed at the end of a run: `read 7 objects; wrote 7 (Component 1, CraftingRecipe 2,
    /// Item 4); rejected 0; 0.004 s`.
    public func line(elapsedSeconds: Double) -> String {
        let per = zip(entities, counts).map { "\($0) \($1)" }.joined(separator: ", ")
        var plan = ""
        if let (versions, _, c) = migration {
            plan = "; merged \(merged); dropped \(dropped) (\(c.dropped) by --dedupe, \(c.removed) of removed entities)"
            plan += "; migrated \(versions): converted \(c.converted) values, filled \(c.filled), set aside \(c.setAside)"
            if c.referencesRemoved > 0 { plan += ", removed \(c.referencesRemoved) references to objects not written" }
        } else {
            // No plan, objects appended to a store: those met against the stored ones under --dedupe.
            if merged > 0 || dropped > 0 { plan = "; merged \(merged); dropped \(dropped)" }
            if referencesRemoved > 0 {
                plan += "; removed \(referencesRemoved) reference\(referencesRemoved == 1 ? "" : "s") to objects not written"
            }
        }
        let replaced = replacedInStore == 0 ? "" : ", \(replacedInStore) replacing stored object\(replacedInStore == 1 ? "" : "s")"
        return "read \(read) object\(read == 1 ? "" : "s"); wrote \(written)"
            + (per.isEmpty ? "" : " (\(per))") + replaced + plan + "; rejected \(rejected)" + spilledPhrase + "; \(format3(elapsedSeconds)) s"
    }
}
