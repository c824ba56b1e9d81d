internal import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

// A small wrapper of our own over libsqlite3: a connection, prepared statements, and the one place
// where a SQLite result code becomes a `TripError`. No C type leaves this module.

/// Whether a store is being read or written; decides what a failure to open it means.
enum SQLiteAccess {
    case reading, writing
}

extension TripError {
    /// The one place a SQLite result code becomes a `TripError`: busy and locked are `.busy` (75),
    /// can't-open is `.cantCreate` (73) for a write and `.noInput` (66) for a read, not-a-database and
    /// corruption are `.data` (65), a full disk and I/O errors are `.io` (74).
    ///
    /// `doing` says what was being done (`cannot open`, `read error`); SQLite's own message follows.
    /// SQLite's messages name tables and columns, never values, so no trip data reaches a message.
    init(sqliteCode code: Int32, message: String, path: String, access: SQLiteAccess, doing: String) {
        if code == SQLiteConnection.readOnlyRollback {
            // A writer died mid-transaction and left its journal; only a read-write open rolls it back.
            self.init(.busy, "\(path): store is busy: a transaction that did not finish must be rolled back first (\(message))",
                      notes: ["the first read-write open rolls it back, e.g. `sqlite3 \(path) 'PRAGMA quick_check'`"])
            return
        }
        switch code & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED:
            self.init(.busy, "\(path): store is busy: another process holds its lock (\(message))",
                      notes: ["try again when the other process is done"])
        case SQLITE_CANTOPEN:
            self.init(access == .writing ? .cantCreate : .noInput, "\(path): \(doing): \(message)")
        case SQLITE_NOTADB:
            self.init(.data, "\(path): not a SQLite store (\(message))")
        case SQLITE_CORRUPT:
            self.init(.data, "\(path): the store is damaged (\(message))",
                      notes: ["`sqlite3 \(path) 'PRAGMA integrity_check'` says more"])
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM, SQLITE_NOLFS:
            self.init(.io, "\(path): \(doing): \(message)")
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
            self.init(access == .writing ? .cantCreate : .noInput, "\(path): \(doing): \(message)")
        default:
            // Constraint failures, values too big, a schema the statements do not fit: the data's fault.
            self.init(.data, "\(path): \(doing): \(message)")
        }
    }
}

/// An open SQLite database; closed when released.
final class SQLiteConnection {
    let handle: OpaquePointer
    /// The path used in messages.
    let path: String
    let access: SQLiteAccess

    /// `SQLITE_READONLY_ROLLBACK`, a macro Swift cannot import: a read-only open met a hot journal.
    static let readOnlyRollback: Int32 = SQLITE_READONLY | (3 << 8)

    /// Opens a database: read-only, or read-write (creating it only when `create` is set).
    /// `busyTimeout` is how long a statement waits for another process's lock before failing `.busy`.
    ///
    /// A read-only open of a WAL-mode file with no `-wal` file beside it opens the file as immutable:
    /// there is nothing in a WAL to read, and an ordinary open would create `-wal` and `-shm` files
    /// beside the user's store that a read-only connection cannot remove. With a `-wal` file present
    /// the open is ordinary, so what the WAL holds is read (SQLite may then create a `-shm` index).
    /// `uri`, for a read, is the `file:` URI to open instead (`StoreSnapshot` chooses one that writes nothing).
    init(path: String, access: SQLiteAccess, create: Bool = false, busyTimeout milliseconds: Int32 = 5000, uri: String? = nil) throws {
        self.path = path
        self.access = access
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var name = path
        switch access {
        case .reading:
            flags |= SQLITE_OPEN_READONLY
            if let uri {
                flags |= SQLITE_OPEN_URI
                name = uri
            } else if SQLiteConnection.isWALModeFile(path), !FileSystem.exists(path + "-wal") {
                flags |= SQLITE_OPEN_URI
                name = "file:" + SQLiteConnection.uriPath(path) + "?immutable=1"
            }
        case .writing: flags |= SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw TripError(sqliteCode: rc, message: message, path: path, access: access, doing: "cannot open")
        }
        handle = db
        sqlite3_busy_timeout(db, milliseconds)
    }

    deinit { sqlite3_close_v2(handle) }

    /// The first 16 bytes of every SQLite database file.
    static let fileHeader = Array("SQLite format 3\0".utf8)

