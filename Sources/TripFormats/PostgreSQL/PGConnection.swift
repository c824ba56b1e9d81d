#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibPQ
import TripKit

/// One connection to a PostgreSQL server, through libpq: addressed as libpq addresses it (a
/// `postgresql://` URI or `key=value` pairs, with `PGHOST`, `PGUSER`, `PGPASSWORD`, `PGSERVICE` and
/// `~/.pgpass` filling in what they leave out).
///
/// A server that cannot be reached is `.unavailable` (exit 69) naming the host and port; refused
/// credentials are `.permission` (exit 77); a connection lost mid-command is `.io` (exit 74). No
/// message carries a password: they name the server as libpq resolved it (host and port), never
/// the connection string.
///
/// ```swift
/// let c = try PGConnection("postgresql://localhost/trips", schema: "fleet")
/// let n = try c.query("SELECT count(*) FROM trips").text(0, 0)
/// ```
final class PGConnection {
    /// libpq, opened by the first connection of the run (`LibPQ`).
    private let pq: LibPQ
    private let handle: OpaquePointer
    /// `host:port` (or the socket directory and port), as libpq resolved them, for messages.
    let place: String
    /// The store as messages and origins name it: `host:port/database`, then `/schema` with one;
    /// never the password.
    let name: String
    /// The SQLSTATE of the last command that failed (`40P01` a deadlock, `40001` a serialization
    /// failure), nil when it did not come from the server.
    private(set) var lastSQLState: String?

    /// Connects; with `schema`, makes it the only schema unqualified names resolve in (creating it
    /// when `creatingSchema`).
    init(_ address: String, schema: String? = nil, creatingSchema: Bool = false) throws {
        let pq = try LibPQ.load()
        self.pq = pq
        guard let c = pq.PQconnectdb(address) else { throw TripError(.io, "cannot connect to PostgreSQL: out of memory") }
        place = PGConnection.place(c, pq)
        guard pq.PQstatus(c) == CONNECTION_OK else {
            let reason = PGConnection.firstLine(pq.PQerrorMessage(c))
            let refused = pq.PQconnectionNeedsPassword(c) != 0 || PGConnection.isAuthenticationFailure(reason)
            pq.PQfinish(c)
            if refused {
                throw TripError(.permission, "\(place): PostgreSQL refused the credentials: \(reason)",
                                notes: ["check PGUSER, PGPASSWORD or ~/.pgpass, and the server's pg_hba.conf"])
            }
            throw TripError(.unavailable, "\(place): cannot connect to PostgreSQL: \(reason)",
                            notes: ["is the server running, and is the address right (PGHOST, PGPORT, the URI's host and port)?"])
        }
        handle = c
        let database = pq.PQdb(c).map { String(cString: $0) } ?? ""
        name = "\(place)/\(database)" + (schema.map { "/\($0)" } ?? "")
        // Notices (`already exists, skipping`) are the server talking to itself: libpq would print them.
        _ = pq.PQsetNoticeProcessor(c, { _, _ in }, nil)
        try execute("SET client_min_messages = warning; SET client_encoding = 'UTF8'; SET TIME ZONE 'UTC'")
        if let schema {
            if creatingSchema {
                do {
                    try execute("CREATE SCHEMA IF NOT EXISTS \(quoted(schema))")
                } catch where lastSQLState == "23505" || lastSQLState == "42P06" {
                    // Another connection created it at the same moment (IF NOT EXISTS does not see
                    // a schema not yet committed): it is there now.
                }
            }
            try execute("SET search_path TO \(quoted(schema))")
        }
    }

    deinit { pq.PQfinish(handle) }

    /// The server's version as a number (150018 for 15.18).
    var serverVersion: Int { Int(pq.PQserverVersion(handle)) }

    /// This connection's backend process id (what `pg_terminate_backend` takes).
    var backendPID: Int { Int(pq.PQbackendPID(handle)) }

