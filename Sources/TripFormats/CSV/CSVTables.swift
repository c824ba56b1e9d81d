#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// The names of the tables layout: one file per entity, `trips.csv`, `bucket_list_items.csv` and
/// `living_accommodations.csv`, the related ones joined to the trips by a `trip_id` column; list
/// items also carry their `position` (1-based).
enum CSVTableNames {
    /// `BucketListItem` → `bucket_list_items`.
    static func table(_ entity: String) -> String { snake(entity) + "s" }
    /// `Trip` → `trip_id`.
    static func key(_ rootEntity: String) -> String { snake(rootEntity) + "_id" }
    static let position = "position"

    static func snake(_ name: String) -> String {
        var out = ""
        for (i, c) in name.enumerated() {
            if c.isUppercase { if i > 0 { out.append("_") }; out += c.lowercased() } else { out.append(c) }
        }
        return out
    }

    static func fileExtension(_ format: Format) -> String { format == .tsv ? "tsv" : "csv" }
}

// MARK: - Writing

/// Writes trips as related tables in a directory.
///
/// The files are written into a temporary directory beside the target, renamed into place at
/// `finish()`: the directory is complete or absent. An existing target is replaced only when it is
/// empty or holds nothing but the layout's own files.
final class CSVTablesWriter: RecordWriter {
    private struct Table {
        var output: ByteOutput
        var relationship: Int
        var attributes: CSVRowLayout.Attributes
        var isToMany: Bool
    }

    private let target: String
    private let temporary: String
    private let encoder: CSVCellEncoder
    private let rootAttributes: CSVRowLayout.Attributes
    private let trips: ByteOutput
    private var tables: [Table]
    private var fileNames: [String]
    private var count = 0
    private var line: [UInt8] = []
    private var done = false

    init(directory: String, format: Format, options: WriteOptions) throws {
        target = directory
        var trimmed = directory
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let (parent, base) = ByteOutput.split(trimmed)
        var template = Array("\(parent)/.\(base).tripconv-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw TripError(.cantCreate, "\(directory): cannot create: \(String(cString: strerror(errno)))")
        }
        temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(temporary, 0o755)
        encoder = CSVCellEncoder(dialect: CSVDialect(format), safeFormulas: options.csvSafeFormulas)
        let ext = CSVTableNames.fileExtension(format)
        let schema = options.schema
        let root = schema.rootEntity
        rootAttributes = CSVRowLayout.attributes(of: root)
        let key = CSVTableNames.key(root.name)
        var names: [String] = []
        var made: [Table] = []
        var tripsOutput: ByteOutput?
        do {
            let tripsName = "\(CSVTableNames.table(root.name)).\(ext)"
            let output = try ByteOutput(.file("\(temporary)/\(tripsName)"))
            tripsOutput = output
            names.append(tripsName)
            try CSVTablesWriter.writeHeader(output, [key] + rootAttributes.names, encoder: encoder)
            for (i, r) in root.relationships.enumerated() {
                guard let destination = schema.entity(r.destination) else { continue }
                let name = "\(CSVTableNames.table(destination.name)).\(ext)"
                let output = try ByteOutput(.file("\(temporary)/\(name)"))
                names.append(name)
                let attributes = CSVRowLayout.attributes(of: destination)
                try CSVTablesWriter.writeHeader(output, [key] + (r.isToMany ? [CSVTableNames.position] : []) + attributes.names,
                                                encoder: encoder)
                made.append(Table(output: output, relationship: i, attributes: attributes, isToMany: r.isToMany))
            }
        } catch {
            tripsOutput?.discard()
            for t in made { t.output.discard() }
            rmdir(temporary)
            throw error
        }
        trips = tripsOutput!
        tables = made
        fileNames = names
    }

    deinit { if !done { abort() } }

    private static func writeHeader(_ output: ByteOutput, _ names: [String], encoder: CSVCellEncoder) throws {
        var line: [UInt8] = []
        for (i, n) in names.enumerated() {
            if i > 0 { line.append(encoder.dialect.separator) }
            var name = n
            name.withUTF8 { encoder.appendText($0, to: &line) }
        }
        line.append(10)
        try output.write(line)
    }

