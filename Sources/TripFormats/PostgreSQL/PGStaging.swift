import TripKit

/// Where a load into a store with a unique name waits until `finish()`, and how its related rows
/// go straight in.
///
/// Trips come a batch at a time (`batchTrips`, or 8 MiB of rows). Each batch is sent in three COPYs:
/// - the trips into one temporary table (`tripconv_stage`, seen through the view
///   `tripconv_stage_trips` with the trips table's column names), with their origins;
/// - their related rows straight into the store's tables, naming the trips' reserved ids. The
///   trips are not there yet: the load runs with its foreign keys deferred (`SET CONSTRAINTS ALL
///   DEFERRED`; the store's foreign keys are `DEFERRABLE INITIALLY IMMEDIATE`), and they are checked
///   at the commit.
/// So the server writes the related rows (most of a load's rows) while the trips are still being
/// read, and a loader's heaviest work never waits for another loader. Once the trips are in,
/// `holdChildren` moves the related rows of the trips that were not inserted (their names were
/// stored: merged, replaced, kept or refused) into temporary tables (`tripconv_stage_bucket_list_items`,
/// …) for the policy.
///
/// Memory: one batch of COPY rows, and the one `PGSender` is sending.
struct PGStaging {
    let layout: PGLayout
    private var batch: PGCopyBatch
    /// Trips staged so far.
    private(set) var trips = 0
    /// The sources of the trips' origins (the inputs), numbered: a staged row holds the number.
    private(set) var sources: [String] = []
    private var lastSource: (name: String, number: Int)?

    static let table = "tripconv_stage"
    static let originColumns = ["origin_source", "origin_record", "origin_line", "origin_column"]

    init(_ layout: PGLayout) {
        self.layout = layout
        batch = PGCopyBatch(layout)
    }

    /// A trip attribute's column in the staging table (`t_name`).
    private func tripColumn(_ name: String) -> String { "t_" + name }

    /// The columns of the staging table, in COPY order.
    private var columns: [String] {
        [StoreLayout.idColumn] + Self.originColumns + layout.tables.rootColumns.map { tripColumn($0.name) }
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
            if child.isToMany { columns.append("\(quoted(StoreLayout.positionColumn)) integer NOT NULL") }
            columns += child.columns.map(PGLayout.definition)
            try c.execute("CREATE TEMP TABLE \(quoted(viewName(child.name))) (\(columns.joined(separator: ", "))) ON COMMIT DROP", doing: doing)
        }
    }

    /// Stages a trip under `id`, with its origin, and its related rows; sends the batch when full.
    mutating func append(_ object: ModelObject, id: Int64, origin: RecordOrigin, _ c: PGConnection, _ sender: PGSender?) throws {
        let source = Int64(sourceNumber(origin.source))
        batch.append(object, id: id) { rows in
            rows.field(source)
            rows.field(Int64(origin.record))
            rows.field(origin.line.map { Value.int(Int64($0)) } ?? .null)
            rows.field(origin.column.map { Value.int(Int64($0)) } ?? .null)
        }
        trips += 1
        if batch.trips.rows >= PGRecordWriter.batchTrips || batch.exceeds(8 << 20) { try send(c, sender) }
    }

    private mutating func sourceNumber(_ source: String) -> Int {
        if let last = lastSource, last.name == source { return last.number }
        let number = sources.firstIndex(of: source) ?? sources.count
        if number == sources.count { sources.append(source) }
        lastSource = (source, number)
        return number
    }

    /// Sends the batch: the trips into the staging table, the related rows into the store's tables;
    /// through `sender` when there is one (the batch goes, and a new one is begun).
    mutating func send(_ c: PGConnection, _ sender: PGSender?) throws {
        try batch.send(c, via: sender, tripsTable: Self.table, tripColumns: columns) { $0.name }
    }

    /// Moves the related rows of the trips not inserted (the ids in the temporary table `held`) from
    /// the store's tables into the staging table `heldTable` names. Can be run again (after a
    /// rollback to a savepoint).
    func holdChildren(_ c: PGConnection, held: String, heldTable: (StoreLayout.ChildTable) -> String) throws {
        let key = quoted(layout.foreignKey)
        for child in layout.children {
            let names = layout.childColumns(child).map(quoted)
            try c.execute("""
                WITH moved AS (DELETE FROM \(quoted(child.name)) r USING \(quoted(held)) h WHERE r.\(key) = h."id"
                               RETURNING \(names.map { "r." + $0 }.joined(separator: ", ")))
                INSERT INTO \(quoted(heldTable(child))) (\(names.joined(separator: ", "))) SELECT \(names.joined(separator: ", ")) FROM moved
                """, doing: "cannot stage the trips")
        }
    }
}
