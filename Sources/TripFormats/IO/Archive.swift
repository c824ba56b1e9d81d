#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibArchive
import TripKit

/// The archives read as directories (issue 17): tar (plain or compressed) and zip.
public enum ArchiveFormat: String, Sendable {
    case tar, zip

    /// The archive a path's name says: `.zip`, `.tar`, and tar under a compression's extension or its
    /// short name (`.tar.gz`, `.tgz`, `.tar.bz2`, `.tbz2`, `.tar.xz`, `.txz`, `.tar.zst`, `.tzst`).
    public static func named(by path: String) -> ArchiveFormat? {
        let base = (path.split(separator: "/").last.map(String.init) ?? path).lowercased()
        if base.hasSuffix(".zip") { return .zip }
        let tars = [".tar", ".tgz", ".tbz", ".tbz2", ".txz", ".tzst"] + Compression.allCases.flatMap { $0.extensions.map { ".tar." + $0 } }
        return tars.contains { base.hasSuffix($0) && base.count > $0.count } ? .tar : nil
    }

    /// The archive whose (decompressed) first bytes are `head`: zip's `PK\3\4` (or an empty zip's
    /// `PK\5\6`), tar's `ustar` at byte 257.
    public static func told(by head: [UInt8]) -> ArchiveFormat? {
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if head.count >= 262, Array(head[257..<262]) == Array("ustar".utf8) { return .tar }
        return nil
    }

    /// Whether a file is an archive by its first bytes, decompressed if it is compressed: for an
    /// input whose name tells no format.
    public static func told(byFile path: String) -> ArchiveFormat? {
        (try? ByteInput.head(of: .file(path), count: 512)).flatMap { told(by: $0.bytes) }
    }
}

/// The limits on how far compressed bytes may expand (`ReadOptions.maxExpansionRatio`,
/// `maxExpandedBytes`): past them an input is refused as a decompression bomb.
struct ExpansionLimits {
    var ratio: Int
    var grace: Int
    var total: Int

    init(_ options: ReadOptions) {
        ratio = options.maxExpansionRatio; grace = options.expansionGrace; total = options.maxExpandedBytes
    }

    /// Throws a `.data` error when `expanded` bytes from `compressed` pass a limit.
    func check(name: String, expanded: Int, from compressed: Int, what: String) throws {
        if total > 0, expanded > total {
            throw TripError.data("\(name): \(what) expands past \(total) bytes, the most one input may: refused as a decompression bomb",
                                 notes: ["--max-expanded-size raises the limit (0: no limit)"])
        }
        if ratio > 0, expanded > grace, expanded / max(compressed, 1) > ratio {
            throw TripError.data("\(name): \(what) expands more than \(ratio) times (\(expanded) bytes from \(compressed)): refused as a decompression bomb",
                                 notes: ["--max-expansion-ratio raises the limit (0: no limit)"])
        }
    }
}

/// One member of an archive: its path in the archive and the format it is read in. It is read, once,
/// while its archive is at it (`ArchiveMembers.next()` moves on).
public final class ArchiveMember: @unchecked Sendable, Equatable, CustomStringConvertible {
    /// The archive's name (its path, or `<stdin>`), the member's path in it (without `./`), and
    /// the format it is read in.
    public let archiveName: String
    public let path: String
    public let format: Format
    /// Its place in the archive, from 1.
    public let number: Int
    fileprivate let archive: ArchiveMembers
    fileprivate var claimed = false

    fileprivate init(archive: ArchiveMembers, path: String, format: Format, number: Int) {
        self.archive = archive; self.archiveName = archive.name; self.path = path; self.format = format; self.number = number
    }

    /// The archive's format (tar or zip) and compression (a `.tar.gz`'s gzip; nil for plain bytes).
    public var archiveFormat: ArchiveFormat? { archive.format }
    public var archiveCompression: Compression? { archive.compression }

    /// `backup.zip!2019/trips.xml`: the name in messages and places.
    public var name: String { archiveName + "!" + path }
    public var description: String { name }

    public static func == (a: ArchiveMember, b: ArchiveMember) -> Bool { a === b }

    /// Takes the member for a reader: it can be read once.
    func claim() throws {
        guard !claimed else { throw TripError(.io, "\(name): an archive's member is read once") }
        claimed = true
    }

    /// Reads the member's next bytes; 0 at its end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try archive.readData(of: self, into: buffer)
    }
}

