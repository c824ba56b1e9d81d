import TripKit

/// Reads the objects of a tripconv SQLite store of any model (`ObjectStoreLayout`, written by
/// `SQLiteObjectWriter`) with the model the store carries: entity by entity in the model's order,
/// each entity's objects in key order, at one snapshot (`StoreSnapshot`: a read transaction).
///
/// Memory is bounded: one row of each open statement and the object being built; a to-many is a
/// statement ordered by owner, merge-joined with the owner rows (as `CoreDataObjectReader`).
final class SQLiteObjectReader: ObjectRecordReader {
    let model: ObjectModel
    private let path: String
    private let snapshot: StoreSnapshot
    private let connection: SQLiteConnection
    private let layout: ObjectStoreLayout
    private var position = 0
    private var cursor: ObjectStoreEntityCursor?
    private var count = 0
    private var isDone = false

    /// Whether `path` is a SQLite file with tripconv's model table.
    static func isObjectStore(_ path: String) -> Bool {
        // Opened immutable: a look that reads no -wal and writes nothing beside the file, not even a -shm
        // (a Core Data store's -wal is read as `StoreSnapshot` reads it; tripconv writes its stores in
        // rollback mode, with the model table in the file itself).
        guard StoreModel.isStoreFile(path),
              let c = try? SQLiteConnection(path: path, access: .reading, uri: "file:" + SQLiteConnection.uriPath(path) + "?immutable=1"),
              let n = try? c.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(ObjectStoreLayout.modelTable)'")
        else { return false }
        return n == 1
    }

    /// The model a tripconv store carries; `.data` when it has none or it cannot be read.
    static func model(storeAt path: String) throws -> ObjectModel {
        let snapshot = try StoreSnapshot(path: path, busyTimeout: 5000)
        defer { snapshot.end() }
        return try model(snapshot.connection, path: path)
    }

    private static func model(_ c: SQLiteConnection, path: String) throws -> ObjectModel {
        let s: SQLiteStatement
        do {
            s = try c.prepare("SELECT \"value\" FROM \(quoted(ObjectStoreLayout.modelTable)) WHERE \"name\" = 'model'")
        } catch {
            throw TripError.data("\(path): not a store of objects tripconv wrote: it has no readable \(ObjectStoreLayout.modelTable) table")
        }
        guard try s.step() else { throw TripError.data("\(path): table \(ObjectStoreLayout.modelTable) has no row 'model'") }
        let text = s.bytes(0)
        s.reset()
        return try ObjectModelJSON.read(text: text, name: "\(path): table \(ObjectStoreLayout.modelTable) row 'model'")
    }

    /// Opens the store at `path` to read its objects with the model it carries.
    /// The store is read as `StoreSnapshot` reads one: its `-wal` honoured, none of its files written.
    init(path: String, busyTimeoutMilliseconds: Int = 5000, temporaryDirectory: String? = nil) throws {
        self.path = path
        snapshot = try StoreSnapshot(path: path, busyTimeout: Int32(clamping: busyTimeoutMilliseconds), temporaryDirectory: temporaryDirectory)
        connection = snapshot.connection
        do {
            model = try SQLiteObjectReader.model(connection, path: path)
            layout = try ObjectStoreLayout(model, dialect: .sqlite)
        } catch {
            snapshot.end()
            throw error
        }
    }

    /// Each entity's objects, by name (before the first `next()`).
    func objectCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for (e, entity) in model.entities.enumerated() {
            let filter = layout.isShared[e] ? " WHERE \(quoted(ObjectStoreLayout.entityColumn)) = '\(entity.name.replacing("'", with: "''"))'" : ""
            counts[entity.name] = Int(try connection.integer("SELECT count(*) FROM \(quoted(layout.tableOf[e]))\(filter)") ?? 0)
        }
        return counts
    }

    func next() throws -> ObjectReadItem? {
        guard !isDone else { return nil }
        do {
            while position < model.entities.count {
                if cursor == nil { cursor = try ObjectStoreEntityCursor(connection, layout, position, path: path) }
                if let object = try cursor!.next(record: count + 1) {
                    count += 1
                    return .object(object)
                }
                cursor = nil
                position += 1
            }
        } catch {
            finish()
            throw error
        }
        finish()
        return nil
    }

    private func finish() {
        isDone = true
        cursor = nil
        snapshot.end()
    }
}

/// The objects of one entity of a tripconv store: its rows in key order and, per to-many, a
/// statement in owner order.
final class ObjectStoreEntityCursor {
    private final class List {
        let statement: SQLiteStatement
        var hasRow = false
        var owner: Int64 = 0
        init(_ statement: SQLiteStatement) throws { self.statement = statement; try advance() }
        func advance() throws {
            hasRow = try statement.step()
            if hasRow { owner = statement.int64(0) }
        }
    }

    private let entity: Int
    private let model: ObjectModel
    private let path: String
    private let rows: SQLiteStatement
    private let kinds: [AttributeKind?]
    private let toOnes: [Bool]
    private let lists: [List?]
    /// Per relationship slot: the destination entity, for a reference whose row names none.
    private let destinations: [Int]

