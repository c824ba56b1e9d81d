import TripKit

/// Writes the objects of any model as a tripconv PostgreSQL store (`ObjectStoreLayout`, `.postgresql`
/// dialect) in the connection's current schema (`--pg-schema`, created when missing; else the search
/// path's first), in one transaction: complete or absent.
///
/// A schema that holds tables is written only when they are a store of objects tripconv wrote (its
/// `tripconv_model`, the tables its model gives and the history a migration in place adds, nothing
/// else): those are dropped and made again in the same transaction, as the SQLite store replaces its
/// file (`convert` appends to such a store instead, through `ObjectStoreAppend`). Any other table
/// there (a trips store, another tool's) is refused, `.cantCreate`, and left as it is. Writers of one
/// schema take turns under the advisory locks the trips' writer takes (creation's, then the store's, exclusive).
///
/// Rows go in with `COPY … FROM STDIN`, a buffer per entity sent when it passes `bufferBytes`; join
/// rows go to a temporary table per join table, moved in with one `INSERT … SELECT … GROUP BY` at
/// `finish()` (a many-to-many pair written from both sides is one row, each side's order kept).
/// Foreign keys are `DEFERRABLE INITIALLY DEFERRED`, checked at the commit. Memory: one buffer per
/// entity and per join table, each at most `bufferBytes` past one row.
final class PGObjectWriter: ObjectRecordWriter {
    static let bufferBytes = 1 << 20
    private let address: String
    private let schema: String?
    private var connection: PGConnection?
    private var layout: ObjectStoreLayout?
    /// Per entity: its COPY rows and columns.
    private var rows: [PGCopyRows] = []
    private var columns: [[String]] = []
    /// Per join table: its staging table.
    private var joinStages: [String: String] = [:]
    /// Per join table and side (`table`, a NUL, the side's owner column): the rows, and the columns they fill.
    private var joinRows: [String: (rows: PGCopyRows, columns: [String])] = [:]
    private var isDone = false

    /// The connection the writer was given (its transaction the caller's), nil when it makes its own.
    private let given: PGConnection?

    /// A writer of the store at `address`, in `schema` when given.
    init(address: String, schema: String?) { self.address = address; self.schema = schema; given = nil }

    /// A writer into the current schema of `connection`, inside the transaction its caller holds and
    /// ends (`PGObjectStoreSwap`'s scratch schema): no BEGIN, lock, clearing or COMMIT of its own.
    init(within connection: PGConnection) { address = connection.name; schema = nil; given = connection }

    deinit { if !isDone { abort() } }

    private var name: String { connection?.name ?? Format.redactedPostgreSQLAddress(address) }

    func begin(_ model: ObjectModel) throws {
        let layout = try ObjectStoreLayout(model, dialect: .postgresql)
        self.layout = layout
        let c = try given ?? PGConnection(address, schema: schema)
        connection = c
        do {
            if given == nil {
                try c.execute("BEGIN", doing: "cannot create the store")
                if let schema { try c.execute("CREATE SCHEMA IF NOT EXISTS \(quoted(schema))", doing: "cannot create the store") }
                let structure = PGStoreStructure(c)
                try structure.confine()
                try c.execute("SELECT pg_advisory_xact_lock(\(PGRecordWriter.createLockKey)); SELECT pg_advisory_xact_lock(\(PGRecordWriter.lockKey))",
                              doing: "cannot lock the store")
                try PGObjectWriter.clear(c, structure.tableNames())
            }
            try c.execute(ObjectStoreLayout.modelTableStatement, doing: "cannot create the store")
            for (key, value) in [("layout", ObjectStoreLayout.layoutVersion), ("model", JSONText.Node.object(ObjectModelJSON.node(model)).render())] {
                _ = try c.query("INSERT INTO \(quoted(ObjectStoreLayout.modelTable)) VALUES ($1, $2)", [key, value], doing: "cannot create the store")
            }
            for sql in layout.statements { try c.execute(sql, doing: "cannot create the store") }
            for (i, table) in Set(layout.toManys.joined().compactMap { $0?.isJoin == true ? $0!.table : nil }).sorted().enumerated() {
                let stage = "tripconv_join_\(i)"
                try c.execute("CREATE TEMPORARY TABLE \(quoted(stage)) (LIKE \(quoted(table))) ON COMMIT DROP", doing: "cannot create the store")
                joinStages[table] = stage
            }
        } catch {
            abort()
            throw error
        }
        rows = model.entities.map { _ in PGCopyRows() }
        columns = model.entities.indices.map { e in
            [ObjectStoreLayout.keyColumn] + (layout.isShared[e] ? [ObjectStoreLayout.entityColumn] : [])
                + layout.attributeColumns[e].compactMap { $0 } + layout.toOneColumns[e].compactMap { $0 }
        }
    }