/// An archive read as a directory: its members one after another, in the archive's order, each with
/// a known extension (or all, given a format) read as its own input; nothing is unpacked to disk.
///
/// Refused, as a `.data` error naming the member: links (symbolic and hard), devices, FIFOs and
/// sockets; encrypted members; names that climb out of the archive (`..`, an absolute path, a drive);
/// an archive inside the archive; a store (read in place, so never from an archive); a member that
/// expands past the limits. Directories and hidden members (a name part starting with `.`, and
/// macOS's `__MACOSX`) are passed over, as a directory's hidden files are.
///
/// Memory: the input's decoder, libarchive's buffers (a zip's central directory, read first from a
/// file), and 256 KiB of archive bytes.
public final class ArchiveMembers {
    public let name: String
    /// tar or zip, once the first member has been read (libarchive tells it by the bytes).
    public private(set) var format: ArchiveFormat?
    /// The compression of the archive as a whole (a `.tar.gz`), nil for plain bytes.
    public var compression: Compression? { input.compression }
    private let input: ByteInput
    private let reading: LibArchiveInput
    private var archive: OpaquePointer { reading.handle }
    private var la: LibArchive { reading.la }
    private let memberFormat: Format?
    /// Whether a store member is given (its reader reads a temporary copy) rather than refused.
    private let copiesStores: Bool
    private let limits: ExpansionLimits
    /// Where a member's rest is read to and let go.
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
    /// The member being read, its bytes so far and its size if the archive gives it.
    private weak var current: ArchiveMember?
    private var currentRead = 0
    private var currentSize: Int?
    private var currentEnded = true
    private var members = 0
    /// Members given to read, and regular files passed over for an extension no format has.
    public private(set) var membersGiven = 0
    public private(set) var passedOver = 0
    /// Member bytes given so far, all members together.
    private var expanded = 0
    private var ended = false
    /// The size of the archive's file, when it is a plain file (read with seeks).
    private let sourceSize: Int?

