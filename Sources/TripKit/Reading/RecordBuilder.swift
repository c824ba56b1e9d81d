// How a format's reader makes trips: the builder's public face, and how a record's version is
// decided. Its state and the frame mechanics are in Machinery/RecordBuilder+Frames.swift.

extension RecordBuilder {
    /// The facts so far: final once the input is read.
    public var detection: Detection {
        let version = versionIndex.map { vocabulary.schemas[$0].versionIdentifier }
        let recordsVersion = recordsVersionIndex.map { vocabulary.schemas[$0].versionIdentifier }
        var detection = Detection(format: format, version: version,
                                  recordsVersion: recordsVersion == version ? nil : recordsVersion,
                                  evidence: evidence, transientIgnored: transientIgnored, unknownIgnored: unknownIgnored)
        detection.compression = compression
        return detection
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

    func fieldVersions(_ name: String) -> UInt32? {
        for e in vocabulary.entities { if let i = e.index[name] { return e.fields[i].versions } }
        return nil
    }

    // MARK: - Building a record

    /// Starts a root object (a trip).
    public mutating func beginRecord(origin: RecordOrigin) {
        self.origin = origin
        depth = 0
        mark = RecordBuilder.noMark
        failureMark = RecordBuilder.noMark
        unknownMark = RecordBuilder.noMark
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
        if unknown.isEmpty { unknownMark = mark }
        if unknown.contains(name) { return }
        if unknown.count < RecordBuilder.unknownNamesShown { unknown.append(name) } else { unknownMore += 1 }
    }

    /// Marks the record bad with a reason (the first reason is the one reported, and the only one
    /// kept: a hostile record may fail millions of times).
    public mutating func fail(_ reason: String) {
        fail(reason, at: mark)
    }

    /// Marks the record bad with a reason about the place `mark` (see `mark`).
    mutating func fail(_ reason: String, at mark: Int) {
        if errors.isEmpty {
            errors.append(reason)
            failureMark = mark
        }
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

    /// Marks a field present (an empty list, a null to-one) without giving it objects.
    public mutating func markPresent(_ field: Int) {
        _ = note(field, allowRepeat: true)
    }

    /// Records a field's presence and its version evidence; false for a field given twice.
    @inline(__always)
    mutating func note(_ field: Int, allowRepeat: Bool = false) -> Bool {
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

    var distinguishing: [String] {
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

    func relatedCount(_ frame: Int, _ field: Int) -> Int {
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

    /// Ends the record: decides its version, checks it, and yields a trip or a rejection.
    /// `text` is the record's own text, where the format has it, for the rejects file.
    public mutating func endRecord(text: String? = nil) -> ReadItem {
        while depth > 1 { endObject() }
        defer { resetFrame(0); depth = 0 }
        if sawTransient { transientIgnored += 1 }
        rejectionMark = RecordBuilder.noMark
        func reject(_ reason: String, at mark: Int = RecordBuilder.noMark) -> ReadItem {
            rejectionMark = mark
            return .rejected(SetAsideRecord(origin: origin, reason: reason, text: text))
        }

        if !unknown.isEmpty {
            let names = unknown.map { "'\($0)'" }.joined(separator: ", ") + (unknownMore > 0 ? " and \(unknownMore) more" : "")
            return reject("unknown field\(unknown.count > 1 ? "s" : "") \(names) match\(unknown.count > 1 ? "" : "es") no schema version",
                          at: unknownMark)
        }
        if let first = errors.first { return reject(first, at: failureMark) }
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
        var problems: [Problem] = []
        let object = materialize(frame: 0, version: index, problems: &problems)
        if let first = problems.first { return reject(first.reason, at: first.mark) }
        if versionIndex == nil {
            versionIndex = index
            evidence = distinguishingOrder.isEmpty ? .none : .fields(distinguishing)
        }
        if recordsVersionIndex == nil { recordsVersionIndex = index }
        return .trip(TripRecord(object: object, origin: origin))
    }

    // MARK: - Places

    /// No mark: a failure at it is placed at its record's origin.
    public static let noMark = Int.min

    /// A 1-based line and column packed into one mark, for a reader that knows both as it reads
    /// (a column past 2³² - 1 is given as that).
    @inline(__always)
    public static func mark(line: Int, column: Int) -> Int {
        line &<< 32 | (column < 0xFFFF_FFFF ? column : 0xFFFF_FFFF)
    }

    /// The line and column of a mark made by `mark(line:column:)`.
    public static func lineAndColumn(ofMark mark: Int) -> (line: Int, column: Int) {
        (Int(UInt64(bitPattern: Int64(mark)) >> 32), mark & 0xFFFF_FFFF)
    }

    // MARK: - Types

    /// Static: a method of the builder called from its mutating ones would be handed a copy of the whole builder.
    static func convert(_ token: ScalarToken, to type: AttributeType, epoch: DateEpoch) -> Result<Value, ConversionFailure> {
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

struct ConversionFailure: Error { let message: String; init(_ m: String) { message = m } }

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
