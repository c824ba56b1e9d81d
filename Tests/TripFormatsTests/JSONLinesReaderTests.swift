import Foundation
import Testing
import TripKit
@testable import TripFormats

@Suite("JSON Lines reader")
struct JSONLinesReaderTests {
    typealias S = JSONTestSupport
    static let rome = JSONReaderTests.romeV3
    static let romeObject = JSONReaderTests.romeObject

    @Test("each line is a trip whose origin is its line; blank lines are skipped")
    func linesAndOrigins() throws {
        let result = try S.read("\(Self.rome)\n\n   \r\n  \(Self.rome)\r\n\(Self.rome)", format: .jsonl)
        #expect(result.objects == [Self.romeObject, Self.romeObject, Self.romeObject])
        #expect(result.trips.map(\.origin) == [
            RecordOrigin(source: "t.json", record: 1, line: 1, column: 1),
            RecordOrigin(source: "t.json", record: 2, line: 4, column: 3),
            RecordOrigin(source: "t.json", record: 3, line: 5, column: 1),
        ])
        #expect(result.detection.version == SchemaVersion(3, 0, 0))
    }

    @Test("a line that does not parse is rejected with line:column and its text, and the next line is read")
    func badLineRejected() throws {
        let bad = #"{"name": "Rome", "destination" "Italy"}"#
        let result = try S.read("\(Self.rome)\n\(bad)\r\n\(Self.rome)\n", format: .jsonl)
        #expect(result.order == "TRT")
        let r = try #require(result.rejections.first)
        #expect(r.reason == "expected ':' after an object key, found '\"'")
        #expect(r.origin == RecordOrigin(source: "t.json", record: 2, line: 2, column: 32))
        #expect(r.text == bad)
    }

    @Test("an unterminated string ends at the end of its line")
    func unterminatedStringAtEndOfLine() throws {
        let result = try S.read("{\"name\": \"Ro\n\(Self.rome)\n", format: .jsonl)
        #expect(result.order == "RT")
        #expect(result.rejections.first?.reason == "unterminated string")
        #expect(result.rejections.first?.origin.column == 10)
    }

    @Test("something after the trip object on its line rejects the line")
    func trailingGarbage() throws {
        let result = try S.read("\(Self.rome) {}\n", format: .jsonl)
        #expect(result.rejections.first?.reason == "expected the end of the line after the trip object, found '{'")
        #expect(result.rejections.first?.origin.column == Self.rome.utf8.count + 2)
    }

    @Test("a line that is valid JSON but not an object is rejected")
    func nonObjectLine() throws {
        let result = try S.read("[1, 2]\n\(Self.rome)\n\"x\"\n", format: .jsonl)
        #expect(result.order == "RTR")
        #expect(result.rejections.map(\.reason) == ["expected a trip object, found an array", "expected a trip object, found a string"])
        #expect(result.rejections.map { $0.origin.line } == [1, 3])
    }

    @Test("a bad record in a line is rejected like in JSON")
    func badRecord() throws {
        let result = try S.read(#"{"name": "Rome"}"# + "\n", format: .jsonl)
        #expect(result.rejections.first?.reason.hasPrefix("missing required field") == true)
        #expect(result.rejections.first?.text == #"{"name": "Rome"}"#)
    }

    @Test("an empty input is zero trips")
    func emptyInput() throws {
        #expect(try S.read("", format: .jsonl).order == "")
        #expect(try S.read("\n\n \n", format: .jsonl).order == "")
        #expect(try S.read(bytes: [0xEF, 0xBB, 0xBF, 0x0A], format: .jsonl).order == "")
    }

    @Test("a line longer than the limit is rejected and the next line read")
    func overlongLine() throws {
        var limits = JSONLimits()
        limits.maxLineBytes = 250
        let long = #"{"name": "\#(String(repeating: "x", count: 300))"}"#
        let result = try S.read("\(long)\n\(Self.rome)\n", format: .jsonl, chunkSize: 16, limits: limits)
        #expect(result.order == "RT")
        #expect(result.rejections.first?.reason == "a line longer than 250 bytes")
        #expect(result.trips.first?.origin.line == 2)
    }

    @Test("lines split across chunks of any size read the same", arguments: [1, 2, 3, 7, 13])
    func chunkBoundaries(chunkSize: Int) throws {
        let text = "\(Self.rome)\n{\"name\": \"\\ud83d\\ude00 é\", bad\n\n\(Self.rome)\r\n[1]\n\(Self.rome)"
        let reference = try S.read(text, format: .jsonl)
        #expect(reference.order == "TRTRT")
        let split = try S.read(text, format: .jsonl, chunkSize: chunkSize)
        #expect(split.objects == reference.objects)
        #expect(split.trips.map(\.origin) == reference.trips.map(\.origin))
        #expect(split.rejections == reference.rejections)
    }

    @Test("UTF-16 input is refused cleanly")
    func utf16() {
        #expect(S.readError(bytes: [0xFE, 0xFF, 0x00, 0x7B], format: .jsonl)?.hasPrefix("t.json:1:1: the input is UTF-16") == true)
    }
}
