import TripKit

/// A scalar as a text format gives it: JSON's kinds, or a YAML scalar resolved by the core schema.
enum GraphScalar {
    case null
    case bool(Bool)
    /// A number's text as written.
    case number(String)
    /// A whole number in Int64 whose text as written is `String(i)` (no `-0`, `+` or `1e2`): what
    /// `.number(String(i))` says, without the text (the JSON parser's; YAML's numbers are `.number`).
    case int(Int64)
    case string(String)
}

/// A member's value: a scalar, an array of scalars, or something no member of an object holds.
enum GraphValue {
    case scalar(GraphScalar)
    case list([(GraphScalar, line: Int, column: Int)])
    /// A nested object, or an array holding one: its kind, for the message.
    case other(String)
}

/// A member of an object, with the place of its value.
struct GraphField {
    var name: String
    var value: GraphValue
    var line: Int
    var column: Int
}

/// Makes `ObjectRecord`s of the members a text format's reader gives, with the index of the first
/// pass: shared by the JSON, JSON Lines and YAML readers of graphs, so that all three take and
/// refuse the same things. A record is refused, with the place of the member at fault, for a member
/// its entity does not have (or one given twice), a value of the wrong kind, a missing `@key`, a
/// missing or null attribute that is neither optional nor defaulted. A missing optional attribute is
/// its default, else null; a missing relationship is empty. A reference that names no object the
/// first pass took (none has that key or value, or the one that has it is refused) is removed from
/// its object, which is kept, and counted in the index's `removals`: refusing the object instead
/// would leave the objects already given that refer to it naming an object never written.
struct ObjectGraphDecoder {
    var index: ObjectGraphIndex
    let relationships: [[RelationshipDescription]]
    let destinations: [[Int]]
    /// Per entity, its attributes' names then its relationships' (the members an object may have),
    /// and whether they are all distinct (else a name is looked for from the start, as the first wins).
    let members: [[String]]
    let membersDistinct: [Bool]
    /// Per entity, its attributes' kinds and whether each is optional: read per member without
    /// copying an `AttributeDescription` (and retaining its texts).
    private let kinds: [[AttributeKind]]
    private let optional: [[Bool]]
    /// Per entity, whether each relationship is to-many.
    private let toMany: [[Bool]]
    /// Finds a member by its name's bytes for `decodeMembers`' objects (the index pass's lookup).
    private var lookup: ObjectGraphCheck

    /// Whether references are looked up (false: the first pass's check of an object's own members).
    let resolvesReferences: Bool
    /// The references of the object being built (`begin` … `finish`), in the order its members come:
    /// a to-one's one, a list's elements. `finish` copies them, relationship by relationship, into
    /// the object's one buffer (`ObjectRelationships`); these two keep their room from object to object.
    private var scratch: [ObjectReference] = []
    /// Per relationship of the object being built, where its references start and end in `scratch`
    /// (two numbers each; equal when it has none).
    private var spans: [Int] = []
    /// Where the list being decoded starts in `scratch` (`list`, `listItem`, `endList`).
    private var listStart = 0

    /// A decoder for the second pass, with what the first learnt in `index` (its numbering
    /// restarted); or, `resolvesReferences` false, the first pass's checker.
    init(_ index: ObjectGraphIndex, resolvesReferences: Bool = true) {
        var index = index
        index.restartNumbering()
        self.index = index
        self.resolvesReferences = resolvesReferences
        let model = index.model
        let relationships = model.entities.indices.map(model.allRelationships)
        kinds = index.attributes.map { $0.map(\.kind) }
        optional = index.attributes.map { $0.map(\.isOptional) }
        toMany = relationships.map { $0.map(\.isToMany) }
        self.relationships = relationships
        destinations = relationships.map { $0.map { model.entityIndex($0.destination) ?? -1 } }
        let members = model.entities.indices.map { index.attributes[$0].map(\.name) + relationships[$0].map(\.name) }
        self.members = members
        membersDistinct = members.map { Set($0).count == $0.count }
        lookup = ObjectGraphCheck(index)
    }

    /// Counts an object of `entity` that another pass gives.
    mutating func skip(_ entity: Int) { _ = index.nextOrdinal(entity) }