    /// The C.UTF-8 locale libarchive converts names in (in the C locale it gives no UTF-8 name for
    /// non-ASCII names); set on the calling thread around each call, so the process is untouched.
    nonisolated(unsafe) private static let utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)

    /// Opens the archive at `location` (a file or standard input, compressed or not). `from` reads
    /// every member in that format; nil, each member with a known extension in the format it says.
    public init(_ location: InputLocation, from: Format?, options: ReadOptions) throws {
        name = location.name
        input = try ByteInput(location, options: options)
        memberFormat = from
        limits = ExpansionLimits(options)
        copiesStores = options.copiesStores
        let input = self.input
        sourceSize = input.seek(0, whence: SEEK_CUR) != nil ? input.fileSize : nil
        // A plain file gets a seek callback: zip's seekable reader reads the central directory,
        // which alone says which members are links.
        reading = try LibArchiveInput(name: name, source: { try input.read(into: $0) },
                                      seek: sourceSize == nil ? nil : { input.seek($0, whence: $1) }) { a, la in
            // tar and zip only: never `support_format_all` (mtree reads files the archive names;
            // RAR, 7z, ISO and CAB hold most of libarchive's CVEs) and no filters (the input is
            // decoded already, by our decoders).
            _ = la.archive_read_support_format_tar(a)
            _ = la.archive_read_support_format_zip(a)
            _ = la.archive_read_support_format_empty(a)
        }
        // libarchive reads a zip file's whole central directory first, holding every entry.
        if let count = zipEntryCount(), count > ArchiveMembers.maxZipEntries {
            throw TripError.data("\(name): a zip of \(count) members, more than the \(ArchiveMembers.maxZipEntries) read from one file",
                                 notes: ["its directory is held in memory while it is read; unpack it, or pipe it in (cat \(name) | tripconv …), which reads it as it streams"])
        }
        let reading = self.reading
        try check(withUTF8Locale { reading.open() }, at: nil)
    }

    deinit { scratch.deallocate() }

    /// The most members of a zip read from a file: libarchive holds its central directory, a few
    /// hundred bytes an entry (about 20 MiB at the limit).
    static let maxZipEntries = 100_000

    /// The member count a zip file's end of central directory gives (the zip64 record's when it
    /// has one), nil for a file that has none (a tar, or not an archive: libarchive says so).
    private func zipEntryCount() -> Int? {
        guard let size = sourceSize, size >= 22 else { return nil }
        let tailSize = min(size, 65_557)
        var tail = [UInt8](repeating: 0, count: tailSize)
        guard input.read(&tail, at: size - tailSize) == tailSize else { return nil }
        func le(_ at: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(tail[at + $1]) << (8 * $1) } }
        // The end record's signature, PK\5\6, the last one in the file's last 64 KiB.
        guard let eocd = (0...(tailSize - 22)).reversed().first(where: { le($0, 4) == 0x0605_4B50 }) else { return nil }
        let count = le(eocd + 10, 2)
        guard count == 0xFFFF, eocd >= 20, le(eocd - 20, 4) == 0x0706_4B50 else { return count }
        // Zip64: its locator points at the zip64 record, whose count is 8 bytes at 32.
        var record = [UInt8](repeating: 0, count: 40)
        let at = le(eocd - 20 + 8, 8)
        guard at >= 0, at < size, input.read(&record, at: at) == 40,
              record.starts(with: [0x50, 0x4B, 6, 6]) else { return count }
        return (0..<8).reduce(0) { $0 | Int(record[32 + $1]) << (8 * $1) } & Int.max
    }

    private func withUTF8Locale<T>(_ body: () throws -> T) rethrows -> T {
        guard let utf8 = Self.utf8 else { return try body() }
        let old = uselocale(utf8)
        defer { uselocale(old) }
        return try body()
    }

    /// The next member to read, nil at the archive's end. The member before it is read to its end
    /// first (a zip member's CRC is checked there), whether its reader did or not.
    public func next() throws -> ArchiveMember? {
        guard !ended else { return nil }
        if !currentEnded {
            while try readRest() > 0 {}
        }
        current = nil
        return try withUTF8Locale { () throws -> ArchiveMember? in
            while true {
                var entry: OpaquePointer?
                let rc = la.archive_read_next_header(archive, &entry)
                if rc == ARCHIVE_EOF {
                    ended = true
                    try readToEnd()
                    return nil
                }
                members += 1
                let stored = entry.flatMap(pathname)
                let place = stored.map { "\(name)!\($0)" } ?? "\(name): member \(members)"
                try check(rc, at: place)
                guard let entry, let stored else { throw TripError.data("\(place): a member without a name") }
                if format == nil {
                    format = (la.archive_format(archive) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP ? .zip : .tar
                }
                if let member = try member(entry, stored: stored, place: place) { return member }
            }
        }
    }

    /// After a stream's end of archive, the rest of its bytes (a tar's padding), read so that a
    /// compressed archive's checksum is checked and a truncated one is found; a file read with seeks
    /// (a zip) has been read where it matters.
    private func readToEnd() throws {
        guard sourceSize == nil else { return }
        do {
            while try input.read(into: scratch) > 0 {}
        } catch let e as TripError where e.message.hasPrefix(name + ": ") {
            throw TripError(e.kind, name + ": after the archive's last member: " + e.message.dropFirst(name.count + 2), notes: e.notes)
        }
    }

    /// The member an entry is, nil for one passed over (a directory, a hidden file, an unknown
    /// extension); a refused one throws.
    private func member(_ entry: OpaquePointer, stored: String, place: String) throws -> ArchiveMember? {
        let type = UInt32(la.archive_entry_filetype(entry)) & tripconv_AE_IFMT
        if la.archive_entry_hardlink(entry) != nil {
            throw TripError.data("\(place): a hard link: links in an archive are refused")
        }
        switch type {
        case tripconv_AE_IFDIR: return nil
        case tripconv_AE_IFREG: break
        case tripconv_AE_IFLNK: throw TripError.data("\(place): a symbolic link: links in an archive are refused")
        default: throw TripError.data("\(place): a device, FIFO or socket: only regular files are read from an archive")
        }
        let path = try Self.relativePath(stored, place: place)
        if path.split(separator: "/").contains(where: { $0.hasPrefix(".") || $0 == "__MACOSX" }) { return nil }
        if la.archive_entry_is_encrypted(entry) != 0 {
            throw TripError.data("\(place): encrypted, not supported: decrypt the archive first")
        }
        if ArchiveFormat.named(by: path) != nil {
            throw TripError.data("\(place): an archive inside an archive is not read: unpack the outer one first")
        }
        if Format.isCompressedStore(path) || (!copiesStores && (Format(path: path)?.isStore == true || memberFormat?.isStore == true)) {
            throw TripError.data("\(place): a store is read in place, not from an archive: unpack it first")
        }
        let store = copiesStores && memberFormat == nil ? Format(path: path).flatMap { $0.isStore ? $0 : nil } : nil
        guard let format = memberFormat ?? store ?? Format(streamPath: path) else {
            passedOver += 1
            return nil
        }
        membersGiven += 1
        currentRead = 0
        currentSize = la.archive_entry_size_is_set(entry) != 0 ? Int(la.archive_entry_size(entry)) : nil
        currentEnded = false
        let member = ArchiveMember(archive: self, path: path, format: format, number: members)
        current = member
        return member
    }

    /// A member's name as stored: UTF-8 (libarchive converts it in the C.UTF-8 locale), else its
    /// bytes as they are, undecodable ones replaced.
    private func pathname(_ entry: OpaquePointer) -> String? {
        if let utf8 = la.archive_entry_pathname_utf8(entry) { return String(cString: utf8) }
        return la.archive_entry_pathname(entry).map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) }
    }

    /// A stored name as a relative path without `.` or empty parts; one that climbs out of the
    /// archive (`..`, `/…`, `C:…`, a backslash) or holds control characters is refused, so that
    /// `--output-dir` never writes outside its directory.
    static func relativePath(_ stored: String, place: String) throws -> String {
        let refuse = { (why: String) in TripError.data("\(place): \(why): refused, so that nothing is written outside the output directory") }
        if stored.hasPrefix("/") { throw refuse("an absolute path") }
        if stored.contains("\\") { throw refuse("a backslash in a member's name") }
        if stored.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { throw refuse("a control character in a member's name") }
        let parts = stored.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        if let first = parts.first, first.count >= 2, first.dropFirst().first == ":" { throw refuse("a drive in a member's name") }
        if parts.contains("..") { throw refuse("a '..' in a member's name") }
        guard !parts.isEmpty else { throw refuse("an empty member name") }
        return parts.joined(separator: "/")
    }

    /// Reads the current member's next bytes, for its `ByteInput`.
    fileprivate func readData(of member: ArchiveMember, into out: UnsafeMutableRawBufferPointer) throws -> Int {
        guard member === current, !currentEnded else {
            if member === current { return 0 }
            throw TripError(.io, "\(member.name): read after its archive moved on")
        }
        return try withUTF8Locale { try read(into: out, place: member.name) }
    }

    /// The current member's remaining bytes, read and let go.
    private func readRest() throws -> Int {
        try withUTF8Locale { try read(into: scratch, place: current?.name ?? name) }
    }

    private func read(into out: UnsafeMutableRawBufferPointer, place: String) throws -> Int {
        guard let base = out.baseAddress, out.count > 0 else { return 0 }
        let n = la.archive_read_data(archive, base, out.count)
        if n < 0 { try check(Int32(n), at: place) }
        if n <= 0 {
            currentEnded = true
            return 0
        }
        currentRead += n
        expanded += n
        if let size = currentSize, currentRead > size {
            throw TripError.data("\(place): the member holds more than the \(size) bytes its header says: the archive is corrupt")
        }
        // A zip read from a file is read out of order, parts of it more than once (its members may
        // even overlap, as in a zip bomb): the file's size bounds what it holds.
        let compressed = sourceSize.map { min($0, input.rawBytesRead) } ?? input.rawBytesRead
        try limits.check(name: place, expanded: expanded, from: compressed, what: "the archive's data")
        return n
    }

    /// Throws for a libarchive call that did not succeed: the read callback's own error (an I/O
    /// error, a corrupt compressed archive) named for the member, else libarchive's reason.
    /// A warning is an error too: libarchive warns of a bad CRC, and of damage it skipped.
    private func check(_ rc: Int32, at place: String?) throws {
        guard rc != ARCHIVE_OK else { return }
        let place = place ?? name
        if let failure = reading.takeFailure() {
            ended = true
            if let e = failure as? TripError, e.message.hasPrefix(name + ": "), place != name {
                throw TripError(e.kind, place + ": the archive's " + e.message.dropFirst(name.count + 2), notes: e.notes)
            }
            throw failure
        }
        let why = la.archive_error_string(archive).map { String(cString: $0) } ?? "invalid data"
        if rc != ARCHIVE_WARN { ended = true }
        // libarchive knows where the last member's header began, in the archive's own bytes
        // (decompressed, for a compressed one).
        let at = la.archive_read_header_position(archive)
        let whereText = at >= 0 ? "in the member at byte \(at)\(compression == nil ? "" : " of its decompressed data")" : "at its start"
        throw TripError.data("\(place): the archive is corrupt \(whereText): \(why)")
    }
}
