import TripKit

/// Writes the objects of any model as a tripconv SQLite store (`ObjectStoreLayout`): a table per
/// root entity, a column per attribute and to-one, join tables, the model in `tripconv_model`.
///
/// As the trips' store writer, the store is built in a temporary file beside the target, with no
/// journal, and renamed over it by `finish()`: complete or absent. A target that exists is replaced
/// only when it is a store of objects tripconv wrote. Foreign keys stay off while it is filled (an
/// object may name one of an entity written later); the tables keep their REFERENCES and ON DELETE
/// rules for whoever opens the store with foreign keys on. Memory: one object, and a prepared
/// statement per entity and per join table (SQLite's page cache is bounded at 32 MiB).
final class SQLiteObjectWriter: ObjectRecordWriter {
    private let path: String
    private var temporaryPath: String?
    private var connection: SQLiteConnection?
    private var layout: ObjectStoreLayout?
    /// Per entity: its INSERT, made at its first object.
    private var inserts: [SQLiteStatement?] = []
    /// Per entity, per relationship slot: the INSERT of its join rows.
    private var joinInserts: [[SQLiteStatement?]] = []
    private var isDone = false

    /// A writer of the store at `path`.
    init(path: String) { self.path = path }

    deinit { if !isDone { abort() } }

    func begin(_ model: ObjectModel) throws {
        let layout = try ObjectStoreLayout(model, dialect: .sqlite)
        self.layout = layout
        if FileSystem.exists(path) && !SQLiteObjectReader.isObjectStore(path) {
            throw TripError(.cantCreate, "\(path): exists and is not a store of objects tripconv wrote; it is left as it is",
                            notes: ["name a new file, or remove this one first"])
        }
        let temporary = try TemporaryPaths.makeStoreFile(beside: path)
        temporaryPath = temporary
        do {
            let c = try SQLiteConnection(path: temporary, access: .writing)
            connection = c
            try c.execute("""
                PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;
                PRAGMA cache_size = -32768; PRAGMA foreign_keys = OFF
                """, doing: "cannot create the store")
            try c.execute("BEGIN", doing: "cannot create the store")
            try c.execute(ObjectStoreLayout.modelTableStatement, doing: "cannot create the store")
            let row = try c.prepare("INSERT INTO \(quoted(ObjectStoreLayout.modelTable)) VALUES (?1, ?2)", doing: "cannot create the store")
            for (name, value) in [("layout", ObjectStoreLayout.layoutVersion), ("model", JSONText.Node.object(ObjectModelJSON.node(model)).render())] {
                try row.bind(1, name); try row.bind(2, value); try row.run()
            }
            for sql in layout.statements { try c.execute(sql, doing: "cannot create the store") }
        } catch {
            abort()
            throw error.renamingPath(temporaryPath, to: path)
        }
        inserts = Array(repeating: nil, count: model.entities.count)
        joinInserts = model.entities.indices.map { Array(repeating: nil, count: layout.toManys[$0].count) }
    }

    func write(_ object: ObjectRecord) throws {
        guard let layout, let connection else { throw TripError.usage("the store writer is given objects before begin(_:)") }
        let e = object.entity
        guard e >= 0, e < inserts.count else { throw TripError.data("\(path): an object of entity \(e), which the model does not have") }
        do {
            let insert = try inserts[e] ?? insertStatement(e, layout, connection)
            inserts[e] = insert
            try insert.bind(1, object.key)
            var n: Int32 = 2
            if layout.isShared[e] { try insert.bind(n, layout.model.entities[e].name); n += 1 }
            for (slot, column) in layout.attributeColumns[e].enumerated() where column != nil {
                try SQLiteObjectWriter.bind(insert, n, slot < object.attributes.count ? object.attributes[slot] : .null)
                n += 1
            }
            for (slot, column) in layout.toOneColumns[e].enumerated() where column != nil {
                if slot < object.relationships.count, let target = object.relationships[slot].first {
                    try insert.bind(n, target.key)
                } else {
                    try insert.bindNull(n)
                }
                n += 1
            }
            try insert.run()
            for (slot, toMany) in layout.toManys[e].enumerated() where toMany?.isJoin == true && slot < object.relationships.count {
                let statement = try joinInserts[e][slot] ?? joinStatement(toMany!, connection)
                joinInserts[e][slot] = statement
                for (position, target) in object.relationships[slot].enumerated() {
                    try statement.bind(1, object.key); try statement.bind(2, target.key)
                    if toMany!.orderColumn != nil { try statement.bind(3, Int64(position + 1)) }
                    try statement.run()
                }
            }
        } catch {
            throw error.renamingPath(temporaryPath, to: path)
        }
    }

