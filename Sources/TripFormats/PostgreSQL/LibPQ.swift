#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibPQ

/// libpq's functions, opened with the first PostgreSQL address a run reaches (`SharedLibrary`): a
/// run that touches no PostgreSQL store never maps libpq nor what it brings (Kerberos, LDAP, GnuTLS, …).
/// The types and constants (`ConnStatusType`, `PGRES_COPY_IN`) are still the header's.
struct LibPQ: SharedLibraryTable {
    /// The table, loaded once for the run; a failure to load fails each run that asks, the same way.
    static func load() throws -> LibPQ { try loaded.get() }
    private static let loaded = Result { try resolve() }
    static let library = Result {
        try SharedLibrary(["libpq.so.5", "libpq.5.dylib"], package: "libpq5", for: "reading or writing a PostgreSQL store")
    }

    let PQbackendPID: @convention(c) (OpaquePointer?) -> Int32 = Self.function("PQbackendPID")
    let PQcancel: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = Self.function("PQcancel")
    let PQclear: @convention(c) (OpaquePointer?) -> Void = Self.function("PQclear")
    let PQcmdTuples: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>? = Self.function("PQcmdTuples")
    let PQconnectdb: @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer? = Self.function("PQconnectdb")
    let PQconnectionNeedsPassword: @convention(c) (OpaquePointer?) -> Int32 = Self.function("PQconnectionNeedsPassword")
    let PQdb: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>? = Self.function("PQdb")
    let PQerrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>? = Self.function("PQerrorMessage")
    let PQexec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer? = Self.function("PQexec")
    let PQexecParams: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                      UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> OpaquePointer? = Self.function("PQexecParams")
    let PQfinish: @convention(c) (OpaquePointer?) -> Void = Self.function("PQfinish")
    let PQfreeCancel: @convention(c) (OpaquePointer?) -> Void = Self.function("PQfreeCancel")
    let PQgetCancel: @convention(c) (OpaquePointer?) -> OpaquePointer? = Self.function("PQgetCancel")
    let PQgetResult: @convention(c) (OpaquePointer?) -> OpaquePointer? = Self.function("PQgetResult")
    let PQgetisnull: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32 = Self.function("PQgetisnull")
    let PQgetlength: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32 = Self.function("PQgetlength")
    let PQgetvalue: @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>? = Self.function("PQgetvalue")
    let PQhost: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>? = Self.function("PQhost")
    let PQnfields: @convention(c) (OpaquePointer?) -> Int32 = Self.function("PQnfields")
    let PQntuples: @convention(c) (OpaquePointer?) -> Int32 = Self.function("PQntuples")
    let PQport: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>? = Self.function("PQport")
    let PQputCopyData: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = Self.function("PQputCopyData")
    let PQputCopyEnd: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32 = Self.function("PQputCopyEnd")
    let PQresultErrorField: @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>? = Self.function("PQresultErrorField")
    let PQresultErrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>? = Self.function("PQresultErrorMessage")
    let PQresultStatus: @convention(c) (OpaquePointer?) -> ExecStatusType = Self.function("PQresultStatus")
    let PQserverVersion: @convention(c) (OpaquePointer?) -> Int32 = Self.function("PQserverVersion")
    let PQsetNoticeProcessor: @convention(c) (OpaquePointer?, PQnoticeProcessor?, UnsafeMutableRawPointer?) -> PQnoticeProcessor?
        = Self.function("PQsetNoticeProcessor")
    let PQstatus: @convention(c) (OpaquePointer?) -> ConnStatusType = Self.function("PQstatus")
}
