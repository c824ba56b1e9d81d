import Foundation
import Testing
@testable import TripFormats

/// A file output starts the writeback of every 8 MiB it writes (so the fsync at commit is short):
/// what it commits must still be exactly what was written, and what it discards must be gone.
@Suite("File outputs past the writeback step")
struct OutputWritebackTests {
    /// 17 MiB and a bit (past the step twice), cut into pieces of irregular sizes.
    static func pieces() -> [ArraySlice<UInt8>] {
        let total = 17 << 20 + 123
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            var x: UInt32 = 2_463_534_242
            for i in 0..<total {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5
                buffer[i] = UInt8(truncatingIfNeeded: x)
            }
            count = total
        }
        var out: [ArraySlice<UInt8>] = []
        var at = 0, n = 0
        while at < total {
            let end = min(total, at + 1 + (n * 7919) % 200_000)
            out.append(bytes[at..<end])
            at = end
            n += 1
        }
        return out
    }

    static func scratch() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-writeback-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        return dir
    }

    @Test("a committed output of 17 MiB holds exactly the bytes written, in order")
    func committed() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pieces = Self.pieces()
        let output = try ByteOutput(.file("\(dir)/out.bin"))
        for p in pieces { try output.write(p) }
        try output.commit()
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/out.bin"))
        #expect(data == Data(pieces.joined()))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.bin"])
    }

    @Test("a discarded output of 17 MiB leaves the target as it was and no temporary file")
    func discarded() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("before\n".utf8).write(to: URL(fileURLWithPath: "\(dir)/out.bin"))
        let output = try ByteOutput(.file("\(dir)/out.bin"))
        for p in Self.pieces() { try output.write(p) }
        output.discard()
        #expect(try String(contentsOfFile: "\(dir)/out.bin", encoding: .utf8) == "before\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.bin"])
    }
}
