internal import CLibPQ
import TripKit

/// One connection to a PostgreSQL server, through libpq: addressed as libpq addresses it (a
/// `postgresql://` URI or `key=value` pairs, with `PGHOST`, `PGUSER`, `PGPASSWORD`, `PGSERVICE` and
/// `~/.pgpass` filling in what they leave out).
///
/// A server that cannot be reached is `.unavailable` (exit 69) naming the host and port; refused
/// credentials are `.permission` (exit 77). No message carries a password: they name the server as
/// libpq resolved it (host, port, user, database), never the connection string.
final class PGConnection {
    private let handle: OpaquePointer
    /// `host:port` (or the socket directory and port), as libpq resolved them, for messages.
    let place: String

    init(_ address: String) throws {
        guard let c = PQconnectdb(address) else { throw TripError(.io, "cannot connect to PostgreSQL: out of memory") }
        place = PGConnection.place(c)
        guard PQstatus(c) == CONNECTION_OK else {
            let reason = PGConnection.firstLine(PQerrorMessage(c))
            let refused = PQconnectionNeedsPassword(c) != 0 || PGConnection.isAuthenticationFailure(reason)
            PQfinish(c)
            if refused {
                throw TripError(.permission, "\(place): PostgreSQL refused the credentials: \(reason)",
                                notes: ["check PGUSER, PGPASSWORD or ~/.pgpass, and the server's pg_hba.conf"])
            }
            throw TripError(.unavailable, "\(place): cannot connect to PostgreSQL: \(reason)",
                            notes: ["is the server running, and is the address right (PGHOST, PGPORT, the URI's host and port)?"])
        }
        handle = c
    }

    deinit { PQfinish(handle) }

    /// The server's version as a number (150018 for 15.18).
    var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Runs SQL without parameters and returns the first column of each row as text (nil for NULL).
    func column(_ sql: String) throws -> [String?] {
        guard let r = PQexec(handle, sql) else { throw failure("out of memory") }
        defer { PQclear(r) }
        let status = PQresultStatus(r)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            throw failure(PGConnection.firstLine(PQresultErrorMessage(r)))
        }
        return (0..<PQntuples(r)).map { row in
            PQgetisnull(r, row, 0) != 0 ? nil : String(cString: PQgetvalue(r, row, 0))
        }
    }

    private func failure(_ reason: String) -> TripError {
        // A connection lost mid-command is an I/O failure (exit 74); other errors are the data's.
        if PQstatus(handle) != CONNECTION_OK {
            return TripError(.io, "\(place): the connection to PostgreSQL was lost: \(reason)")
        }
        return TripError(.data, "\(place): \(reason)")
    }

    private static func place(_ c: OpaquePointer) -> String {
        let host = PQhost(c).map { String(cString: $0) } ?? "localhost"
        let port = PQport(c).map { String(cString: $0) } ?? "5432"
        return "\(host):\(port)"
    }

    private static func firstLine(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        let s = String(cString: text)
        return String(s.split(separator: "\n").first ?? "unknown error").trimmingPrefix("FATAL:  ").description
    }

    /// libpq reports refused credentials only in words (the server's SQLSTATE 28P01/28000 does not
    /// reach a failed connection's status).
    private static func isAuthenticationFailure(_ reason: String) -> Bool {
        ["password authentication failed", "authentication failed", "no pg_hba.conf entry", "role \""].contains { reason.contains($0) }
    }
}
