import TripKit

/// Reads the objects of a given model from JSON or JSON Lines in the shapes `JSONObjectWriter`
/// writes (by tripconv or by any other tool: member order is free, `"@entity"` may come anywhere in
/// a JSON Lines object), through the trip readers' scanner.
///
/// It reads its input twice: a first pass notes each referred-to object's key (`ObjectGraphIndex`:
/// one entry per object some relationship may lead to, held for the whole read), the second makes
/// the objects, so a reference may come before the object it names. Objects come entity by entity
/// in the model's order: an input that has them in another order is read once more per entity
/// (`ObjectGraphPasses`). An entity with a unique
/// attribute has its objects numbered 1, 2, … in the order they come (per family of entities that
/// share keys); the others carry `"@key"`. Standard input, which cannot be read twice, is refused.
///
/// A document that does not parse, or names an entity the model does not have, stops the read
/// (`TripError.data`, exit 65, with `file:line:column`); an object the model refuses, and a JSON
/// Lines line that does not parse, is a rejection with its place.
///
/// ```swift
/// var reader = try JSONObjectReader(.file("graph.jsonl"), format: .jsonl, model: model)
/// while let item = try reader.next() { if case .object(let o) = item { print(o.key) } }
/// ```
public struct JSONObjectReader: ObjectRecordReader, ReopenableObjectReader {
    /// The model the objects are read in.
    public let model: ObjectModel
    private var passes: ObjectGraphPasses<JSONGraphParser>

    /// Opens `input` (a file) as JSON (`format: .json`) or JSON Lines (`.jsonl`) of `model`'s objects.
    public init(_ input: InputLocation, format: Format, model: ObjectModel, options: ReadOptions = ReadOptions()) throws {
        try self.init(input, format: format, model: model, options: options, keys: nil)
    }

    /// Opens `input`, the index's entries kept in `keys` (a run's, under its budget; in memory when nil),
    /// the references it removes counted in `removals` (its own when nil), a second object with the
    /// unique value of an entity `repeatsUnique` marks given rather than refused.
    package init(_ input: InputLocation, format: Format, model: ObjectModel, options: ReadOptions, keys: ObjectKeyTable?,
                 removals: ObjectReferenceRemovals? = nil, repeatsUnique: [Bool]? = nil) throws {
        guard format == .json || format == .jsonl else {
            throw TripError.usage("the JSON reader of objects reads json or jsonl, not \(format.rawValue)")
        }
        guard input != .standardInput else {
            throw TripError.usage("objects are read from a file, which is read twice (references may come before the objects they name), not from standard input")
        }
        self.model = model
        passes = try ObjectGraphPasses(model: model, keys: keys, removals: removals, repeatsUnique: repeatsUnique) {
            JSONGraphParser(try ByteInput(input, options: options), isLines: format == .jsonl, model: model) {
                try ByteInput(input, options: options)
            }
        }
    }

    /// The next object or rejection, entity by entity in the model's order; nil at the end.
    public mutating func next() throws -> ObjectReadItem? { try passes.next() }

    /// Per entity, at most how many objects of it the input holds, as the index's pass counted them.
    public var expectedObjects: [Int]? { passes.expectedObjects }

    /// A reader of the same input from its start, with the index this one's first pass made (the
    /// input is then parsed once more, not twice): the second read of a plan's run. The input is
    /// taken to be as it was (a file changed between the two reads is read with the first's index).
    func reopened() throws -> JSONObjectReader {
        var again = self
        again.passes = try passes.restarted()
        return again
    }

    /// This reader giving only the objects of the entities marked (a plan's first pass).
    func restricted(to entities: [Bool]) -> JSONObjectReader {
        var out = self
        out.passes = passes.restricted(to: entities)
        return out
    }
}