    /// What cancels the command this connection runs, from another thread (libpq's `PQcancel`).
    func canceller() -> PGCanceller? { pq.PQgetCancel(handle).map { PGCanceller($0, pq) } }

    /// Runs SQL without parameters (several statements allowed); `doing` prefixes a failure.
    func execute(_ sql: String, doing: String? = nil) throws {
        _ = try result(pq.PQexec(handle, sql), doing: doing)
    }

    /// Runs one statement with text parameters (`$1`, `$2`, …; nil is NULL) and returns its rows.
    func query(_ sql: String, _ parameters: [String?] = [], doing: String? = nil) throws -> PGResult {
        // The C strings live until PQexecParams returns.
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for p in copies { free(p) } }
        let r = copies.withUnsafeBufferPointer { values in
            values.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                pq.PQexecParams(handle, sql, Int32(parameters.count), nil, values.baseAddress, nil, nil, 0)
            }
        }
        return try result(r, doing: doing)
    }

    /// Runs SQL without parameters and returns the first column of each row as text (nil for NULL).
    func column(_ sql: String) throws -> [String?] {
        let r = try query(sql)
        return (0..<r.rowCount).map { r.isNull($0, 0) ? nil : r.text($0, 0) }
    }

    // MARK: - COPY

    /// Starts `COPY … FROM STDIN`: the rows go in with `send`, and `endCopy` ends it.
    func beginCopy(_ sql: String, doing: String? = nil) throws {
        guard let r = pq.PQexec(handle, sql) else { throw failure("out of memory", doing: doing) }
        let status = pq.PQresultStatus(r)
        if status == PGRES_COPY_IN { pq.PQclear(r); return }
        _ = try result(r, doing: doing)
        throw failure("the server did not start the COPY", doing: doing)
    }

    /// Sends COPY data (whole rows or not: the server joins them).
    func send(_ bytes: UnsafeRawBufferPointer, doing: String? = nil) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let sent = pq.PQputCopyData(handle, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        if sent != 1 { throw failure(PGConnection.firstLine(pq.PQerrorMessage(handle)), doing: doing) }
    }

    /// Ends the COPY and returns how many rows it took; the server's objection fails here.
    @discardableResult
    func endCopy(doing: String? = nil) throws -> Int {
        if pq.PQputCopyEnd(handle, nil) != 1 { throw failure(PGConnection.firstLine(pq.PQerrorMessage(handle)), doing: doing) }
        var rows = 0
        var error: TripError?
        while let r = pq.PQgetResult(handle) {
            do {
                let done = try result(r, doing: doing)
                rows += done.changedRows
            } catch let e as TripError {
                error = error ?? e
            }
        }
        if let error { throw error }
        return rows
    }

    // MARK: - Results and failures

    private func result(_ r: OpaquePointer?, doing: String?) throws -> PGResult {
        guard let r else { throw failure(PGConnection.firstLine(pq.PQerrorMessage(handle)), doing: doing) }
        let status = pq.PQresultStatus(r)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY else {
            let reason = PGConnection.firstLine(pq.PQresultErrorMessage(r))
            let state = pq.PQresultErrorField(r, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            pq.PQclear(r)
            // A multi-statement string leaves the rest unrun; nothing else is pending.
            while let more = pq.PQgetResult(handle) { pq.PQclear(more) }
            throw failure(reason, doing: doing, state: state)
        }
        lastSQLState = nil
        return PGResult(r, pq)
    }

    private func failure(_ reason: String, doing: String?, state: String? = nil) -> TripError {
        lastSQLState = state
        let what = doing.map { "\($0): " } ?? ""
        // A connection lost mid-command is an I/O failure (exit 74), as is the server ending it
        // (SQLSTATE class 57P: an administrator's pg_terminate_backend, a shutdown) or a connection
        // exception (class 08), before libpq has noticed; other errors are the data's.
        let code = state ?? ""
        if pq.PQstatus(handle) != CONNECTION_OK || code.hasPrefix("57P") || code.hasPrefix("08") {
            return TripError(.io, "\(place): \(what)the connection to PostgreSQL was lost: \(reason)",
                             notes: ["nothing of this input was committed; run it again"])
        }
        if code == "55P03" {
            return TripError(.busy, "\(place): \(what)the store is busy: \(reason)", notes: ["another process holds it; try again"])
        }
        return TripError(.data, "\(place): \(what)\(reason)")
    }

    /// Whether the last failure was a deadlock or a serialization failure: worth trying again.
    var lastFailureIsTransient: Bool { lastSQLState == "40P01" || lastSQLState == "40001" }

    private static func place(_ c: OpaquePointer, _ pq: LibPQ) -> String {
        let host = pq.PQhost(c).map { String(cString: $0) } ?? "localhost"
        let port = pq.PQport(c).map { String(cString: $0) } ?? "5432"
        return "\(host):\(port.isEmpty ? "5432" : port)"
    }

    private static func firstLine(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        let s = String(cString: text)
        var line = String(s.split(separator: "\n").first ?? "unknown error")
        for prefix in ["FATAL:  ", "ERROR:  "] where line.hasPrefix(prefix) { line.removeFirst(prefix.count) }
        return line
    }

    /// libpq reports refused credentials only in words (the server's SQLSTATE 28P01/28000 does not
    /// reach a failed connection's status).
    private static func isAuthenticationFailure(_ reason: String) -> Bool {
        ["password authentication failed", "authentication failed", "no pg_hba.conf entry", "role \""].contains { reason.contains($0) }
    }
}