    /// Whether a file's SQLite header says WAL mode (file format versions 2 at offsets 18 and 19).
    static func isWALModeFile(_ path: String) -> Bool {
        guard let header = try? FileSystem.head(of: path, count: 20, failing: .noInput) else { return false }
        return header.count == 20 && header.starts(with: fileHeader) && header[18] == 2 && header[19] == 2
    }

    /// A path as the path of a `file:` URI: every byte but unreserved ones and `/` percent-encoded.
    static func uriPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return out
    }

    /// The error for a result code of this connection, with SQLite's message.
    func failure(_ code: Int32, doing: String) -> TripError {
        TripError(sqliteCode: code, message: String(cString: sqlite3_errmsg(handle)), path: path,
                  access: access, doing: doing)
    }

    /// Runs SQL that takes no parameters and returns no rows we need (DDL, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String, doing: String = "cannot update the store") throws {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw failure(rc, doing: doing) }
    }

    /// The error of the call that failed last on this connection when it found a file that is no
    /// SQLite database (SQLite's own result code, not the text of the error made of it), made as
    /// `failure` makes it but naming `shown` (the store given, not a snapshot's copy); nil for any
    /// other failure.
    func notADatabase(named shown: String) -> TripError? {
        let code = sqlite3_extended_errcode(handle)
        guard code & 0xff == SQLITE_NOTADB else { return nil }
        return TripError(sqliteCode: code, message: String(cString: sqlite3_errmsg(handle)), path: shown, access: access,
                         doing: "cannot read the store")
    }

    /// Compiles a statement; its values are bound to parameters, never spliced into the text.
    func prepare(_ sql: String, doing: String = "cannot read the store") throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw failure(rc, doing: doing) }
        return SQLiteStatement(statement, connection: self, doing: doing)
    }

    /// The single integer a query returns (a count, a pragma), or nil when it returns no row.
    func integer(_ sql: String) throws -> Int64? {
        let s = try prepare(sql)
        guard try s.step() else { return nil }
        return s.isNull(0) ? nil : s.int64(0)
    }

    /// The rows the last INSERT, UPDATE or DELETE of this connection changed.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the last row inserted on this connection.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The most parameters a statement may have on this connection (`SQLITE_LIMIT_VARIABLE_NUMBER`).
    var parameterLimit: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) }

    /// Whether a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rolls back an open transaction, ignoring failure: used on the way out of an error.
    func rollbackQuietly() {
        if isInTransaction { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }
}

/// The outcome of running an INSERT that may meet a unique index.
enum SQLiteInsertOutcome {
    case inserted
    /// A UNIQUE constraint refused the row; the statement's changes were undone, the transaction goes on.
    case uniqueViolation
}

