import TripKit

/// Writes the objects of any model as a tables-layout directory (`CSVObjectLayout`), CSV or TSV.
///
/// As the trips' tables writer: the files are written in a temporary directory beside the target and
/// renamed into place at `finish()`, so the directory is complete or absent; an existing target is
/// replaced only when it holds nothing but the layout's files. Cells are quoted (CSV) or escaped (TSV)
/// and formula-guarded by `CSVCellEncoder`. A null is an empty cell; an empty text is `""` in CSV (the
/// trip writer's mark), and in TSV, which cannot quote, a null of an attribute whose values can be
/// empty text (String, URL, Data) is `\N` instead, as PostgreSQL's and MySQL's text formats write it.
///
/// An object referring by value to one not yet seen waits (`ObjectNaming.waits`) in an
/// `ObjectRecordQueue` and is written at `finish()`.
final class CSVObjectTablesWriter: ObjectRecordWriter {
    private let target: String
    private let format: Format
    private let options: WriteOptions
    private let text: CSVCellEncoder
    private let plain: CSVCellEncoder
    private var temporary: String?
    private var layout: CSVObjectLayout?
    /// The layout's naming, with the unique values noted so far (kept apart from `layout`, so that
    /// noting one does not copy the layout).
    private var names: ObjectNaming?
    private var outputs: [ByteOutput] = []
    /// Per entity: its table's position in `layout.tables`.
    private var tableOf: [Int?] = []
    /// Per entity and relationship slot: the join tables its objects write to.
    private var joinsOf: [[(slot: Int, join: Int)]] = []
    private var waiting: ObjectRecordQueue?
    private var line: [UInt8] = []
    private var done = false

    /// A writer of the directory `directory`, in CSV or TSV (`format`), with `options`' delimiter,
    /// formula guard and memory budget.
    init(directory: String, format: Format, options: WriteOptions) {
        target = directory; self.format = format; self.options = options
        let dialect = CSVDialect(format, delimiter: options.csvDelimiter)
        text = CSVCellEncoder(dialect: dialect, safeFormulas: options.csvSafeFormulas)
        plain = CSVCellEncoder(dialect: dialect, safeFormulas: false)
    }

    deinit { if !done { abort() } }

    func begin(_ model: ObjectModel) throws {
        let layout = CSVObjectLayout(model, extension: CSVTableNames.fileExtension(format), budget: options.budget)
        self.layout = layout
        names = layout.names
        let temporary = try TemporaryPaths.makeDirectory(beside: target)
        self.temporary = temporary
        tableOf = [Int?](repeating: nil, count: model.entities.count)
        joinsOf = [[(slot: Int, join: Int)]](repeating: [], count: model.entities.count)
        for (t, table) in layout.tables.enumerated() {
            tableOf[table.entity] = t
            let output = try ByteOutput(.file("\(temporary)/\(table.file)"))
            outputs.append(output)
            try CSVTablesWriter.writeHeader(output, table.columns.map(\.name), encoder: plain)
        }
        for (j, join) in layout.joins.enumerated() {
            for e in model.entities.indices where model.lineage(of: e).contains(join.entity) { joinsOf[e].append((join.slot, j)) }
            let output = try ByteOutput(.file("\(temporary)/\(join.file)"))
            outputs.append(output)
            try CSVTablesWriter.writeHeader(output, join.header, encoder: plain)
        }
        waiting = ObjectRecordQueue(budget: options.budget ?? SpillBudget(limit: SpillBudget.defaultLimit))
    }

    func write(_ object: ObjectRecord) throws {
        guard layout != nil, let waiting else { throw TripError.usage("the tables writer is given objects before begin(_:)") }
        guard object.entity >= 0, object.entity < tableOf.count else {
            throw TripError.data("\(target): an object of entity \(object.entity), which the model does not have")
        }
        try names!.note(object)
        if names!.waits[object.entity] {
            try waiting.append(object)
        } else {
            try put(object)
        }
    }

    /// Writes an object's row and its join rows.
    private func put(_ object: ObjectRecord) throws {
        let layout = self.layout!, names = self.names!
        guard let t = tableOf[object.entity] else {
            throw TripError.data("\(target): an object of the abstract entity \(layout.model.entities[object.entity].name)")
        }
        let table = layout.tables[t]
        let separator = text.dialect.separator
        line.removeAll(keepingCapacity: true)
        for (i, column) in table.columns.enumerated() {
            if i > 0 { line.append(separator) }
            switch column.role {
            case .key: line += String(object.key).utf8
            case .attribute(let slot, let a):
                let value = slot < object.attributes.count ? object.attributes[slot] : .null
                appendCell(ObjectValueText.text(value), kind: a.kind)
            case .toOne(let slot, let destination):
                let refs = slot < object.relationships.count ? object.relationships[slot] : []
                appendCell(try refs.first.map { try names.name(of: $0, in: target) }, kind: layout.referenceKind(destination))
            }
        }
        line.append(10)
        try outputs[t].write(line)
        for (slot, j) in joinsOf[object.entity] where slot < object.relationships.count {
            let join = layout.joins[j]
            let owner = try names.name(of: object.reference, in: target)
            for ref in object.relationships[slot] {
                line.removeAll(keepingCapacity: true)
                appendCell(owner, kind: layout.referenceKind(object.entity))
                line.append(separator)
                appendCell(try names.name(of: ref, in: target), kind: layout.referenceKind(join.destination))
                line.append(10)
                try outputs[layout.tables.count + j].write(line)
            }
        }
    }

    /// A cell of `kind`'s text (nil: null), quoted or escaped, formula-guarded where it is text.
    private func appendCell(_ cell: String?, kind: AttributeKind) {
        let textual = CSVObjectLayout.canBeEmpty(kind)
        guard var cell else {
            if textual && text.dialect.usesEscapes { line += [92, UInt8(ascii: "N")] }
            return
        }
        cell.withUTF8 { (textual ? text : plain).appendText($0, marksEmpty: true, to: &line) }
    }

    func finish() throws {
        guard let waiting, let temporary, let layout else { throw TripError.usage("the tables writer is finished before begin(_:)") }
        let ours = Set(["csv", "tsv"].flatMap { ext in layout.fileNames.map { String($0.dropLast(3)) + ext } })
        do {
            try waiting.forEach { try put($0) }
            self.waiting = nil
            for o in outputs { try o.commit() }
            try CSVTablesWriter.moveIntoPlace(temporary, target: target, ours: ours)
        } catch {
            abort()
            throw error
        }
        done = true
    }

    func abort() {
        if done { return }
        done = true
        outputs.forEach { $0.discard() }
        waiting = nil
        if let temporary { CSVTablesWriter.removeTemporary(temporary, files: layout?.fileNames ?? []) }
    }
}