/// The rows of one statement, in text form, freed with the value.
final class PGResult {
    private let handle: OpaquePointer
    private let pq: LibPQ
    fileprivate init(_ handle: OpaquePointer, _ pq: LibPQ) { self.handle = handle; self.pq = pq }
    deinit { pq.PQclear(handle) }

    var rowCount: Int { Int(pq.PQntuples(handle)) }
    var columnCount: Int { Int(pq.PQnfields(handle)) }
    /// The rows a command changed (`INSERT 0 5` → 5).
    var changedRows: Int { pq.PQcmdTuples(handle).flatMap { Int(String(cString: $0)) } ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool { pq.PQgetisnull(handle, Int32(row), Int32(column)) != 0 }

    /// The value's bytes (valid until the result is freed).
    func bytes(_ row: Int, _ column: Int) -> UnsafeBufferPointer<UInt8> {
        let length = Int(pq.PQgetlength(handle, Int32(row), Int32(column)))
        let p = UnsafeRawPointer(pq.PQgetvalue(handle, Int32(row), Int32(column))!).assumingMemoryBound(to: UInt8.self)
        return UnsafeBufferPointer(start: p, count: length)
    }

    /// The value as text, repairing nothing: the server sends UTF-8 (the connection says so).
    func text(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }

    func int64(_ row: Int, _ column: Int) -> Int64 { Int64(text(row, column)) ?? 0 }

    /// The first row's first value, nil without rows or for NULL.
    var textIfAny: String? { rowCount > 0 && !isNull(0, 0) ? text(0, 0) : nil }
}

/// Cancels the command a connection runs; usable from any thread (libpq makes `PQcancel` so).
final class PGCanceller: @unchecked Sendable {
    private let handle: OpaquePointer
    private let pq: LibPQ
    fileprivate init(_ handle: OpaquePointer, _ pq: LibPQ) { self.handle = handle; self.pq = pq }
    deinit { pq.PQfreeCancel(handle) }

    /// Asks the server to cancel the command under way; nothing happens when none is.
    func cancel() {
        var message = [CChar](repeating: 0, count: 256)
        _ = pq.PQcancel(handle, &message, Int32(message.count))
    }
}
