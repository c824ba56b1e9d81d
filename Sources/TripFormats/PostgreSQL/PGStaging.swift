import TripKit

/// Where a load into a store with a unique name waits until `finish()`.
///
/// - The trips go into one temporary table (`tripconv_stage`, seen through the view
///   `tripconv_stage_trips` with the trips table's column names) by ONE `COPY … FROM STDIN` that
///   stays open while they come, ended only to reserve the next block of ids (a connection runs
///   nothing else during a COPY) and at the end.
/// - Their related rows, already in COPY form, go to a temporary FILE per related table, each row
///   behind its trip's id. Once the trips are in, `sendChildren` copies each file's rows straight
///   into the store's table (one COPY, as a bulk loader would), except the rows of the trips that
///   were not inserted (their names were stored: merged, replaced, kept or refused), which go to a
///   temporary table (`tripconv_stage_bucket_list_items`, …) for the policy. So every related row
///   is written to the server once.
///
/// Memory: up to `sendBytes` of trip rows before they go to libpq, the files' buffers, and, while
/// the related rows are sent, the ids of the trips not inserted (8 bytes each).
struct PGStaging {
    let layout: PGLayout
    private var rows = PGCopyRows()
    private var isCopying = false
    /// Trips staged so far.
    private(set) var trips = 0
    /// The sources of the trips' origins (the inputs), numbered: a staged row holds the number.
    private(set) var sources: [String] = []
    private var lastSource: (name: String, number: Int)?
    /// Each related table's rows: per row, the trip's id (8 bytes), the row's length (4), the row.
    private let childFiles: [SpillFile]
    private var childRow = PGCopyRows()

    static let table = "tripconv_stage"
    static let sendBytes = 1 << 18
    static let originColumns = ["origin_source", "origin_record", "origin_line", "origin_column"]

    init(_ layout: PGLayout, directory: String) throws {
        self.layout = layout
        childFiles = try layout.children.map { _ in try SpillFile(directory: directory) }
    }

    /// A trip attribute's column in the staging table (`t_name`).
    private func tripColumn(_ name: String) -> String { "t_" + name }

    /// The columns of the staging table, in COPY order.
    private var columns: [String] {
        [SQLiteLayout.idColumn] + Self.originColumns + layout.tables.rootColumns.map { tripColumn($0.name) }
    }


    /// Creates the staging tables and the trips' view in the open transaction (dropped at its end).
    func create(_ c: PGConnection, viewName: (String) -> String) throws {
        var definitions = ["\"id\" bigint NOT NULL", "\"origin_source\" integer", "\"origin_record\" bigint",
                           "\"origin_line\" integer", "\"origin_column\" integer"]
        definitions += layout.tables.rootColumns.map { "\(quoted(tripColumn($0.name))) \(PGLayout.sqlType($0.attribute.type))" }
        let doing = "cannot stage the trips"
        try c.execute("CREATE TEMP TABLE \(quoted(Self.table)) (\(definitions.joined(separator: ", "))) ON COMMIT DROP", doing: doing)
        let trips = ["\"id\""] + Self.originColumns.map(quoted) + layout.tables.rootColumns.map { "\(quoted(tripColumn($0.name))) AS \(quoted($0.name))" }
        try c.execute("CREATE TEMP VIEW \(quoted(viewName(layout.rootTable))) AS SELECT \(trips.joined(separator: ", ")) "
                      + "FROM \(quoted(Self.table))", doing: doing)
        for child in layout.children {
            var columns = ["\(quoted(layout.foreignKey)) bigint NOT NULL"]
            if child.isToMany { columns.append("\(quoted(SQLiteLayout.positionColumn)) integer NOT NULL") }
            columns += child.columns.map(PGLayout.definition)
            try c.execute("CREATE TEMP TABLE \(quoted(viewName(child.name))) (\(columns.joined(separator: ", "))) ON COMMIT DROP", doing: doing)
        }
    }

    /// Stages a trip under `id`, with its origin, and keeps its related rows in the files.
    mutating func append(_ object: ModelObject, id: Int64, origin: RecordOrigin, _ c: PGConnection) throws {
        rows.field(id)
        rows.field(Int64(sourceNumber(origin.source)))
        rows.field(Int64(origin.record))
        rows.field(origin.line.map { Value.int(Int64($0)) } ?? .null)
        rows.field(origin.column.map { Value.int(Int64($0)) } ?? .null)
        for column in layout.tables.rootColumns { rows.field(object.attributes[column.slot]) }
        rows.endRow()
        for (i, child) in layout.children.enumerated() {
            for (position, o) in object.relationships[child.slot].objects.enumerated() {
                childRow.removeAll()
                childRow.field(id)
                if child.isToMany { childRow.field(Int64(position)) }
                for column in child.columns { childRow.field(o.attributes[column.slot]) }
                childRow.endRow()
                var header = [UInt8](repeating: 0, count: 12)
                withUnsafeBytes(of: id.littleEndian) { header.replaceSubrange(0..<8, with: $0) }
                withUnsafeBytes(of: UInt32(childRow.bytes.count).littleEndian) { header.replaceSubrange(8..<12, with: $0) }
                try childFiles[i].append(header)
                try childFiles[i].append(childRow.bytes)
            }
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

    /// Hands the trip rows to libpq, starting the COPY when it is not open.
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

    /// Copies the related rows: those of trips whose ids are in `held` (sorted) into the staging
    /// table `heldTable` names, the rest into the store's tables. Can be run again (after a rollback
    /// to a savepoint): the files stay.
    func sendChildren(_ c: PGConnection, held: [Int64], heldTable: (SQLiteLayout.ChildTable) -> String) throws {
        for (i, child) in layout.children.enumerated() {
            try childFiles[i].flush()
            guard childFiles[i].size > 0 else { continue }
            try copyRows(c, i, into: child.name, child) { !PGStaging.contains(held, $0) }
            if !held.isEmpty { try copyRows(c, i, into: heldTable(child), child) { PGStaging.contains(held, $0) } }
        }
    }

    private func copyRows(_ c: PGConnection, _ index: Int, into table: String, _ child: SQLiteLayout.ChildTable,
                          where keep: (Int64) -> Bool) throws {
        let doing = "cannot insert the trips"
        try c.beginCopy("COPY \(quoted(table)) (\(layout.childColumns(child).map(quoted).joined(separator: ", "))) FROM STDIN", doing: doing)
        var reader = childFiles[index].reader()
        var out: [UInt8] = []
        out.reserveCapacity(Self.sendBytes + 4096)
        while let header = try reader.read(12) {
            var id: Int64 = 0, length: UInt32 = 0
            withUnsafeMutableBytes(of: &id) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(header)[0..<8])) }
            withUnsafeMutableBytes(of: &length) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(header)[8..<12])) }
            id = Int64(littleEndian: id)
            guard let row = try reader.read(Int(UInt32(littleEndian: length))) else {
                throw TripError(.io, "\(childFiles[index].directory): the temporary file of related rows ended early")
            }
            if keep(id) { out.append(contentsOf: row) }
            if out.count >= Self.sendBytes {
                try out.withUnsafeBytes { try c.send($0, doing: doing) }
                out.removeAll(keepingCapacity: true)
            }
        }
        try out.withUnsafeBytes { try c.send($0, doing: doing) }
        try c.endCopy(doing: doing)
    }

    /// Whether a sorted list holds an id (binary search).
    static func contains(_ sorted: [Int64], _ id: Int64) -> Bool {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < id { low = mid + 1 } else { high = mid }
        }
        return low < sorted.count && sorted[low] == id
    }
}