/// The JSON and JSON Lines shapes of a graph, parsed into members per object.
struct JSONGraphParser: GraphParsing {
    let input: ByteInput
    /// Read by the objects' pass's decoding too (JSONObjectReader+Decoding.swift).
    var scanner: JSONScanner
    let name: String
    let isLines: Bool
    let model: ObjectModel
    enum Phase { case start, entities(first: Bool), objects(first: Bool), trailing, done }
    var phase = Phase.start
    private var entity = -1
    private var record = 0
    /// Member names met so far (up to 64), each made a `String` once rather than once an object, and
    /// where the next is looked for first (after the last found: members come in the same order).
    private var nameBytes = GraphNames()
    private var nameStrings: [String] = []
    private var nameHint = 0
    /// The entity an index's pass looked up last by its name's bytes.
    private var lastEntity: (name: [UInt8], index: Int) = ([], -1)
    /// A restricted pass's entities passed over unread (`unread(_:)`), with the entities it takes.
    private var unreadEntities: (taken: [Bool], unread: [Bool])?

    /// Opens the input again (for `reopened(at:)`); nil where it is not to be.
    let reopen: (() throws -> ByteInput)?
    /// The input offset where this parser started reading (JSONObjectReader+Cut.swift).
    var start = 0

    init(_ input: ByteInput, isLines: Bool, model: ObjectModel, reopen: (() throws -> ByteInput)? = nil) {
        self.input = input
        scanner = JSONScanner(source: { try input.read(into: $0) })
        name = input.name
        self.isLines = isLines
        self.model = model
        self.reopen = reopen
    }


    mutating func next() throws -> GraphParsedItem? {
        var none: ObjectGraphCheck?
        guard case .parsed(let item)? = try nextItem(&none) else { return nil }
        return item
    }

    /// A pass giving only the objects of the entities `only` marks: an object of another, where its
    /// entity is known before its members (as `nextIndexed` knows it), is parsed without them.
    mutating func nextSkipping(_ only: [Bool]) throws -> GraphIndexItem? {
        var none: ObjectGraphCheck?
        return try nextItem(&none, skipping: only)
    }

    /// The index's pass: an object checked as it is parsed (`ObjectGraphCheck`), without its members,
    /// where its entity is known before them (in a JSON document; in JSON Lines when its first member
    /// is `"@entity"`, as tripconv and most writers put it), else what `next()` gives.
    mutating func nextIndexed(_ check: inout ObjectGraphCheck) throws -> GraphIndexItem? {
        // Moved in and out, not copied: a copy per object retained the checker's tables and identity.
        var some: ObjectGraphCheck? = consume check
        let item: Result<GraphIndexItem?, any Error>
        do { item = .success(try nextItem(&some)) } catch { item = .failure(error) }
        check = some.take()!
        return try item.get()
    }

    /// An objects' pass: a JSON Lines object whose first member is `"@entity"` decoded as it is parsed
    /// (`decodeLine`), without its `GraphField`s, where `decoder` takes it as it is; else what
    /// `nextSkipping(skipping)` gives (`next()` when nil).
    mutating func nextDecoded(_ decoder: inout ObjectGraphDecoder, skipping: [Bool]?, taking: (Int) -> Bool) throws -> GraphIndexItem? {
        var none: ObjectGraphCheck?
        guard isLines else { return try nextItem(&none, skipping: skipping) }
        do {
            return try withUnsafeMutablePointer(to: &decoder) { try nextLine(&none, skipping, decoding: $0, taking: taking) }
        } catch let e as JSONSyntaxError {
            phase = .done
            throw TripError.data("\(name):\(e.line):\(e.column): \(e.message)")
        }
    }

    private mutating func nextItem(_ check: inout ObjectGraphCheck?, skipping: [Bool]? = nil) throws -> GraphIndexItem? {
        do {
            return try isLines ? nextLine(&check, skipping) : nextInDocument(&check, skipping)
        } catch let e as JSONSyntaxError {
            phase = .done
            throw TripError.data("\(name):\(e.line):\(e.column): \(e.message)")
        }
    }

