// The record builder's state and its frame mechanics: the objects being built live in flat
// buffers reached by pointer (`RecordFrames`), so the per-scalar path makes no array copies and no
// uniqueness checks. Its public face, and how a record's version is decided, are in
// Reading/RecordBuilder.swift.

/// Turns the fields a format reads into objects of the input's schema version.
///
/// Every reader drives one builder per input: `beginRecord`, then `set` for scalars and
/// `beginObject`/`endObject` for related objects, then `endRecord`, which decides the record's
/// version (from a marker, the override, or the field names), checks required fields and types,
/// and yields a trip or a rejection. Field names resolve through the plan's vocabulary, so the
/// same builder reads every version and every legacy spelling.
///
/// ```swift
/// var b = RecordBuilder(source: "trips.json")
/// b.beginRecord(origin: RecordOrigin(source: "trips.json", record: 1, line: 2))
/// b.set("name", .string("Paris"))
/// ...
/// switch b.endRecord() { case .trip(let t): ...; case .rejected(let r): ... }
/// ```
public struct RecordBuilder {
    public let vocabulary: SchemaVocabulary
    public let source: String
    public let options: ReadOptions
    public let format: String
    /// The compression the input's bytes were read through (`gzip`, …), for `Detection`; set by the
    /// reader that opened them.
    public var compression: String?

    /// The input's version index, once decided.
    public internal(set) var versionIndex: Int?
    /// The version index records are materialized in, once the first one was.
    var recordsVersionIndex: Int?
    public internal(set) var evidence: VersionEvidence = .none
    var transientIgnored = 0
    var unknownIgnored = 0

    /// A related object whose version was not yet known when it ended (the first record only).
    struct Pending {
        var entity: Int
        var values: [Value]
        var present: UInt64
        var children: [[Pending]]
        /// Where the object started (its frame's mark).
        var mark: Int
    }

    /// A reason an object cannot be made, and the mark of the object it is about.
    struct Problem {
        let reason: String
        let mark: Int
    }

    /// What the per-scalar path needs of a field, in one flat array of plain values (indexed
    /// `factsStart[entity] + field`): reading the vocabulary's nested structs per scalar costs more.
    struct FieldFacts {
        let kind: SchemaVocabulary.FieldKind
        let versions: UInt32
    }
    let facts: [FieldFacts]
    let factsStart: [Int]

    /// The objects being built, one frame per depth. The buffers' addresses are copied here, so
    /// the per-scalar path reads them from the builder, not from the class; they change only when
    /// the frames grow. Copies of a builder share its frames: keep one copy.
    let frames: RecordFrames
    var heads: UnsafeMutablePointer<RecordFrames.Head>
    var values: UnsafeMutablePointer<Value>
    var related: UnsafeMutablePointer<[ModelObject]>
    let valueStride: Int
    let relatedStride: Int
    /// Per depth: related objects kept by field index until the version is known (the first record).
    var pending: [[[Pending]]] = []
    var depth = 0
    var origin = RecordOrigin(source: "", record: 0)
    var errors: [String] = []
    /// The mark of the value that failed first (`errors.first`), and of the first unknown field.
    var failureMark = RecordBuilder.noMark
    var unknownMark = RecordBuilder.noMark
    /// Where the value or object the reader gives next starts, in the reader's own terms: a byte
    /// offset, a cell's index, or a line and column packed by `RecordBuilder.mark(line:column:)`.
    /// A reader sets it before each `set`, `beginObject` and `unknownField`; a failure keeps the
    /// mark it was found at, an object the mark it began at, and `rejectionMark` says which place a
    /// rejection is about, for the reader to turn into a line and column (only then: a mark costs
    /// the per-scalar path one store). `noMark` (as `beginRecord` leaves it) is the record's origin.
    public var mark = RecordBuilder.noMark
    /// The mark of the value or object the last rejection of `endRecord` is about, or `noMark`
    /// when it is about the record as a whole (a required field of the trip missing, a version
    /// its fields do not match).
    public internal(set) var rejectionMark = RecordBuilder.noMark
    var unknown: [String] = []
    /// Unknown fields past the first `unknownNamesShown` distinct ones: counted, not kept.
    var unknownMore = 0
    /// How many unknown field names a rejection names; a hostile record may carry millions.
    static let unknownNamesShown = 8
    var sawTransient = false
    var recordMask: UInt32 = 0
    /// Per entity: the fields that told a version in this record (bit per field index).
    var distinguishingBits: [UInt64]
    var distinguishingOrder: [(entity: Int, field: Int)] = []
    /// The version objects are materialized in as they end, when known before the record ends.
    var eagerVersion: Int? { recordsVersionIndex ?? versionIndex }