    /// The tripconv store of objects in the current schema: its tables (those its `tripconv_model`
    /// gives, that table, and the history a migration in place adds) and views; and the schema's
    /// other tables, among `tables`.
    static func relations(_ c: PGConnection, _ tables: [String]) -> (ours: Set<String>, views: [String], others: [String]) {
        var ours: Set<String> = []
        var views: [String] = []
        if tables.contains(ObjectStoreLayout.modelTable), let old = try? ObjectStoreLayout(PGObjectReader.model(c), dialect: .postgresql) {
            ours = Set(old.tableOf + old.toManys.joined().compactMap { $0?.isJoin == true ? $0!.table : nil }
                       + [ObjectStoreLayout.modelTable, StoreLayout.migrationsTable])
            views = old.model.entities.map(\.name).filter { !ours.contains($0) }
        }
        return (ours, views, tables.filter { !ours.contains($0) })
    }

    /// Drops the tripconv store the schema holds (with `keepingHistory`, all but its history table),
    /// or refuses a schema holding any other table.
    static func clear(_ c: PGConnection, _ tables: [String], keepingHistory: Bool = false) throws {
        guard !tables.isEmpty else { return }
        let (ours, views, others) = relations(c, tables)
        guard others.isEmpty else {
            throw TripError(.cantCreate, "\(c.name): holds tables that are not a store of objects tripconv wrote (\(others.prefix(5).joined(separator: ", "))"
                            + "\(others.count > 5 ? ", …" : "")); they are left as they are",
                            notes: ["name another schema with --pg-schema (it is created), or drop these tables first"])
        }
        for v in views { try c.execute("DROP VIEW IF EXISTS \(quoted(v)) CASCADE", doing: "cannot replace the store") }
        for t in ours.sorted() where !(keepingHistory && t == StoreLayout.migrationsTable) {
            try c.execute("DROP TABLE IF EXISTS \(quoted(t)) CASCADE", doing: "cannot replace the store")
        }
    }

