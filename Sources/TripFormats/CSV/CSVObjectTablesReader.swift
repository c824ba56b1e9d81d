import TripKit

/// Reads the objects of a model given to it from a tables-layout directory (`CSVObjectLayout`), as
/// `CSVObjectTablesWriter` writes one, or Python's `csv`, a spreadsheet or Miller does.
///
/// A first pass reads every entity's file for the objects' names (`ObjectReferenceIndex`: `@key`, or
/// the unique value, numbered 1, 2, … in file order per family), the to-one columns that give
/// to-manys back, and the join files; the second streams each entity's file in the model's order, and
/// a later read of the run (a plan's second pass) takes the first's index, joins and to-manys
/// (`reopened`). What it holds: an entry per object in the index and an entry per to-many reference
/// given back, in the run's key table (under the budget, spilled past it). A cell is read by
/// `ObjectValueText` as its attribute's kind: an unquoted empty cell is null (but the empty text in a
/// required String, URL or Data column, which cannot be null), a quoted one `""` the empty text; in
/// TSV `\N` is null. A record with a value of the wrong kind, a required attribute null or a
/// repeated name is set aside with its place, and only the records the second pass takes are named
/// in the first's index: a reference (a to-one cell, a join row) to no object in it is removed,
/// counted in `removals`, its object kept (DESIGN-NOTES, "A reference to an object not written is
/// removed"); a header with an unknown or a missing required column, a broken file end the read
/// (exit 65) with the place.
struct CSVObjectTablesReader: RewindingObjectReader {
    let model: ObjectModel
    private let layout: CSVObjectLayout
    private let directory: String
    private let options: ReadOptions
    private let dialect: CSVDialect
    private let encoding: TextEncoding
    /// The objects' names, and in its list spaces the to-manys given back: per join table `j` (space
    /// `j`), owner → targets in file order; per inverse to-many `n` (space joins + `n`), owner → the
    /// objects whose to-one points at it (sorted once the first pass has them all: `sortLists`).
    private var index: ObjectReferenceIndex
    private let removals: ObjectReferenceRemovals
    private var table = -1
    private var rows: CSVRowReader?
    private var plan: [Int?] = []
    private var width = 0
    private var ordinal = 0
    private var record = 0
    /// Per table: the rows of the tables before it (its first row's ordinal is one more), from the first pass.
    private var ordinalsBefore: [Int] = []
    /// The entities whose tables this read gives (a plan's first pass), nil for all. Set only
    /// through `restricted(to:)` and `reopened()` (`RewindingObjectReader`, for whose sake it is not private).
    var only: [Bool]?
    /// The references the join files' rows could not give (the join files are read once, when the
    /// reader is made): counted in `removals` by every read, the first and each reopened one (`next`).
    private let joinRemovals = ObjectReferenceRemovals()
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
    init(directory: String, format: Format, model: ObjectModel, options: ReadOptions, keys: ObjectKeyTable? = nil,
         removals: ObjectReferenceRemovals? = nil, repeatsUnique: [Bool]? = nil) throws {
        self.model = model; self.options = options
        self.removals = removals ?? ObjectReferenceRemovals()
        self.directory = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        layout = CSVObjectLayout(model, extension: CSVTableNames.fileExtension(format))
        dialect = CSVDialect(format, delimiter: options.csvDelimiter)
        encoding = try TextEncoding.of(options)
        index = ObjectReferenceIndex(layout.names, keys: keys)
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
        var ordinal = 0
        defer { self.ordinal = 0; self.table = -1 }
        // A to-one names its owner at once where the owner's family's tables have all been read;
        // otherwise its table is read again for it once every name is in (`readLateOwners`).
        var lastTable: [Int: Int] = [:]
        for (t, table) in layout.tables.enumerated() { lastTable[model.lineage(of: table.entity)[0]] = t }
        var late: [(table: Int, inverses: [(n: Int, column: Int)])] = []
        for t in layout.tables.indices {
            let table = layout.tables[t]
            ordinalsBefore.append(ordinal)
            let rows = try enter(t)
            let unique = layout.names.uniqueSlot[table.entity]
            let lineage = model.lineage(of: table.entity)
            // The to-one columns that give a to-many of another entity back, split once: `immediate` where the
            // owner's family's tables all come before this one, `later` the others (`readLateOwners`).
            var immediate: [(n: Int, column: Int)] = [], later: [(n: Int, column: Int)] = []
            for (n, inv) in layout.inverses.enumerated() where lineage.contains(inv.destination) {
                guard let column = plan.firstIndex(where: { c in
                    if let c, case .toOne(let slot, _) = table.columns[c].role { return slot == inv.inverseSlot }
                    return false
                }) else { continue }
                if lastTable[model.lineage(of: inv.entity)[0], default: -1] < t { immediate.append((n, column)) } else { later.append((n, column)) }
            }
            while try rows.nextRow() {
                ordinal += 1
                guard case .object = try read(rows, resolving: false) else { continue }
                let (key, value) = name(rows, table, unique: unique)
                guard let reference = try index.add(entity: table.entity, key: key, value: value, ordinal: ordinal) else { continue }
                for (n, i) in immediate { try noteOwner(n, cell: i, rows, child: reference) }
            }
            if !later.isEmpty { late.append((t, later)) }
        }
        for (t, inverses) in late { try readLateOwners(t, inverses, ordinal: ordinalsBefore[t]) }
        // Every inverse to-many is complete: each list sorted once, not per read.
        for n in layout.inverses.indices { index.keys.sortLists(layout.joins.count + n) }
    }

    /// The name (`@key`, or the unique value) of the object at the row `rows` is at, in `table`.
    private func name(_ rows: CSVRowReader, _ table: CSVObjectLayout.EntityTable, unique: Int?) -> (key: Int64?, value: ObjectValue?) {
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
        return (key, value)
    }

