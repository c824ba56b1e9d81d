import TripKit

extension ObjectStoreDialect {
    /// PostgreSQL: text for String and URL; uuid; numeric for Decimal (its value: an exponent is
    /// written out, `1e3` reads back `1000`); smallint, integer, bigint; double precision for Double
    /// and Float (a Float's value arrives as a Double and keeps every digit); boolean; text for Date
    /// (ISO 8601 in UTC with the digits that read back to the same Double: timestamptz keeps only
    /// microseconds; `"date"::timestamptz` in psql gives one); bytea for Data, transformable values and
    /// kinds without a type of their own. Foreign keys are checked at the commit: a row may name one
    /// written later.
    static let postgresql = ObjectStoreDialect(keyType: "bigint", columnType: { kind in
        switch kind {
        case .string, .uri, .date: return "text"
        case .uuid: return "uuid"
        case .decimal: return "numeric"
        case .int16: return "smallint"
        case .int32: return "integer"
        case .int64: return "bigint"
        case .double, .float: return "double precision"
        case .bool: return "boolean"
        case .binary, .transformable, .undefined, .objectID, .composite: return "bytea"
        }
    }, foreignKeySuffix: " DEFERRABLE INITIALLY DEFERRED", addsForeignKeysLast: true, booleans: ("true", "false"), hexQuotes: ("'\\x", "'"))
}

/// Reads the objects of a tripconv PostgreSQL store of any model (`ObjectStoreLayout` with the
/// `.postgresql` dialect, written by `PGObjectWriter`) with the model it carries in `tripconv_model`:
/// entity by entity in the model's order, each entity's objects in key order, in one
/// `REPEATABLE READ READ ONLY` transaction. Each query is a server-side cursor read `FETCH` by `FETCH`
/// (`PGBatches`): what is held is one batch of rows per open query (the entity's and one per to-many)
/// and the object being built.
final class PGObjectReader: ObjectRecordReader {
    let model: ObjectModel
    let name: String
    private var connection: PGConnection?
    private let layout: ObjectStoreLayout
    private var position = 0
    private var cursor: ObjectStoreEntityCursor<PGObjectRows>?
    private var count = 0

    /// Whether the store at `address` (in `schema`, else the search path's first) has tripconv's
    /// model table; false when it cannot be reached (the trips' path then says why).
    static func isObjectStore(address: String, schema: String?) -> Bool {
        guard let c = try? PGConnection(address, schema: schema), let tables = try? PGStoreStructure(c).tableNames() else { return false }
        return tables.contains(ObjectStoreLayout.modelTable)
    }

    /// The model the store carries; `.data` when it has none or it cannot be read.
    static func model(_ c: PGConnection) throws -> ObjectModel {
        guard try PGStoreStructure(c).tableNames().contains(ObjectStoreLayout.modelTable) else {
            throw TripError.data("\(c.name): not a store of objects tripconv wrote: it has no \(ObjectStoreLayout.modelTable) table")
        }
        let r = try c.query("SELECT \"value\" FROM \(quoted(ObjectStoreLayout.modelTable)) WHERE \"name\" = 'model'", doing: "cannot read the store")
        guard let text = r.textIfAny else { throw TripError.data("\(c.name): table \(ObjectStoreLayout.modelTable) has no row 'model'") }
        return try ObjectModelJSON.read(text: Array(text.utf8), name: "\(c.name): table \(ObjectStoreLayout.modelTable) row 'model'")
    }

    /// Connects and opens the read transaction; a schema without tripconv's model table is `.data`.
    /// With `lockTimeoutMilliseconds`, a table another transaction holds (or waits for) exclusively is
    /// waited for that long, then `.busy`.
    init(address: String, schema: String?, lockTimeoutMilliseconds: Int? = nil) throws {
        let c = try PGConnection(address, schema: schema)
        name = c.name
        try c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", doing: "cannot read the store")
        do {
            if let ms = lockTimeoutMilliseconds { try c.execute("SET LOCAL lock_timeout = \(max(ms, 1))") }
            try PGStoreStructure(c).confine()
            model = try PGObjectReader.model(c)
            layout = try ObjectStoreLayout(model, dialect: .postgresql)
        } catch {
            try? c.execute("ROLLBACK")
            throw error
        }
        connection = c
    }