    /// A builder for one input: `source` names it in origins, `format` in its detection.
    public init(vocabulary: SchemaVocabulary = .trips, source: String, format: String, options: ReadOptions = ReadOptions()) {
        self.vocabulary = vocabulary; self.source = source; self.options = options; self.format = format
        distinguishingBits = Array(repeating: 0, count: vocabulary.entities.count)
        var start: [Int] = []
        var all: [FieldFacts] = []
        for e in vocabulary.entities {
            start.append(all.count)
            all += e.fields.map { FieldFacts(kind: $0.kind, versions: $0.versions) }
        }
        facts = all
        factsStart = start
        let relationships = vocabulary.layouts.flatMap { $0.map(\.isToMany.count) }.max() ?? 0
        frames = RecordFrames(valueStride: vocabulary.entities.map(\.fields.count).max() ?? 0, relatedStride: relationships)
        heads = frames.heads; values = frames.values; related = frames.related
        valueStride = frames.valueStride; relatedStride = frames.relatedStride
        if let v = options.sourceVersion, let i = vocabulary.versionIndex(v) {
            versionIndex = i; evidence = .override
        }
    }
}

extension RecordBuilder {
    mutating func pushFrame(entity: Int, field: Int) {
        if depth == frames.capacity {
            frames.grow()
            heads = frames.heads; values = frames.values; related = frames.related
        }
        heads[depth] = RecordFrames.Head(entity: entity, field: field, factsStart: factsStart[entity], mark: mark)
        depth += 1
    }

    /// Clears a popped frame's values and related objects for reuse.
    mutating func resetFrame(_ i: Int) {
        let head = heads[i]
        if head.present != 0 {
            let frameValues = values + i * valueStride
            var bits = head.present
            while bits != 0 {
                frameValues[bits.trailingZeroBitCount] = .null
                bits &= bits - 1
            }
            heads[i].present = 0
        }
        if head.hasRelated {
            let lists = related + i * relatedStride
            for k in 0..<relatedStride where !lists[k].isEmpty { lists[k] = [] }
            heads[i].hasRelated = false
        }
        if head.hasPending {
            pending[i] = []
            heads[i].hasPending = false
        }
    }

    /// Sets a resolved field from a typed string's UTF-8 bytes (a JSON string): the same as
    /// `set(field, .string(String(decoding: bytes, as: UTF8.self)))`, but an ISO 8601 date is read
    /// from the bytes, with no `String` made. The bytes are not kept.
    package mutating func set(_ field: Int, string bytes: UnsafeRawBufferPointer) {
        if !setFromBytes(field, bytes, isText: false) {
            set(field, .string(String(decoding: bytes, as: UTF8.self)))
        }
    }

    /// Sets a resolved field from untyped text's UTF-8 bytes (an XML element's text, a CSV cell):
    /// the same as `set(field, .text(String(decoding: bytes, as: UTF8.self)))`, but an ISO 8601
    /// date and a Boolean spelled `true` or `false` are read from the bytes, with no `String` made.
    /// The bytes are not kept.
    package mutating func set(_ field: Int, text bytes: UnsafeRawBufferPointer) {
        if !setFromBytes(field, bytes, isText: true) {
            set(field, .text(String(decoding: bytes, as: UTF8.self)))
        }
    }

    /// The common cases of `set(_:string:)` and `set(_:text:)`, which give what the `ScalarToken`
    /// path gives; false, having done nothing, for every other case.
    @inline(__always)
    mutating func setFromBytes(_ field: Int, _ bytes: UnsafeRawBufferPointer, isText: Bool) -> Bool {
        let top = depth - 1
        guard case .attribute(let type) = facts[heads[top].factsStart + field].kind else { return false }
        let value: Value
        switch type {
        case .string:
            value = .string(RecordBuilder.string(bytes))
        case .date:
            let utf8 = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            guard let ms = Timestamp.parseISO8601(utf8) else { return false }
            value = .date(Timestamp(milliseconds: ms))
        case .bool where isText:
            // `parseBool` takes any case and more spellings; these two are what writers write.
            if bytes.count == 4, bytes[0] == 0x74, bytes[1] == 0x72, bytes[2] == 0x75, bytes[3] == 0x65 {
                value = .bool(true)
            } else if bytes.count == 5, bytes[0] == 0x66, bytes[1] == 0x61, bytes[2] == 0x6C, bytes[3] == 0x73, bytes[4] == 0x65 {
                value = .bool(false)
            } else {
                return false
            }
        default:
            return false
        }
        if note(field) { values[top * valueStride + field] = value }
        return true
    }

