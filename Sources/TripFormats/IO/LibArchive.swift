#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibArchive

/// libarchive's functions, opened with the first archive, bzip2/xz/zstd input or compressed output
/// of a run (`SharedLibrary`): a run that reads and writes plain files never maps libarchive nor what
/// it brings (libxml2 and ICU, nettle, lz4, acl, …). gzip input is zlib's, linked (one small library).
/// The types and constants (`ARCHIVE_EOF`, `tripconv_AE_IFREG`) are still the headers'.
struct LibArchive: Sendable {
    /// The table, loaded once for the run; a failure to load fails each run that asks, the same way.
    static func load() throws -> LibArchive { try loaded.get() }
    private static let loaded = Result {
        try LibArchive(SharedLibrary(["libarchive.so.13", "libarchive.13.dylib"], package: "libarchive13",
                                     for: "reading an archive or a bzip2, xz or zstd input, or writing a compressed output"))
    }

    // The callbacks libarchive calls, as C function pointers (the header's typedefs import as Swift functions).
    typealias OpenCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
    typealias ReadCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>?) -> la_ssize_t
    typealias SkipCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, la_int64_t) -> la_int64_t
    typealias SeekCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, la_int64_t, Int32) -> la_int64_t
    typealias WriteCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeRawPointer?, Int) -> la_ssize_t
    typealias CloseCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32

    let archive_entry_filetype: @convention(c) (OpaquePointer?) -> mode_t
    let archive_entry_free: @convention(c) (OpaquePointer?) -> Void
    let archive_entry_hardlink: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let archive_entry_is_encrypted: @convention(c) (OpaquePointer?) -> Int32
    let archive_entry_new: @convention(c) () -> OpaquePointer?
    let archive_entry_pathname: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let archive_entry_pathname_utf8: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let archive_entry_set_filetype: @convention(c) (OpaquePointer?, UInt32) -> Void
    let archive_entry_set_pathname: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void
    let archive_entry_set_perm: @convention(c) (OpaquePointer?, mode_t) -> Void
    let archive_entry_size: @convention(c) (OpaquePointer?) -> la_int64_t
    let archive_entry_size_is_set: @convention(c) (OpaquePointer?) -> Int32
    let archive_error_string: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let archive_filter_bytes: @convention(c) (OpaquePointer?, Int32) -> la_int64_t
    let archive_filter_code: @convention(c) (OpaquePointer?, Int32) -> Int32
    let archive_format: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_data: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int) -> la_ssize_t
    let archive_read_free: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_header_position: @convention(c) (OpaquePointer?) -> la_int64_t
    let archive_read_new: @convention(c) () -> OpaquePointer?
    let archive_read_next_header: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let archive_read_open2: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, OpenCallback?, ReadCallback?, SkipCallback?, CloseCallback?) -> Int32
    let archive_read_set_seek_callback: @convention(c) (OpaquePointer?, SeekCallback?) -> Int32
    let archive_read_support_filter_bzip2: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_support_filter_xz: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_support_filter_zstd: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_support_format_empty: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_support_format_raw: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_support_format_tar: @convention(c) (OpaquePointer?) -> Int32
    let archive_read_support_format_zip: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_add_filter_bzip2: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_add_filter_gzip: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_add_filter_xz: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_add_filter_zstd: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_close: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_data: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> la_ssize_t
    let archive_write_fail: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_free: @convention(c) (OpaquePointer?) -> Int32
    let archive_write_header: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
    let archive_write_new: @convention(c) () -> OpaquePointer?
    let archive_write_open2: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, OpenCallback?, WriteCallback?, CloseCallback?, CloseCallback?) -> Int32
    let archive_write_set_bytes_in_last_block: @convention(c) (OpaquePointer?, Int32) -> Int32
    let archive_write_set_filter_option: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let archive_write_set_format_raw: @convention(c) (OpaquePointer?) -> Int32

    private init(_ lib: SharedLibrary) throws {
        archive_entry_filetype = try lib.function("archive_entry_filetype")
        archive_entry_free = try lib.function("archive_entry_free")
        archive_entry_hardlink = try lib.function("archive_entry_hardlink")
        archive_entry_is_encrypted = try lib.function("archive_entry_is_encrypted")
        archive_entry_new = try lib.function("archive_entry_new")
        archive_entry_pathname = try lib.function("archive_entry_pathname")
        archive_entry_pathname_utf8 = try lib.function("archive_entry_pathname_utf8")
        archive_entry_set_filetype = try lib.function("archive_entry_set_filetype")
        archive_entry_set_pathname = try lib.function("archive_entry_set_pathname")
        archive_entry_set_perm = try lib.function("archive_entry_set_perm")
        archive_entry_size = try lib.function("archive_entry_size")
        archive_entry_size_is_set = try lib.function("archive_entry_size_is_set")
        archive_error_string = try lib.function("archive_error_string")
        archive_filter_bytes = try lib.function("archive_filter_bytes")
        archive_filter_code = try lib.function("archive_filter_code")
        archive_format = try lib.function("archive_format")
        archive_read_data = try lib.function("archive_read_data")
        archive_read_free = try lib.function("archive_read_free")
        archive_read_header_position = try lib.function("archive_read_header_position")
        archive_read_new = try lib.function("archive_read_new")
        archive_read_next_header = try lib.function("archive_read_next_header")
        archive_read_open2 = try lib.function("archive_read_open2")
        archive_read_set_seek_callback = try lib.function("archive_read_set_seek_callback")
        archive_read_support_filter_bzip2 = try lib.function("archive_read_support_filter_bzip2")
        archive_read_support_filter_xz = try lib.function("archive_read_support_filter_xz")
        archive_read_support_filter_zstd = try lib.function("archive_read_support_filter_zstd")
        archive_read_support_format_empty = try lib.function("archive_read_support_format_empty")
        archive_read_support_format_raw = try lib.function("archive_read_support_format_raw")
        archive_read_support_format_tar = try lib.function("archive_read_support_format_tar")
        archive_read_support_format_zip = try lib.function("archive_read_support_format_zip")
        archive_write_add_filter_bzip2 = try lib.function("archive_write_add_filter_bzip2")
        archive_write_add_filter_gzip = try lib.function("archive_write_add_filter_gzip")
        archive_write_add_filter_xz = try lib.function("archive_write_add_filter_xz")
        archive_write_add_filter_zstd = try lib.function("archive_write_add_filter_zstd")
        archive_write_close = try lib.function("archive_write_close")
        archive_write_data = try lib.function("archive_write_data")
        archive_write_fail = try lib.function("archive_write_fail")
        archive_write_free = try lib.function("archive_write_free")
        archive_write_header = try lib.function("archive_write_header")
        archive_write_new = try lib.function("archive_write_new")
        archive_write_open2 = try lib.function("archive_write_open2")
        archive_write_set_bytes_in_last_block = try lib.function("archive_write_set_bytes_in_last_block")
        archive_write_set_filter_option = try lib.function("archive_write_set_filter_option")
        archive_write_set_format_raw = try lib.function("archive_write_set_format_raw")
    }
}
