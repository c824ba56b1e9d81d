/// The objects of a reader migrated by an app's plan, as a reader of the target's objects: each
/// object through the chain of stages (`ObjectMigration`), then through the duplicates' resolution
/// (`ObjectDeduplicator`). When the chain deduplicates, or may set objects aside that others refer
/// to, a first pass over a reader of the same input (`open` is called twice) learns the duplicates
/// and the objects set aside before the second gives any object.
///
/// ```swift
/// var reader = try ObjectMigrationReader(migration, policy: .merge) { try openInput() }
/// try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { log($0) }
/// summary.note(reader)
/// ```
public struct ObjectMigrationReader: ObjectRecordReader {
    /// What the stages and the resolution did, counted as the objects go by.
    /// Counted per object by the thread that migrates, read once it has ended (the hand-off's lock
    /// orders the two): unchecked, no access check per object.
    public final class Tally {
        @exclusivity(unchecked) public internal(set) var counts = ObjectMigration.Counts()
        /// Whether a first pass was made.
        public internal(set) var twoPasses = false
        /// Per stage of the chain: the objects given to it (the objects before it, in a store's history;
        /// those after the last stage are the objects written).
        @exclusivity(unchecked) public internal(set) var stageInputs: [Int] = []
    }

    public let migration: ObjectMigration
    public let policy: DeduplicationPolicy
    public let tally = Tally()
    private var input: any ObjectRecordReader
    /// Per stage of the chain, its resolver of duplicates (nil where the stage deduplicates nothing);
    /// one more after the last stage when the target's own uniqueness is deduplicated.
    private let deduplicators: [ObjectDeduplicator?]
    /// The objects pass 1 saw set aside or dropped, where the target would have them: references to
    /// them are removed.
    private let setAside: any ObjectReferenceSet

    /// The target's model.
    public var model: ObjectModel { migration.target }

    /// Migrates the objects `open()` reads (in `migration.source`) under `policy`. The first pass, when
    /// needed, is made here: under `--dedupe fail` a duplicate throws before any object is given.
    /// `state(n)` gives each deduplicating stage (of `n` deduplications) the state it keeps what it
    /// learns in (`ObjectDeduplicationState`), and `setAside` the set the objects pass 1 sets aside are
    /// kept in (`ObjectReferenceSet`); nil keeps them in memory.
    public init(_ migration: ObjectMigration, policy: DeduplicationPolicy,
                state: ((Int) throws -> any ObjectDeduplicationState)? = nil, setAside: (any ObjectReferenceSet)? = nil,
                open: () throws -> any ObjectRecordReader) throws {
        try self.init(migration, policy: policy, state: state, setAside: setAside, opening: { _ in try open() })
    }

    /// As `init(_:policy:state:setAside:open:)`, `opening` given, for the first pass, the source
    /// entities whose objects that pass needs (`ObjectMigration.firstPassEntities`), nil for the
    /// second. A reader whose objects keep their model's kinds and required values (a graph's text
    /// read through its decoder) may leave the others out of the first pass; any reader may ignore it.
    /// `keepsKinds`: the readers `opening` gives are such readers, so the first pass takes each object
    /// through only the steps that may note it (`ObjectMigration.firstPassSteps`).
    public init(_ migration: ObjectMigration, policy: DeduplicationPolicy,
                state: ((Int) throws -> any ObjectDeduplicationState)? = nil, setAside: (any ObjectReferenceSet)? = nil,
                keepsKinds: Bool = false, opening: ([Bool]?) throws -> any ObjectRecordReader) throws {
        self.migration = migration; self.policy = policy
        self.setAside = setAside ?? InMemoryReferenceSet()
        tally.stageInputs = Array(repeating: 0, count: migration.stages.count)
        deduplicators = try (0..<(migration.stages.count + (migration.deduplicatesWritten ? 1 : 0))).map { i in
            let here = migration.deduplications.filter { $0.stage == i }
            return here.isEmpty ? nil : ObjectDeduplicator(here, model: migration.model(before: i), policy: policy,
                                                           state: try state?(here.count), cascades: true)
        }
        if !migration.deduplications.isEmpty || migration.mayRemoveObjects {
            let deduplicators = self.deduplicators
            let steps = migration.firstPassSteps(cascading: policy == .first || policy == .last)
            var first = try opening(steps.map { $0 > 0 })
            if let counts = first.expectedObjects {
                for (i, deduplicator) in deduplicators.enumerated() {
                    deduplicator?.expect(migration.objectCounts(before: i, from: counts))
                }
            }
            var scratch = ObjectMigration.Counts()
            while let item = try first.next() {
                guard case .object(var object) = item else { continue }
                let read = object.reference
                let limit = keepsKinds && read.entity >= 0 && read.entity < steps.count ? steps[read.entity] : .max
                let setAside = try migration.migrate(&object, counts: &scratch, steps: limit) { i, migrated, _ in
                    try deduplicators[i]?.note(migrated)
                    return nil
                }
                if setAside != nil, let reference = migration.targetReference(of: read) {
                    try self.setAside.insert(reference)
                }
            }
            tally.twoPasses = true
        }
        input = try opening(nil)
    }

    /// The next object in the target's model, or a record set aside, merged or dropped on the way.
    public mutating func next() throws -> ObjectReadItem? {
        let deduplicators = self.deduplicators, tally = self.tally, setAside = self.setAside
        while let item = try input.next() {
            guard case .object(var migrated) = item else { return item }
            // In place: an object's arrays are copied only where a stage or the resolution changes them.
            let record = try migration.migrate(&migrated, counts: &tally.counts) { i, object, counts in
                if i < tally.stageInputs.count { tally.stageInputs[i] += 1 }
                return try deduplicators[i]?.resolve(&object, counts: &counts)
            }
            if let record { return .rejected(record) }
            if !setAside.isEmpty {
                try migrated.removeReferences(where: { try setAside.contains($0) }) { _, _ in tally.counts.referencesRemoved += 1 }
            }
            return .object(migrated)
        }
        return nil
    }
}

