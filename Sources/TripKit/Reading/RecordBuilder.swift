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

    /// The input's version index, once decided.
    public private(set) var versionIndex: Int?
    /// The version index records are materialized in, once the first one was.
    private var recordsVersionIndex: Int?
    public private(set) var evidence: VersionEvidence = .none
    private var transientIgnored = 0
    private var unknownIgnored = 0

    /// A related object whose version was not yet known when it ended (the first record only).
    private struct Pending {
        var entity: Int
        var values: [Value]
        var present: UInt64
        var children: [[Pending]]
    }

    /// What the per-scalar path needs of a field, in one flat array of plain values (indexed
    /// `factsStart[entity] + field`): reading the vocabulary's nested structs per scalar costs more.
    private struct FieldFacts {
        let kind: SchemaVocabulary.FieldKind
        let versions: UInt32
    }
    private let facts: [FieldFacts]
    private let factsStart: [Int]

    /// The objects being built, one frame per depth. The buffers' addresses are copied here, so
    /// the per-scalar path reads them from the builder, not from the class; they change only when
    /// the frames grow. Copies of a builder share its frames: keep one copy.
    private let frames: RecordFrames
    private var heads: UnsafeMutablePointer<RecordFrames.Head>
    private var values: UnsafeMutablePointer<Value>
    private var related: UnsafeMutablePointer<[ModelObject]>
    private let valueStride: Int
    private let relatedStride: Int
    /// Per depth: related objects kept by field index until the version is known (the first record).
    private var pending: [[[Pending]]] = []
    private var depth = 0
    private var origin = RecordOrigin(source: "", record: 0)
    private var errors: [String] = []
    private var unknown: [String] = []
    /// Unknown fields past the first `unknownNamesShown` distinct ones: counted, not kept.
    private var unknownMore = 0
    /// How many unknown field names a rejection names; a hostile record may carry millions.
    static let unknownNamesShown = 8
    private var sawTransient = false
    private var recordMask: UInt32 = 0
    /// Per entity: the fields that told a version in this record (bit per field index).
    private var distinguishingBits: [UInt64]
    private var distinguishingOrder: [(entity: Int, field: Int)] = []
    /// The version objects are materialized in as they end, when known before the record ends.
    private var eagerVersion: Int? { recordsVersionIndex ?? versionIndex }

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

    /// The facts so far: final once the input is read.
    public var detection: Detection {
        let version = versionIndex.map { vocabulary.schemas[$0].versionIdentifier }
        let recordsVersion = recordsVersionIndex.map { vocabulary.schemas[$0].versionIdentifier }
        return Detection(format: format, version: version,
                         recordsVersion: recordsVersion == version ? nil : recordsVersion,
                         evidence: evidence, transientIgnored: transientIgnored, unknownIgnored: unknownIgnored)
    }

    // MARK: - The version marker

    /// Takes a version marker (`schemaVersion`), where the format has one. `place` says where it was.
    public mutating func setMarker(_ text: String, place: String) throws {
        guard let version = SchemaVersion(text), let index = vocabulary.versionIndex(version) else {
            throw TripError.data("\(place): unknown schema version \(text.quotedForMessage)",
                                 notes: ["known versions: " + vocabulary.schemas.map { $0.versionIdentifier.description }.joined(separator: ", ")])
        }
        if evidence == .override { return }
        if let recordsIndex = recordsVersionIndex, recordsIndex != index {
            // The marker came after records: it must agree with their fields.
            if case .fields(let names) = evidence {
                let mask = names.reduce(vocabulary.allVersions) { m, n in m & (fieldVersions(n) ?? vocabulary.allVersions) }
                guard mask & (UInt32(1) << UInt32(index)) != 0 else {
                    throw TripError.data("\(place): schemaVersion \(text) disagrees with the records before it, whose fields \(names.joined(separator: ", ")) are \(vocabulary.describe(mask))")
                }
            }
        }
        versionIndex = index
        evidence = .marker("schemaVersion \(version)")
    }

    private func fieldVersions(_ name: String) -> UInt32? {
        for e in vocabulary.entities { if let i = e.index[name] { return e.fields[i].versions } }
        return nil
    }

    // MARK: - Building a record

    /// Starts a root object (a trip).
    public mutating func beginRecord(origin: RecordOrigin) {
        self.origin = origin
        depth = 0
        pushFrame(entity: vocabulary.rootEntity, field: -1)
        if !errors.isEmpty { errors.removeAll(keepingCapacity: true) }
        if !unknown.isEmpty { unknown.removeAll(keepingCapacity: true); unknownMore = 0 }
        if !distinguishingOrder.isEmpty {
            for d in distinguishingOrder { distinguishingBits[d.entity] = 0 }
            distinguishingOrder.removeAll(keepingCapacity: true)
        }
        recordMask = vocabulary.allVersions
        sawTransient = false
    }

    private mutating func pushFrame(entity: Int, field: Int) {
        if depth == frames.capacity {
            frames.grow()
            heads = frames.heads; values = frames.values; related = frames.related
        }
        heads[depth] = RecordFrames.Head(entity: entity, field: field, factsStart: factsStart[entity])
        depth += 1
    }

    /// Clears a popped frame's values and related objects for reuse.
    private mutating func resetFrame(_ i: Int) {
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

    /// The name of the entity of the object being built.
    public var currentEntityName: String { vocabulary.entities[heads[depth - 1].entity].name }

    /// Resolves a field name of the object being built; nil for a name no version declares.
    public func field(_ name: String) -> Int? {
        vocabulary.entities[heads[depth - 1].entity].index[name]
    }

    /// What a resolved field is.
    public func kind(of field: Int) -> SchemaVocabulary.FieldKind {
        facts[heads[depth - 1].factsStart + field].kind
    }

    /// Notes a field no version declares: the record is rejected, unless unknown fields are ignored.
    public mutating func unknownField(_ name: String) {
        if options.ignoreUnknown { unknownIgnored += 1; return }
        if unknown.contains(name) { return }
        if unknown.count < RecordBuilder.unknownNamesShown { unknown.append(name) } else { unknownMore += 1 }
    }

    /// Marks the record bad with a reason (the first reason is the one reported, and the only one
    /// kept: a hostile record may fail millions of times).
    public mutating func fail(_ reason: String) {
        if errors.isEmpty { errors.append(reason) }
    }

    /// Sets a field by name: an attribute from a scalar, or (for `.null`) a relationship to nothing.
    public mutating func set(_ name: String, _ token: ScalarToken) {
        guard let f = field(name) else { unknownField(name); return }
        set(f, token)
    }

    /// Sets a resolved field from a scalar.
    public mutating func set(_ field: Int, _ token: ScalarToken) {
        let top = depth - 1
        let entity = heads[top].entity
        switch facts[heads[top].factsStart + field].kind {
        case .transient:
            sawTransient = true
            return
        case .toMany, .toOne:
            switch token {
            case .null: markPresent(field)
            case .plain(let s) where isYAMLNull(s): markPresent(field)
            case .text(let s) where s.isEmpty: markPresent(field)
            default:
                let f = vocabulary.entities[entity].fields[field]
                fail("field '\(f.name)': expected \(f.kind.expectation), found \(token.description)")
            }
            return
        case .attribute(let type):
            if !note(field) { return }
            switch RecordBuilder.convert(token, to: type, epoch: options.dateEpoch) {
            case .success(let value): values[top * valueStride + field] = value
            case .failure(let failure): fail("field '\(vocabulary.entities[entity].fields[field].name)': \(failure.message)")
            }
        }
    }

    /// Sets a resolved field from a typed Boolean (JSON's `true` and `false`): the same as
    /// `set(field, .bool(b))`, without the conversion a token goes through.
    public mutating func set(_ field: Int, bool b: Bool) {
        let top = depth - 1
        guard case .attribute(.bool) = facts[heads[top].factsStart + field].kind else {
            set(field, .bool(b))
            return
        }
        if note(field) { values[top * valueStride + field] = .bool(b) }
    }

    /// Sets a resolved field from a typed string's UTF-8 bytes (a JSON string): the same as
    /// `set(field, .string(String(decoding: bytes, as: UTF8.self)))`, but an ISO 8601 date is read
    /// from the bytes, with no `String` made. The bytes are not kept.
    public mutating func set(_ field: Int, string bytes: UnsafeRawBufferPointer) {
        if !setFromBytes(field, bytes, isText: false) {
            set(field, .string(String(decoding: bytes, as: UTF8.self)))
        }
    }

    /// Sets a resolved field from untyped text's UTF-8 bytes (an XML element's text, a CSV cell):
    /// the same as `set(field, .text(String(decoding: bytes, as: UTF8.self)))`, but an ISO 8601
    /// date and a Boolean spelled `true` or `false` are read from the bytes, with no `String` made.
    /// The bytes are not kept.
    public mutating func set(_ field: Int, text bytes: UnsafeRawBufferPointer) {
        if !setFromBytes(field, bytes, isText: true) {
            set(field, .text(String(decoding: bytes, as: UTF8.self)))
        }
    }

    /// The common cases of `set(_:string:)` and `set(_:text:)`, which give what the `ScalarToken`
    /// path gives; false, having done nothing, for every other case.
    @inline(__always)
    private mutating func setFromBytes(_ field: Int, _ bytes: UnsafeRawBufferPointer, isText: Bool) -> Bool {
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
    private static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        let count = bytes.count
        guard count > 0, let source = bytes.baseAddress else { return "" }
        return String(unsafeUninitializedCapacity: count) { buffer in
            UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: count)
            return count
        }
    }

    /// Marks a field present (an empty list, a null to-one) without giving it objects.
    public mutating func markPresent(_ field: Int) {
        _ = note(field, allowRepeat: true)
    }

    /// Records a field's presence and its version evidence; false for a field given twice.
    @inline(__always)
    private mutating func note(_ field: Int, allowRepeat: Bool = false) -> Bool {
        let head = heads + (depth - 1)
        let bit: UInt64 = field < 64 ? UInt64(1) << UInt64(field) : 0
        if head.pointee.present & bit != 0, !allowRepeat {
            fail("field '\(vocabulary.entities[head.pointee.entity].fields[field].name)' is given twice")
            return false
        }
        head.pointee.present |= bit
        let entity = head.pointee.entity
        let versions = facts[head.pointee.factsStart + field].versions
        if versions != vocabulary.allVersions {
            recordMask &= versions
            if distinguishingBits[entity] & bit == 0 {
                distinguishingBits[entity] |= bit
                distinguishingOrder.append((entity, field))
            }
        }
        return true
    }

    private var distinguishing: [String] {
        var names: [String] = []
        for d in distinguishingOrder {
            let n = vocabulary.entities[d.entity].fields[d.field].name
            if !names.contains(n) { names.append(n) }
        }
        return names
    }

    /// Starts a related object in a relationship field of the object being built.
    public mutating func beginObject(_ field: Int) {
        let top = depth - 1
        let head = heads[top]
        let destination: Int
        switch facts[head.factsStart + field].kind {
        case .toMany(let d): destination = d
        case .toOne(let d):
            destination = d
            if head.present & (field < 64 ? UInt64(1) << UInt64(field) : 0) != 0, relatedCount(top, field) > 0 {
                fail("field '\(vocabulary.entities[head.entity].fields[field].name)' holds more than one object")
            }
        case let kind:
            fail("field '\(vocabulary.entities[head.entity].fields[field].name)': expected \(kind.expectation), found an object")
            destination = head.entity
        }
        _ = note(field, allowRepeat: true)
        pushFrame(entity: destination, field: field)
    }

    private func relatedCount(_ frame: Int, _ field: Int) -> Int {
        if let v = eagerVersion {
            let slot = vocabulary.layouts[heads[frame].entity][v].relationshipSlot[field]
            if slot >= 0 { return related[frame * relatedStride + slot].count }
        }
        if heads[frame].hasPending, field < pending[frame].count { return pending[frame][field].count }
        return 0
    }

    /// Starts a related object by relationship name; false (and the name noted unknown) when no version has it.
    @discardableResult
    public mutating func beginObject(_ name: String) -> Bool {
        guard let f = field(name) else { unknownField(name); return false }
        beginObject(f)
        return true
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
                var problems: [String] = []
                let object = materialize(frame: child, version: v, problems: &problems)
                if let first = problems.first { fail(first) }
                let list = related + (parent * relatedStride + slot)
                // Room for a few objects at once: growing one at a time reallocates at 1, 2 and 4.
                if list.pointee.capacity == 0 { list.pointee.reserveCapacity(4) }
                list.pointee.append(object)
                heads[parent].hasRelated = true
            } else {
                fail("field '\(vocabulary.entities[heads[parent].entity].fields[field].name)' has no place in \(vocabulary.schemas[v].versionIdentifier)")
            }
        } else {
            let frameValues = Array(UnsafeBufferPointer(start: values + child * valueStride, count: valueStride))
            let item = Pending(entity: head.entity, values: frameValues, present: head.present,
                               children: head.hasPending ? pending[child] : [])
            while pending.count <= parent { pending.append([]) }
            while pending[parent].count <= field { pending[parent].append([]) }
            pending[parent][field].append(item)
            heads[parent].hasPending = true
        }
        resetFrame(child)
        depth -= 1
    }

    /// Ends the record: decides its version, checks it, and yields a trip or a rejection.
    /// `text` is the record's own text, where the format has it, for the rejects file.
    public mutating func endRecord(text: String? = nil) -> ReadItem {
        while depth > 1 { endObject() }
        defer { resetFrame(0); depth = 0 }
        if sawTransient { transientIgnored += 1 }
        func reject(_ reason: String) -> ReadItem { .rejected(SetAsideRecord(origin: origin, reason: reason, text: text)) }

        if !unknown.isEmpty {
            let names = unknown.map { "'\($0)'" }.joined(separator: ", ") + (unknownMore > 0 ? " and \(unknownMore) more" : "")
            return reject("unknown field\(unknown.count > 1 ? "s" : "") \(names) match\(unknown.count > 1 ? "" : "es") no schema version")
        }
        if let first = errors.first { return reject(first) }
        if recordMask == 0 {
            let parts = distinguishing.map { n in "\(n) (\(vocabulary.describe(fieldVersions(n) ?? 0)))" }
            return reject("fields " + parts.joined(separator: ", ") + " match no single schema version")
        }
        var index: Int
        if let fileIndex = versionIndex {
            guard recordMask & (UInt32(1) << UInt32(fileIndex)) != 0 else {
                let names = distinguishing.joined(separator: ", ")
                let fileVersion = vocabulary.schemas[fileIndex].versionIdentifier
                let why: String
                switch evidence {
                case .fields(let first): why = "earlier records have \(first.joined(separator: ", "))"
                default: why = "the input is \(evidence)"
                }
                return reject("fields \(names) are \(vocabulary.describe(recordMask)), but the input is \(fileVersion) (\(why)); an input must not mix versions")
            }
            index = fileIndex
        } else {
            // The oldest version the fields allow; with no telling field at all, the current one.
            index = recordMask == vocabulary.allVersions ? vocabulary.schemas.count - 1
                : (0..<vocabulary.schemas.count).first { recordMask & (UInt32(1) << UInt32($0)) != 0 }!
        }
        if let recordsIndex = recordsVersionIndex { index = recordsIndex }
        var problems: [String] = []
        let object = materialize(frame: 0, version: index, problems: &problems)
        if let first = problems.first { return reject(first) }
        if versionIndex == nil {
            versionIndex = index
            evidence = distinguishingOrder.isEmpty ? .none : .fields(distinguishing)
        }
        if recordsVersionIndex == nil { recordsVersionIndex = index }
        return .trip(TripRecord(object: object, origin: origin))
    }

    /// Builds the object of a frame in a version's layout. The frame's values, related objects and
    /// pending objects are moved into the object, not copied: the frame is reset right after.
    private mutating func materialize(frame i: Int, version v: Int, problems: inout [String]) -> ModelObject {
        let head = heads[i]
        var framePending: [[Pending]] = []
        if head.hasPending { swap(&framePending, &pending[i]) }
        let layout = vocabulary.layouts[head.entity][v]
        let lists = related + i * relatedStride
        // The related objects go straight into the object, unless pending ones are merged with them.
        let movesRelated = head.hasRelated && framePending.isEmpty && layout.exists
        var object = RecordBuilder.makeObject(vocabulary, entity: head.entity, values: values + i * valueStride,
                                              present: head.present, pending: framePending, version: v,
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
    /// into the object (and left empty).
    private static func makeObject(_ vocabulary: SchemaVocabulary, entity e: Int, values: UnsafeMutablePointer<Value>,
                                   present: UInt64, pending: [[Pending]], version v: Int,
                                   related: UnsafeMutablePointer<[ModelObject]>? = nil,
                                   problems: inout [String]) -> ModelObject {
        let layout = vocabulary.layouts[e][v]
        guard layout.exists else {
            problems.append("\(layout.entityName) has no place in \(vocabulary.schemas[v].versionIdentifier)")
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
            problems.append("missing required field '\(layout.attributeNames[slot])'\(where_)")
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
                problems.append("field '\(vocabulary.entities[e].fields[fi].name)' has no place in \(vocabulary.schemas[v].versionIdentifier)")
                continue
            }
            let objects = list.map { p in
                var values = p.values
                return values.withUnsafeMutableBufferPointer {
                    makeObject(vocabulary, entity: p.entity, values: $0.baseAddress!, present: p.present,
                               pending: p.children, version: v, problems: &problems)
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
    private static func noneIfDefaults(_ object: ModelObject, _ defaults: [Value]?) -> ModelObject? {
        if let defaults, object.attributes == defaults { return nil }
        return object
    }

    // MARK: - Types

    /// Static: a method of the builder called from its mutating ones would be handed a copy of the whole builder.
    private static func convert(_ token: ScalarToken, to type: AttributeType, epoch: DateEpoch) -> Result<Value, ConversionFailure> {
        switch token {
        case .null: return .success(.null)
        case .plain(let s) where isYAMLNull(s): return .success(.null)
        default: break
        }
        switch type {
        case .string:
            switch token {
            case .string(let s), .text(let s), .plain(let s): return .success(.string(s))
            default: return .failure(ConversionFailure("expected a string, found \(token.description)"))
            }
        case .date:
            switch token {
            case .number(let n):
                if let t = Timestamp(number: n, epoch: epoch) { return .success(.date(t)) }
                return .failure(ConversionFailure("expected a date, found the number \(n) out of range"))
            case .string(let s), .text(let s), .plain(let s):
                if let t = Timestamp(iso8601: s) { return .success(.date(t)) }
                if isNumberText(s), let t = Timestamp(number: s, epoch: epoch) { return .success(.date(t)) }
                return .failure(ConversionFailure("expected an ISO 8601 date, found \(s.quotedForMessage)"))
            default: return .failure(ConversionFailure("expected a date, found \(token.description)"))
            }
        case .bool:
            switch token {
            case .bool(let b): return .success(.bool(b))
            case .text(let s), .plain(let s):
                if let b = parseBool(s) { return .success(.bool(b)) }
                return .failure(ConversionFailure("expected true or false, found \(s.quotedForMessage)"))
            default: return .failure(ConversionFailure("expected true or false, found \(token.description)"))
            }
        case .int:
            switch token {
            case .number(let s), .text(let s), .plain(let s):
                if let n = Int64(s) { return .success(.int(n)) }
                return .failure(ConversionFailure("expected an integer, found \(s.quotedForMessage)"))
            default: return .failure(ConversionFailure("expected an integer, found \(token.description)"))
            }
        }
    }
}

private struct ConversionFailure: Error { let message: String; init(_ m: String) { message = m } }

extension SchemaVocabulary.FieldKind {
    var expectation: String {
        switch self {
        case .attribute(let t): return "a \(t.rawValue)"
        case .toMany: return "a list of objects"
        case .toOne: return "an object or null"
        case .transient: return "anything"
        }
    }
}

extension ScalarToken: CustomStringConvertible {
    public var description: String {
        switch self {
        case .string(let s): return "the string \(s.quotedForMessage)"
        case .text(let s), .plain(let s): return s.quotedForMessage
        case .number(let n): return "the number \(n)"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }
}

/// `~`, `null`, `Null`, `NULL` and the empty plain scalar: YAML's null.
public func isYAMLNull(_ s: String) -> Bool {
    s.isEmpty || s == "~" || s == "null" || s == "Null" || s == "NULL"
}

/// Reads the Boolean spellings of JSON, YAML 1.1 and 1.2, and spreadsheets, in any case.
public func parseBool(_ text: String) -> Bool? {
    switch text.lowercased() {
    case "true", "1", "yes", "y", "on": return true
    case "false", "0", "no", "n", "off": return false
    default: return nil
    }
}

private func isNumberText(_ s: String) -> Bool {
    guard !s.isEmpty else { return false }
    return s.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || $0 == 46 || $0 == 45 || $0 == 43 || $0 == 101 || $0 == 69 }
}
