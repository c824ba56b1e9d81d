#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// A C library opened when a run first needs it, not when the program starts (issue 25, item 14).
///
/// libpq (with Kerberos, LDAP, GnuTLS, …), libarchive and libxml2 (with ICU and liblzma) are not
/// linked: the binary names none of their functions, so the loader maps none of them for a run
/// that does not use them. The first PostgreSQL address, archive, compression or XML document
/// opens the library by its soname (`dlopen`), and each library's table (`LibPQ`, `LibArchive`,
/// `LibXML2`, each a `SharedLibraryTable`) resolves the functions it uses (`dlsym`) once for the
/// whole run. The headers still come from header-only targets (types, constants, prototypes), so
/// the call sites read as C calls through the table: `pq.PQexec(handle, sql)`.
///
/// A library that is not installed fails only the runs that need it, as `.unavailable` (exit 69),
/// naming the soname and the Debian package that has it.
final class SharedLibrary: @unchecked Sendable {
    /// What `dlopen` returned; never closed (the library's functions are in use until the end of the run).
    private let handle: UnsafeMutableRawPointer
    /// The file name the library is opened by (`libpq.so.5`) and what needs it, for messages.
    let soname: String
    let purpose: String
    /// The functions a table asked for that the library lacks. Written only while the library's
    /// one table is built, which its `static let` does once, on one thread (`SharedLibraryTable.resolve`).
    private var missing: [String] = []

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

    /// The function `name`, as the C function type `T` that the caller declares for it.
    func function<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let p = dlsym(handle, name) else { throw lacking(name) }
        return unsafeBitCast(p, to: T.self)
    }

    /// The function `name` as `T`, for a table being built: a function the library lacks is
    /// noted (`checkComplete` throws for it) and stands in as a function that is never called.
    func tableFunction<T>(_ name: String) -> T {
        if let p = dlsym(handle, name) { return unsafeBitCast(p, to: T.self) }
        missing.append(name)
        return unsafeBitCast(sharedLibraryMissingFunction, to: T.self)
    }

    /// Throws for the first function a table asked for that the library lacks.
    func checkComplete() throws {
        if let name = missing.first { throw lacking(name) }
    }

    private func lacking(_ name: String) -> TripError {
        TripError(.unavailable, "\(soname) has no \(name), which \(purpose) needs: the installed library is too old",
                  notes: ["dlerror: " + (dlerror().map { String(cString: $0) } ?? "no reason given")])
    }
}

/// What a table holds for a function its library lacks; such a table is never handed out.
private let sharedLibraryMissingFunction: @convention(c) () -> Void = { fatalError("a C function the library lacks was called") }

/// The C functions a run calls in one library opened on first use: a struct whose stored
/// properties are the functions, each one line, typed as Swift imports the C prototype and
/// resolved by name when the table is built:
///
/// ```swift
/// let PQexec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer? = Self.function("PQexec")
/// ```
///
/// Adding a function is adding its line. `resolve()` builds the table (each table keeps the result
/// in a `static let`, so once per run, thread-safely); the library opens in `library`, also once.
protocol SharedLibraryTable: Sendable {
    /// The library, opened on first use; its failure is every later use's failure too.
    static var library: Result<SharedLibrary, any Error> { get }
    /// Resolves every function (the properties' initial values).
    init()
}

extension SharedLibraryTable {
    /// The function `name` of `library`, as the property's C function type; only `resolve()` builds a table.
    static func function<F>(_ name: String) -> F {
        guard case .success(let library) = library else { preconditionFailure("a \(Self.self) built without its library") }
        return library.tableFunction(name)
    }

    /// Opens the library and resolves the table: `.unavailable` (exit 69) naming the library when
    /// it is not installed, or the first function it lacks.
    static func resolve() throws -> Self {
        let library = try library.get()
        let table = Self()
        try library.checkComplete()
        return table
    }
}
