import TripKit

/// Reads the objects of a model given to it from a tables-layout directory (`CSVObjectLayout`), as
/// `CSVObjectTablesWriter` writes one, or Python's `csv`, a spreadsheet or Miller does.
///
/// A first pass reads every entity's file for the objects' names (`ObjectReferenceIndex`: `@key`, or
/// the unique value, numbered 1, 2, … in file order per family), the to-one columns that give
/// to-manys back, and the join files; the second streams each entity's file in the model's order.
/// What it holds is an entry per object and per to-many reference. A cell is read by
/// `ObjectValueText` as its attribute's kind: an unquoted empty cell is null (but the empty text in a
/// required String, URL or Data column, which cannot be null), a quoted one `""` the empty text; in
/// TSV `\N` is null. A record with a value of the wrong kind, a required attribute null or a
/// repeated name is set aside with its place, and only the records the second pass takes are named
/// in the first's index: a reference (a to-one cell, a join row) to no object in it is removed,
/// counted in `removals`, its object kept (DESIGN-NOTES, "A reference to an object not written is
/// removed"); a header with an unknown or a missing required column, a broken file end the read
/// (exit 65) with the place.
struct CSVObjectTablesReader: ObjectRecordReader {
    let model: ObjectModel
    private let layout: CSVObjectLayout
    private let directory: String
    private let options: ReadOptions
    private let dialect: CSVDialect
    private let encoding: TextEncoding
    private var index: ObjectReferenceIndex
    /// Per join table: owner → targets, in file order.
    private var joined: [[ObjectReference: [ObjectReference]]] = []
    /// Per inverse to-many: owner → the objects whose to-one points at it, in key order.
    private var inverse: [[ObjectReference: [ObjectReference]]] = []
    private let removals: ObjectReferenceRemovals
    private var table = -1
    private var rows: CSVRowReader?
    private var plan: [Int?] = []
    private var width = 0
    private var ordinal = 0
    private var record = 0
    /// The current table's entity: its attributes, relationship count, and the join files and
    /// inverse columns that give its to-manys (worked out once per table, not per row).
    private var all: [AttributeDescription] = []
    private var relationshipCount = 0
    /// Per attribute of the table's entity: its default when the table has no column for it, else null.
    private var absent: [ObjectValue] = []
    private var joinsHere: [(join: Int, slot: Int)] = []
    private var inversesHere: [(inverse: Int, slot: Int)] = []

    /// A reader of `directory` in `format` (CSV or TSV), of `model`'s objects, the references it
    /// removes counted in `removals` (its own when nil); a row repeating the unique value of an entity
    /// `repeatsUnique` marks is given, not refused.
    init(directory: String, format: Format, model: ObjectModel, options: ReadOptions, removals: ObjectReferenceRemovals? = nil,
         repeatsUnique: [Bool]? = nil) throws {
        self.model = model; self.options = options
        self.removals = removals ?? ObjectReferenceRemovals()
        self.directory = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        layout = CSVObjectLayout(model, extension: CSVTableNames.fileExtension(format))
        dialect = CSVDialect(format, delimiter: options.csvDelimiter)
        encoding = try TextEncoding.of(options)
        index = ObjectReferenceIndex(layout.names)
        index.repeatsUnique = repeatsUnique ?? []
        try readNames()
        try readJoins()
    }

    private func open(_ file: String) throws -> CSVRowReader {
        let separator: CSVRowReader.SeparatorChoice = options.csvDelimiter == nil ? .declaredOrDialect : .fixed
        return CSVRowReader(try ByteInput(.file("\(directory)/\(file)")), dialect: dialect, encoding: encoding, separator: separator)
    }