    /// The object of `entity` these members make, or its rejection.
    ///
    /// Per object it allocates the record's two arrays and a to-many's references, nothing else: which
    /// members were given is a bit each (`GivenMembers`), a member is found by its name from where the
    /// previous one was (members usually come in the entity's order), and names are made only for
    /// messages.
    mutating func decode(entity: Int, fields: [GraphField], origin: RecordOrigin) throws -> ObjectReadItem {
        let ordinal = index.nextOrdinal(entity)
        func reject(_ reason: String, _ field: GraphField?) -> ObjectReadItem {
            var r = SetAsideRecord(origin: origin, reason: reason)
            if let field { r.locate(at: (field.line, field.column)) }
            return .rejected(r)
        }
        var name: String { index.model.entities[entity].name }
        let attributes = index.attributes[entity]
        let names = members[entity]
        let attributeCount = attributes.count
        var values = emptyValues(entity)
        var related = [[ObjectReference]](repeating: [], count: relationshipCount(entity))
        var given = GivenMembers()
        var key: Int64? = index.slots[entity] != nil ? ordinal : nil
        var hint = membersDistinct[entity] ? 0 : Int.max
        for field in fields {
            if field.name == "@entity" { continue }
            if field.name == "@key" && index.slots[entity] == nil {
                guard key == nil else { return reject("\"@key\" is given twice", field) }
                guard case .scalar(let s) = field.value, let k = Self.integer(s) else {
                    return reject("expected a whole number for \"@key\", found \(Self.describe(field.value))", field)
                }
                // The first pass's checker looks nothing up: the index is still being made.
                if resolvesReferences, try index.isRepeated(index.roots[entity], key: k) {
                    return reject("a second object of \(index.model.entities[index.roots[entity]].name) with \"@key\" \(k)", field)
                }
                key = k
                continue
            }
            guard let m = Self.member(field.name, in: names, from: hint) else {
                return reject("\(name) has no attribute or relationship \(field.name.quotedForMessage)", field)
            }
            if hint != Int.max { hint = m + 1 }
            guard given.insert(m) else { return reject("\(field.name.quotedForMessage) is given twice", field) }
            if m < attributeCount {
                let a = m
                guard case .scalar(let s) = field.value else {
                    return reject("expected \(attributes[a].kind) for \(field.name.quotedForMessage), found \(Self.describe(field.value))", field)
                }
                if case .null = s {
                    guard attributes[a].isOptional else { return reject("\(field.name.quotedForMessage) is null; \(name) requires it", field) }
                    continue
                }
                guard let v = Self.value(s, attributes[a].kind) else {
                    return reject("expected \(attributes[a].kind) for \(field.name.quotedForMessage), found \(Self.describe(field.value))", field)
                }
                values[a] = v
            } else {
                let r = m - attributeCount
                let isToMany = toMany[entity][r]
                switch field.value {
                case .scalar(.null) where !isToMany:
                    break
                case .scalar(let s) where !isToMany:
                    guard resolvesReferences else { break }
                    switch try resolve(s, destination: destinations[entity][r]) {
                    case .success(let reference): related[r] = [reference]
                    case .failure(let e) where e.isModel: return reject("\(field.name.quotedForMessage): \(e.message)", field)
                    case .failure(let e):
                        index.removals.add(origin, member: field.name, place: (field.line, field.column), reason: e.message)
                    }
                case .list(let items) where isToMany:
                    guard resolvesReferences else { break }
                    var references: [ObjectReference] = []
                    references.reserveCapacity(items.count)
                    for (s, line, column) in items {
                        switch try resolve(s, destination: destinations[entity][r]) {
                        case .success(let reference): references.append(reference)
                        case .failure(let e) where e.isModel:
                            return reject("\(field.name.quotedForMessage): \(e.message)",
                                          GraphField(name: field.name, value: .scalar(s), line: line, column: column))
                        case .failure(let e): index.removals.add(origin, member: field.name, place: (line, column), reason: e.message)
                        }
                    }
                    related[r] = references
                default:
                    let expected = isToMany ? "an array of references" : "a reference or null"
                    return reject("expected \(expected) for \(field.name.quotedForMessage), found \(Self.describe(field.value))", field)
                }
            }
        }
        guard let key else { return reject("\(name) needs \"@key\", the number other objects refer to it by", nil) }
        if let reason = try complete(entity, key: key, &values, given) { return reject(reason, nil) }
        return .object(ObjectRecord(entity: entity, key: key, attributes: values, relationships: ObjectRelationships(related), origin: origin))
    }

