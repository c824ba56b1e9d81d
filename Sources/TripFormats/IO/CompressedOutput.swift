internal import CLibArchive
import TripKit

/// Compresses an output as it is written (issue 17): libarchive's filter of the compression's
/// name over its "raw" format (one entry, no archive around it), every compressed block handed to
/// `sink`. gzip is written without a name or a time (`gzip:!timestamp`), so the same trips give the
/// same bytes; the last block is not padded (`bytes_in_last_block` 1).
///
/// Memory: libarchive's filter buffers and the compressor's window (zstd at its default level,
/// 8 MiB at most; xz `-6`, 8 MiB).
final class CompressedOutput {
    private let name: String
    private let compression: Compression
    fileprivate let sink: (UnsafeRawBufferPointer) throws -> Void
    fileprivate var failure: (any Error)?
    private let archive: OpaquePointer
    /// libarchive, opened by the first compressed output or input of the run (`LibArchive`).
    private let la: LibArchive
    private var entry: OpaquePointer?
    private var closed = false

    init(_ compression: Compression, name: String, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        self.name = name
        self.compression = compression
        self.sink = sink
        let la = try LibArchive.load()
        self.la = la
        guard let a = la.archive_write_new() else { throw TripError(.io, "\(name): cannot start a \(compression.rawValue) compressor") }
        archive = a
        switch compression {
        case .gzip:
            _ = la.archive_write_add_filter_gzip(a)
            _ = la.archive_write_set_filter_option(a, "gzip", "timestamp", nil)
        case .bzip2: _ = la.archive_write_add_filter_bzip2(a)
        case .xz: _ = la.archive_write_add_filter_xz(a)
        case .zstd: _ = la.archive_write_add_filter_zstd(a)
        }
        _ = la.archive_write_set_format_raw(a)
        _ = la.archive_write_set_bytes_in_last_block(a, 1)
        let client = Unmanaged.passUnretained(self).toOpaque()
        let rc = la.archive_write_open2(a, client, nil, { _, client, bytes, count in
            let output = Unmanaged<CompressedOutput>.fromOpaque(client!).takeUnretainedValue()
            do {
                try output.sink(UnsafeRawBufferPointer(start: bytes, count: count))
                return count
            } catch {
                output.failure = error
                return -1
            }
        }, nil, nil)
        try check(rc)
        let e = la.archive_entry_new()
        entry = e
        la.archive_entry_set_pathname(e, "data")
        la.archive_entry_set_filetype(e, 0o100000)
        la.archive_entry_set_perm(e, 0o644)
        try check(la.archive_write_header(a, e))
    }

    deinit {
        if !closed { _ = la.archive_write_fail(archive) }
        _ = la.archive_write_free(archive)
        if let entry { la.archive_entry_free(entry) }
    }

    private func check(_ rc: Int32) throws {
        guard rc != ARCHIVE_OK else { return }
        if let failure { throw failure }
        let why = la.archive_error_string(archive).map { String(cString: $0) } ?? "error \(rc)"
        throw TripError(.io, "\(name): cannot compress with \(compression.rawValue): \(why)")
    }

    /// Compresses bytes; whole compressed blocks go to the sink as they fill.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = la.archive_write_data(archive, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 { try check(Int32(n)) }
            guard n > 0 else { try check(ARCHIVE_FATAL); return }
            offset += n
        }
    }

    /// Compresses what is left and writes the format's trailer (the gzip CRC and length, …).
    func finish() throws {
        guard !closed else { return }
        closed = true
        try check(la.archive_write_close(archive))
    }
}
