import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

@Suite("CSV row reader")
struct CSVRowReaderTests {
    @Test("fields straddling every chunk boundary read the same as in one chunk")
    func chunkBoundaries() throws {
        let text = "a,\"b \"\"q\"\" \r\n c\",,\"\"\r\nlong field \(String(repeating: "x", count: 100)),\"\",z\rlast,\"x\",y\n"
        let whole = try CSVIO.rows(Array(text.utf8))
        #expect(whole == [["a", "b \"q\" \r\n c", "", ""], ["long field " + String(repeating: "x", count: 100), "", "z"], ["last", "x", "y"]])
        #expect(try CSVIO.rows(Array(text.utf8), chunkSize: 16) == whole)
    }

    @Test("a trailing separator gives a last empty cell")
    func trailingSeparator() throws {
        #expect(try CSVIO.rows(Array("a,b,\n,\n".utf8)) == [["a", "b", ""], ["", ""]])
    }

    @Test("a quote inside an unquoted cell is an ordinary character")
    func quoteInsideUnquoted() throws {
        #expect(try CSVIO.rows(Array("a\"b,c\"\n".utf8)) == [["a\"b", "c\""]])
    }

    @Test("a field longer than the limit is a data error")
    func fieldLimit() throws {
        let limits = CSVLimits(maxFieldBytes: 1 << 20, maxColumns: 10_000, maxRowBytes: 4 << 20)
        let bytes = Array("a,b\n1,".utf8) + [UInt8](repeating: 120, count: (1 << 20) + 10) + [10]
        let error = CSVIO.error { _ = try CSVIO.rows(bytes, limits: limits) }
        #expect(error?.message == "t.csv:2:3: a field longer than 1 MiB")
        let quoted = Array("a,b\n1,\"".utf8) + [UInt8](repeating: 120, count: (1 << 20) + 10) + Array("\"\n".utf8)
        #expect(CSVIO.error { _ = try CSVIO.rows(quoted, limits: limits) }?.message == "t.csv:2:3: a field longer than 1 MiB")
    }

    @Test("more columns than the limit is a data error")
    func columnLimit() throws {
        let bytes = Array(String(repeating: "a,", count: 10_001).utf8) + [10]
        #expect(CSVIO.error { _ = try CSVIO.rows(bytes) }?.message == "t.csv:1:20001: more than 10000 columns in a row")
    }

    @Test("a long field across many refills is read whole")
    func longField() throws {
        let big = String(repeating: "0123456789", count: 100_000)
        #expect(try CSVIO.rows(Array("\"\(big)\",x\n".utf8), chunkSize: 1024) == [[big, "x"]])
    }

    @Test("TSV cells undo \\t, \\n, \\r and \\\\ and keep quotes and other backslashes as they are")
    func tsvEscapes() throws {
        let rows = try CSVIO.rows(Array("a\\tb\t\"q\"\\x\\\\n\tc\\nd\\re\\\n".utf8), dialect: .tsv)
        #expect(rows == [["a\tb", "\"q\"\\x\\n", "c\nd\re\\"]])
    }

    @Test("any bytes give the same rows or the same error whatever the chunk size, and never crash",
          arguments: [CSVDialect.csv, .tsv], [UInt64(61), 62, 63, 64])
    func byteSoup(dialect: CSVDialect, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let alphabet: [UInt8] = [44, 34, 34, 13, 10, 10, 97, 98, 9, 92, 116, 110, 32, 0xC3, 0xA9, 0xFF, 0xEF, 0xBB, 0xBF]
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...80, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            func outcome(_ chunk: Int) -> String {
                do { return "\(try CSVIO.rows(bytes, dialect: dialect, chunkSize: chunk))" }
                catch let e as TripError { return "error \(e.kind): \(e.message)" }
                catch { return "unexpected \(error)" }
            }
            let whole = outcome(1 << 18)
            #expect(!whole.hasPrefix("unexpected"))
            #expect(outcome(16) == whole, "bytes \(bytes)")
        }
    }
}