    /// An object of `entity`'s values, all null, to be filled.
    private func emptyValues(_ entity: Int) -> [ObjectValue] {
        let attributeCount = index.attributes[entity].count
        // Appended rather than `Array(repeating:count:)`, whose buffer is made through the generic runtime.
        var values: [ObjectValue] = []
        values.reserveCapacity(attributeCount)
        for _ in 0..<attributeCount { values.append(.null) }
        return values
    }

    /// The number of relationships of `entity`.
    private func relationshipCount(_ entity: Int) -> Int { members[entity].count - index.attributes[entity].count }

    /// The attributes not `given` filled with their defaults, and the unique value checked: why the
    /// object of `entity` keyed `key` is refused, nil when it is not.
    private func complete(_ entity: Int, key: Int64, _ values: inout [ObjectValue], _ given: GivenMembers) throws -> String? {
        let attributes = index.attributes[entity]
        var name: String { index.model.entities[entity].name }
        for a in 0..<attributes.count where !given.contains(a) {
            if let d = attributes[a].defaultValue {
                values[a] = d
            } else if !(attributes[a].isOptional || attributes[a].isTransient) {
                return "\(name) requires \(attributes[a].name.quotedForMessage), which is missing"
            }
        }
        if resolvesReferences, !index.repeatsUnique[entity], let slot = index.slots[entity], index.referred[entity],
           let text = ObjectValueText.text(values[slot]),
           let first = try index.reference(index.roots[entity], text: text), first != ObjectReference(entity: entity, key: key) {
            return "a second \(name) whose \(attributes[slot].name.quotedForMessage) is \(text.quotedForMessage)"
        }
        return nil
    }

    /// An object being decoded as its members are parsed (`begin`, `member`, `scalar`, `listItem`, `finish`).
    struct Building {
        var entity: Int
        var values: [ObjectValue]
        var given = GivenMembers()
        var key: Int64?
        var origin: RecordOrigin
    }

    /// Starts an object of `entity` decoded as it is parsed, without its members' `GraphField`s: only
    /// one `decode` would take as it is. Any member it would refuse, or reference it would remove,
    /// makes `scalar`, `listItem` or `finish` give false or nil, and the parser then gives the
    /// object's members to `decode` (which says why); nothing is noted until `finish` takes it.
    mutating func begin(_ entity: Int, origin: RecordOrigin) -> Building {
        scratch.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        for _ in 0..<(2 * relationshipCount(entity)) { spans.append(0) }
        lookup.begin(entity)
        return Building(entity: entity, values: emptyValues(entity),
                        key: index.slots[entity] != nil ? index.peekOrdinal(entity) : nil, origin: origin)
    }

    /// What the member of the object being built named by these bytes is.
    mutating func member(_ name: UnsafeRawBufferPointer) -> ObjectGraphCheck.Member { lookup.member(name) }

    /// Takes a scalar as `member`'s value, as `decode` takes it; false where `decode` refuses it or
    /// removes the reference.
    mutating func scalar(_ member: ObjectGraphCheck.Member, _ raw: GraphRawScalar, _ object: inout Building) throws -> Bool {
        let entity = object.entity
        switch member {
        case .entity: return true
        case .unknown: return false
        case .key:
            guard object.key == nil, case .number(let t) = raw, let k = ObjectGraphCheck.integer(t),
                  try !index.isRepeated(index.roots[entity], key: k) else { return false }
            object.key = k
            return true
        case .at(let m):
            guard object.given.insert(m) else { return false }
            let attributeCount = kinds[entity].count
            if m < attributeCount {
                if case .null = raw { return optional[entity][m] }
                guard let v = Self.value(raw, kinds[entity][m]) else { return false }
                object.values[m] = v
                return true
            }
            let r = m - attributeCount
            guard !toMany[entity][r] else { return false }
            if case .null = raw { return true }
            guard case .success(let reference) = try resolve(raw.scalar, destination: destinations[entity][r]) else { return false }
            spans[2 * r] = scratch.count
            scratch.append(reference)
            spans[2 * r + 1] = scratch.count
            return true
        }
    }

