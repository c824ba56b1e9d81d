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

    private struct Pending {
        var entity: Int
        var values: [Value]
        var present: UInt64
        var children: [[Pending]]
    }
    private struct Frame {
        var entity: Int
        var field: Int          // the field of the parent frame this object belongs to
        var values: [Value]
        var present: UInt64
        var children: [[Pending]]
    }

    private var stack: [Frame] = []
    private var origin = RecordOrigin(source: "", record: 0)
    private var errors: [String] = []
    private var unknown: [String] = []
    private var sawTransient = false
    private var recordMask: UInt32 = 0
    private var distinguishing: [String] = []
    private var inRecord = false

    /// Per version, each vocabulary entity's declaration in that version (nil where it has none),
    /// found once here rather than by name for every object built.
    private let declaredEntities: [[Entity?]]

    public init(vocabulary: SchemaVocabulary = .trips, source: String, format: String, options: ReadOptions = ReadOptions()) {
        self.vocabulary = vocabulary; self.source = source; self.options = options; self.format = format
        declaredEntities = vocabulary.schemas.map { schema in vocabulary.entities.map { schema.entity($0.name) } }
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
        stack.removeAll(keepingCapacity: true)
        stack.append(makeFrame(entity: vocabulary.rootEntity, field: -1))
        errors.removeAll(keepingCapacity: true)
        unknown.removeAll(keepingCapacity: true)
        distinguishing.removeAll(keepingCapacity: true)
        recordMask = vocabulary.allVersions
        sawTransient = false
        inRecord = true
    }

    private func makeFrame(entity: Int, field: Int) -> Frame {
        let count = vocabulary.entities[entity].fields.count
        return Frame(entity: entity, field: field, values: Array(repeating: .null, count: count), present: 0, children: [])
    }

    /// The name of the entity of the object being built.
    public var currentEntityName: String { vocabulary.entities[stack[stack.count - 1].entity].name }

    /// Resolves a field name of the object being built; nil for a name no version declares.
    public func field(_ name: String) -> Int? {
        vocabulary.entities[stack[stack.count - 1].entity].index[name]
    }

    /// What a resolved field is.
    public func kind(of field: Int) -> SchemaVocabulary.FieldKind {
        vocabulary.entities[stack[stack.count - 1].entity].fields[field].kind
    }

    /// Notes a field no version declares: the record is rejected, unless unknown fields are ignored.
    public mutating func unknownField(_ name: String) {
        if options.ignoreUnknown { unknownIgnored += 1; return }
        if !unknown.contains(name) { unknown.append(name) }
    }

    /// Marks the record bad with a reason (the first reason is the one reported).
    public mutating func fail(_ reason: String) {
        errors.append(reason)
    }

    /// Sets a field by name: an attribute from a scalar, or (for `.null`) a relationship to nothing.
    public mutating func set(_ name: String, _ token: ScalarToken) {
        guard let f = field(name) else { unknownField(name); return }
        set(f, token)
    }

    /// Sets a resolved field from a scalar.
    public mutating func set(_ field: Int, _ token: ScalarToken) {
        let top = stack.count - 1
        let kind = vocabulary.entities[stack[top].entity].fields[field].kind
        switch kind {
        case .transient:
            sawTransient = true
            return
        case .toMany, .toOne:
            switch token {
            case .null: markPresent(field)
            case .plain(let s) where isYAMLNull(s): markPresent(field)
            case .text(let s) where s.isEmpty: markPresent(field)
            default: fail("field '\(fieldName(field))': expected \(kind.expectation), found \(token.description)")
            }
            return
        case .attribute(let type):
            if !note(field) { return }
            switch convert(token, to: type) {
            case .success(let value): stack[top].values[field] = value
            case .failure(let failure): fail("field '\(fieldName(field))': \(failure.message)")
            }
        }
    }

    /// Marks a field present (an empty list, a null to-one) without giving it objects.
    public mutating func markPresent(_ field: Int) {
        _ = note(field, allowRepeat: true)
    }

    /// Records a field's presence and its version evidence; false for a field given twice.
    private mutating func note(_ field: Int, allowRepeat: Bool = false) -> Bool {
        let top = stack.count - 1
        let versions = vocabulary.entities[stack[top].entity].fields[field].versions
        let bit: UInt64 = field < 64 ? UInt64(1) << UInt64(field) : 0
        if stack[top].present & bit != 0, !allowRepeat {
            fail("field '\(fieldName(field))' is given twice")
            return false
        }
        stack[top].present |= bit
        if versions != vocabulary.allVersions {
            recordMask &= versions
            let name = fieldName(field)
            if !distinguishing.contains(name) { distinguishing.append(name) }
        }
        return true
    }

    /// The name of a field of the object being built, fetched only where a message or the version
    /// evidence needs it: copying a whole `Field` per call cost three retains and releases.
    private func fieldName(_ field: Int) -> String { vocabulary.entities[stack[stack.count - 1].entity].fields[field].name }

    /// Starts a related object in a relationship field of the object being built.
    public mutating func beginObject(_ field: Int) {
        let top = stack.count - 1
        let f = vocabulary.entities[stack[top].entity].fields[field]
        let destination: Int
        switch f.kind {
        case .toMany(let d): destination = d
        case .toOne(let d):
            destination = d
            let existing = stack[top].children.count > field ? stack[top].children[field].count : 0
            if existing > 0 { fail("field '\(f.name)' holds more than one object") }
        default:
            fail("field '\(f.name)': expected \(f.kind.expectation), found an object")
            destination = stack[top].entity
        }
        _ = note(field, allowRepeat: true)
        stack.append(makeFrame(entity: destination, field: field))
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
        let frame = stack.removeLast()
        let top = stack.count - 1
        while stack[top].children.count <= frame.field { stack[top].children.append([]) }
        stack[top].children[frame.field].append(Pending(entity: frame.entity, values: frame.values,
                                                        present: frame.present, children: frame.children))
    }

    /// Ends the record: decides its version, checks it, and yields a trip or a rejection.
    /// `text` is the record's own text, where the format has it, for the rejects file.
    public mutating func endRecord(text: String? = nil) -> ReadItem {
        inRecord = false
        while stack.count > 1 { endObject() }
        let root = stack.removeLast()
        if sawTransient { transientIgnored += 1 }
        func reject(_ reason: String) -> ReadItem { .rejected(Rejection(origin: origin, reason: reason, text: text)) }

        if !unknown.isEmpty {
            let names = unknown.map { "'\($0)'" }.joined(separator: ", ")
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
            // The oldest version the fields allow.
            index = (0..<vocabulary.schemas.count).first { recordMask & (UInt32(1) << UInt32($0)) != 0 }!
        }
        if let recordsIndex = recordsVersionIndex { index = recordsIndex }
        var problems: [String] = []
        let object = materialize(entity: root.entity, values: root.values, present: root.present,
                                 children: root.children, version: index, problems: &problems)
        if let first = problems.first { return reject(first) }
        if versionIndex == nil {
            versionIndex = index
            evidence = distinguishing.isEmpty ? .none : .fields(distinguishing)
        }
        if recordsVersionIndex == nil { recordsVersionIndex = index }
        return .trip(TripRecord(object: object, origin: origin))
    }

    private func materialize(entity e: Int, values: [Value], present: UInt64, children: [[Pending]],
                             version v: Int, problems: inout [String]) -> ModelObject {
        let vocab = vocabulary.entities[e]
        guard let declared = declaredEntities[v][e] else {
            problems.append("\(vocab.name) has no place in \(vocabulary.schemas[v].versionIdentifier)")
            return ModelObject(attributes: [])
        }
        var attributes = [Value](repeating: .null, count: declared.attributes.count)
        var relationships = declared.relationships.map { $0.isToMany ? Related.toMany([]) : Related.toOne(nil) }
        for (fi, field) in vocab.fields.enumerated() {
            let slot = field.slots[v]
            guard slot >= 0 else { continue }
            switch field.kind {
            case .attribute:
                if fi < 64, present & (UInt64(1) << UInt64(fi)) != 0 { attributes[slot] = values[fi] }
            case .toMany, .toOne:
                guard fi < children.count, !children[fi].isEmpty else { continue }
                let objects = children[fi].map {
                    materialize(entity: $0.entity, values: $0.values, present: $0.present, children: $0.children,
                                version: v, problems: &problems)
                }
                if case .toMany(let existing) = relationships[slot] {
                    relationships[slot] = .toMany(existing + objects)
                } else {
                    relationships[slot] = .toOne(objects.first)
                }
            case .transient:
                continue
            }
        }
        for (i, a) in declared.attributes.enumerated() where attributes[i].isNull {
            if let d = a.defaultValue {
                attributes[i] = d
            } else if a.isRequired {
                let where_ = e == vocabulary.rootEntity ? "" : " of a \(vocab.name)"
                problems.append("missing required field '\(a.name)'\(where_)")
            }
        }
        // A to-one object that gives nothing but its defaults is the same as none.
        for (i, r) in declared.relationships.enumerated() where !r.isToMany {
            if case .toOne(let o?) = relationships[i], let dest = vocabulary.schemas[v].entity(r.destination),
               dest.attributes.allSatisfy({ !$0.isRequired }),
               zip(dest.attributes, o.attributes).allSatisfy({ a, value in value == a.defaultValue || a.isTransient }) {
                relationships[i] = .toOne(nil)
            }
        }
        return ModelObject(attributes: attributes, relationships: relationships)
    }

    // MARK: - Types

    private func convert(_ token: ScalarToken, to type: AttributeType) -> Result<Value, ConversionFailure> {
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
                if let t = Timestamp(number: n, epoch: options.dateEpoch) { return .success(.date(t)) }
                return .failure(ConversionFailure("expected a date, found the number \(n) out of range"))
            case .string(let s), .text(let s), .plain(let s):
                if let t = Timestamp(iso8601: s) { return .success(.date(t)) }
                if isNumberText(s), let t = Timestamp(number: s, epoch: options.dateEpoch) { return .success(.date(t)) }
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