    func write(_ object: ObjectRecord) throws {
        guard let layout, let connection else { throw TripError.usage("the store writer is given objects before begin(_:)") }
        let e = object.entity
        guard e >= 0, e < rows.count else { throw TripError.data("\(name): an object of entity \(e), which the model does not have") }
        do {
            rows[e].field(object.key)
            if layout.isShared[e] { rows[e].field(layout.model.entities[e].name) }
            let attributes = layout.model.allAttributes(of: e)
            for (slot, column) in layout.attributeColumns[e].enumerated() where column != nil {
                let value = slot < object.attributes.count ? object.attributes[slot] : .null
                guard let text = PGObjectWriter.text(value, attributes[slot].kind) else { rows[e].field(Value.null); continue }
                if text.utf8.contains(0) {
                    throw TripError.data("\(object.origin.source) record \(object.origin.record): \(layout.model.entities[e].name).\(attributes[slot].name): "
                                         + "PostgreSQL text cannot hold a NUL character (U+0000)")
                }
                rows[e].field(text)
            }
            for (slot, column) in layout.toOneColumns[e].enumerated() where column != nil {
                if slot < object.relationships.count, let target = object.relationships[slot].first {
                    rows[e].field(target.key)
                } else {
                    rows[e].field(Value.null)
                }
            }
            rows[e].endRow()
            if rows[e].bytes.count > PGObjectWriter.bufferBytes { try send(&rows[e], connection, layout.tableOf[e], columns[e]) }
            for (slot, toMany) in layout.toManys[e].enumerated() where toMany?.isJoin == true && slot < object.relationships.count {
                let t = toMany!, side = t.table + "\u{0}" + t.ownerColumn
                // Taken out of the dictionary while it grows, not copied: a copy would share the buffer,
                // and the first row added would copy all of it (up to `bufferBytes`) on every object.
                var join = joinRows.removeValue(forKey: side)
                    ?? (PGCopyRows(), [t.ownerColumn, t.targetColumn] + (t.orderColumn.map { [$0] } ?? []))
                for (position, target) in object.relationships[slot].enumerated() {
                    join.rows.field(object.key); join.rows.field(target.key)
                    if t.orderColumn != nil { join.rows.field(Int64(position + 1)) }
                    join.rows.endRow()
                }
                if join.rows.bytes.count > PGObjectWriter.bufferBytes { try send(&join.rows, connection, joinStages[t.table]!, join.columns) }
                joinRows[side] = join
            }
        } catch {
            abort()
            throw error
        }
    }

    private func send(_ rows: inout PGCopyRows, _ c: PGConnection, _ table: String, _ columns: [String]) throws {
        guard rows.rows > 0 else { return }
        try c.beginCopy("COPY \(quoted(table)) (\(columns.map(quoted).joined(separator: ", "))) FROM STDIN", doing: "cannot write the store")
        try rows.bytes.withUnsafeBytes { try c.send($0, doing: "cannot write the store") }
        try c.endCopy(doing: "cannot write the store")
        rows.removeAll()
    }

    /// The COPY text of a value in its column (`ObjectStoreDialect.postgresql`), nil for NULL: bytea
    /// as `\x` and hexadecimal digits (a string in a bytea column, its UTF-8), Booleans `t`/`f`.
    static func text(_ value: ObjectValue, _ kind: AttributeKind) -> String? {
        func hex(_ bytes: [UInt8]) -> String {
            let digits = Array("0123456789abcdef")
            return "\\x" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
        }
        switch value {
        case .null: return nil
        case .data(let bytes): return hex(bytes)
        case .bool(let b): return b ? "t" : "f"
        case .string(let s) where ObjectStoreDialect.postgresql.columnType(kind) == "bytea": return hex(Array(s.utf8))
        default: return ObjectValueText.text(value)
        }
    }

    func finish() throws {
        guard !isDone, let connection, let layout else { throw TripError.usage("the store writer is finished before begin(_:)") }
        do {
            for e in rows.indices { try send(&rows[e], connection, layout.tableOf[e], columns[e]) }
            for (side, join) in joinRows.sorted(by: { $0.key < $1.key }) {
                var rows = join.rows
                try send(&rows, connection, joinStages[String(side.prefix { $0 != "\u{0}" })]!, join.columns)
            }
            for (table, stage) in joinStages.sorted(by: { $0.key < $1.key }) {
                let names = try PGStoreStructure(connection).columns(of: table)
                let keys = names.prefix(2).map(quoted), orders = names.dropFirst(2).map { "max(\(quoted($0)))" }
                try connection.execute("INSERT INTO \(quoted(table)) (\(names.map(quoted).joined(separator: ", "))) SELECT "
                                       + "\((keys + orders).joined(separator: ", ")) FROM \(quoted(stage)) GROUP BY \(keys.joined(separator: ", "))",
                                       doing: "cannot write the store")
            }
            if given == nil { try connection.execute("COMMIT", doing: "cannot commit the store") }
            isDone = true
            self.connection = nil
        } catch {
            abort()
            throw error
        }
    }

    func abort() {
        guard !isDone else { return }
        isDone = true
        rows = []; joinRows = [:]
        if given == nil { try? connection?.execute("ROLLBACK") }
        connection = nil
    }
}
