#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// The file-system layer (`FileSystem`): what each call answers, and the error each failure
/// becomes, place first.
@Suite("FileSystem")
struct FileSystemTests {
    /// Permission bits mean nothing to root, who may read and write anything.
    static let isRoot = geteuid() == 0
    static let rootNote: Comment = "root is never denied permission"

    /// The error a call throws, as a TripError.
    static func error(_ body: () throws -> Void) -> TripError? {
        do { try body(); return nil } catch let e as TripError { return e } catch { return TripError(.io, "\(error)") }
    }

    /// A path's permission bits.
    static func mode(_ path: String) -> mode_t {
        var st = stat()
        #expect(stat(path, &st) == 0, "stat \(path)")
        return st.st_mode & 0o777
    }

    // MARK: - Looking

    @Test("a path names a file, a directory, something else, or nothing")
    func kinds() throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("a.csv", "x")
        let dir = scratch.path("d")
        #expect(mkdir(dir, 0o755) == 0)
        #expect(FileSystem.kind(file) == .file)
        #expect(FileSystem.kind(dir) == .directory)
        #expect(FileSystem.kind("/dev/null") == .other)
        #expect(FileSystem.kind(scratch.path("missing")) == nil)
        #expect(FileSystem.exists(file) && FileSystem.exists(dir) && !FileSystem.exists(scratch.path("missing")))
        #expect(try FileSystem.kind(of: dir, failing: .noInput) == .directory)
    }

    @Test("a symbolic link is what it points to, unless links are not followed")
    func links() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path("d")
        #expect(mkdir(dir, 0o755) == 0)
        let link = scratch.path("link")
        #expect(symlink(dir, link) == 0)
        #expect(FileSystem.kind(link) == .directory)
        #expect(FileSystem.kind(link, followingLinks: false) == .other)
        let dangling = scratch.path("dangling")
        #expect(symlink(scratch.path("gone"), dangling) == 0)
        #expect(FileSystem.kind(dangling) == nil)
        #expect(FileSystem.kind(dangling, followingLinks: false) == .other)
    }

    @Test("a missing path fails as PATH: cannot open: reason, of the kind asked for")
    func missingPath() {
        let scratch = ScratchDirectory()
        let missing = scratch.path("missing.json")
        let e = Self.error { _ = try FileSystem.kind(of: missing, failing: .noInput) }
        #expect(e?.kind == .noInput)
        #expect(e?.message == "\(missing): cannot open: No such file or directory")
        #expect(Self.error { _ = try FileSystem.kind(of: missing, failing: .cantCreate) }?.kind == .cantCreate)
        #expect(Self.error { _ = try FileSystem.openForReading(missing) }?.message == "\(missing): cannot open: No such file or directory")
        #expect(Self.error { _ = try FileSystem.openForWriting(missing) }?.kind == .cantCreate)
        #expect(Self.error { _ = try FileSystem.head(of: missing, count: 4, failing: .noInput) }?.kind == .noInput)
        let listing = Self.error { _ = try FileSystem.entries(of: missing) }
        #expect(listing?.kind == .noInput)
        #expect(listing?.message == "\(missing): cannot read directory: No such file or directory")
    }

    @Test("sizes, of paths and of descriptors")
    func sizes() throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("five", "12345")
        #expect(FileSystem.size(file) == 5)
        #expect(FileSystem.size(scratch.path("missing")) == nil)
        let fd = try FileSystem.openForReading(file)
        defer { close(fd) }
        #expect(FileSystem.size(ofDescriptor: fd) == 5)
        #expect(FileSystem.kind(ofDescriptor: fd) == .file)
        #expect(FileSystem.kind(ofDescriptor: -1) == nil)
    }

    @Test("two names of one file are the same file; a missing path is no file")
    func sameFile() {
        let scratch = ScratchDirectory()
        let a = scratch.file("a", "x"), b = scratch.file("b", "x")
        let linked = scratch.path("hard")
        #expect(link(a, linked) == 0)
        #expect(FileSystem.isSameFile(a, a))
        #expect(FileSystem.isSameFile(a, linked))
        #expect(FileSystem.isSameFile(scratch.path("./a"), a))
        #expect(!FileSystem.isSameFile(a, b))
        #expect(!FileSystem.isSameFile(scratch.path("missing"), scratch.path("missing")))
    }

    @Test("the first bytes of a file: at most as many as asked, fewer if it is shorter")
    func head() throws {
        let scratch = ScratchDirectory()
        let long = scratch.file("long", (0..<40).map { UInt8($0) })
        #expect(try FileSystem.head(of: long, count: 16, failing: .noInput) == (0..<16).map { UInt8($0) })
        let short = scratch.file("short", [1, 2, 3])
        #expect(try FileSystem.head(of: short, count: 16, failing: .noInput) == [1, 2, 3])
        #expect(try FileSystem.head(of: scratch.file("empty", []), count: 16, failing: .noInput) == [])
    }

    // MARK: - A directory where a file is expected, and the other way round

    @Test("a directory where a file is expected")
    func directoryForFile() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path("trips.json")
        #expect(mkdir(dir, 0o755) == 0)
        let e = Self.error { _ = try FileSystem.openForReading(dir) }
        #expect(e?.kind == .noInput)
        #expect(e?.message == "\(dir): is a directory")
        // A directory can be opened but not read: it has no first bytes.
        #expect(try FileSystem.head(of: dir, count: 16, failing: .noInput) == [])
        // A file cannot replace a directory.
        #expect(mkdir(scratch.path("full"), 0o755) == 0)
        scratch.file("full/x", "x")
        let source = scratch.file("new", "n")
        let r = Self.error { try FileSystem.rename(source, to: scratch.path("full")) }
        #expect(r?.kind == .cantCreate)
        #expect(r?.message == "\(scratch.path("full")): cannot create: Is a directory")
        #expect(scratch.contents("new") == "n", "a failed rename leaves the source")
    }

    @Test("a file where a directory is expected")
    func fileForDirectory() {
        let scratch = ScratchDirectory()
        let file = scratch.file("out", "x")
        let e = Self.error { try FileSystem.makeDirectory(file) }
        #expect(e?.kind == .cantCreate)
        #expect(e?.message == "\(file): exists and is not a directory")
        let listing = Self.error { _ = try FileSystem.entries(of: file) }
        #expect(listing?.message == "\(file): cannot read directory: Not a directory")
        let inside = Self.error { _ = try FileSystem.kind(of: file + "/trips.csv", failing: .noInput) }
        #expect(inside?.message == "\(file)/trips.csv: cannot open: Not a directory")
    }

    // MARK: - Permission denied

    @Test("nothing in a directory that may not be searched can be looked at", .disabled(if: FileSystemTests.isRoot, FileSystemTests.rootNote))
    func unsearchableDirectory() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path("locked")
        #expect(mkdir(dir, 0o755) == 0)
        let inside = scratch.file("locked/trips.csv", "x")
        #expect(chmod(dir, 0o000) == 0)
        defer { chmod(dir, 0o755) }
        #expect(FileSystem.kind(inside) == nil)
        #expect(Self.error { _ = try FileSystem.kind(of: inside, failing: .noInput) }?.message == "\(inside): cannot open: Permission denied")
        #expect(Self.error { _ = try FileSystem.openForReading(inside) }?.message == "\(inside): cannot open: Permission denied")
        let listing = Self.error { _ = try FileSystem.entries(of: dir) }
        #expect(listing?.kind == .noInput)
        #expect(listing?.message == "\(dir): cannot read directory: Permission denied")
    }

    @Test("a directory that may not be written takes no new entry", .disabled(if: FileSystemTests.isRoot, FileSystemTests.rootNote))
    func readOnlyDirectory() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path("readonly")
        #expect(mkdir(dir, 0o755) == 0)
        let file = scratch.file("readonly/a", "x")
        #expect(chmod(dir, 0o555) == 0)
        defer { chmod(dir, 0o755) }
        let made = Self.error { try FileSystem.makeDirectory(dir + "/sub") }
        #expect(made?.kind == .cantCreate)
        #expect(made?.message == "\(dir)/sub: cannot create: Permission denied")
        let unique = Self.error { _ = try FileSystem.makeUniqueFile(template: dir + "/.t.XXXXXX", mode: 0o644, name: dir + "/t") }
        #expect(unique?.message == "\(dir)/t: cannot create: Permission denied")
        let renamed = Self.error { try FileSystem.rename(file, to: dir + "/b") }
        #expect(renamed?.message == "\(dir)/b: cannot create: Permission denied")
        FileSystem.remove(file)
        #expect(FileSystem.exists(file), "remove fails quietly")
    }

    @Test("a file that may not be read cannot be opened", .disabled(if: FileSystemTests.isRoot, FileSystemTests.rootNote))
    func unreadableFile() throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("secret.csv", "x")
        #expect(chmod(file, 0o200) == 0)
        let e = Self.error { _ = try FileSystem.openForReading(file) }
        #expect(e?.kind == .noInput)
        #expect(e?.message == "\(file): cannot open: Permission denied")
        #expect(Self.error { _ = try FileSystem.head(of: file, count: 16, failing: .cantCreate) }?.kind == .cantCreate)
        #expect(FileSystem.kind(file) == .file, "it can still be looked at")
    }

    // MARK: - Making, listing, removing, renaming

    @Test("a directory is made with its mode, and one already there is fine")
    func makeDirectory() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path("out")
        try FileSystem.makeDirectory(dir, mode: 0o700)
        #expect(FileSystem.kind(dir) == .directory)
        #expect(Self.mode(dir) == 0o700)
        try FileSystem.makeDirectory(dir)
        let nested = Self.error { try FileSystem.makeDirectory(scratch.path("a/b")) }
        #expect(nested?.kind == .cantCreate)
        #expect(nested?.message == "\(scratch.path("a/b")): cannot create: No such file or directory")
    }

    @Test("a listing has hidden names but not . and ..")
    func entries() throws {
        let scratch = ScratchDirectory()
        scratch.file(".hidden", "x")
        scratch.file("a.csv", "x")
        #expect(mkdir(scratch.path("sub"), 0o755) == 0)
        #expect(Set(try FileSystem.entries(of: scratch.path)) == [".hidden", "a.csv", "sub"])
        #expect(try FileSystem.entries(of: scratch.path("sub")) == [])
    }

    @Test("removing takes away what it can and never fails")
    func removing() {
        let scratch = ScratchDirectory()
        let file = scratch.file("a", "x")
        FileSystem.remove(file)
        #expect(!FileSystem.exists(file))
        FileSystem.remove(file)
        let dir = scratch.path("d")
        #expect(mkdir(dir, 0o755) == 0)
        scratch.file("d/one", "1")
        scratch.file("d/.two", "2")
        FileSystem.removeDirectory(dir)
        #expect(FileSystem.exists(dir), "a directory with files in it stays")
        FileSystem.removeDirectoryAndFiles(dir)
        #expect(!FileSystem.exists(dir))
        FileSystem.removeDirectoryAndFiles(dir)
    }

    @Test("a rename replaces its target; a failure names the target, or the name given")
    func renaming() throws {
        let scratch = ScratchDirectory()
        let from = scratch.file("new", "new"), to = scratch.file("old", "old")
        try FileSystem.rename(from, to: to)
        #expect(scratch.contents("old") == "new")
        #expect(!FileSystem.exists(from))
        let missing = Self.error { try FileSystem.rename(from, to: to) }
        #expect(missing?.kind == .cantCreate)
        #expect(missing?.message == "\(to): cannot create: No such file or directory")
        let named = Self.error { try FileSystem.rename(from, to: to, name: "out", doing: "cannot replace") }
        #expect(named?.message == "out: cannot replace: No such file or directory")
    }

    @Test("unique files and directories are made from a template, with the mode given")
    func uniqueNames() throws {
        let scratch = ScratchDirectory()
        let (fd, path) = try FileSystem.makeUniqueFile(template: scratch.path(".out.json.XXXXXX"), mode: 0o644, name: "out.json")
        close(fd)
        #expect(path.hasPrefix(scratch.path(".out.json.")) && !path.hasSuffix("XXXXXX"))
        #expect(FileSystem.kind(path) == .file)
        #expect(Self.mode(path) == 0o644)
        let dir = try FileSystem.makeUniqueDirectory(template: scratch.path(".out.XXXXXX"), mode: 0o755, name: "out")
        #expect(FileSystem.kind(dir) == .directory)
        #expect(Self.mode(dir) == 0o755)
        let e = Self.error { _ = try FileSystem.makeUniqueFile(template: scratch.path("gone/.t.XXXXXX"), mode: 0o644, name: "gone/t") }
        #expect(e?.kind == .cantCreate)
        #expect(e?.message == "gone/t: cannot create: No such file or directory")
        let d = Self.error { _ = try FileSystem.makeUniqueDirectory(template: scratch.path("gone/.t.XXXXXX"), mode: 0o755, name: "gone/t") }
        #expect(d?.message == "gone/t: cannot create: No such file or directory")
    }

    @Test("a store's temporary file lies beside its target, unregistered and without a PID")
    func storeFile() throws {
        let scratch = ScratchDirectory()
        let path = try TemporaryPaths.makeStoreFile(beside: scratch.path("out.sqlite"))
        let name = FileSystem.split(path).name
        #expect(name.hasPrefix(".out.sqlite.tripconv-") && name.count == ".out.sqlite.tripconv-".count + 6)
        #expect(FileSystem.size(path) == 0)
        #expect(Self.mode(path) == 0o644)
    }

    @Test("syncing a file by its path; a missing one is a write error")
    func syncing() throws {
        let scratch = ScratchDirectory()
        try FileSystem.sync(scratch.file("a", "x"), name: "a")
        let null = try FileSystem.openForWriting("/dev/null")
        defer { close(null) }
        try FileSystem.sync(descriptor: null, name: "/dev/null")
        let e = Self.error { try FileSystem.sync(scratch.path("missing"), name: "out.sqlite") }
        #expect(e?.kind == .io)
        #expect(e?.message == "out.sqlite: write error: No such file or directory")
    }

    @Test("a path splits at its last slash", arguments: [
        ("a/b", "a", "b"), ("/b", "/", "b"), ("b", ".", "b"), ("a/b/", "a/b", ""), ("./x.json", ".", "x.json"),
    ])
    func split(path: String, directory: String, name: String) {
        let parts = FileSystem.split(path)
        #expect(parts.directory == directory && parts.name == name)
    }

    @Test("a failed call's error reads NAME: DOING: the system's reason")
    func failureMessage() {
        let e = FileSystem.failure(.io, "trips.csv", "read error", code: EIO)
        #expect(e.kind == .io)
        #expect(e.message == "trips.csv: read error: Input/output error")
    }
}