    private mutating func nextInDocument(_ check: inout ObjectGraphCheck?, _ skipping: [Bool]?) throws -> GraphIndexItem? {
        while true {
            switch phase {
            case .start:
                try scanner.skipByteOrderMark()
                guard try scanner.peek() == 0x7B else { throw scanner.unexpected("an object whose members are entity names") }
                scanner.pos += 1
                phase = .entities(first: true)
            case .entities(let first):
                guard var b = try scanner.peek() else { throw scanner.unexpected("an entity name or '}'") }
                if b == 0x7D { scanner.pos += 1; phase = .trailing; continue }
                if !first {
                    guard b == 0x2C else { throw scanner.unexpected("',' or '}' after an entity's array") }
                    scanner.pos += 1
                    b = try scanner.peek() ?? 0
                }
                guard b == 0x22 else { throw scanner.unexpected("an entity name (a string)") }
                let column = scanner.column(at: scanner.pos)
                let entityName = String(decoding: try scanner.readString(), as: UTF8.self)
                guard let e = model.entityIndex(entityName) else {
                    throw JSONSyntaxError(line: scanner.line, column: column, message: "the model has no entity \(entityName.quotedForMessage)")
                }
                entity = e
                guard try scanner.peek() == 0x3A else { throw scanner.unexpected("':' after an entity name") }
                scanner.pos += 1
                guard try scanner.peek() == 0x5B else { throw scanner.unexpected("an array of \(entityName) objects") }
                scanner.pos += 1
                phase = .objects(first: true)
            case .objects(let first):
                guard var b = try scanner.peek() else { throw scanner.unexpected("an object or ']'") }
                if b == 0x5D { scanner.pos += 1; phase = .entities(first: false); continue }
                if !first {
                    guard b == 0x2C else { throw scanner.unexpected("',' or ']' after an object") }
                    scanner.pos += 1
                    b = try scanner.peek() ?? 0
                }
                phase = .objects(first: false)
                record += 1
                let origin = RecordOrigin(source: name, record: record, line: scanner.line, column: scanner.column(at: scanner.pos))
                guard b == 0x7B else {
                    let kind = JSONScanner.kindOfValue(startingWith: b)
                    try scanner.skipValue(depth: 2)
                    return .parsed(.rejected(SetAsideRecord(origin: origin, reason: "expected a \(model.entities[entity].name) object, found \(kind)")))
                }
                if let skipping, !skipping[entity] {
                    var skip = GraphMemberSkip()
                    scanner.pos += 1
                    try checkMembers(&skip, hasMembers: false)
                    return .checked(GraphIndexedObject(entity: entity, isValid: false, identity: nil))
                }
                if check != nil {
                    check!.begin(entity)
                    scanner.pos += 1
                    try checkMembers(&check!, hasMembers: false)
                    return .checked(GraphIndexedObject(entity: entity, isValid: check!.finish(), identity: check!.identity))
                }
                return .parsed(.object(entity: entity, fields: try readObject(), origin: origin))
            case .trailing:
                if try scanner.peek() != nil { throw scanner.unexpected("the end of input after the document") }
                phase = .done
            case .done:
                return nil
            }
        }
    }

