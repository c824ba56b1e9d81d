// The decompressing reader (issue 17): the input is compressed bytes.
//
// The bytes go to a scratch file read as JSON Lines, the reader made by FormatFactory.makeReader as
// the CLI makes it: ByteInput tells gzip, bzip2, xz or zstd by the first bytes and decodes through
// zlib or libarchive. Before the reader, the file's bytes are drained through ByteInput alone, in
// reads of sizes the input's length picks, so the decoders meet buffers of every size and the
// fuzzer is not held up by the JSON scanner on garbage it decoded. A thrown TripError is a clean
// rejection; a trap, an ASan report, a hang, another error type, or a read that gives more bytes
// than its buffer holds is a finding.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

/// Where draining ByteInput stops: 64 KiB of bzip2 or zstd may rightly decode to gigabytes (no cap
/// on a single stream's size yet), which would only spend the fuzzer's time.
let fuzzDecompressedLimit = 256 << 20

let fuzzCompressedTarget = FuzzTarget(name: "compressed") { input in
    let path = fuzzScratch("input.jsonl")
    fuzzWrite(path, input)
    do {
        let bytes = try ByteInput(.file(path))
        let size = [1, 7, 4096, 1 << 16][input.count % 4]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while case let n = try bytes.read(into: buffer), n > 0 {
            guard n <= size else { fuzzFinding("a read of \(size) bytes gave \(n)") }
            total += n
            if total > fuzzDecompressedLimit { break }
        }
        fuzzNote("\(bytes.compression?.rawValue ?? "plain"): \(total) bytes decoded")
    } catch is TripError {
        // A clean rejection; the reader below must reject it too, or stop on its own account.
    } catch {
        fuzzFinding("ByteInput threw a \(type(of: error)), not a TripError: \(error)")
    }
    do {
        var reader = try FormatFactory.makeReader(.file(path), format: .jsonl, options: ReadOptions())
        var count = 0
        while let _ = try reader.next() { count += 1 }
        fuzzNote("read \(count) records, \(reader.detection.compression ?? "plain")")
    } catch let error as TripError {
        fuzzNote("rejected: \(error.message)")
    } catch {
        fuzzFinding("the compressed reader threw a \(type(of: error)), not a TripError: \(error)")
    }
}

// Archives read as directories (issue 17): the input is a tar or zip, plain or compressed.
//
// The bytes go to a scratch file read as an archive through ExpandedInputs, as the CLI reads one:
// each member with a known extension opened with its format's reader and drained. A member the
// archive refuses (a link, a climbing name, an encrypted one) is a TripError, a clean rejection;
// so is corrupt data. A trap, an ASan report, a hang or another error type is a finding, and so is
// a member whose name climbs out of the archive.
let fuzzArchiveTarget = FuzzTarget(name: "archive") { input in
    let path = fuzzScratch("input.archive")
    fuzzWrite(path, input)
    var options = ReadOptions()
    // The fuzzer's inputs are small: a bomb shows as a refusal, not as minutes of decoding.
    options.maxExpandedBytes = fuzzDecompressedLimit
    do {
        var members = ExpandedInputs([RunInput(archive: .file(path))], options: options)
        var count = 0
        while let member = try members.next() {
            guard case .member(let m) = member.location else { fuzzFinding("an archive gave a plain input") }
            if m.path.hasPrefix("/") || m.path.split(separator: "/").contains("..") { fuzzFinding("a climbing member name: \(m.path)") }
            var reader = try member.makeReader(options: options)
            while let _ = try reader.next() { count += 1 }
        }
        fuzzNote("read \(count) records")
    } catch let error as TripError {
        fuzzNote("rejected: \(error.message)")
    } catch {
        fuzzFinding("the archive reader threw a \(type(of: error)), not a TripError: \(error)")
    }
}