    /// Reads a table's header: per column, the layout column it is (nil: an unknown one, ignored).
    private func header(_ rows: CSVRowReader, _ table: CSVObjectLayout.EntityTable) throws -> [Int?] {
        guard try rows.nextRow() else { throw TripError.data("\(rows.name):1:1: expected a header row, found an empty file") }
        var plan: [Int?] = []
        var seen: Set<Int> = []
        for (i, name) in rows.strings.enumerated() {
            let place = rows.position(ofCell: i)
            guard let c = table.columns.firstIndex(where: { $0.name == name }) else {
                guard options.ignoreUnknown else {
                    throw TripError.data("\(rows.name):\(place.line):\(place.column): unknown column \(name.quotedForMessage) of a \(model.entities[table.entity].name)",
                                         notes: ["to read the file without it, ignore unknown fields (--ignore-unknown)"])
                }
                plan.append(nil); continue
            }
            guard seen.insert(c).inserted else {
                throw TripError.data("\(rows.name):\(place.line):\(place.column): column \(name.quotedForMessage) appears twice")
            }
            plan.append(c)
        }
        for (c, column) in table.columns.enumerated() where !seen.contains(c) {
            let required: Bool
            switch column.role {
            case .key: required = true
            case .attribute(let slot, let a): required = (!a.isOptional && a.defaultValue == nil) || slot == layout.names.uniqueSlot[table.entity]
            case .toOne: required = false
            }
            if required { throw TripError.data("\(rows.name):1:1: missing the column \(column.name.quotedForMessage) of a \(model.entities[table.entity].name)") }
        }
        return plan
    }

    /// The text of cell `i` (nil: null) in a column of `kind`.
    private func cell(_ rows: CSVRowReader, _ i: Int, kind: AttributeKind) -> String? {
        guard i < rows.cellCount else { return nil }
        let textual = CSVObjectLayout.canBeEmpty(kind)
        if rows.dialect.usesEscapes {
            if rows.isNullMark(i) { return nil }
            if rows.isEmpty(i) { return textual ? "" : nil }
        } else if rows.isBlank(i) {
            return textual && rows.isQuoted(i) ? "" : nil
        }
        guard textual, case .text(let s) = rows.token(i, emptyIsNull: false, safeFormulas: options.csvSafeFormulas) else {
            return rows.string(i)
        }
        return s
    }

    /// The first pass: the name of every object the second pass takes (a reference to one it refuses
    /// names no object), and the to-one columns that give to-manys back.
    private mutating func readNames() throws {
        var pending: [[(owner: String, line: Int, file: String, child: ObjectReference)]] = Array(repeating: [], count: layout.inverses.count)
        var ordinal = 0
        defer { self.ordinal = 0; self.table = -1 }
        for t in layout.tables.indices {
            let table = layout.tables[t]
            let rows = try enter(t)
            let plan = self.plan
            let unique = layout.names.uniqueSlot[table.entity]
            let lineage = model.lineage(of: table.entity)
            // The to-one columns that give a to-many of another entity back.
            let inverses = layout.inverses.enumerated().filter { lineage.contains($0.element.destination) }.compactMap { n, inv in
                plan.firstIndex { c in
                    if let c, case .toOne(let slot, _) = table.columns[c].role { return slot == inv.inverseSlot }
                    return false
                }.map { (n, inv, $0) }
            }
            while try rows.nextRow() {
                ordinal += 1
                guard case .object = try read(rows, resolving: false) else { continue }
                var key: Int64?, value: ObjectValue?
                for (i, c) in plan.enumerated() {
                    guard let c else { continue }
                    switch table.columns[c].role {
                    case .key: key = Int64(rows.string(i))
                    case .attribute(let slot, let a) where slot == unique:
                        value = cell(rows, i, kind: a.kind).flatMap { ObjectValueText.value($0, kind: a.kind) }
                    default: break
                    }
                }
                guard let reference = index.add(entity: table.entity, key: key, value: value, ordinal: ordinal) else { continue }
                for (n, inv, i) in inverses {
                    guard let owner = cell(rows, i, kind: layout.referenceKind(inv.entity)) else { continue }
                    pending[n].append((owner, rows.rowLine, rows.name, reference))
                }
            }
        }
        inverse = pending.enumerated().map { n, list in
            var owners: [ObjectReference: [ObjectReference]] = [:]
            for p in list {
                // A to-one to no object rejects its own record in the second pass.
                if let owner = index.resolve(p.owner, destination: layout.inverses[n].entity) { owners[owner.reference, default: []].append(p.child) }
            }
            return owners.mapValues { $0.sorted() }
        }
    }