    /// `String(decoding: bytes, as: UTF8.self)`, made in place: a short ASCII string is not
    /// validated, a long one is copied into its storage once, then validated there.
    @inline(__always)
    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        let count = bytes.count
        guard count > 0, let source = bytes.baseAddress else { return "" }
        return String(unsafeUninitializedCapacity: count) { buffer in
            UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: count)
            return count
        }
    }

    /// Ends the related object begun last.
    public mutating func endObject() {
        let child = depth - 1
        let parent = depth - 2
        let head = heads[child]
        let field = head.field
        if let v = eagerVersion, !head.hasPending {
            let layout = vocabulary.layouts[heads[parent].entity][v]
            let slot = field < layout.relationshipSlot.count ? layout.relationshipSlot[field] : -1
            if slot >= 0 {
                var problems: [Problem] = []
                let object = materialize(frame: child, version: v, problems: &problems)
                if let first = problems.first { fail(first.reason, at: first.mark) }
                let list = related + (parent * relatedStride + slot)
                // Room for a few objects at once: growing one at a time reallocates at 1, 2 and 4.
                if list.pointee.capacity == 0 { list.pointee.reserveCapacity(4) }
                list.pointee.append(object)
                heads[parent].hasRelated = true
            } else {
                fail("field '\(vocabulary.entities[heads[parent].entity].fields[field].name)' has no place in \(vocabulary.schemas[v].versionIdentifier)",
                     at: head.mark)
            }
        } else {
            let frameValues = Array(UnsafeBufferPointer(start: values + child * valueStride, count: valueStride))
            let item = Pending(entity: head.entity, values: frameValues, present: head.present,
                               children: head.hasPending ? pending[child] : [], mark: head.mark)
            while pending.count <= parent { pending.append([]) }
            while pending[parent].count <= field { pending[parent].append([]) }
            pending[parent][field].append(item)
            heads[parent].hasPending = true
        }
        resetFrame(child)
        depth -= 1
    }

    /// Builds the object of a frame in a version's layout. The frame's values, related objects and
    /// pending objects are moved into the object, not copied: the frame is reset right after.
    mutating func materialize(frame i: Int, version v: Int, problems: inout [Problem]) -> ModelObject {
        let head = heads[i]
        var framePending: [[Pending]] = []
        if head.hasPending { swap(&framePending, &pending[i]) }
        let layout = vocabulary.layouts[head.entity][v]
        let lists = related + i * relatedStride
        // The related objects go straight into the object, unless pending ones are merged with them.
        let movesRelated = head.hasRelated && framePending.isEmpty && layout.exists
        var object = RecordBuilder.makeObject(vocabulary, entity: head.entity, values: values + i * valueStride,
                                              present: head.present, pending: framePending, version: v, mark: head.mark,
                                              related: movesRelated ? lists : nil, problems: &problems)
        // The values are all null now (and the related lists empty, when moved): resetting the
        // frame has none to clear.
        heads[i].present = 0
        if movesRelated { heads[i].hasRelated = false }
        guard heads[i].hasRelated, layout.exists else { return object }
        for slot in 0..<layout.isToMany.count where !lists[slot].isEmpty {
            var objects: [ModelObject] = []
            swap(&objects, &lists[slot])
            if layout.isToMany[slot] {
                if case .toMany(let existing) = object.relationships[slot], !existing.isEmpty {
                    object.relationships[slot] = .toMany(existing + objects)
                } else {
                    object.relationships[slot] = .toMany(objects)
                }
            } else {
                object.relationships[slot] = .toOne(RecordBuilder.noneIfDefaults(objects[0], layout.noneWhenDefaults[slot]))
            }
        }
        heads[i].hasRelated = false
        return object
    }

    /// Builds an object of entity `e` in version `v` from the values of its present fields, which are
    /// moved out of `values` (every present field's value is null afterwards), and pending related objects.
    /// `related`, when given, holds the object's related lists by relationship slot: they are moved
    /// into the object (and left empty). `mark` is where the object started, for its problems.
    static func makeObject(_ vocabulary: SchemaVocabulary, entity e: Int, values: UnsafeMutablePointer<Value>,
                                   present: UInt64, pending: [[Pending]], version v: Int, mark: Int,
                                   related: UnsafeMutablePointer<[ModelObject]>? = nil,
                                   problems: inout [Problem]) -> ModelObject {
        let layout = vocabulary.layouts[e][v]
        guard layout.exists else {
            problems.append(Problem(reason: "\(layout.entityName) has no place in \(vocabulary.schemas[v].versionIdentifier)", mark: mark))
            return ModelObject(attributes: [])
        }
        // Built by appending to a reserved array: the ways of the standard library that make an
        // array of a given size at once look up its storage type in the runtime's metadata cache,
        // which costs more than the rest of the object.
        let template = layout.template
        var attributes: [Value] = []
        attributes.reserveCapacity(template.count)
        if let fieldOfSlot = layout.fieldOfSlot {
            // Slot by slot: the value of the field that fills it, moved, or the template's.
            for slot in 0..<template.count {
                let fi = fieldOfSlot[slot]
                if fi >= 0, present & (UInt64(1) << UInt64(fi)) != 0, !values[fi].isNull {
                    attributes.append((values + fi).move())
                    (values + fi).initialize(to: .null)
                } else {
                    attributes.append(template[slot])
                }
            }
            // Present fields that fill no slot of this version.
            var bits = present
            while bits != 0 {
                let fi = bits.trailingZeroBitCount
                bits &= bits - 1
                if !values[fi].isNull { values[fi] = .null }
            }
        } else {
            for value in template { attributes.append(value) }
            attributes.withUnsafeMutableBufferPointer { out in
                var bits = present
                while bits != 0 {
                    let fi = bits.trailingZeroBitCount
                    bits &= bits - 1
                    let slot = layout.attributeSlot[fi]
                    let cell = values + fi
                    if slot >= 0, !cell.pointee.isNull {
                        out[slot] = cell.move()
                        cell.initialize(to: .null)
                    } else {
                        cell.pointee = .null
                    }
                }
            }
        }
        for slot in layout.requiredSlots where attributes[slot].isNull {
            let where_ = e == vocabulary.rootEntity ? "" : " of a \(layout.entityName)"
            problems.append(Problem(reason: "missing required field '\(layout.attributeNames[slot])'\(where_)", mark: mark))
        }
        var relationships = layout.emptyRelationships
        if let related, let first = (0..<layout.isToMany.count).first(where: { !related[$0].isEmpty }) {
            // Built once, at its final size: changing the layout's shared empty relationships
            // would copy them first.
            relationships = []
            relationships.reserveCapacity(layout.isToMany.count)
            for slot in 0..<layout.isToMany.count {
                if slot < first || related[slot].isEmpty {
                    relationships.append(layout.emptyRelationships[slot])
                    continue
                }
                var objects: [ModelObject] = []
                swap(&objects, &related[slot])
                relationships.append(layout.isToMany[slot] ? .toMany(objects)
                                     : .toOne(noneIfDefaults(objects[0], layout.noneWhenDefaults[slot])))
            }
        }
        for (fi, list) in pending.enumerated() where !list.isEmpty {
            let slot = layout.relationshipSlot[fi]
            guard slot >= 0 else {
                problems.append(Problem(reason: "field '\(vocabulary.entities[e].fields[fi].name)' has no place in \(vocabulary.schemas[v].versionIdentifier)",
                                        mark: list[0].mark))
                continue
            }
            let objects = list.map { p in
                var values = p.values
                return values.withUnsafeMutableBufferPointer {
                    makeObject(vocabulary, entity: p.entity, values: $0.baseAddress!, present: p.present,
                               pending: p.children, version: v, mark: p.mark, problems: &problems)
                }
            }
            if layout.isToMany[slot] {
                relationships[slot] = .toMany(relationships[slot].objects + objects)
            } else {
                relationships[slot] = .toOne(noneIfDefaults(objects[0], layout.noneWhenDefaults[slot]))
            }
        }
        return ModelObject(attributes: attributes, relationships: relationships)
    }

    /// A to-one object that gives nothing but its defaults is the same as none.
    static func noneIfDefaults(_ object: ModelObject, _ defaults: [Value]?) -> ModelObject? {
        if let defaults, object.attributes == defaults { return nil }
        return object
    }
}