    /// Starts an array as `member`'s value: the position of its to-many relationship, nil where
    /// `decode` refuses it. Its elements (`listItem`) are gathered in `scratch`, and `endList` notes
    /// where they are.
    mutating func list(_ member: ObjectGraphCheck.Member, _ object: inout Building) -> Int? {
        guard case .at(let m) = member, object.given.insert(m) else { return nil }
        let r = m - kinds[object.entity].count
        guard r >= 0, toMany[object.entity][r] else { return nil }
        listStart = scratch.count
        return r
    }

    /// Takes an element of the array of relationship `r`: false where it names no object.
    mutating func listItem(_ r: Int, _ raw: GraphRawScalar, _ object: inout Building) throws -> Bool {
        guard case .success(let reference) = try resolve(raw.scalar, destination: destinations[object.entity][r]) else { return false }
        scratch.append(reference)
        return true
    }

    /// Ends the array of relationship `r`: its elements are the relationship's.
    mutating func endList(_ r: Int, _ object: inout Building) {
        spans[2 * r] = listStart
        spans[2 * r + 1] = scratch.count
    }

    /// The object built, its number taken; nil where `decode` refuses it.
    mutating func finish(_ object: inout Building) throws -> ObjectReadItem? {
        guard let key = object.key, try complete(object.entity, key: key, &object.values, object.given) == nil else { return nil }
        _ = index.nextOrdinal(object.entity)
        // Moved out of `object`, not copied (a retain now and a release when it ends).
        var values: [ObjectValue] = []
        swap(&values, &object.values)
        let related = scratch.withUnsafeBufferPointer { references in
            spans.withUnsafeBufferPointer { spans in ObjectRelationships(references: references, spans: spans) }
        }
        return .object(ObjectRecord(entity: object.entity, key: key, attributes: values, relationships: related, origin: object.origin))
    }

    /// The position of the member `name` among an entity's attribute and relationship names, looked
    /// for at `from` first.
    @inline(__always)
    private static func member(_ name: String, in names: [String], from: Int) -> Int? {
        if from < names.count && names[from] == name { return from }
        return names.firstIndex(of: name)
    }

    /// Why a reference names no object; `isModel` when the model itself is at fault (its destination
    /// is not among its entities), not the data.
    struct Failure: Error {
        let message: String
        var isModel = false
    }

    /// The object a reference names, of `destination` or one of its sub-entities.
    private func resolve(_ s: GraphScalar, destination: Int) throws -> Result<ObjectReference, Failure> {
        guard destination >= 0 else { return .failure(Failure(message: "the destination is not in the model", isModel: true)) }
        let root = index.roots[destination]
        var destinationName: String { index.model.entities[destination].name }
        var found: ObjectReference?
        if let slot = index.slots[destination] {
            let attribute = index.attributes[destination][slot]
            guard let text = ObjectGraphIndex.canonical(s, attribute.kind) else {
                return .failure(Failure(message: "expected \(destinationName)'s \(attribute.name) (\(attribute.kind)), found \(Self.describe(.scalar(s)))"))
            }
            found = try index.reference(root, text: text)
            guard found != nil else { return .failure(Failure(message: "no \(destinationName) has \(attribute.name) \(text.quotedForMessage)")) }
        } else {
            guard let k = Self.integer(s) else {
                return .failure(Failure(message: "expected the \"@key\" number of a \(destinationName), found \(Self.describe(.scalar(s)))"))
            }
            guard let e = try index.entity(root, key: k) else { return .failure(Failure(message: "no \(destinationName) has \"@key\" \(k)")) }
            // Two objects gave this key: both are refused, so a reference to it names neither.
            if try index.isRepeated(root, key: k) {
                return .failure(Failure(message: "two objects of \(index.model.entities[root].name) have \"@key\" \(k) (both are refused)"))
            }
            found = ObjectReference(entity: e, key: k)
        }
        guard let reference = found, reference.entity == destination || index.model.lineage(of: reference.entity).contains(destination) else {
            return .failure(Failure(message: "the object it names is not a \(destinationName)"))
        }
        return .success(reference)
    }