    init(_ c: SQLiteConnection, _ layout: ObjectStoreLayout, _ e: Int, path: String) throws {
        entity = e; model = layout.model; self.path = path
        let attributes = model.allAttributes(of: e)
        kinds = layout.attributeColumns[e].enumerated().map { $1 == nil ? nil : attributes[$0].kind }
        toOnes = layout.toOneColumns[e].map { $0 != nil }
        destinations = layout.destinations[e].map { $0 ?? 0 }
        let k = quoted(ObjectStoreLayout.keyColumn), ent = quoted(ObjectStoreLayout.entityColumn)
        /// The expression of a destination's entity name: its row's `_entity`, or NULL where its table holds one entity.
        func entityOf(_ d: Int?, _ alias: String) -> String { d.map { layout.isShared[$0] } == true ? "\(alias).\(ent)" : "NULL" }
        var selected = ["o.\(k)"] + layout.attributeColumns[e].compactMap { $0.map { "o." + quoted($0) } }
        var joins: [String] = []
        for (slot, column) in layout.toOneColumns[e].enumerated() {
            guard let column else { continue }
            let d = layout.destinations[e][slot]
            selected += ["o." + quoted(column), entityOf(d, "t\(slot)")]
            if let d, layout.isShared[d] { joins.append("LEFT JOIN \(quoted(layout.tableOf[d])) AS t\(slot) ON t\(slot).\(k) = o.\(quoted(column))") }
        }
        let filter = layout.isShared[e] ? " WHERE o.\(ent) = '\(model.entities[e].name.replacing("'", with: "''"))'" : ""
        rows = try c.prepare("SELECT \(selected.joined(separator: ", ")) FROM \(quoted(layout.tableOf[e])) AS o \(joins.joined(separator: " "))"
                             + "\(filter) ORDER BY o.\(k)")
        lists = try layout.toManys[e].enumerated().map { slot, toMany in
            guard let t = toMany else { return nil }
            let d = layout.destinations[e][slot]
            let sql: String
            if t.isJoin {
                let join = d.map { layout.isShared[$0] } == true ? "LEFT JOIN \(quoted(layout.tableOf[d!])) AS t ON t.\(k) = j.\(quoted(t.targetColumn))" : ""
                let order = ["j." + quoted(t.ownerColumn)] + (t.orderColumn.map { ["j." + quoted($0)] } ?? []) + ["j." + quoted(t.targetColumn)]
                sql = "SELECT j.\(quoted(t.ownerColumn)), j.\(quoted(t.targetColumn)), \(entityOf(d, "t")) FROM \(quoted(t.table)) AS j \(join) "
                    + "ORDER BY \(order.joined(separator: ", "))"
            } else {
                sql = "SELECT t.\(quoted(t.ownerColumn)), t.\(k), \(entityOf(d, "t")) FROM \(quoted(t.table)) AS t "
                    + "WHERE t.\(quoted(t.ownerColumn)) IS NOT NULL ORDER BY t.\(quoted(t.ownerColumn)), t.\(k)"
            }
            return try List(try c.prepare(sql))
        }
    }

    /// The next object of the entity, nil after its last.
    func next(record: Int) throws -> ObjectRecord? {
        guard try rows.step() else { return nil }
        let key = rows.int64(0)
        var values: [ObjectValue] = []
        values.reserveCapacity(kinds.count)
        var n: Int32 = 1
        for kind in kinds {
            guard let kind else { values.append(.null); continue }
            values.append(ObjectStoreEntityCursor.value(rows, n, kind))
            n += 1
        }
        var references: [[ObjectReference]] = []
        references.reserveCapacity(toOnes.count)
        for slot in toOnes.indices {
            if toOnes[slot] {
                references.append(rows.isNull(n) ? [] : [reference(rows, n, fallback: destinations[slot])])
                n += 2
            } else if let list = lists[slot] {
                while list.hasRow, list.owner < key { try list.advance() }
                var out: [ObjectReference] = []
                while list.hasRow, list.owner == key {
                    out.append(reference(list.statement, 1, fallback: destinations[slot]))
                    try list.advance()
                }
                references.append(out)
            } else {
                references.append([])
            }
        }
        return ObjectRecord(entity: entity, key: key, attributes: values, relationships: references,
                            origin: RecordOrigin(source: path, record: record))
    }

    /// The reference in columns `n` (key) and `n + 1` (the entity's name, NULL where the
    /// destination's table holds one entity, or the row is not there).
    private func reference(_ s: SQLiteStatement, _ n: Int32, fallback: Int) -> ObjectReference {
        let entity = s.isNull(n + 1) ? fallback : (model.entityIndex(s.text(n + 1)) ?? fallback)
        return ObjectReference(entity: entity, key: s.int64(n))
    }

    /// A column's value as an attribute of `kind` (`ObjectStoreDialect.sqlite`'s types).
    static func value(_ s: SQLiteStatement, _ n: Int32, _ kind: AttributeKind) -> ObjectValue {
        switch s.storage(n) {
        case .null: return .null
        case .integer:
            let i = s.int64(n)
            switch kind {
            case .bool: return .bool(i != 0)
            case .double, .float: return .double(Double(i))
            case .date: return .date(Double(i))
            default: return .int(i)
            }
        case .real: return kind == .date ? .date(s.double(n)) : .double(s.double(n))
        case .blob: return .data(s.bytes(n))
        case .text:
            let text = s.text(n)
            switch kind {
            case .string, .binary, .transformable, .undefined, .objectID, .composite: return .string(text)
            case .uri: return .url(text)
            case .decimal: return .decimal(text)
            default: return ObjectValueText.value(text, kind: kind) ?? .string(text)
            }
        }
    }
}
