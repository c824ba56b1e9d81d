import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The JSON and JSON Lines files in samples/ read as their names say.
@Suite("JSON samples")
struct JSONSamplesTests {
    typealias S = JSONTestSupport

    static func read(_ name: String) throws -> (trips: [TripRecord], rejections: [SetAsideRecord], detection: Detection) {
        let path = TestPaths.root.appendingPathComponent("samples/\(name)").path
        var reader = try JSONRecordReader(.file(path), format: Format(path: path)!)
        var trips: [TripRecord] = [], rejections: [SetAsideRecord] = []
        while let item = try reader.next() {
            switch item {
            case .trip(let t): trips.append(t)
            case .rejected(let r): rejections.append(r)
            }
        }
        return (trips, rejections, reader.detection)
    }

    @Test("json-v3.json is the 3.0.0 wrapper with three trips, two of them named Tokyo")
    func currentWrapper() throws {
        let (trips, rejections, detection) = try Self.read("json-v3.json")
        #expect(rejections.isEmpty)
        #expect(trips.map { $0.object.attributes[0] } == [.string("Tokyo"), .string("Lisbon"), .string("Tokyo")])
        #expect(detection.version == SchemaVersion(3, 0, 0))
        #expect(detection.evidence == .marker("schemaVersion 3.0.0"))
    }

    @Test("json-v1-legacy.json is a pretty-printed 1.0.0 array with legacy spellings and numeric dates")
    func legacyArray() throws {
        let (trips, rejections, detection) = try Self.read("json-v1-legacy.json")
        #expect(rejections.isEmpty)
        #expect(trips.count == 3)
        #expect(detection.version == SchemaVersion(1, 0, 0))
        let chicago = try #require(trips.first)
        #expect(chicago.object.attributes[2] == S.date("2023-03-10T00:00:00Z"))
        #expect(chicago.object.relationships[0].objects.count == 1)
        #expect(chicago.object.relationships[1].objects.first?.attributes == [.string("505 N Michigan Ave"), .string("InterContinental")])
        #expect(trips.map { $0.origin.line } == [2, 20, 28])
    }

    @Test("json-v2-blank-line.jsonl is three start_date trips around a blank line")
    func legacyLines() throws {
        let (trips, rejections, detection) = try Self.read("json-v2-blank-line.jsonl")
        #expect(rejections.isEmpty)
        #expect(trips.map { $0.origin.line } == [1, 2, 4])
        #expect(detection.version == SchemaVersion(1, 0, 0), "start_date says 1.0.0 or 2.0.0; the oldest is chosen")
    }

    @Test("trips-bad-line.jsonl rejects its second line and reads the third")
    func badLine() throws {
        let (trips, rejections, _) = try Self.read("trips-bad-line.jsonl")
        #expect(trips.map { $0.origin.line } == [1, 3])
        #expect(rejections.map(\.reason) == [#"expected ',' or '}' after an object member, found '"'"#])
        #expect(rejections.map { "\($0.origin)" } == [TestPaths.root.appendingPathComponent("samples/trips-bad-line.jsonl").path + ":2:90"])
    }

    @Test("json-broken-syntax.json stops at the missing comma")
    func brokenSyntax() {
        #expect(throws: TripError.self) { try Self.read("json-broken-syntax.json") }
        do {
            _ = try Self.read("json-broken-syntax.json")
        } catch let error as TripError {
            #expect(error.message.hasSuffix("samples/json-broken-syntax.json:3:1: expected ',' or ']' after an array element, found '{'"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