    func write(_ object: ModelObject) throws {
        count += 1
        var key = String(count)
        let separator = encoder.dialect.separator
        line.removeAll(keepingCapacity: true)
        key.withUTF8 { line.append(contentsOf: $0) }
        for (slot, marksEmpty) in rootAttributes.slots {
            line.append(separator)
            if slot < object.attributes.count { encoder.append(object.attributes[slot], marksEmpty: marksEmpty, to: &line) }
        }
        line.append(10)
        try trips.write(line)
        for t in tables {
            let related = t.relationship < object.relationships.count ? object.relationships[t.relationship].objects : []
            for (n, o) in related.enumerated() {
                line.removeAll(keepingCapacity: true)
                key.withUTF8 { line.append(contentsOf: $0) }
                if t.isToMany { line.append(separator); line.append(contentsOf: String(n + 1).utf8) }
                for (slot, marksEmpty) in t.attributes.slots {
                    line.append(separator)
                    if slot < o.attributes.count { encoder.append(o.attributes[slot], marksEmpty: marksEmpty, to: &line) }
                }
                line.append(10)
                try t.output.write(line)
            }
        }
    }

    func finish() throws {
        do {
            try trips.commit()
            for t in tables { try t.output.commit() }
            try moveIntoPlace()
            done = true
        } catch {
            abort()
            throw error
        }
    }

    func abort() {
        guard !done else { return }
        done = true
        trips.discard()
        for t in tables { t.output.discard() }
        removeTemporary()
    }

    private func removeTemporary() {
        for name in fileNames { unlink("\(temporary)/\(name)") }
        rmdir(temporary)
    }

