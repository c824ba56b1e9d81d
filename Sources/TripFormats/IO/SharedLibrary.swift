#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// A C library opened when a run first needs it, not when the program starts (issue 25, item 14).
///
/// libpq (with Kerberos, LDAP, GnuTLS, …), libarchive and libxml2 (with ICU and the C++ runtime)
/// are not linked: the binary names none of their functions, so the loader maps none of them for a
/// run that does not use them. The first PostgreSQL address, archive, compression or XML document
/// opens the library by its soname (`dlopen`), and each library's table (`LibPQ`, `LibArchive`,
/// `LibXML2`) resolves the functions it uses (`dlsym`) once for the whole run. The headers still
/// come from the system-library targets (types, constants, prototypes), so the call sites read as
/// C calls through the table: `pq.PQexec(handle, sql)`.
///
/// A library that is not installed fails only the runs that need it, as `.unavailable` (exit 69),
/// naming the soname and the Debian package that has it.
struct SharedLibrary: @unchecked Sendable {
    /// What `dlopen` returned; never closed (the library's functions are in use until the end of the run).
    private let handle: UnsafeMutableRawPointer
    /// The file name the library is opened by (`libpq.so.5`) and what needs it, for messages.
    let soname: String
    let purpose: String

    /// Opens the library (`RTLD_NOW`: every symbol it needs resolved now, not halfway through a run).
    init(_ sonames: [String], package: String, for purpose: String) throws {
        var reasons: [String] = []
        for soname in sonames {
            if let h = dlopen(soname, RTLD_NOW | RTLD_LOCAL) {
                handle = h; self.soname = soname; self.purpose = purpose
                return
            }
            reasons.append(dlerror().map { String(cString: $0) } ?? "\(soname) not found")
        }
        throw TripError(.unavailable, "\(sonames[0]) is not installed, and \(purpose) needs it: \(reasons[0])",
                        notes: ["install it (Debian, Ubuntu: apt-get install \(package))"])
    }

    /// The function `name`, as the C function type `T` that the table declares for it.
    func function<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let p = dlsym(handle, name) else {
            throw TripError(.unavailable, "\(soname) has no \(name), which \(purpose) needs: the installed library is too old",
                            notes: ["dlerror: " + (dlerror().map { String(cString: $0) } ?? "no reason given")])
        }
        return unsafeBitCast(p, to: T.self)
    }
}