    private func insertStatement(_ e: Int, _ layout: ObjectStoreLayout, _ c: SQLiteConnection) throws -> SQLiteStatement {
        var columns = [ObjectStoreLayout.keyColumn]
        if layout.isShared[e] { columns.append(ObjectStoreLayout.entityColumn) }
        columns += layout.attributeColumns[e].compactMap { $0 } + layout.toOneColumns[e].compactMap { $0 }
        let sql = "INSERT INTO \(quoted(layout.tableOf[e])) (\(columns.map(quoted).joined(separator: ", "))) VALUES ("
            + columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ") + ")"
        return try c.prepare(sql, doing: "cannot write the store")
    }

    /// The INSERT of a join row from one side: the pair once, each side setting its own order.
    private func joinStatement(_ t: ObjectStoreLayout.ToMany, _ c: SQLiteConnection) throws -> SQLiteStatement {
        let key = t.isReversed ? [t.targetColumn, t.ownerColumn] : [t.ownerColumn, t.targetColumn]
        let columns = [t.ownerColumn, t.targetColumn] + (t.orderColumn.map { [$0] } ?? [])
        let update = t.orderColumn.map { "DO UPDATE SET \(quoted($0)) = excluded.\(quoted($0))" } ?? "DO NOTHING"
        let sql = "INSERT INTO \(quoted(t.table)) (\(columns.map(quoted).joined(separator: ", "))) VALUES ("
            + columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ") + ") ON CONFLICT (\(key.map(quoted).joined(separator: ", "))) \(update)"
        return try c.prepare(sql, doing: "cannot write the store")
    }

    /// Binds a value as its column's type holds it (`ObjectStoreDialect.sqlite`): a Date and a UUID
    /// as their text, a Double that is not a number as the text `NaN` (SQLite stores a NaN as NULL).
    static func bind(_ s: SQLiteStatement, _ n: Int32, _ value: ObjectValue) throws {
        switch value {
        case .null: try s.bindNull(n)
        case .string(let t), .decimal(let t), .url(let t): try s.bind(n, t)
        case .int(let i): try s.bind(n, i)
        case .double(let d): if d.isNaN { try s.bind(n, "NaN") } else { try s.bind(n, double: d) }
        case .bool(let b): try s.bind(n, Int64(b ? 1 : 0))
        case .date, .uuid: try s.bind(n, ObjectValueText.text(value)!)
        case .data(let bytes): try s.bind(n, blob: bytes)
        }
    }

    func finish() throws {
        guard !isDone, let connection, let temporaryPath else { throw TripError.usage("the store writer is finished before begin(_:)") }
        do {
            inserts = []; joinInserts = []
            try connection.execute("COMMIT", doing: "cannot commit")
            try connection.execute("PRAGMA journal_mode = DELETE", doing: "cannot finish the store")
            self.connection = nil
            try FileSystem.sync(temporaryPath, name: path)
            try FileSystem.rename(temporaryPath, to: path)
            isDone = true
        } catch {
            abort()
            throw error.renamingPath(temporaryPath, to: path)
        }
    }

    func abort() {
        guard !isDone else { return }
        isDone = true
        inserts = []; joinInserts = []
        connection?.rollbackQuietly()
        connection = nil
        if let temporaryPath {
            FileSystem.remove(temporaryPath)
            FileSystem.remove(temporaryPath + "-journal")
        }
    }
}