    /// The join files: owner → targets. A file that is absent holds no references.
    private mutating func readJoins() throws {
        for join in layout.joins {
            var map: [ObjectReference: [ObjectReference]] = [:]
            defer { joined.append(map) }
            guard FileSystem.exists("\(directory)/\(join.file)") else { continue }
            let rows = try open(join.file)
            guard try rows.nextRow() else { continue }
            guard rows.strings == join.header else {
                throw TripError.data("\(rows.name):1:1: expected the columns \(join.header.map(\.quotedForMessage).joined(separator: ", ")), "
                                     + "found \(rows.strings.map(\.quotedForMessage).joined(separator: ", "))")
            }
            while try rows.nextRow() {
                guard rows.cellCount == 2 else {
                    throw TripError.data("\(rows.name):\(rows.rowLine):1: expected 2 cells as the header has, found \(rows.cellCount)")
                }
                // A row one of whose sides names no object the second pass takes gives no reference: removed, counted.
                let ownerText = cell(rows, 0, kind: layout.referenceKind(join.entity)) ?? ""
                let targetText = cell(rows, 1, kind: layout.referenceKind(join.destination)) ?? ""
                let owner = index.resolve(ownerText, destination: join.entity), target = index.resolve(targetText, destination: join.destination)
                guard let owner, let target else {
                    let (i, text, entity) = owner == nil ? (0, ownerText, join.entity) : (1, targetText, join.destination)
                    let origin = RecordOrigin(source: rows.name, record: 0, line: rows.rowLine).at(rows.position(ofCell: i))
                    removals.add(origin, member: join.header[1], place: nil,
                                 reason: "\(owner == nil ? "its owner " : "")\(text.quotedForMessage) names no \(model.entities[entity].name)")
                    continue
                }
                map[owner.reference, default: []].append(target.reference)
            }
        }
    }

    mutating func next() throws -> ObjectReadItem? {
        while true {
            if let rows {
                if try rows.nextRow() { return try read(rows) }
                self.rows = nil
            }
            table += 1
            guard table < layout.tables.count else { return nil }
            self.rows = try enter(table)
        }
    }

    /// Opens table `t`'s file and reads its header, for `read`: what its rows are read with.
    private mutating func enter(_ t: Int) throws -> CSVRowReader {
        table = t
        let rows = try open(layout.tables[t].file)
        plan = try header(rows, layout.tables[t])
        let e = layout.tables[t].entity, lineage = model.lineage(of: e)
        all = model.allAttributes(of: e)
        // An attribute whose column the table lacks takes its default (as the JSON and YAML readers do).
        let present = Set(plan.compactMap { c -> Int? in
            guard let c, case .attribute(let slot, _) = layout.tables[t].columns[c].role else { return nil }
            return slot
        })
        absent = all.enumerated().map { present.contains($0.offset) || $0.element.isTransient ? .null : $0.element.defaultValue ?? .null }
        relationshipCount = model.allRelationships(of: e).count
        joinsHere = layout.joins.enumerated().filter { lineage.contains($0.element.entity) }.map { ($0.offset, $0.element.slot) }
        inversesHere = layout.inverses.enumerated().filter { lineage.contains($0.element.entity) }.map { ($0.offset, $0.element.slot) }
        width = rows.cellCount
        record = 0
        return rows
    }