    /// The value of `kind` a scalar gives; nil for the wrong kind. Strings are taken only as
    /// strings, numbers as numbers, except what text formats must write as strings: a Double not
    /// finite, a Decimal, a Date (also a number of seconds since 2001).
    static func value(_ s: GraphScalar, _ kind: AttributeKind) -> ObjectValue? {
        switch (s, kind) {
        case (.null, _): return .null
        case (.bool(let b), .bool): return .bool(b)
        case (.int(let i), .int64): return .int(i)
        case (.int(let i), .int32): return Int32(exactly: i) == nil ? nil : .int(i)
        case (.int(let i), .int16): return Int16(exactly: i) == nil ? nil : .int(i)
        case (.int(let i), _): return value(.number(String(i)), kind)
        case (.number(let t), .int16), (.number(let t), .int32), (.number(let t), .int64), (.number(let t), .decimal),
             (.string(let t), .decimal), (.number(let t), .date), (.string(let t), .date):
            return ObjectValueText.value(t, kind: kind)
        case (.number(let t), .double), (.number(let t), .float):
            switch t {
            case ".nan", ".NaN", ".NAN": return .double(.nan)
            case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .double(.infinity)
            case "-.inf", "-.Inf", "-.INF": return .double(-.infinity)
            default: return ObjectValueText.value(t, kind: kind)
            }
        case (.string(let t), .double), (.string(let t), .float):
            return ["NaN", "Infinity", "-Infinity"].contains(t) ? ObjectValueText.value(t, kind: kind) : nil
        case (.string(let t), .string), (.string(let t), .uri), (.string(let t), .uuid), (.string(let t), .binary),
             (.string(let t), .transformable), (.string(let t), .undefined), (.string(let t), .objectID), (.string(let t), .composite):
            return ObjectValueText.value(t, kind: kind)
        default: return nil
        }
    }

    /// `value(raw.scalar, kind)`, the usual kinds made straight from the parser's bytes (no
    /// `GraphScalar` between): a string's `String`, an Int64's integer (`ObjectGraphCheck.integer`
    /// reads a text as `Int64(_:)` does, which is all `value` does with an Int64's text).
    @inline(__always)
    static func value(_ raw: GraphRawScalar, _ kind: AttributeKind) -> ObjectValue? {
        switch (raw, kind) {
        case (.string(let t), .string): return .string(String(decoding: t, as: UTF8.self))
        case (.number(let t), .int64): return ObjectGraphCheck.integer(t).map(ObjectValue.int)
        default: return value(raw.scalar, kind)
        }
    }

    /// The whole number a scalar gives as `Int64(_:)` reads a number's text; nil for another scalar.
    static func integer(_ s: GraphScalar) -> Int64? {
        switch s {
        case .int(let i): return i
        case .number(let t): return Int64(t)
        default: return nil
        }
    }

    /// What a value is, for messages: `a string 'abc'`, `a number 12`, `an array`.
    static func describe(_ v: GraphValue) -> String {
        switch v {
        case .scalar(.null): return "null"
        case .scalar(.bool(let b)): return "a boolean \(b)"
        case .scalar(.number(let t)): return "a number \(t)"
        case .scalar(.int(let i)): return "a number \(i)"
        case .scalar(.string(let t)): return "a string \(t.quotedForMessage)"
        case .list: return "an array"
        case .other(let kind): return kind
        }
    }
}

/// Which members of an object were given: a bit each for the first 64 positions, a set past them.
struct GivenMembers {
    private var bits: UInt64 = 0
    private var more: Set<Int> = []

    /// Notes `position`; false when it was noted already.
    mutating func insert(_ position: Int) -> Bool {
        if position < 64 {
            let bit = UInt64(1) << UInt64(position)
            defer { bits |= bit }
            return bits & bit == 0
        }
        return more.insert(position).inserted
    }

    func contains(_ position: Int) -> Bool {
        position < 64 ? bits & (UInt64(1) << UInt64(position)) != 0 : more.contains(position)
    }
}