    /// Appends `child` to the owner its to-one cell `i` names, in inverse `n`'s list. A to-one to no
    /// object rejects its own record in the second pass.
    private func noteOwner(_ n: Int, cell i: Int, _ rows: CSVRowReader, child: ObjectReference) throws {
        let inv = layout.inverses[n]
        guard let text = cell(rows, i, kind: layout.referenceKind(inv.entity)),
              let owner = try index.resolve(text, destination: inv.entity) else { return }
        try index.keys.append(layout.joins.count + n, owner.reference, child)
    }

    /// Reads table `t` again, once every name is in, for the to-ones of `inverses` whose owners' tables
    /// come at or after it: each row the first pass named (found by its name and ordinal, as the
    /// second pass finds it) notes its owner. Holds nothing per row.
    private mutating func readLateOwners(_ t: Int, _ inverses: [(n: Int, column: Int)], ordinal first: Int) throws {
        let table = layout.tables[t], e = table.entity
        let rows = try enter(t)
        let unique = layout.names.uniqueSlot[e]
        var ordinal = first
        while try rows.nextRow() {
            ordinal += 1
            guard rows.cellCount == width else { continue }
            let (key, value) = name(rows, table, unique: unique)
            guard let child = try own(e, key: key, value: value, ordinal: ordinal)?.reference else { continue }
            for (n, i) in inverses { try noteOwner(n, cell: i, rows, child: child) }
        }
    }

    /// The reference of the `ordinal`th object the first pass read, of entity `e`, named by `key` or
    /// its unique `value`, as the first pass's index has it: where the name is its own, or where it
    /// repeats an earlier object's unique value (an entity `repeatsUnique` marks) the reference the
    /// repeat was given (`repeated` true); nil for no name, or one an earlier object has.
    private func own(_ e: Int, key: Int64?, value: ObjectValue?, ordinal: Int) throws -> (reference: ObjectReference, repeated: Bool)? {
        if layout.names.hasKey(e) {
            guard let found = try key.flatMap({ try index.resolve(String($0), destination: e) }), found.ordinal == ordinal else { return nil }
            return (found.reference, false)
        }
        guard let text = value.flatMap({ ObjectValueText.text($0) }), let found = try index.resolve(text, destination: e) else { return nil }
        if found.ordinal == ordinal { return (found.reference, false) }
        return try index.repeated(e, ordinal: ordinal).map { ($0, true) }
    }

    /// The join files: owner → targets. A file that is absent holds no references.
    private mutating func readJoins() throws {
        for (j, join) in layout.joins.enumerated() {
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
                let owner = try index.resolve(ownerText, destination: join.entity), target = try index.resolve(targetText, destination: join.destination)
                guard let owner, let target else {
                    let (i, text, entity) = owner == nil ? (0, ownerText, join.entity) : (1, targetText, join.destination)
                    let origin = RecordOrigin(source: rows.name, record: 0, line: rows.rowLine).at(rows.position(ofCell: i))
                    joinRemovals.add(origin, member: join.header[1], place: nil,
                                     reason: "\(owner == nil ? "its owner " : "")\(text.quotedForMessage) names no \(model.entities[entity].name)")
                    continue
                }
                try index.keys.append(j, owner.reference, target.reference)
            }
        }
    }

    mutating func next() throws -> ObjectReadItem? {
        // A read counts the join files' removals before its rows' (the run counts each read's anew: `ObjectConversion.opener`).
        if table == -1 { removals.include(joinRemovals) }
        while true {
            if let rows {
                if try rows.nextRow() { return try read(rows) }
                self.rows = nil
            }
            table += 1
            // A restricted read leaves out the tables of the entities it does not give (their rows' ordinals skipped).
            if let only { while table < layout.tables.count, layout.tables[table].entity >= only.count || !only[layout.tables[table].entity] { table += 1 } }
            guard table < layout.tables.count else { return nil }
            self.rows = try enter(table)
            ordinal = ordinalsBefore[table]
        }
    }

    /// The tables read again from the first, with this read's index, joins and inverse to-manys (`reopened`).
    mutating func rewind() throws {
        rows = nil
        table = -1
        ordinal = 0
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
                guard let target = try index.resolve(text, destination: destination) else {
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
            return named ? .object(ObjectRecord(entity: e, key: 0, attributes: attributes, relationships: ObjectRelationships(relationships), origin: origin))
                : reject("no name")
        }
        // The object's own name must be the one the first pass gave it (not a repeat of an earlier one).
        let found = try own(e, key: key, value: uniqueValue, ordinal: ordinal)
        if let found, found.repeated {
            return .object(ObjectRecord(entity: e, key: found.reference.key, attributes: attributes,
                                        relationships: ObjectRelationships(relationships), origin: origin))
        }
        guard let found else {
            if !layout.names.hasKey(e) && uniqueValue == nil, let slot = layout.names.uniqueSlot[e] {
                return reject("\(all[slot].name): no value to refer to the \(model.entities[e].name) by")
            }
            let name = layout.names.hasKey(e) ? CSVObjectLayout.keyColumn : (layout.names.uniqueSlot[e].map { all[$0].name } ?? "")
            return reject("\(name): the same as an earlier \(model.entities[e].name)'s")
        }
        for (j, slot) in joinsHere { relationships[slot] = try index.keys.references(j, found.reference) ?? [] }
        for (n, slot) in inversesHere { relationships[slot] = try index.keys.references(layout.joins.count + n, found.reference) ?? [] }
        return .object(ObjectRecord(entity: e, key: found.reference.key, attributes: attributes,
                                    relationships: ObjectRelationships(relationships), origin: origin))
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