    /// The object the row `rows` is at makes, or its rejection. `resolving` false (the first pass,
    /// whose index is not complete): its to-ones are not looked up, nor is its name checked against
    /// earlier ones. A reference to no object in the index is removed, counted in `removals`.
    private mutating func read(_ rows: CSVRowReader, resolving: Bool = true) throws -> ObjectReadItem {
        ordinal += 1; record += 1
        let t = layout.tables[table], e = t.entity
        let origin = RecordOrigin(source: rows.name, record: record, line: rows.rowLine)
        func reject(_ reason: String, cell i: Int? = nil) -> ObjectReadItem {
            var rejected = SetAsideRecord(origin: origin, reason: reason, text: rows.rawText)
            if let i, i < rows.cellCount { let at = rows.position(ofCell: i); rejected.problemLine = at.line; rejected.problemColumn = at.column }
            return .rejected(rejected)
        }
        guard rows.cellCount == width else { return reject("expected \(width) cells as the header has, found \(rows.cellCount)") }
        var attributes = absent
        var relationships = [[ObjectReference]](repeating: [], count: relationshipCount)
        var key: Int64?, uniqueValue: ObjectValue?
        for (i, c) in plan.enumerated() {
            guard let c else { continue }
            switch t.columns[c].role {
            case .key:
                guard let k = Int64(rows.string(i)) else { return reject("expected a key (a whole number), found \(rows.string(i).quotedForMessage)", cell: i) }
                key = k
            case .attribute(let slot, let a):
                var text = cell(rows, i, kind: a.kind)
                if text == nil, !a.isOptional, CSVObjectLayout.canBeEmpty(a.kind), !(rows.dialect.usesEscapes && rows.isNullMark(i)) { text = "" }
                guard let text else { continue }
                guard let value = ObjectValueText.value(text, kind: a.kind) else {
                    return reject("\(a.name): expected a \(a.kind), found \(text.quotedForMessage)", cell: i)
                }
                attributes[slot] = value
                if slot == layout.names.uniqueSlot[e] { uniqueValue = value }
            case .toOne(let slot, let destination):
                guard resolving, let text = cell(rows, i, kind: layout.referenceKind(destination)) else { continue }
                guard let target = index.resolve(text, destination: destination) else {
                    var at = origin
                    if i < rows.cellCount { at = origin.at(rows.position(ofCell: i)) }
                    removals.add(at, member: t.columns[c].name, place: nil, reason: "\(text.quotedForMessage) names no \(model.entities[destination].name)")
                    continue
                }
                relationships[slot] = [target.reference]
            }
        }
        for (slot, a) in all.enumerated() where !a.isOptional && !a.isTransient && attributes[slot].isNull {
            return reject("\(a.name): a \(model.entities[e].name) must have one", cell: plan.firstIndex { $0.map { t.columns[$0].name == a.name } == true })
        }
        guard resolving else {
            let named = layout.names.hasKey(e) ? key != nil : uniqueValue != nil
            return named ? .object(ObjectRecord(entity: e, key: 0, attributes: attributes, relationships: relationships, origin: origin))
                : reject("no name")
        }
        // The object's own name must be the one the first pass gave it (not a repeat of an earlier one).
        let found = layout.names.hasKey(e) ? key.flatMap { index.resolve(String($0), destination: e) }
            : uniqueValue.flatMap { ObjectValueText.text($0) }.flatMap { index.resolve($0, destination: e) }
        if let found, found.ordinal != ordinal, !layout.names.hasKey(e), let own = index.repeated(e, ordinal: ordinal) {
            return .object(ObjectRecord(entity: e, key: own.key, attributes: attributes, relationships: relationships, origin: origin))
        }
        guard let found, found.ordinal == ordinal else {
            if !layout.names.hasKey(e) && uniqueValue == nil, let slot = layout.names.uniqueSlot[e] {
                return reject("\(all[slot].name): no value to refer to the \(model.entities[e].name) by")
            }
            let name = layout.names.hasKey(e) ? CSVObjectLayout.keyColumn : (layout.names.uniqueSlot[e].map { all[$0].name } ?? "")
            return reject("\(name): the same as an earlier \(model.entities[e].name)'s")
        }
        for (j, slot) in joinsHere { relationships[slot] = joined[j][found.reference] ?? [] }
        for (n, slot) in inversesHere { relationships[slot] = inverse[n][found.reference] ?? [] }
        return .object(ObjectRecord(entity: e, key: found.reference.key, attributes: attributes, relationships: relationships, origin: origin))
    }
}

extension CSVRowReader {
    /// Whether TSV cell `i` is exactly `\N`, the null mark (an escaped `\\N` is the text `\N`).
    func isNullMark(_ i: Int) -> Bool {
        let c = cells[i]
        guard c.end - c.start == 2, bytes(i)[0] == CSVRowReader.backslash, bytes(i)[1] == UInt8(ascii: "N") else { return false }
        let raw = window.pointer + c.rawStart
        let after = c.rawStart + 2
        return raw[0] == CSVRowReader.backslash && raw[1] == UInt8(ascii: "N")
            && (after >= rowEnd || window.pointer[after] == dialect.separator)
    }
}
