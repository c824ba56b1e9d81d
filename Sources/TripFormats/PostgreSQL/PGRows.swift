import TripKit

/// Rows in COPY's text format, built in a byte buffer: fields between tabs, a row per line, `\N`
/// for NULL, and backslash, tab, newline and carriage return escaped. Dates go as ISO 8601 in UTC
/// to the millisecond, Booleans as `t`/`f`.
struct PGCopyRows {
    private(set) var bytes: [UInt8] = []
    private(set) var rows = 0
    private var atRowStart = true

    init() { bytes.reserveCapacity(1 << 20) }

    mutating func field(_ value: Value) {
        separate()
        switch value {
        case .null: bytes += [0x5C, 0x4E]
        case .string(let s): text(s)
        case .date(let t): t.appendISO8601(to: &bytes)
        case .bool(let b): bytes.append(b ? 0x74 : 0x66)
        case .int(let n): bytes += String(n).utf8
        }
    }

    mutating func field(_ n: Int64) {
        separate()
        bytes += String(n).utf8
    }

    mutating func field(_ s: String) {
        separate()
        text(s)
    }

    mutating func endRow() {
        bytes.append(0x0A)
        rows += 1
        atRowStart = true
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        rows = 0
        atRowStart = true
    }

    private mutating func separate() {
        if !atRowStart { bytes.append(0x09) }
        atRowStart = false
    }

    private mutating func text(_ s: String) {
        for b in s.utf8 {
            switch b {
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x09: bytes += [0x5C, 0x74]
            case 0x0A: bytes += [0x5C, 0x6E]
            case 0x0D: bytes += [0x5C, 0x72]
            default: bytes.append(b)
            }
        }
    }
}

/// A batch of COPY rows for a layout's tables: the trips' and each related table's.
struct PGCopyBatch {
    let layout: PGLayout
    var trips = PGCopyRows()
    var children: [PGCopyRows]

    init(_ layout: PGLayout) {
        self.layout = layout
        children = layout.children.map { _ in PGCopyRows() }
    }

    /// The column names of the trips' rows in a store's trips table.
    var tripColumns: [String] { [StoreLayout.idColumn] + layout.tables.rootColumns.map(\.name) }

    /// A trip under `id` (with `leading` fields after the id, for a staging table's extra columns),
    /// and its related rows naming it.
    mutating func append(_ object: ModelObject, id: Int64, leading: (inout PGCopyRows) -> Void = { _ in }) {
        trips.field(id)
        leading(&trips)
        for column in layout.tables.rootColumns { trips.field(object.attributes[column.slot]) }
        trips.endRow()
        for (i, child) in layout.children.enumerated() {
            for (position, o) in object.relationships[child.slot].objects.enumerated() {
                children[i].field(id)
                if child.isToMany { children[i].field(Int64(position)) }
                for column in child.columns { children[i].field(o.attributes[column.slot]) }
                children[i].endRow()
            }
        }
    }

    /// Whether any table's rows have grown past `bytes`.
    func exceeds(_ bytes: Int) -> Bool { trips.bytes.count > bytes || children.contains { $0.bytes.count > bytes } }

    /// Sends the rows: the trips into `tripsTable` (its columns `tripColumns` names, in the rows'
    /// order; the trips table's by default), each related table's into the table `childTable` names;
    /// then empties the batch.
    mutating func send(_ c: PGConnection, tripsTable: String, tripColumns: [String]? = nil,
                       childTable: (StoreLayout.ChildTable) -> String) throws {
        if trips.rows > 0 {
            try PGCopyBatch.copy(c, trips, into: tripsTable, tripColumns ?? self.tripColumns)
        }
        trips.removeAll()
        for (i, child) in layout.children.enumerated() where children[i].rows > 0 {
            try PGCopyBatch.copy(c, children[i], into: childTable(child), layout.childColumns(child))
            children[i].removeAll()
        }
    }

    /// Sends the rows as `send` does and begins an empty batch: from `sender`'s thread when there is
    /// one (the full batch goes to it; this one is new), else here.
    mutating func send(_ c: PGConnection, via sender: PGSender?, tripsTable: String, tripColumns: [String]? = nil,
                       childTable: @escaping (StoreLayout.ChildTable) -> String) throws {
        guard trips.rows > 0 else { return }
        guard let sender else { return try send(c, tripsTable: tripsTable, tripColumns: tripColumns, childTable: childTable) }
        var full = self
        self = PGCopyBatch(layout)
        try sender.submit { try full.send(c, tripsTable: tripsTable, tripColumns: tripColumns, childTable: childTable) }
    }

    static func copy(_ c: PGConnection, _ rows: PGCopyRows, into table: String, _ columns: [String]) throws {
        let doing = "cannot load the trips"
        try c.beginCopy("COPY \(quoted(table)) (\(columns.map(quoted).joined(separator: ", "))) FROM STDIN", doing: doing)
        try rows.bytes.withUnsafeBytes { try c.send($0, doing: doing) }
        try c.endCopy(doing: doing)
    }
}

enum PGValues {
    /// Why PostgreSQL cannot hold a trip as it is, or nil: its text fields may not contain NUL.
    static func unstorable(_ object: ModelObject, _ entity: Entity, schema: any VersionedSchema.Type) -> String? {
        for (a, v) in zip(entity.attributes, object.attributes) {
            if case .string(let s) = v, s.utf8.contains(0) {
                return "field '\(a.name)': PostgreSQL text cannot hold a NUL character (U+0000)"
            }
        }
        for (r, related) in zip(entity.relationships, object.relationships) {
            guard let destination = schema.entity(r.destination) else { continue }
            for o in related.objects {
                if let why = unstorable(o, destination, schema: schema) { return "\(r.name): " + why }
            }
        }
        return nil
    }

    /// A value the server gave as text (dates selected by `PGLayout.selected`), as the model holds it.
    static func decode(_ text: String, _ type: AttributeType, column: String, place: String) throws -> Value {
        switch type {
        case .string: return .string(text)
        case .date:
            guard let t = Timestamp(iso8601: text) else { throw TripError.data("\(place): column \(column): not a date: \(text.quotedForMessage)") }
            return .date(t)
        case .bool: return .bool(text == "true" || text == "t")
        case .int:
            guard let n = Int64(text) else { throw TripError.data("\(place): column \(column): not an integer: \(text.quotedForMessage)") }
            return .int(n)
        }
    }
}
