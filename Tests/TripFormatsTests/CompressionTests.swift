import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Compressed inputs (issue 17), made by writers that are not ours: Python's gzip, bz2 and lzma
/// modules and the zstd tool. Each reads as the plain file does; corrupt, truncated and trailing
/// data is a data error naming the byte.
@Suite("compressed inputs", .enabled(if: ExternalTool.python3 != nil, "python3 is not installed"))
struct CompressionTests {
    let scratch = ScratchDirectory()

    /// The sample files, one per streamed format.
    static let samples: [(file: String, format: Format)] = [
        ("samples/trips-v1.json", .json), ("samples/trips-v2.csv", .csv), ("samples/trips-v3.xml", .xml), ("samples/trips-v2.yaml", .yaml),
    ]

    static func trips(_ path: String, _ format: Format) throws -> (objects: [ModelObject], input: ByteInput) {
        var reader = try FormatFactory.makeReader(.file(path), format: format, options: ReadOptions())
        return (try ReadItems(reading: &reader).objects, try ByteInput(.file(path)))
    }

    /// Compresses `source` into `target` with Python (`gzip`, `bz2`, `lzma`) or the zstd tool.
    func compress(_ source: String, _ target: String, _ compression: Compression) throws {
        if compression == .zstd {
            let zstd = try #require(ExternalTool.path("zstd"), "zstd is not installed")
            let r = try ExternalTool.run(zstd, ["-q", "-f", source, "-o", target])
            #expect(r.status == 0, "\(r.stderr)")
            return
        }
        let module = ["gzip": "gzip", "bzip2": "bz2", "xz": "lzma"][compression.rawValue]!
        let r = try ExternalTool.python("import sys, \(module); open(sys.argv[2], 'wb').write(\(module).compress(open(sys.argv[1], 'rb').read()))",
                                        [source, target])
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test("each sample, compressed by another program, reads as the plain file does, told by its first bytes",
          arguments: Compression.allCases.filter { $0 != .zstd })
    func samePlain(compression: Compression) throws {
        for (file, format) in Self.samples {
            let plain = try Self.trips(TestPaths.root.appendingPathComponent(file).path, format).objects
            let target = scratch.path((file as NSString).lastPathComponent + "." + compression.extensions[0])
            try compress(TestPaths.root.appendingPathComponent(file).path, target, compression)
            #expect(Format(streamPath: target) == format)
            let (got, input) = try Self.trips(target, format)
            #expect(got == plain && !got.isEmpty, "\(file) as \(compression)")
            #expect(input.compression == compression && !input.canRewind)
            // Without an extension to tell: the bytes tell.
            let bare = scratch.path("bare-" + compression.rawValue)
            try FileManager.default.copyItem(atPath: target, toPath: bare)
            #expect(try Self.trips(bare, format).objects == plain)
            try FileManager.default.removeItem(atPath: bare)
        }
    }

    @Test("each sample, compressed by the zstd tool, reads as the plain file does, told by its first bytes", .needsZstd)
    func samePlainZstd() throws {
        try samePlain(compression: .zstd)
    }

    @Test("a gzip file of several members (as `cat a.gz b.gz` makes) reads every member; zero padding after the last is let be")
    func multiMember() throws {
        let target = scratch.path("two.jsonl.gz")
        let r = try ExternalTool.python("""
            import sys, gzip
            lines = open(sys.argv[1], 'rb').read().splitlines(keepends=True)
            half = len(lines) // 2
            open(sys.argv[2], 'wb').write(gzip.compress(b''.join(lines[:half])) + gzip.compress(b''.join(lines[half:])) + bytes(512))
            """, [TestPaths.root.appendingPathComponent("samples/trips-v3.jsonl").path, target])
        #expect(r.status == 0, "\(r.stderr)")
        let plain = try Self.trips(TestPaths.root.appendingPathComponent("samples/trips-v3.jsonl").path, .jsonl).objects
        #expect(try Self.trips(target, .jsonl).objects == plain)
    }

    @Test("corrupt, truncated or followed by other bytes: a data error that names the input and the byte")
    func damaged() throws {
        let source = TestPaths.root.appendingPathComponent("samples/trips-v3.jsonl").path
        let cases: [(name: String, make: String, message: String)] = [
            // The last 8 bytes are the CRC-32 and the length: a flipped CRC byte leaves the data whole.
            ("crc.jsonl.gz", "g = bytearray(gzip.compress(data)); g[-6] ^= 0xFF; out = bytes(g)", "gzip data is corrupt at byte "),
            ("cut.jsonl.gz", "out = gzip.compress(data)[:-5]", "gzip data ends early, at byte "),
            ("tail.jsonl.gz", "out = gzip.compress(data) + b'not gzip'", "bytes after the end of the gzip data"),
            ("cut.jsonl.xz", "out = lzma.compress(data)[:-30]", "xz data is corrupt within its first "),
            ("flip.jsonl.bz2", "b = bytearray(bz2.compress(data)); b[len(b) // 2] ^= 0xFF; out = bytes(b)",
             "bzip2 data is corrupt within its first "),
        ]
        for c in cases {
            let target = scratch.path(c.name)
            let r = try ExternalTool.python("import sys, gzip, bz2, lzma\ndata = open(sys.argv[1], 'rb').read()\n\(c.make)\nopen(sys.argv[2], 'wb').write(out)",
                                            [source, target])
            #expect(r.status == 0, "\(r.stderr)")
            let error = SQLiteTesting.tripError { _ = try Self.trips(target, .jsonl) }
            #expect(error?.kind == .data, "\(c.name)")
            #expect(error?.message.hasPrefix(target + ": ") == true && error?.message.contains(c.message) == true, "\(c.name): \(error?.message ?? "")")
        }
    }

    @Test("progress counts the compressed bytes")
    func progressCountsCompressed() throws {
        let target = scratch.path("t.jsonl.gz")
        try compress(TestPaths.root.appendingPathComponent("samples/trips-v3.jsonl").path, target, .gzip)
        let input = try ByteInput(.file(target))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        var decompressed = 0
        while case let n = try input.read(into: buffer), n > 0 { decompressed += n }
        let size = try FileManager.default.attributesOfItem(atPath: target)[.size] as? Int
        #expect(input.bytesCounted == size)
        let plain = TestPaths.root.appendingPathComponent("samples/trips-v3.jsonl").path
        #expect(decompressed == (try FileManager.default.attributesOfItem(atPath: plain)[.size] as? Int))
    }

    @Test("a compression's extension names the format within; a store's names none (a store is not streamed)")
    func extensions() {
        #expect(Format(streamPath: "a/trips.jsonl.gz") == .jsonl)
        #expect(Format(streamPath: "trips.CSV.ZST") == .csv)
        #expect(Format(streamPath: "trips.yml.xz") == .yaml)
        #expect(Format(streamPath: "trips.xml.bz2") == .xml)
        #expect(Format(streamPath: "trips.sqlite.gz") == nil)
        #expect(Format(streamPath: "trips.gz") == nil)
        #expect(Format(streamPath: "trips.json") == .json)
        // `Format(path:)` is the extension alone.
        #expect(Format(path: "trips.jsonl.gz") == nil)
        #expect(Format.isCompressedStore("trips.sqlite.gz") && !Format.isCompressedStore("trips.csv.gz"))
    }
}