/// A prepared statement, reused: bind, step, read columns, reset.
final class SQLiteStatement {
    let handle: OpaquePointer
    private let connection: SQLiteConnection
    private let doing: String

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection, doing: String) {
        self.handle = handle; self.connection = connection; self.doing = doing
    }

    deinit { sqlite3_finalize(handle) }

    /// `SQLITE_CONSTRAINT_UNIQUE`, a macro Swift cannot import.
    static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)

    /// The C convention for "copy the bytes now" (`SQLITE_TRANSIENT`), which Swift cannot import.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1 as Int, to: sqlite3_destructor_type.self) }

    // MARK: - Binding (parameters are 1-based)

    /// How many parameters the statement has.
    var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    func bindNull(_ index: Int32) throws {
        try check(sqlite3_bind_null(handle, index))
    }

    func bind(_ index: Int32, _ value: Int64) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ index: Int32, double value: Double) throws {
        try check(sqlite3_bind_double(handle, index, value))
    }

    func bind(_ index: Int32, blob bytes: [UInt8]) throws {
        guard bytes.count <= Int(Int32.max) else { try check(SQLITE_TOOBIG); return }
        let rc = bytes.withUnsafeBytes { b -> Int32 in
            // An empty array may have no address, and a null pointer would bind NULL, not an empty blob.
            guard let base = b.baseAddress else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob(handle, index, base, Int32(b.count), SQLiteStatement.transient)
        }
        try check(rc)
    }

    func bind(_ index: Int32, _ text: String) throws {
        var text = text
        let rc = text.withUTF8 { bytes -> Int32 in
            guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
            // An empty buffer may have no address, and a null pointer would bind NULL, not "".
            guard let base = bytes.baseAddress else {
                return sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), SQLiteStatement.transient)
            }
        }
        try check(rc)
    }

    /// Binds text that SQLite does not copy (`SQLITE_STATIC`, what a C program does with its own rows):
    /// the bytes must stay where they are, unchanged, until the statement has stepped, and every
    /// parameter of the statement must be bound anew before it steps again (SQLite keeps the pointer).
    func bind(_ index: Int32, staticText bytes: UnsafeRawPointer, count: Int) throws {
        guard count <= Int(Int32.max) else { try check(SQLITE_TOOBIG); return }
        try check(sqlite3_bind_text(handle, index, bytes.assumingMemoryBound(to: CChar.self), Int32(count), nil))
    }

    /// Binds a model value: text, ISO 8601 text for a date, 0/1 for a Boolean, an integer, or NULL.
    func bind(_ index: Int32, _ value: Value) throws {
        switch value {
        case .null: try bindNull(index)
        case .string(let s): try bind(index, s)
        case .date(let t): try bind(index, date: t)
        case .bool(let b): try bind(index, b ? 1 : 0)
        case .int(let n): try bind(index, n)
        }
    }

    /// Binds a date as ISO 8601 text, the same text as `Timestamp.iso8601` (`2024-05-01T09:30:00Z`,
    /// `.123` only when the milliseconds are not zero), formatted on the stack: a store of many trips
    /// binds two dates per trip, and building a String for each costs more than the insert's own work.
    func bind(_ index: Int32, date: Timestamp) throws {
        let rc = withUnsafeTemporaryAllocation(byteCount: Timestamp.iso8601MaximumLength, alignment: 8) { buffer -> Int32 in
            let count = date.formatISO8601(into: buffer)
            return sqlite3_bind_text(handle, index, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(count),
                                     SQLiteStatement.transient)
        }
        try check(rc)
    }

    private func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw connection.failure(rc, doing: doing) }
    }

    // MARK: - Stepping

    /// Steps: true with a row to read, false when done (the statement is then reset).
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: sqlite3_reset(handle); return false
        default:
            sqlite3_reset(handle)
            throw connection.failure(rc, doing: doing)
        }
    }

    /// Runs a statement that returns no rows, then resets it for reuse.
    func run() throws {
        let rc = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw connection.failure(rc, doing: doing) }
    }

    /// Runs an INSERT, reporting a UNIQUE constraint failure as an outcome rather than an error.
    func insert() throws -> SQLiteInsertOutcome {
        let rc = sqlite3_step(handle)
        sqlite3_reset(handle)
        switch rc {
        case SQLITE_DONE: return .inserted
        case SQLiteStatement.constraintUnique: return .uniqueViolation
        default: throw connection.failure(rc, doing: doing)
        }
    }

    /// Resets the statement so it can run again, and lets go of any lock its reading held.
    func reset() { sqlite3_reset(handle) }

    // MARK: - Columns (0-based)

    /// The storage class of a column's value in the current row.
    enum Storage { case null, integer, real, text, blob }

    func storage(_ column: Int32) -> Storage {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_BLOB: return .blob
        default: return .text
        }
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The size in bytes of a text or blob value (of a number, its text's size).
    func byteCount(_ column: Int32) -> Int { Int(sqlite3_column_bytes(handle, column)) }

    /// The column's value as bytes (a blob's, or text's UTF-8); empty for NULL.
    func bytes(_ column: Int32) -> [UInt8] {
        guard let p = sqlite3_column_blob(handle, column) else { return [] }
        let n = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// The bytes of a text value as SQLite holds them (valid until the statement steps or a column
    /// call converts the value); empty for an empty text.
    func textBytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let p = sqlite3_column_text(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// The bytes of a blob value as SQLite holds them (valid as `textBytes`'s).
    func blobBytes(_ column: Int32) -> UnsafeRawBufferPointer {
        guard let p = sqlite3_column_blob(handle, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// The column's text, or nil when its bytes are not UTF-8 (a store another tool wrote may hold
    /// any bytes as TEXT): validated and made in one pass, as `text(_:)` decodes.
    func validText(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, column))
        return String(validating: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// The column's value as text (SQLite converts numbers); invalid UTF-8 is repaired, never trusted.
    func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }
}
