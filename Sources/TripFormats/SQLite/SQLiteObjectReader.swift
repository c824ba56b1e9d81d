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
    private var cursor: ObjectStoreEntityCursor<SQLiteStatement>?
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

    /// The model the store open on `c` carries.
    static func model(_ c: SQLiteConnection, path: String) throws -> ObjectModel {
        let s: SQLiteStatement
        do {
            s = try c.prepare("SELECT \"value\" FROM \(quoted(ObjectStoreLayout.modelTable)) WHERE \"name\" = 'model'")
        } catch {
            // A file that is no database (a JSON file given to migrate --model): as the SampleTrips path says it.
            if let notADatabase = c.notADatabase(named: path) { throw notADatabase }
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
                if cursor == nil {
                    let queries = layout.entityQueries(position)
                    cursor = try ObjectStoreEntityCursor(layout, position, path: path, rows: try connection.prepare(queries.rows),
                                                         lists: try queries.lists.map { try $0.map { try connection.prepare($0) } })
                }
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