    /// Renames the finished directory over the target, setting an old one aside until then.
    private func moveIntoPlace() throws {
        var st = stat()
        var setAside: String?
        if lstat(target, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                throw TripError(.cantCreate, "\(target): exists and is not a directory")
            }
            let existing = CSVTablesWriter.entries(of: target)
            let ours = Set(["csv", "tsv"].flatMap { ext in fileNames.map { n in n.split(separator: ".").first.map { "\($0).\(ext)" } ?? n } })
            guard existing.allSatisfy(ours.contains) else {
                throw TripError(.cantCreate, "\(target): exists and holds files other than a tables layout's",
                                notes: ["give a new or empty directory"])
            }
            let aside = temporary + ".old"
            guard rename(target, aside) == 0 else {
                throw TripError(.cantCreate, "\(target): cannot replace: \(String(cString: strerror(errno)))")
            }
            setAside = aside
        }
        guard rename(temporary, target) == 0 else {
            let message = String(cString: strerror(errno))
            if let setAside { rename(setAside, target) }
            throw TripError(.cantCreate, "\(target): cannot create: \(message)")
        }
        if let setAside {
            for name in CSVTablesWriter.entries(of: setAside) { unlink("\(setAside)/\(name)") }
            rmdir(setAside)
        }
    }

    static func entries(of directory: String) -> [String] {
        guard let d = opendir(directory) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

// MARK: - Reading

/// Reads trips from a tables-layout directory: `trips.csv` streamed row by row, its related tables
/// read first and held by trip key (they are small beside the trips, and may come in any order).
struct CSVTablesReader: RecordReader {
    /// The related rows of one table, by trip key, in file order.
    private struct Related {
        var relationship: Int
        var isToMany: Bool
        var file: String
        /// Key → rows; a row is (line, position, cells by attribute).
        var rows: [String: [(line: Int, position: Int, cells: [ScalarToken])]]
        var fields: [Int]
    }

    private let rows: CSVRowReader
    private var builder: RecordBuilder
    private var related: [Related] = []
    private var keyColumn = 0
    private var plan: CSVColumnPlan?
    private var keys: Set<String> = []
    private var record = 0
    private var finished = false
    private let format: Format

    init(directory: String, format: Format, options: ReadOptions) throws {
        self.format = format
        let ext = CSVTableNames.fileExtension(format)
        let vocabulary = SchemaVocabulary.trips
        let rootName = vocabulary.entities[vocabulary.rootEntity].name
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let tripsPath = "\(dir)/\(CSVTableNames.table(rootName)).\(ext)"
        let encoding = try CSVTextEncoding(option: options.inputEncoding)
        rows = CSVRowReader(try ByteInput(.file(tripsPath)), dialect: CSVDialect(format), encoding: encoding)
        builder = RecordBuilder(source: tripsPath, format: format.rawValue, options: options)
        let keyName = CSVTableNames.key(rootName)

        // The related tables: every relationship of the root entity whose destination's table exists.
        let root = vocabulary.entities[vocabulary.rootEntity]
        var done: Set<String> = []
        for (field, f) in root.fields.enumerated() {
            let destination: Int, isToMany: Bool
            switch f.kind {
            case .toMany(let d): destination = d; isToMany = true
            case .toOne(let d): destination = d; isToMany = false
            default: continue
            }
            let entity = vocabulary.entities[destination]
            let path = "\(dir)/\(CSVTableNames.table(entity.name)).\(ext)"
            guard !done.contains(path), access(path, F_OK) == 0 else { continue }
            done.insert(path)
            related.append(try CSVTablesReader.readRelated(path: path, field: field, isToMany: isToMany, entity: entity,
                                                           keyName: keyName, format: format, encoding: encoding, options: options))
        }
    }

    var detection: Detection { builder.detection }

    private static func readRelated(path: String, field: Int, isToMany: Bool, entity: SchemaVocabulary.EntityFields,
                                    keyName: String, format: Format, encoding: CSVTextEncoding,
                                    options: ReadOptions) throws -> Related {
        let reader = CSVRowReader(try ByteInput(.file(path)), dialect: CSVDialect(format), encoding: encoding)
        var result = Related(relationship: field, isToMany: isToMany, file: path, rows: [:], fields: [])
        guard try reader.nextRow() else { return result }
        let header = reader.strings
        var keyColumn: Int?, positionColumn: Int?
        var columns: [(column: Int, field: Int, isString: Bool)] = []
        var unknown: [String] = []
        var index: [String: Int] = [:]
        for (i, f) in entity.fields.enumerated() { index[f.name] = i }
        for (column, name) in header.enumerated() {
            if name == keyName, keyColumn == nil { keyColumn = column; continue }
            if name == CSVTableNames.position, isToMany, positionColumn == nil { positionColumn = column; continue }
            if let f = index[name] {
                switch entity.fields[f].kind {
                case .attribute(let type): columns.append((column, f, type == .string)); continue
                case .transient: continue
                default: break
                }
            }
            unknown.append(name)
        }
        guard let keyColumn else {
            throw TripError.data("\(path):\(reader.rowLine):1: missing the key column \(keyName.quotedForMessage)")
        }
        if !unknown.isEmpty && !options.ignoreUnknown {
            throw TripError.data("\(path):\(reader.rowLine):1: unknown column\(unknown.count > 1 ? "s" : "") "
                                 + unknown.map(\.quotedForMessage).joined(separator: ", ") + " of a \(entity.name)")
        }
        result.fields = columns.map(\.field)
        let emptyIsNull = !reader.dialect.usesEscapes
        var order = 0
        while try reader.nextRow() {
            var allEmpty = true
            for i in 0..<reader.cellCount where !reader.isEmpty(i) || reader.isQuoted(i) { allEmpty = false; break }
            if allEmpty { continue }
            guard reader.cellCount == header.count else {
                throw TripError.data("\(path):\(reader.rowLine):1: expected \(header.count) cells as the header has, found \(reader.cellCount)")
            }
            order += 1
            var position = order
            if let positionColumn {
                guard let p = Int(reader.string(positionColumn)) else {
                    let at = reader.position(ofCell: positionColumn)
                    throw TripError.data("\(path):\(at.line):\(at.column): expected a list position, found \(reader.string(positionColumn).quotedForMessage)")
                }
                position = p
            }
            let cells: [ScalarToken] = columns.map { c in
                if reader.isEmpty(c.column) {
                    return reader.isQuoted(c.column) || (!emptyIsNull && c.isString) ? .text("") : .null
                }
                return .text(reader.string(c.column))
            }
            result.rows[reader.string(keyColumn), default: []].append((reader.rowLine, position, cells))
        }
        return result
    }

    mutating func next() throws -> ReadItem? {
        if finished { return nil }
        if plan == nil {
            guard try rows.nextRow() else { return try end() }
            let header = rows.strings
            let keyName = CSVTableNames.key(builder.vocabulary.entities[builder.vocabulary.rootEntity].name)
            guard let k = header.firstIndex(of: keyName) else {
                throw TripError.data("\(rows.name):\(rows.rowLine):1: missing the key column \(keyName.quotedForMessage)")
            }
            keyColumn = k
            let rows = self.rows
            plan = try CSVColumnPlan(header: header, vocabulary: builder.vocabulary, options: builder.options,
                                     skipping: k) { column in
                let at = rows.position(ofCell: min(column, max(rows.cellCount - 1, 0)))
                return "\(rows.name):\(at.line):\(at.column)"
            }
        }
        while true {
            guard try rows.nextRow() else { return try end() }
            var allEmpty = true
            for i in 0..<rows.cellCount where !rows.isEmpty(i) || rows.isQuoted(i) { allEmpty = false; break }
            if allEmpty { continue }
            record += 1
            return try read(plan!)
        }
    }

    private mutating func read(_ plan: CSVColumnPlan) throws -> ReadItem {
        let origin = RecordOrigin(source: rows.name, record: record, line: rows.rowLine)
        guard rows.cellCount == plan.width else {
            return .rejected(Rejection(origin: origin, reason: "expected \(plan.width) cells as the header has, found \(rows.cellCount)",
                                       text: rows.rawText))
        }
        let key = rows.string(keyColumn)
        guard keys.insert(key).inserted else {
            let at = rows.position(ofCell: keyColumn)
            throw TripError.data("\(rows.name):\(at.line):\(at.column): trip key \(key.quotedForMessage) appears twice")
        }
        builder.beginRecord(origin: origin)
        let emptyIsNull = !rows.dialect.usesEscapes
        for s in plan.root {
            if rows.isEmpty(s.column) {
                builder.set(s.field, rows.isQuoted(s.column) || (!emptyIsNull && s.isString) ? .text("") : .null)
            } else {
                builder.set(s.field, .text(rows.string(s.column)))
            }
        }
        for i in related.indices {
            guard var list = related[i].rows.removeValue(forKey: key) else { continue }
            if related[i].isToMany { list.sort { ($0.position, $0.line) < ($1.position, $1.line) } }
            for row in list {
                builder.beginObject(related[i].relationship)
                for (field, token) in zip(related[i].fields, row.cells) { builder.set(field, token) }
                builder.endObject()
            }
        }
        for u in plan.unknown { builder.unknownField(u.name) }
        for column in plan.padding where !rows.isEmpty(column) || rows.isQuoted(column) {
            builder.unknownField("(column \(column + 1), unnamed)")
        }
        let item = builder.endRecord(text: nil)
        if case .rejected(var rejection) = item {
            rejection.text = rows.rawText
            return .rejected(rejection)
        }
        return item
    }

    /// At the end: every related row must have found its trip.
    private mutating func end() throws -> ReadItem? {
        finished = true
        for r in related {
            if let orphan = r.rows.min(by: { $0.value[0].line < $1.value[0].line }) {
                throw TripError.data("\(r.file):\(orphan.value[0].line):1: \(CSVTableNames.key(builder.vocabulary.entities[builder.vocabulary.rootEntity].name)) \(orphan.key.quotedForMessage) matches no trip in \(rows.name)")
            }
        }
        return nil
    }
}