    /// The next line's item: `check`ed (the index's pass), skipped (an entity `skipping` does not
    /// mark), decoded by `decoding` (an objects' pass, for the entities `taking` takes), else parsed.
    private mutating func nextLine(_ check: inout ObjectGraphCheck?, _ skipping: [Bool]?,
                                   decoding: UnsafeMutablePointer<ObjectGraphDecoder>? = nil,
                                   taking: (Int) -> Bool = { _ in true }) throws -> GraphIndexItem? {
        if case .start = phase { try scanner.skipByteOrderMark(); phase = .objects(first: true) }
        while true {
            if case .done = phase { return nil }
            if try scanner.isAtEnd() { phase = .done; return nil }
            guard let lineEnd = try scanner.loadLine() else {
                record += 1
                let origin = RecordOrigin(source: name, record: record, line: scanner.line, column: 1)
                try scanner.skipLine()
                let reason = "a line longer than \(JSONLimits.describe(bytes: scanner.limits.maxLineBytes))"
                return .parsed(.rejected(SetAsideRecord(origin: origin, reason: reason)))
            }
            let lineStart = scanner.pos
            let hasNewline = lineEnd < scanner.end
            scanner.bound(to: lineEnd)
            guard let b = try scanner.peek() else { finishLine(lineEnd, hasNewline); continue }
            record += 1
            let origin = RecordOrigin(source: name, record: record, line: scanner.line, column: scanner.column(at: scanner.pos))
            var item: GraphParsedItem
            do {
                guard b == 0x7B else { throw scanner.unexpected("an object") }
                if check != nil, let checked = try checkLine(&check!) {
                    finishLine(lineEnd, hasNewline)
                    return .checked(checked)
                }
                if let decoding, let decoded = try decodeLine(&decoding.pointee, taking: taking, origin: origin) {
                    finishLine(lineEnd, hasNewline)
                    return .decoded(decoded)
                }
                var skip = GraphMemberSkip()
                if let skipping, let skipped = try checkLine(&skip, taking: { !skipping[$0] }, unread: unread(skipping)) {
                    finishLine(lineEnd, hasNewline)
                    return .checked(skipped)
                }
                let fields = try readObject()
                if try scanner.peek() != nil { throw scanner.unexpected("the end of the line after the object") }
                if let field = fields.first(where: { $0.name == "@entity" }) {
                    if case .scalar(.string(let n)) = field.value, let e = model.entityIndex(n) {
                        item = .object(entity: e, fields: fields, origin: origin)
                    } else {
                        var r = SetAsideRecord(origin: origin, reason: "\"@entity\" is not an entity of the model: \(ObjectGraphDecoder.describe(field.value))")
                        r.locate(at: (field.line, field.column))
                        item = .rejected(r)
                    }
                } else {
                    item = .rejected(SetAsideRecord(origin: origin, reason: "the object has no \"@entity\" saying its entity"))
                }
            } catch let e as JSONSyntaxError {
                var at = origin
                at.line = e.line; at.column = e.column
                item = .rejected(SetAsideRecord(origin: at, reason: e.message))
            }
            if case .rejected(var r) = item {
                var stop = lineEnd
                if stop > lineStart, scanner.base[stop - 1] == 0x0D { stop -= 1 }
                r.text = scanner.text(from: lineStart, to: stop)
                item = .rejected(r)
            }
            finishLine(lineEnd, hasNewline)
            return .parsed(item)
        }
    }

    /// The object at `pos` (its `{`, the line's first value) checked as it is parsed, when its first
    /// member is `"@entity"` naming an entity of the model that `taking` takes; else nil, with `pos`
    /// where it was (the line is then read by `readObject`, as the second pass reads it). A line that
    /// does not parse throws here as it throws there: the check reads the same tokens in the same order.
    /// `unread`: entities whose objects are passed over after their `"@entity"`, the rest of the line
    /// unread (`unread(_:)`).
    private mutating func checkLine<Sink: GraphMemberSink>(_ check: inout Sink, taking: (Int) -> Bool = { _ in true },
                                                           unread: [Bool] = []) throws -> GraphIndexedObject? {
        let start = scanner.pos
        scanner.pos += 1
        guard try scanner.peek() == 0x22, JSONFieldTable.equals(try scanner.readPlainString(), "@entity"),
              try scanner.peek() == 0x3A else { scanner.pos = start; return nil }
        scanner.pos += 1
        guard try scanner.peek() == 0x22, let e = entityIndex(try scanner.readPlainString()), taking(e) else { scanner.pos = start; return nil }
        check.begin(e)
        if e < unread.count, unread[e] { return GraphIndexedObject(entity: e, isValid: false, identity: nil) }
        try checkMembers(&check, hasMembers: true)
        if try scanner.peek() != nil { throw scanner.unexpected("the end of the line after the object") }
        return GraphIndexedObject(entity: e, isValid: check.finish(), identity: check.identity)
    }

