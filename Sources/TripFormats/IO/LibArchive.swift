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
struct LibArchive: SharedLibraryTable {
    /// The table, loaded once for the run; a failure to load fails each run that asks, the same way.
    static func load() throws -> LibArchive { try loaded.get() }
    private static let loaded = Result { try resolve() }
    static let library = Result {
        try SharedLibrary(["libarchive.so.13", "libarchive.13.dylib"], package: "libarchive13",
                          for: "reading an archive or a bzip2, xz or zstd input, or writing a compressed output")
    }

    // The callbacks libarchive calls, as C function pointers (the header's typedefs import as Swift functions).
    typealias OpenCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
    typealias ReadCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>?) -> la_ssize_t
    typealias SkipCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, la_int64_t) -> la_int64_t
    typealias SeekCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, la_int64_t, Int32) -> la_int64_t
    typealias WriteCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeRawPointer?, Int) -> la_ssize_t
    typealias CloseCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32

    let archive_entry_filetype: @convention(c) (OpaquePointer?) -> mode_t = Self.function("archive_entry_filetype")
    let archive_entry_free: @convention(c) (OpaquePointer?) -> Void = Self.function("archive_entry_free")
    let archive_entry_hardlink: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>? = Self.function("archive_entry_hardlink")
    let archive_entry_is_encrypted: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_entry_is_encrypted")
    let archive_entry_new: @convention(c) () -> OpaquePointer? = Self.function("archive_entry_new")
    let archive_entry_pathname: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>? = Self.function("archive_entry_pathname")
    let archive_entry_pathname_utf8: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>? = Self.function("archive_entry_pathname_utf8")
    let archive_entry_set_filetype: @convention(c) (OpaquePointer?, UInt32) -> Void = Self.function("archive_entry_set_filetype")
    let archive_entry_set_pathname: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void = Self.function("archive_entry_set_pathname")
    let archive_entry_set_perm: @convention(c) (OpaquePointer?, mode_t) -> Void = Self.function("archive_entry_set_perm")
    let archive_entry_size: @convention(c) (OpaquePointer?) -> la_int64_t = Self.function("archive_entry_size")
    let archive_entry_size_is_set: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_entry_size_is_set")
    let archive_error_string: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>? = Self.function("archive_error_string")
    let archive_filter_bytes: @convention(c) (OpaquePointer?, Int32) -> la_int64_t = Self.function("archive_filter_bytes")
    let archive_filter_code: @convention(c) (OpaquePointer?, Int32) -> Int32 = Self.function("archive_filter_code")
    let archive_format: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_format")
    let archive_read_data: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int) -> la_ssize_t = Self.function("archive_read_data")
    let archive_read_free: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_free")
    let archive_read_header_position: @convention(c) (OpaquePointer?) -> la_int64_t = Self.function("archive_read_header_position")
    let archive_read_new: @convention(c) () -> OpaquePointer? = Self.function("archive_read_new")
    let archive_read_next_header: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32 = Self.function("archive_read_next_header")
    let archive_read_open2: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, OpenCallback?, ReadCallback?, SkipCallback?, CloseCallback?) -> Int32
        = Self.function("archive_read_open2")
    let archive_read_set_seek_callback: @convention(c) (OpaquePointer?, SeekCallback?) -> Int32 = Self.function("archive_read_set_seek_callback")
    let archive_read_support_filter_bzip2: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_support_filter_bzip2")
    let archive_read_support_filter_xz: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_support_filter_xz")
    let archive_read_support_filter_zstd: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_support_filter_zstd")
    let archive_read_support_format_empty: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_support_format_empty")
    let archive_read_support_format_raw: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_support_format_raw")
    let archive_read_support_format_tar: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_support_format_tar")
    let archive_read_support_format_zip: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_read_support_format_zip")
    let archive_write_add_filter_bzip2: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_add_filter_bzip2")
    let archive_write_add_filter_gzip: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_add_filter_gzip")
    let archive_write_add_filter_xz: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_add_filter_xz")
    let archive_write_add_filter_zstd: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_add_filter_zstd")
    let archive_write_close: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_close")
    let archive_write_data: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> la_ssize_t = Self.function("archive_write_data")
    let archive_write_fail: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_fail")
    let archive_write_free: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_free")
    let archive_write_header: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = Self.function("archive_write_header")
    let archive_write_new: @convention(c) () -> OpaquePointer? = Self.function("archive_write_new")
    let archive_write_open2: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, OpenCallback?, WriteCallback?, CloseCallback?, CloseCallback?) -> Int32
        = Self.function("archive_write_open2")
    let archive_write_set_bytes_in_last_block: @convention(c) (OpaquePointer?, Int32) -> Int32 = Self.function("archive_write_set_bytes_in_last_block")
    let archive_write_set_filter_option: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
        = Self.function("archive_write_set_filter_option")
    let archive_write_set_format_raw: @convention(c) (OpaquePointer?) -> Int32 = Self.function("archive_write_set_format_raw")
}