    /// Each entity's objects, by name (before the first `next()`).
    func objectCounts() throws -> [String: Int] {
        guard let connection else { return [:] }
        var counts: [String: Int] = [:]
        for (e, entity) in model.entities.enumerated() {
            let filter = layout.isShared[e] ? " WHERE \(quoted(ObjectStoreLayout.entityColumn)) = '\(entity.name.replacing("'", with: "''"))'" : ""
            counts[entity.name] = Int(try connection.query("SELECT count(*) FROM \(quoted(layout.tableOf[e]))\(filter)").int64(0, 0))
        }
        return counts
    }

    func next() throws -> ObjectReadItem? {
        guard let connection else { return nil }
        do {
            while position < model.entities.count {
                if cursor == nil {
                    let queries = layout.entityQueries(position)
                    let rows = try PGObjectRows(connection, cursor: "tripconv_objects_\(position)", sql: queries.rows)
                    let lists = try queries.lists.enumerated().map { slot, sql in
                        try sql.map { try PGObjectRows(connection, cursor: "tripconv_objects_\(position)_\(slot)", sql: $0) }
                    }
                    cursor = try ObjectStoreEntityCursor(layout, position, path: name, rows: rows, lists: lists)
                }
                if let object = try cursor!.next(record: count + 1) {
                    count += 1
                    return .object(object)
                }
                cursor = nil
                position += 1
            }
        } catch {
            end(committing: false)
            throw error
        }
        end(committing: true)
        return nil
    }

    /// Ends the transaction and closes the connection.
    private func end(committing: Bool) {
        cursor = nil
        try? connection?.execute(committing ? "COMMIT" : "ROLLBACK")
        connection = nil
    }
}

/// The rows of a server-side cursor as the object cursor reads them: every value arrives as text,
/// decoded by the column's kind (`.postgresql`'s types: `t`/`f`, bytea as `\x` and hexadecimal digits).
final class PGObjectRows: ObjectStoreRows {
    private let batches: PGBatches
    private let place: String

    init(_ c: PGConnection, cursor: String, sql: String) throws {
        batches = try PGBatches(c, cursor: cursor, sql: sql)
        place = c.name
    }

    func step() throws -> Bool { try batches.advance() }
    func isNull(_ column: Int32) -> Bool { batches.result!.isNull(batches.row, Int(column)) }
    func int64(_ column: Int32) -> Int64 { batches.result!.int64(batches.row, Int(column)) }
    func text(_ column: Int32) -> String { batches.result!.text(batches.row, Int(column)) }

    func value(_ column: Int32, _ kind: AttributeKind) throws -> ObjectValue {
        let bytes = batches.result!.bytes(batches.row, Int(column))
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw TripError.data("\(place): a value that is not UTF-8 (a database whose encoding is SQL_ASCII?)")
        }
        switch kind {
        case .string: return .string(text)
        case .uri: return .url(text)
        case .decimal: return .decimal(text)
        case .bool: return .bool(text == "t" || text == "true")
        case .binary, .transformable, .undefined, .objectID, .composite:
            guard let data = PGObjectRows.hex(bytes) else { throw TripError.data("\(place): a bytea value that is not \\x and hexadecimal digits") }
            return .data(data)
        default:
            guard let value = ObjectValueText.value(text, kind: kind) else {
                throw TripError.data("\(place): not a value of kind \(kind): \(text.quotedForMessage)")
            }
            return value
        }
    }

    /// The bytes of bytea's hex output (`\x0aff`), nil for anything else.
    static func hex(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0 else { return nil }
        func digit(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2 - 1)
        var i = 2
        while i < text.count {
            guard let h = digit(text[i]), let l = digit(text[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}
