import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

@Suite("JSON scanner")
struct JSONScannerTests {
    typealias S = JSONTestSupport

    /// What reading gives, as text: every item and the error, for comparing runs.
    static func outcome(_ bytes: [UInt8], format: Format, chunkSize: Int) -> String {
        var lines: [String] = []
        do {
            let result = try S.read(bytes: bytes, format: format, chunkSize: chunkSize)
            for t in result.trips { lines.append("T \(t.origin) \(t.object)") }
            for r in result.rejections { lines.append("R \(r.origin) \(r.reason) \(r.text ?? "-")") }
            lines.append("detected \(String(describing: result.detection))")
        } catch {
            lines.append("error \(error)")
        }
        return lines.joined(separator: "\n")
    }

    static func validation(_ bytes: [UInt8], chunkSize: Int) -> String {
        do {
            try JSONSyntax.validate(bytes, chunkSize: chunkSize)
            return "ok"
        } catch {
            return "\(error)"
        }
    }

    @Test("a number at the very end of the input, after a chunk's worth of text, is read in place")
    func numberAtEndOfInput() {
        #expect(S.readError("[1,\n1\n,1") == "t.json:3:3: expected ',' or ']' after an array element, found end of input")
        #expect(Self.validation(Array("[1,\n1\n,1.5e".utf8), chunkSize: 2) == "3:2: invalid number '1.5e': expected a digit in the exponent")
        #expect(Self.validation(Array("   12345".utf8), chunkSize: 3) == "ok")
    }

    @Test("a multi-byte character at the very end of the input is checked in place")
    func characterAtEndOfInput() {
        #expect(Self.validation(Array("  [\"ab\u{E9}".utf8), chunkSize: 2) == "1:4: unterminated string")
        #expect(Self.validation(Array("  [\"ab".utf8) + [0xE2, 0x82], chunkSize: 2) == "1:4: unterminated string")
        #expect(Self.validation(Array("  [\"ab".utf8) + [0xE2, 0x82, 0x22, 0x5D], chunkSize: 2).hasPrefix("1:7: invalid UTF-8 in a string"))
    }

    @Test("the JSONTestSuite files give the same outcome in chunks of any size",
          .enabled(if: JSONTestSupport.conformanceDirectory != nil, "../shared/conformance is absent"))
    func conformanceFilesInChunks() throws {
        for name in S.conformanceFiles("") where !name.contains("100000") && !name.contains("open_array_object") {
            let bytes = try S.conformanceBytes(name)
            let reference = Self.validation(bytes, chunkSize: 1 << 16)
            let referenceRead = Self.outcome(bytes, format: .json, chunkSize: 1 << 16)
            for chunkSize in [1, 2, 5] {
                #expect(Self.validation(bytes, chunkSize: chunkSize) == reference, "\(name) in chunks of \(chunkSize)")
                #expect(Self.outcome(bytes, format: .json, chunkSize: chunkSize) == referenceRead, "\(name) in chunks of \(chunkSize)")
            }
        }
    }

    @Test("mutated trip documents give the same outcome in chunks of any size", arguments: [Format.json, .jsonl])
    func mutatedDocumentsInChunks(format: Format) throws {
        var generator = ArbitraryTrips.json(seed: format == .json ? 7 : 8)
        let base = Array(try S.write(generator.trips(6, in: TripSchemaV3.self), format: format).utf8)
        let alphabet = Array(#"{}[]":,\ 0123456789.eE+-tfnul"#.utf8) + [0x0A, 0x0D, 0x09, 0x00, 0xC3, 0xA9, 0xFF, 0xED, 0xF0]
        for round in 0..<150 {
            var bytes = base
            for _ in 0..<generator.random.int(1...4) {
                let at = generator.random.int(0...(bytes.count - 1))
                switch generator.random.int(0...2) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(generator.random.pick(alphabet), at: at)
                default: bytes[at] = generator.random.pick(alphabet)
                }
            }
            let reference = Self.outcome(bytes, format: format, chunkSize: 1 << 16)
            let chunkSize = generator.random.int(1...17)
            #expect(Self.outcome(bytes, format: format, chunkSize: chunkSize) == reference, "round \(round), chunks of \(chunkSize)")
            #expect(Self.validation(bytes, chunkSize: chunkSize) == Self.validation(bytes, chunkSize: 1 << 16))
        }
    }
}
