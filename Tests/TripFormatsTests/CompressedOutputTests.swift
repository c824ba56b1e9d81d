import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Compressed outputs (issue 17), read back by programs that are not ours: Python's gzip, bz2 and
/// lzma modules and the zstd tool. Each holds exactly the bytes of the plain output.
@Suite("compressed outputs", .enabled(if: ExternalTool.python3 != nil, "python3 is not installed"))
struct CompressedOutputTests {
    let scratch = ScratchDirectory()

    /// Writes the sample's trips to `path` in `format` (compressed as the name says).
    func write(_ path: String, _ format: Format) throws {
        var reader = try FormatFactory.makeReader(.file(TestPaths.root.appendingPathComponent("samples/trips-v3.json").path),
                                                  format: .json, options: ReadOptions())
        let trips = try ReadItems(reading: &reader).objects
        var writer = try FormatFactory.makeWriter(.file(path), format: format, options: WriteOptions())
        for t in trips { try writer.write(t) }
        try writer.finish()
    }

    /// The bytes another program decompresses from `path`.
    func decompressed(_ path: String, _ compression: Compression) throws -> Data {
        if compression == .zstd {
            let zstd = try #require(ExternalTool.path("zstd"), "zstd is not installed")
            let r = try ExternalTool.run(zstd, ["-q", "-d", "-c", path])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout
        }
        let module = ["gzip": "gzip", "bzip2": "bz2", "xz": "lzma"][compression.rawValue]!
        let r = try ExternalTool.python("import sys, \(module); sys.stdout.buffer.write(\(module).decompress(open(sys.argv[1], 'rb').read()))", [path])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout
    }

    @Test("every streamed format, written to a name with a compression's extension, decompresses to the plain output",
          arguments: Compression.allCases.filter { $0 != .zstd })
    func samePlain(compression: Compression) throws {
        for format in [Format.json, .jsonl, .csv, .tsv, .xml, .yaml] {
            let plain = scratch.path("plain." + format.extensions[0])
            let packed = plain + "." + compression.extensions[0]
            try write(plain, format)
            try write(packed, format)
            let got = try decompressed(packed, compression)
            #expect(got == (try Data(contentsOf: URL(fileURLWithPath: plain))) && !got.isEmpty, "\(format) as \(compression)")
            #expect(Format(streamPath: packed) == format)
        }
    }

    @Test("every streamed format, written to a name with .zst, decompresses with the zstd tool to the plain output", .needsZstd)
    func samePlainZstd() throws {
        try samePlain(compression: .zstd)
    }

    @Test("gzip output has no name and no time in its header: the same trips give the same bytes")
    func reproducibleGzip() throws {
        let a = scratch.path("a.jsonl.gz"), b = scratch.path("b.jsonl.gz")
        try write(a, .jsonl)
        try write(b, .jsonl)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: a))
        #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: b))))
        // ID1 ID2 CM FLG MTIME(4): no FNAME flag, MTIME 0.
        #expect(Array(bytes.prefix(8)) == [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    @Test("a compressed output is complete or absent: discarded, it leaves nothing and the target as it was")
    func completeOrAbsent() throws {
        let path = scratch.path("kept.csv.gz")
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let output = try ByteOutput(.file(path))
        #expect(output.compression == .gzip)
        try output.write(String(repeating: "row,row\n", count: 100_000))
        try output.flush()
        output.discard()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path)  == ["kept.csv.gz"])
    }
}