    /// For a pass restricted to the entities `taken` marks (a plan's first pass): per entity, whether
    /// a line of it is passed over once its `"@entity"` is read, the rest unread. Such a pass gives
    /// nothing of an entity it does not take, not even a line that does not parse; what it keeps of
    /// one is its family's count (`ObjectGraphDecoder.skip`), which numbers the objects of the family
    /// without a key: so an entity is passed over unread where the pass takes none of its family (its
    /// root's lineage), whose numbers it then never uses. Made once per pass.
    private mutating func unread(_ taken: [Bool]) -> [Bool] {
        if let made = unreadEntities, made.taken == taken { return made.unread }
        let roots = model.entities.indices.map { model.lineage(of: $0).first ?? $0 }
        let takenRoots = Set(roots.indices.filter { $0 < taken.count && taken[$0] }.map { roots[$0] })
        let unread = roots.indices.map { $0 < taken.count && !taken[$0] && !takenRoots.contains(roots[$0]) }
        unreadEntities = (taken, unread)
        return unread
    }

    /// The model's entity named by these bytes (the one looked up last, without a `String`).
    mutating func entityIndex(_ raw: UnsafeRawBufferPointer) -> Int? {
        if lastEntity.index >= 0, lastEntity.name.count == raw.count,
           raw.isEmpty || lastEntity.name.withUnsafeBytes({ JSONFieldTable.bytesEqual($0.baseAddress!, raw.baseAddress!, raw.count) }) {
            return lastEntity.index
        }
        guard let e = model.entityIndex(String(decoding: raw, as: UTF8.self)) else { return nil }
        lastEntity = (Array(raw), e)
        return e
    }

    /// The members of the object being read (after its `{`, and after its first member when
    /// `hasMembers`), given to `check` as `readObject` reads them, none made.
    private mutating func checkMembers<Sink: GraphMemberSink>(_ check: inout Sink, hasMembers: Bool) throws {
        var hasMembers = hasMembers
        while true {
            guard var b = try scanner.peek() else { throw scanner.unexpected("a member or '}'") }
            if b == 0x7D { scanner.pos += 1; return }
            if hasMembers {
                guard b == 0x2C else { throw scanner.unexpected("',' or '}' after a member") }
                scanner.pos += 1
                b = try scanner.peek() ?? 0
            }
            hasMembers = true
            guard b == 0x22 else { throw scanner.unexpected("a member name (a string)") }
            let member = check.member(try scanner.readPlainString())
            guard try scanner.peek() == 0x3A else { throw scanner.unexpected("':' after a member name") }
            scanner.pos += 1
            guard let v = try scanner.peek() else { throw scanner.unexpected("a JSON value") }
            if v == 0x5B {
                check.list(member, nested: try checkList())
            } else if v == 0x7B {
                try scanner.skipValue(depth: 3)
                check.other(member)
            } else {
                check.scalar(member, try readRawScalar(v))
            }
        }
    }

    /// Reads an array of scalars as `readList` does; whether it holds an array or object.
    private mutating func checkList() throws -> Bool {
        scanner.pos += 1
        var nested = false
        var first = true
        while true {
            guard var b = try scanner.peek() else { throw scanner.unexpected("a value or ']'") }
            if b == 0x5D { scanner.pos += 1; return nested }
            if !first {
                guard b == 0x2C else { throw scanner.unexpected("',' or ']' after an array element") }
                scanner.pos += 1
                b = try scanner.peek() ?? 0
            }
            first = false
            if b == 0x5B || b == 0x7B {
                try scanner.skipValue(depth: 4)
                nested = true
            } else {
                _ = try readRawScalar(b)
            }
        }
    }

