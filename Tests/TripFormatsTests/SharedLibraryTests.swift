import Testing
import TripKit
@testable import TripFormats

/// The C libraries opened on first use (issue 25, item 14): one that is not installed fails the run
/// that needs it as `.unavailable` (exit 69), naming the file and the package to install.
@Suite("libraries opened when a run needs them")
struct SharedLibraryTests {
    @Test("a library that is not installed is exit 69, naming its soname and the package that has it")
    func missingLibrary() {
        do {
            _ = try SharedLibrary(["libtripconv-absent.so.7"], package: "libtripconv-absent7", for: "reading a test's store")
            Issue.record("opened a library that does not exist")
        } catch let e as TripError {
            #expect(e.kind == .unavailable && e.kind.rawValue == 69)
            #expect(e.message.hasPrefix("libtripconv-absent.so.7 is not installed, and reading a test's store needs it"), "\(e.message)")
            #expect(e.notes.contains { $0.contains("apt-get install libtripconv-absent7") }, "\(e.notes)")
        } catch {
            Issue.record("not a TripError: \(error)")
        }
    }

    @Test("a function the installed library lacks is exit 69 too, naming it")
    func missingFunction() throws {
        let libc = try SharedLibrary(["libc.so.6", "libSystem.B.dylib"], package: "libc6", for: "a test")
        let strlen: @convention(c) (UnsafePointer<CChar>?) -> Int = try libc.function("strlen")
        #expect(strlen("four") == 4)
        do {
            let _: @convention(c) () -> Void = try libc.function("tripconv_no_such_function")
            Issue.record("found a function that does not exist")
        } catch let e as TripError {
            #expect(e.kind == .unavailable)
            #expect(e.message.contains("has no tripconv_no_such_function, which a test needs"), "\(e.message)")
        }
    }

    @Test("libpq, libarchive and libxml2 load, with every function the tables name")
    func tablesLoad() throws {
        _ = try LibPQ.load()
        _ = try LibArchive.load()
        let xml = try LibXML2.load()
        #expect(xml.xmlStrEqual(Array("trip\0".utf8), Array("trip\0".utf8)) == 1)
    }

    @Test("a table resolves each function its line names; one the library lacks fails the table, naming the function")
    func tableOfFunctions() throws {
        let libc = try LibCTable.resolve()
        #expect(libc.strlen("four") == 4)
        do {
            _ = try LackingTable.resolve()
            Issue.record("built a table with a function that does not exist")
        } catch let e as TripError {
            #expect(e.kind == .unavailable)
            #expect(e.message.contains("has no tripconv_no_such_function, which a test needs"), "\(e.message)")
        }
    }
}

/// A table over libc, as the library tables are declared.
private struct LibCTable: SharedLibraryTable {
    static let library = Result { try SharedLibrary(["libc.so.6", "libSystem.B.dylib"], package: "libc6", for: "a test") }
    let strlen: @convention(c) (UnsafePointer<CChar>?) -> Int = Self.function("strlen")
}

/// A table naming a function libc lacks.
private struct LackingTable: SharedLibraryTable {
    static let library = Result { try SharedLibrary(["libc.so.6", "libSystem.B.dylib"], package: "libc6", for: "a test") }
    let strlen: @convention(c) (UnsafePointer<CChar>?) -> Int = Self.function("strlen")
    let absent: @convention(c) () -> Void = Self.function("tripconv_no_such_function")
}
