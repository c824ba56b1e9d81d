import TripKit

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
        let encoding = try TextEncoding.of(options)
        let dialect = CSVDialect(format, delimiter: options.csvDelimiter)
        let separator: CSVRowReader.SeparatorChoice = options.csvDelimiter == nil ? .declaredOrDialect : .fixed
        rows = CSVRowReader(try ByteInput(.file(tripsPath)), dialect: dialect, encoding: encoding, separator: separator)
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
            guard !done.contains(path), FileSystem.exists(path) else { continue }
            done.insert(path)
            related.append(try CSVTablesReader.readRelated(path: path, field: field, isToMany: isToMany, entity: entity,
                                                           keyName: keyName, dialect: dialect, separator: separator,
                                                           encoding: encoding, options: options))
        }
    }

    var detection: Detection { builder.detection }

    private static func readRelated(path: String, field: Int, isToMany: Bool, entity: SchemaVocabulary.EntityFields,
                                    keyName: String, dialect: CSVDialect, separator: CSVRowReader.SeparatorChoice,
                                    encoding: TextEncoding,
                                    options: ReadOptions) throws -> Related {
        let reader = CSVRowReader(try ByteInput(.file(path)), dialect: dialect, encoding: encoding, separator: separator)
        var result = Related(relationship: field, isToMany: isToMany, file: path, rows: [:], fields: [])
        guard try reader.nextRow() else { return result }
        let header = reader.strings
        var keyColumn: Int?, positionColumn: Int?
        var columns: [(column: Int, field: Int, emptyIsNull: Bool)] = []
        var unknown: [String] = []
        var index: [String: Int] = [:]
        for (i, f) in entity.fields.enumerated() { index[f.name] = i }
        for (column, name) in header.enumerated() {
            if name == keyName, keyColumn == nil { keyColumn = column; continue }
            if name == CSVTableNames.position, isToMany, positionColumn == nil { positionColumn = column; continue }
            if let f = index[name] {
                switch entity.fields[f].kind {
                case .attribute(let type): columns.append((column, f, type != .string)); continue
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
        var order = 0
        while try reader.nextRow() {
            var allEmpty = true
            for i in 0..<reader.cellCount where !reader.isEmpty(i) { allEmpty = false; break }
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
                reader.token(c.column, emptyIsNull: c.emptyIsNull, safeFormulas: options.csvSafeFormulas)
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
            for i in 0..<rows.cellCount where !rows.isEmpty(i) { allEmpty = false; break }
            if allEmpty { continue }
            record += 1
            return try read(plan!)
        }
    }

    private mutating func read(_ plan: CSVColumnPlan) throws -> ReadItem {
        let origin = RecordOrigin(source: rows.name, record: record, line: rows.rowLine)
        guard rows.cellCount == plan.width else {
            return .rejected(SetAsideRecord(origin: origin, reason: "expected \(plan.width) cells as the header has, found \(rows.cellCount)",
                                            text: rows.rawText))
        }
        let key = rows.string(keyColumn)
        guard keys.insert(key).inserted else {
            let at = rows.position(ofCell: keyColumn)
            throw TripError.data("\(rows.name):\(at.line):\(at.column): trip key \(key.quotedForMessage) appears twice")
        }
        builder.beginRecord(origin: origin)
        for s in plan.root {
            builder.set(s.field, rows.token(s.column, emptyIsNull: s.emptyIsNull, safeFormulas: builder.options.csvSafeFormulas))
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
        for column in plan.padding where !rows.isEmpty(column) {
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
