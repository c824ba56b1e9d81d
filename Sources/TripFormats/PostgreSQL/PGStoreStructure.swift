import TripKit

/// What a PostgreSQL store's catalog says, in the connection's current schema (`current_schema()`:
/// the `--pg-schema`, else the first schema of the search path that exists): its tables, columns,
/// unique indexes and foreign keys, and so its version, told as `SQLiteStoreStructure` tells a SQLite
/// store's (`StoreVersionTelling`: the same evidence, the same messages).
struct PGStoreStructure {
    let connection: PGConnection
    init(_ connection: PGConnection) { self.connection = connection }

    /// The relations of the current schema that are tables (partitioned ones too), as SQL restricts.
    private static let inCurrentSchema = """
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
        """

    /// The current schema's name; a search path naming no schema that exists is `.noInput` (nothing
    /// to read, as a missing file).
    func currentSchema() throws -> String {
        if let schema = try connection.column("SELECT current_schema()").first ?? nil { return schema }
        let path = (try connection.column("SHOW search_path").first ?? nil) ?? ""
        throw TripError(.noInput, "\(connection.name): no schema of the search path (\(path)) exists",
                        notes: ["--pg-schema names the schema a store's tables are in"])
    }

    /// Makes unqualified names resolve in the current schema alone, so a table missing from it is
    /// never found in a later schema of the search path. Returns the schema's name.
    @discardableResult
    func confine() throws -> String {
        let schema = try currentSchema()
        _ = try connection.query("SELECT set_config('search_path', quote_ident($1), false)", [schema], doing: "cannot read the store")
        return schema
    }

    /// The tables of the current schema, in the order they were created.
    func tableNames() throws -> [String] {
        try connection.column("SELECT c.relname FROM pg_class c \(PGStoreStructure.inCurrentSchema) ORDER BY c.oid").map { $0 ?? "" }
    }

    /// A table's columns in order, each with its type's category (`pg_type.typcategory`: `D` dates
    /// and times, `N` numbers, `B` Booleans, `S` strings); empty for a table the schema lacks.
    func typedColumns(of table: String) throws -> [(name: String, category: String)] {
        let r = try connection.query("""
            SELECT a.attname, t.typcategory FROM pg_class c
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            JOIN pg_type t ON t.oid = a.atttypid
            \(PGStoreStructure.inCurrentSchema) AND c.relname = $1 ORDER BY a.attnum
            """, [table], doing: "cannot read the store")
        return (0..<r.rowCount).map { (r.text($0, 0), r.text($0, 1)) }
    }

    func columns(of table: String) throws -> [String] {
        try typedColumns(of: table).map(\.name)
    }

    /// The columns of each unique index of a table that holds for every row (no partial index, no
    /// expression, no index left invalid); the primary key is left out, as a SQLite store's row id
    /// has no index.
    func uniqueIndexes(of table: String) throws -> [[String]] {
        let r = try connection.query("""
            SELECT i.indexrelid, a.attname FROM pg_class c
            JOIN pg_index i ON i.indrelid = c.oid
            CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ordinal)
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
            \(PGStoreStructure.inCurrentSchema) AND c.relname = $1
              AND i.indisunique AND NOT i.indisprimary AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
            ORDER BY i.indexrelid, k.ordinal
            """, [table], doing: "cannot read the store")
        var out: [[String]] = []
        var index = ""
        for row in 0..<r.rowCount {
            if r.text(row, 0) != index { out.append([]); index = r.text(row, 0) }
            out[out.count - 1].append(r.text(row, 1))
        }
        return out
    }

    /// The foreign keys of a table, a row per column, with their ON DELETE actions spelled as SQL
    /// spells them (`CASCADE`, `SET NULL`, `RESTRICT`, `NO ACTION`, `SET DEFAULT`).
    func foreignKeys(of table: String) throws -> [StoreForeignKey] {
        let r = try connection.query("""
            SELECT a.attname, rc.relname, ra.attname, k.confdeltype FROM pg_class c
            JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'f'
            JOIN pg_class rc ON rc.oid = k.confrelid
            CROSS JOIN LATERAL unnest(k.conkey, k.confkey) WITH ORDINALITY AS u(attnum, refnum, ordinal)
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = u.attnum
            JOIN pg_attribute ra ON ra.attrelid = rc.oid AND ra.attnum = u.refnum
            \(PGStoreStructure.inCurrentSchema) AND c.relname = $1
            ORDER BY k.oid, u.ordinal
            """, [table], doing: "cannot read the store")
        let actions = ["a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"]
        return (0..<r.rowCount).map { row in
            StoreForeignKey(table: table, column: r.text(row, 0), referencedTable: r.text(row, 1),
                             referencedColumn: r.text(row, 2), onDelete: actions[r.text(row, 3)] ?? r.text(row, 3))
        }
    }

    /// Tells the store's version: from tripconv's metadata where the current schema has it, else from
    /// the trips table's columns and whether its name has a single-column unique index. Confines the
    /// connection's search path to the current schema first.
    func detect() throws -> DetectedStore {
        let schema = try confine()
        let telling = StoreVersionTelling(name: connection.name, tables: try tableNames(), container: "schema \(quoted(schema))")
        try telling.requireRootTable()
        let rootTable = StoreVersionTelling.rootTable
        let uniqueSingles = Set(try uniqueIndexes(of: rootTable).filter { $0.count == 1 }.map { $0[0] })
        return try telling.detect(columns: try columns(of: rootTable), uniqueSingles: uniqueSingles, metadataVersion: {
            let r = try connection.query("SELECT \"value\" FROM \(quoted(StoreLayout.metadataTable)) WHERE \"key\" = $1",
                                         [StoreLayout.versionKey], doing: "cannot read the store's metadata")
            return r.rowCount > 0 && !r.isNull(0, 0) ? r.text(0, 0) : nil
        }, columnsOf: columns(of:))
    }
}