    /// `readScalar`'s token, its bytes the scanner's.
    mutating func readRawScalar(_ b: UInt8) throws -> GraphRawScalar {
        switch b {
        case 0x22: return .string(try scanner.readPlainString())
        case 0x2D, 0x30...0x39: return .number(try scanner.readPlainInteger() ?? scanner.readNumber())
        case 0x74, 0x66, 0x6E:
            switch try scanner.readLiteral() {
            case .true: return .bool(true)
            case .false: return .bool(false)
            case .null: return .null
            }
        default: throw scanner.unexpected("a JSON value")
        }
    }

    private mutating func finishLine(_ lineEnd: Int, _ hasNewline: Bool) {
        scanner.unbound(movingTo: hasNewline ? lineEnd + 1 : lineEnd)
        if hasNewline { scanner.noteNewline() }
    }

    /// The members of the object at `pos` (its `{`).
    private mutating func readObject() throws -> [GraphField] {
        scanner.pos += 1
        var fields: [GraphField] = []
        fields.reserveCapacity(8)
        while true {
            guard var b = try scanner.peek() else { throw scanner.unexpected("a member or '}'") }
            if b == 0x7D { scanner.pos += 1; return fields }
            if !fields.isEmpty {
                guard b == 0x2C else { throw scanner.unexpected("',' or '}' after a member") }
                scanner.pos += 1
                b = try scanner.peek() ?? 0
            }
            guard b == 0x22 else { throw scanner.unexpected("a member name (a string)") }
            let key = memberName(try scanner.readString())
            guard try scanner.peek() == 0x3A else { throw scanner.unexpected("':' after a member name") }
            scanner.pos += 1
            guard let v = try scanner.peek() else { throw scanner.unexpected("a JSON value") }
            let line = scanner.line, column = scanner.column(at: scanner.pos)
            let value: GraphValue
            if v == 0x5B {
                value = try readList()
            } else if v == 0x7B {
                try scanner.skipValue(depth: 3)
                value = .other("an object")
            } else {
                value = .scalar(try readScalar(v))
            }
            fields.append(GraphField(name: key, value: value, line: line, column: column))
        }
    }

    /// The member name of these bytes: the `String` made when they were first met.
    private mutating func memberName(_ raw: UnsafeRawBufferPointer) -> String {
        if let i = nameBytes.find(raw, from: nameHint) {
            nameHint = i + 1
            return nameStrings[i]
        }
        let name = String(decoding: raw, as: UTF8.self)
        if nameBytes.count < 64 {
            nameBytes.append(raw)
            nameStrings.append(name)
        }
        return name
    }

    private mutating func readList() throws -> GraphValue {
        scanner.pos += 1
        var items: [(GraphScalar, line: Int, column: Int)] = []
        var nested = false
        var first = true
        while true {
            guard var b = try scanner.peek() else { throw scanner.unexpected("a value or ']'") }
            if b == 0x5D { scanner.pos += 1; return nested ? .other("an array holding an array or object") : .list(items) }
            if !first {
                guard b == 0x2C else { throw scanner.unexpected("',' or ']' after an array element") }
                scanner.pos += 1
                b = try scanner.peek() ?? 0
            }
            first = false
            let line = scanner.line, column = scanner.column(at: scanner.pos)
            if b == 0x5B || b == 0x7B {
                try scanner.skipValue(depth: 4)
                nested = true
            } else {
                items.append((try readScalar(b), line, column))
            }
        }
    }

    private mutating func readScalar(_ b: UInt8) throws -> GraphScalar {
        // A string is read with its escapes undone; any other scalar as the index's pass reads it.
        if b == 0x22 { return .string(String(decoding: try scanner.readString(), as: UTF8.self)) }
        return try readRawScalar(b).scalar
    }
}
