#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibPQ

/// libpq's functions, opened with the first PostgreSQL address a run reaches (`SharedLibrary`): a
/// run that touches no PostgreSQL store never maps libpq nor what it brings (Kerberos, LDAP, GnuTLS, …).
/// The types and constants (`ConnStatusType`, `PGRES_COPY_IN`) are still the header's.
struct LibPQ: Sendable {
    /// The table, loaded once for the run; a failure to load fails each run that asks, the same way.
    static func load() throws -> LibPQ { try loaded.get() }
    private static let loaded = Result {
        try LibPQ(SharedLibrary(["libpq.so.5", "libpq.5.dylib"], package: "libpq5", for: "reading or writing a PostgreSQL store"))
    }

    let PQbackendPID: @convention(c) (OpaquePointer?) -> Int32
    let PQcancel: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32
    let PQclear: @convention(c) (OpaquePointer?) -> Void
    let PQcmdTuples: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQconnectdb: @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
    let PQconnectionNeedsPassword: @convention(c) (OpaquePointer?) -> Int32
    let PQdb: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQerrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQexec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?
    let PQexecParams: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                      UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> OpaquePointer?
    let PQfinish: @convention(c) (OpaquePointer?) -> Void
    let PQfreeCancel: @convention(c) (OpaquePointer?) -> Void
    let PQgetCancel: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let PQgetResult: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let PQgetisnull: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    let PQgetlength: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    let PQgetvalue: @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    let PQhost: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQnfields: @convention(c) (OpaquePointer?) -> Int32
    let PQntuples: @convention(c) (OpaquePointer?) -> Int32
    let PQport: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQputCopyData: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
    let PQputCopyEnd: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    let PQresultErrorField: @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?
    let PQresultErrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQresultStatus: @convention(c) (OpaquePointer?) -> ExecStatusType
    let PQserverVersion: @convention(c) (OpaquePointer?) -> Int32
    let PQsetNoticeProcessor: @convention(c) (OpaquePointer?, PQnoticeProcessor?, UnsafeMutableRawPointer?) -> PQnoticeProcessor?
    let PQstatus: @convention(c) (OpaquePointer?) -> ConnStatusType

    private init(_ lib: SharedLibrary) throws {
        PQbackendPID = try lib.function("PQbackendPID")
        PQcancel = try lib.function("PQcancel")
        PQclear = try lib.function("PQclear")
        PQcmdTuples = try lib.function("PQcmdTuples")
        PQconnectdb = try lib.function("PQconnectdb")
        PQconnectionNeedsPassword = try lib.function("PQconnectionNeedsPassword")
        PQdb = try lib.function("PQdb")
        PQerrorMessage = try lib.function("PQerrorMessage")
        PQexec = try lib.function("PQexec")
        PQexecParams = try lib.function("PQexecParams")
        PQfinish = try lib.function("PQfinish")
        PQfreeCancel = try lib.function("PQfreeCancel")
        PQgetCancel = try lib.function("PQgetCancel")
        PQgetResult = try lib.function("PQgetResult")
        PQgetisnull = try lib.function("PQgetisnull")
        PQgetlength = try lib.function("PQgetlength")
        PQgetvalue = try lib.function("PQgetvalue")
        PQhost = try lib.function("PQhost")
        PQnfields = try lib.function("PQnfields")
        PQntuples = try lib.function("PQntuples")
        PQport = try lib.function("PQport")
        PQputCopyData = try lib.function("PQputCopyData")
        PQputCopyEnd = try lib.function("PQputCopyEnd")
        PQresultErrorField = try lib.function("PQresultErrorField")
        PQresultErrorMessage = try lib.function("PQresultErrorMessage")
        PQresultStatus = try lib.function("PQresultStatus")
        PQserverVersion = try lib.function("PQserverVersion")
        PQsetNoticeProcessor = try lib.function("PQsetNoticeProcessor")
        PQstatus = try lib.function("PQstatus")
    }
}
