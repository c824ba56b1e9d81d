import TripKit

/// Where a load into a store with a unique name waits until `finish()`: one temporary table of all
/// the rows (`tripconv_stage`: a trip's row, then its related rows, told apart by `kind`), filled by
/// ONE `COPY … FROM STDIN` that stays open while the trips are read, so the server takes the rows
/// in while tripconv parses the next ones. Views give each kind of row the shape of its table
/// (`tripconv_stage_trips`, `tripconv_stage_bucket_list_items`, …) for the set-based statements.
///
/// The COPY is ended only to reserve the next block of ids (a connection runs nothing else during
/// a COPY) and at the end. Memory: up to `sendBytes` of rows before they go to libpq.
struct PGStaging {
    let layout: PGLayout
    private var rows = PGCopyRows()
    private var isCopying = false
    /// Trips staged so far.
    private(set) var trips = 0
    /// The sources of the trips' origins (the inputs), numbered: a staged row holds the number.
    private(set) var sources: [String] = []
    private var lastSource: (name: String, number: Int)?

    static let table = "tripconv_stage"
    static let sendBytes = 1 << 18
    static let originColumns = ["origin_source", "origin_record", "origin_line", "origin_column"]

    init(_ layout: PGLayout) { self.layout = layout }

    /// A trip attribute's column in the staging table (`t_name`), and a related table's (`c1_title`).
    private func tripColumn(_ name: String) -> String { "t_" + name }
    private func childColumn(_ index: Int, _ name: String) -> String { "c\(index + 1)_" + name }

    /// The columns of the staging table, in COPY order.
    private var columns: [String] {
        ["kind", SQLiteLayout.idColumn, SQLiteLayout.positionColumn] + Self.originColumns
            + layout.tables.rootColumns.map { tripColumn($0.name) }
            + layout.children.enumerated().flatMap { i, child in child.columns.map { childColumn(i, $0.name) } }
    }

    /// Creates the staging table and its views in the open transaction (dropped at its end).
    func create(_ c: PGConnection, viewName: (String) -> String) throws {
        var definitions = ["\"kind\" smallint NOT NULL", "\"id\" bigint NOT NULL", "\"position\" integer",
                           "\"origin_source\" integer", "\"origin_record\" bigint", "\"origin_line\" integer", "\"origin_column\" integer"]
        definitions += layout.tables.rootColumns.map { "\(quoted(tripColumn($0.name))) \(PGLayout.sqlType($0.attribute.type))" }
        for (i, child) in layout.children.enumerated() {
            definitions += child.columns.map { "\(quoted(childColumn(i, $0.name))) \(PGLayout.sqlType($0.attribute.type))" }
        }
        let doing = "cannot stage the trips"
        try c.execute("CREATE TEMP TABLE \(quoted(Self.table)) (\(definitions.joined(separator: ", "))) ON COMMIT DROP", doing: doing)
        let trips = ["\"id\""] + Self.originColumns.map(quoted) + layout.tables.rootColumns.map { "\(quoted(tripColumn($0.name))) AS \(quoted($0.name))" }
        try c.execute("CREATE TEMP VIEW \(quoted(viewName(layout.rootTable))) AS SELECT \(trips.joined(separator: ", ")) "
                      + "FROM \(quoted(Self.table)) WHERE \"kind\" = 0", doing: doing)
        for (i, child) in layout.children.enumerated() {
            var selected = ["\"id\" AS \(quoted(layout.foreignKey))"]
            if child.isToMany { selected.append(quoted(SQLiteLayout.positionColumn)) }
            selected += child.columns.map { "\(quoted(childColumn(i, $0.name))) AS \(quoted($0.name))" }
            try c.execute("CREATE TEMP VIEW \(quoted(viewName(child.name))) AS SELECT \(selected.joined(separator: ", ")) "
                          + "FROM \(quoted(Self.table)) WHERE \"kind\" = \(i + 1)", doing: doing)
        }
    }

    /// Stages a trip under `id`, with its origin, and its related rows.
    mutating func append(_ object: ModelObject, id: Int64, origin: RecordOrigin, _ c: PGConnection) throws {
        let rootCount = layout.tables.rootColumns.count
        let childCounts = layout.children.map(\.columns.count)
        let total = childCounts.reduce(0, +)
        rows.field(.int(0))
        rows.field(id)
        rows.field(.null)
        rows.field(Int64(sourceNumber(origin.source)))
        rows.field(Int64(origin.record))
        rows.field(origin.line.map { Value.int(Int64($0)) } ?? .null)
        rows.field(origin.column.map { Value.int(Int64($0)) } ?? .null)
        for column in layout.tables.rootColumns { rows.field(object.attributes[column.slot]) }
        for _ in 0..<total { rows.field(.null) }
        rows.endRow()
        var before = 0
        for (i, child) in layout.children.enumerated() {
            for (position, o) in object.relationships[child.slot].objects.enumerated() {
                rows.field(.int(Int64(i + 1)))
                rows.field(id)
                rows.field(child.isToMany ? .int(Int64(position)) : .null)
                for _ in 0..<(4 + rootCount + before) { rows.field(.null) }
                for column in child.columns { rows.field(o.attributes[column.slot]) }
                for _ in 0..<(total - before - childCounts[i]) { rows.field(.null) }
                rows.endRow()
            }
            before += childCounts[i]
        }
        trips += 1
        if rows.bytes.count >= Self.sendBytes { try send(c) }
    }

    private mutating func sourceNumber(_ source: String) -> Int {
        if let last = lastSource, last.name == source { return last.number }
        let number = sources.firstIndex(of: source) ?? sources.count
        if number == sources.count { sources.append(source) }
        lastSource = (source, number)
        return number
    }

    /// Hands the rows to libpq, starting the COPY when it is not open.
    mutating func send(_ c: PGConnection) throws {
        guard rows.rows > 0 else { return }
        let doing = "cannot stage the trips"
        if !isCopying {
            try c.beginCopy("COPY \(quoted(Self.table)) (\(columns.map(quoted).joined(separator: ", "))) FROM STDIN", doing: doing)
            isCopying = true
        }
        try rows.bytes.withUnsafeBytes { try c.send($0, doing: doing) }
        rows.removeAll()
    }

    /// Sends what is left and ends the COPY, so the connection can run other statements.
    mutating func end(_ c: PGConnection) throws {
        try send(c)
        if isCopying {
            isCopying = false
            try c.endCopy(doing: "cannot stage the trips")
        }
    }
}