extension ObjectMigration {
    /// Where an object of the source goes in the target, had no stage set it aside: its entity
    /// through every rename; nil when a stage removes its entity.
    public func targetReference(of reference: ObjectReference) -> ObjectReference? {
        var entity = reference.entity
        for map in maps {
            guard entity >= 0, entity < map.entities.count, let to = map.entities[entity] else { return nil }
            entity = to.target
        }
        return ObjectReference(entity: entity, key: reference.key)
    }
}

extension ObjectMigration {
    /// Per entity of the source: whether the first pass of a plan's run (`ObjectMigrationReader`)
    /// needs its objects, on objects that keep their model's kinds and required values. It needs an
    /// object a stage deduplicates (its entity, or a superentity, there), and one a stage may set
    /// aside: a changed type whose values may not convert, or a required attribute with no default
    /// that may be given no value (optional in the source, or a new one without a default). Every
    /// other object goes through the stages untouched by them (an object of a removed entity is
    /// dropped, and nothing refers to it in the target), so that pass would note nothing of it.
    public var firstPassEntities: [Bool] { firstPassEntities(cascading: false) }

    /// As `firstPassEntities`; `cascading` (`--dedupe first` and `last`): also an object a
    /// deduplicated one owns through a relationship whose delete rule is cascade, at any depth (the
    /// pass notes its owners: it goes with a dropped duplicate).
    public func firstPassEntities(cascading: Bool) -> [Bool] { firstPassSteps(cascading: cascading).map { $0 > 0 } }

    /// Per entity of the source, as `firstPassEntities(cascading:)`: how many of the chain's steps
    /// the first pass takes its objects through, on objects that keep their model's kinds and
    /// required values (0: it needs none of them). The steps are, in order, each stage's resolution
    /// of duplicates (`before` in `migrate`) and its map, then the target's own resolution: step
    /// `2i` is stage `i`'s resolution, `2i + 1` its map. The pass needs an object up to the last
    /// step that may note it (a resolution deduplicating or owning it) or set it aside (a map whose
    /// value may not convert or fill); the steps after change nothing it notes.
    public func firstPassSteps(cascading: Bool) -> [Int] {
        let owned = cascading ? (0...maps.count).map { i in
            model(before: i).cascadeOwnership(of: deduplications.filter { $0.stage == i }.map(\.entity)).map { !$0.isEmpty }
        } : []
        return source.entities.indices.map { e in
            var entity = e, steps = 0
            var mayBeNil = source.allAttributes(of: e).map { $0.isOptional || $0.isTransient }
            for (i, map) in maps.enumerated() {
                let model = self.model(before: i)
                let lineage = model.lineage(of: entity)
                if deduplications.contains(where: { $0.stage == i && lineage.contains($0.entity) }) { steps = 2 * i + 1 }
                if cascading, entity < owned[i].count, owned[i][entity] { steps = 2 * i + 1 }
                guard entity >= 0, entity < map.entities.count, let to = map.entities[entity] else { return steps }
                let kinds = model.allAttributes(of: entity).map(\.kind)
                var next: [Bool] = []
                for (j, rule) in to.values.enumerated() {
                    var isNil: Bool
                    switch rule {
                    case .copy(let a): isNil = a >= mayBeNil.count || mayBeNil[a]
                    case .fill(let v): isNil = v.isNull
                    case .convert(let a, let kind):
                        if !(a < kinds.count && ObjectValueConversion.alwaysConverts(kinds[a], to: kind)) { steps = 2 * i + 2 }
                        isNil = a >= mayBeNil.count || mayBeNil[a]
                    }
                    if isNil, to.required[j].0 {
                        if to.required[j].1 == nil { steps = 2 * i + 2 }
                        isNil = false
                    }
                    next.append(isNil)
                }
                mayBeNil = next
                entity = to.target
            }
            // The target's own uniqueness, on the objects written.
            let lineage = target.lineage(of: entity)
            if cascading, entity < owned[maps.count].count, owned[maps.count][entity] { steps = 2 * maps.count + 1 }
            if deduplications.contains(where: { $0.stage == maps.count && lineage.contains($0.entity) }) { steps = 2 * maps.count + 1 }
            return steps
        }
    }
}

extension ObjectValueConversion {
    /// Whether every value of `kind` (none nil) converts to `target`: a whole number to a wider or
    /// equal whole number, a Decimal or text.
    static func alwaysConverts(_ kind: AttributeKind, to target: AttributeKind) -> Bool {
        guard kind.isInteger else { return kind == target }
        switch target {
        case .string, .decimal, .int64: return true
        case .int32: return kind != .int64
        case .int16: return kind == .int16
        default: return false
        }
    }
}

extension ObjectConversionSummary {
    /// Notes what a plan's run did (`reader`'s stages and counts), for the summary line and the report.
    public mutating func note(_ reader: ObjectMigrationReader) {
        let m = reader.migration
        // No stage ran: the objects were only deduplicated (merged and dropped count it).
        if m.onlyDeduplicates { deduplicated = true; return }
        let from = m.stages.first?.from ?? "", to = m.stages.last?.to ?? from
        migration = ("\(from) -> \(to)", m.stageSentences(policy: reader.policy), reader.tally.counts)
    }
}
