import Foundation
import Testing
import TripKit
@testable import TripFormats

@Suite("JSON reader")
struct JSONReaderTests {
    typealias S = JSONTestSupport

    static let parisV3 = #"{"name": "Paris", "destination": "France", "startDate": "2024-05-01T09:30:00Z", "endDate": "2024-05-08T18:00:00Z", "bucketList": [{"title": "Louvre", "details": "Mona Lisa", "hasReservation": true, "isInPlan": false}], "livingAccommodation": {"address": "1 Rue de Rivoli", "placeName": "Le Meurice"}}"#
    static let romeV3 = #"{"name": "Rome", "destination": "Italy", "startDate": "2024-06-01T00:00:00Z", "endDate": "2024-06-03T12:00:00Z", "bucketList": [], "livingAccommodation": null}"#
    static let parisObject = S.trip("Paris", items: [S.item("Louvre", details: "Mona Lisa", reserved: true)],
                                    accommodation: S.accommodation("1 Rue de Rivoli", "Le Meurice"))
    static let romeObject = S.trip("Rome", destination: "Italy", start: "2024-06-01T00:00:00Z", end: "2024-06-03T12:00:00Z")

    // MARK: - Shapes

    @Test("the wrapper's schemaVersion before trips is the version marker")
    func markerBeforeTrips() throws {
        let result = try S.read("{\"schemaVersion\": \"3.0.0\", \"trips\": [\n\(Self.parisV3),\n\(Self.romeV3)\n]}\n")
        #expect(result.objects == [Self.parisObject, Self.romeObject])
        #expect(result.detection.version == SchemaVersion(3, 0, 0))
        #expect(result.detection.evidence == .marker("schemaVersion 3.0.0"))
        #expect(result.trips.map { $0.origin.line } == [2, 3])
        #expect(result.trips.map { $0.origin.record } == [1, 2])
        #expect(result.trips[0].origin.column == 1)
    }

    @Test("the wrapper's schemaVersion after trips is the version marker")
    func markerAfterTrips() throws {
        let trip = #"{"name": "Oslo", "destination": "Norway", "start_date": "2024-01-01", "end_date": "2024-01-02", "bucketList": []}"#
        let result = try S.read("{\"trips\": [\(trip)], \"schemaVersion\": \"2.0.0\"}")
        #expect(result.trips.count == 1)
        #expect(result.detection.version == SchemaVersion(2, 0, 0))
        #expect(result.detection.evidence == .marker("schemaVersion 2.0.0"))
    }

    @Test("a marker that names no known version stops the read at its place")
    func unknownMarker() {
        let message = S.readError(#"{"schemaVersion": "9.9", "trips": []}"#)
        #expect(message == "t.json:1:19: unknown schema version '9.9'")
    }

    @Test("a bare array of trips is read")
    func bareArray() throws {
        let result = try S.read("[\(Self.parisV3), \(Self.romeV3)]")
        #expect(result.objects == [Self.parisObject, Self.romeObject])
        #expect(result.detection.version == SchemaVersion(3, 0, 0))
        #expect(result.detection.evidence == .fields(["startDate", "endDate"]))
    }

    @Test("one trip object is one trip")
    func singleObject() throws {
        let result = try S.read("  \n" + Self.romeV3 + "\n")
        #expect(result.objects == [Self.romeObject])
        #expect(result.trips[0].origin == RecordOrigin(source: "t.json", record: 1, line: 2, column: 1))
    }

    @Test("an empty array is zero trips")
    func emptyArray() throws {
        let result = try S.read(" [ ] ")
        #expect(result.order == "")
        #expect(result.detection.version == nil)
    }

    @Test("an empty wrapper is zero trips at its version")
    func emptyWrapper() throws {
        let result = try S.read(#"{"schemaVersion": "1.0.0", "trips": []}"#)
        #expect(result.order == "")
        #expect(result.detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("1.0.0's legacy spellings bucketListItem and livingAccommodations are read")
    func legacySpellings() throws {
        let text = #"[{"name": "Oslo", "destination": "Norway", "start_date": "2024-01-01T00:00:00Z", "end_date": "2024-01-02T00:00:00Z", "bucketListItem": [{"title": "Fjord"}], "livingAccommodations": {"address": "Karl Johans gate", "placeName": "Grand"}}]"#
        let result = try S.read(text)
        #expect(result.objects == [S.legacyTrip("Oslo", destination: "Norway", start: "2024-01-01T00:00:00Z",
                                                end: "2024-01-02T00:00:00Z", items: [S.item("Fjord")],
                                                accommodation: S.accommodation("Karl Johans gate", "Grand"))])
        #expect(result.detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("the transient tripViews is counted and ignored, whatever its value")
    func tripViewsIgnored() throws {
        let a = Self.romeV3.replacingOccurrences(of: #""bucketList""#, with: #""tripViews": 12, "bucketList""#)
        let b = Self.romeV3.replacingOccurrences(of: #""bucketList""#, with: #""tripViews": {"a": [1, {"b": null}]}, "bucketList""#)
        let result = try S.read("[\(a), \(b), \(Self.romeV3)]")
        #expect(result.objects == [Self.romeObject, Self.romeObject, Self.romeObject])
        #expect(result.detection.transientIgnored == 2)
    }

    @Test("numeric dates count seconds since 2001 by default")
    func numericDatesReferenceEpoch() throws {
        let text = #"[{"name": "N", "destination": "D", "startDate": 0, "endDate": 86400.5, "bucketList": []}]"#
        let result = try S.read(text)
        #expect(result.objects.first?.attributes[2] == S.date("2001-01-01T00:00:00Z"))
        #expect(result.objects.first?.attributes[3] == S.date("2001-01-02T00:00:00.500Z"))
    }

    @Test("numeric dates follow the date epoch option")
    func numericDatesUnixEpoch() throws {
        let text = #"[{"name": "N", "destination": "D", "startDate": 1e3, "endDate": -1, "bucketList": []}]"#
        let result = try S.read(text, options: ReadOptions(dateEpoch: .unix))
        #expect(result.objects.first?.attributes[2] == S.date("1970-01-01T00:16:40Z"))
        #expect(result.objects.first?.attributes[3] == S.date("1969-12-31T23:59:59Z"))
    }

    @Test("missing optional fields take their defaults")
    func defaults() throws {
        let text = #"[{"name": "N", "destination": "D", "startDate": "2024-01-01", "endDate": "2024-01-02", "bucketList": [{"title": "T"}], "livingAccommodation": {"placeName": "P"}}]"#
        let result = try S.read(text)
        #expect(result.objects == [S.trip("N", destination: "D", start: "2024-01-01T00:00:00Z", end: "2024-01-02T00:00:00Z",
                                          items: [S.item("T")], accommodation: S.accommodation("", "P"))])
    }

    // MARK: - Bad records

    @Test("a trip missing a required field is rejected with its line and text, and reading goes on")
    func missingFieldRejected() throws {
        let bad = #"{"name": "Bad", "destination": "X", "startDate": "2024-01-01", "bucketList": []}"#
        let result = try S.read("[\n\(Self.romeV3),\n  \(bad),\n\(Self.romeV3)\n]")
        #expect(result.order == "TRT")
        let r = try #require(result.rejections.first)
        #expect(r.reason == "missing required field 'endDate'")
        #expect(r.origin == RecordOrigin(source: "t.json", record: 2, line: 3, column: 3))
        #expect(r.text == bad)
    }

    @Test("a value of the wrong type rejects its trip")
    func wrongTypeRejected() throws {
        let bad = Self.romeV3.replacingOccurrences(of: #""Rome""#, with: "5")
        let result = try S.read("[\(bad)]")
        #expect(result.rejections.map(\.reason) == ["field 'name': expected a string, found the number 5"])
    }

    @Test("an object where a string belongs rejects the trip and is skipped")
    func nestedWhereScalarRejected() throws {
        let bad = Self.romeV3.replacingOccurrences(of: #""Italy""#, with: #"{"country": ["Italy", {"x": 1}]}"#)
        let result = try S.read("[\(bad), \(Self.romeV3)]")
        #expect(result.order == "RT")
        #expect(result.rejections.first?.reason == "field 'destination': expected a string, found an object")
    }

    @Test("a bucket list that is not a list of objects rejects the trip")
    func badBucketList() throws {
        let scalarInList = Self.romeV3.replacingOccurrences(of: #""bucketList": []"#, with: #""bucketList": ["Louvre"]"#)
        let objectForList = Self.romeV3.replacingOccurrences(of: #""bucketList": []"#, with: #""bucketList": {"title": "x"}"#)
        let arrayForOne = Self.romeV3.replacingOccurrences(of: #""livingAccommodation": null"#, with: #""livingAccommodation": []"#)
        let result = try S.read("[\(scalarInList), \(objectForList), \(arrayForOne)]")
        #expect(result.rejections.map(\.reason) == [
            "field 'bucketList': expected a list of objects, found a string in the list",
            "field 'bucketList': expected a list of objects, found an object",
            "field 'livingAccommodation': expected an object or null, found an array",
        ])
    }

    @Test("an unknown field rejects its trip, and is skipped under ignoreUnknown")
    func unknownField() throws {
        let bad = Self.romeV3.replacingOccurrences(of: #""bucketList""#, with: #""rider": {"deep": [[1]]}, "bucketList""#)
        let strict = try S.read("[\(bad)]")
        #expect(strict.rejections.map(\.reason) == ["unknown field 'rider' matches no schema version"])
        let lenient = try S.read("[\(bad)]", options: ReadOptions(ignoreUnknown: true))
        #expect(lenient.objects == [Self.romeObject])
        #expect(lenient.detection.unknownIgnored == 1)
    }

    @Test("an element that is not an object is a rejected record")
    func nonObjectElement() throws {
        let result = try S.read("[\(Self.romeV3), 42, [1, 2], null]")
        #expect(result.order == "TRRR")
        #expect(result.rejections.map(\.reason) == ["expected a trip object, found a number",
                                                    "expected a trip object, found an array",
                                                    "expected a trip object, found null"])
        #expect(result.rejections.map(\.text) == ["42", "[1, 2]", "null"])
        #expect(result.rejections[0].origin.record == 2)
    }

    // MARK: - Errors that stop the read

    @Test("a syntax error stops the read with file, line and column")
    func syntaxErrorPlace() {
        #expect(S.readError("[\n\(Self.romeV3)\n}") == "t.json:3:1: expected ',' or ']' after an array element, found '}'")
        #expect(S.readError(#"[{"name": "a",}]"#) == "t.json:1:15: expected an object key (a string), found '}'")
        #expect(S.readError(#"[{"name" "a"}]"#) == "t.json:1:10: expected ':' after an object key, found '\"'")
        #expect(S.readError(#"[{"name": tru}]"#) == "t.json:1:11: expected a JSON value, found 'tru'")
        #expect(S.readError(#"[{"name": "abc}]"#) == "t.json:1:11: unterminated string")
        #expect(S.readError(#"[{"name": 01}]"#) == "t.json:1:11: invalid number '01': a leading zero")
        #expect(S.readError("[\(Self.romeV3)") == "t.json:1:\(Self.romeV3.utf8.count + 2): expected ',' or ']' after an array element, found end of input")
        #expect(S.readError(#"[{"name": "a\qb"}]"#) == #"t.json:1:13: invalid escape '\q' in a string"#)
        #expect(S.readError("[{\"name\": \"a\tb\"}]") == "t.json:1:13: the control character U+0009 must be escaped in a string")
    }

    @Test("valid JSON that is not trips says what was expected")
    func shapeErrors() {
        let expectation = #"expected an array of trips, a trip object or {"schemaVersion", "trips"}"#
        #expect(S.readError("  42") == "t.json:1:3: \(expectation), found a number")
        #expect(S.readError(#""trips""#) == "t.json:1:1: \(expectation), found a string")
        #expect(S.readError("") == "t.json:1:1: \(expectation), found end of input")
        #expect(S.readError("42 43") == "t.json:1:4: expected the end of input after the JSON value, found '43'")
        #expect(S.readError(#"{"trips": 5}"#) == #"t.json:1:11: expected an array of trips for "trips", found a number"#)
        #expect(S.readError(#"{"schemaVersion": "3.0.0"}"#) == #"t.json:1:26: the wrapper object has no "trips" array"#)
        #expect(S.readError(#"{"trips": [], "extra": 1}"#) == #"t.json:1:15: unexpected key 'extra' in the wrapper object; expected "schemaVersion" or "trips""#)
        #expect(S.readError(#"{"trips": [], "trips": []}"#) == #"t.json:1:15: "trips" is given twice in the wrapper object"#)
        #expect(S.readError("[] []") == "t.json:1:4: expected the end of input after the JSON value, found '['")
    }

    @Test("a thrown error is thrown again by later calls")
    func errorIsSticky() throws {
        let source = JSONMemorySource(Array("[1,,]".utf8))
        var reader = JSONRecordReader(name: "t.json", format: .json, source: source.read)
        _ = try reader.next()
        #expect(throws: TripError.self) { try reader.next() }
        #expect(throws: TripError.self) { try reader.next() }
    }

    @Test("nesting deeper than the limit is a clean error, not a stack overflow")
    func depthLimit() {
        let bomb = String(repeating: "[", count: 100_000)
        #expect(S.readError(bomb) == "t.json:1:513: nesting deeper than 512")
        let inTrip = Self.romeV3.replacingOccurrences(of: #""Rome""#, with: String(repeating: "[", count: 600))
        #expect(S.readError("[\(inTrip)]")?.hasSuffix("nesting deeper than 512") == true)
        let deepButFine = Self.romeV3.replacingOccurrences(of: #""bucketList""#, with:
            #""tripViews": \#(String(repeating: "[", count: 500))\#(String(repeating: "]", count: 500)), "bucketList""#)
        #expect(throws: Never.self) { try S.read("[\(deepButFine)]") }
    }

    @Test("a string longer than the limit is a clean error")
    func stringLimit() {
        var limits = JSONLimits()
        limits.maxStringBytes = 100
        let long = String(repeating: "x", count: 101)
        #expect(S.readError("[\"\(long)\"]", chunkSize: 16, limits: limits) == "t.json:1:2: a string longer than 100 bytes")
        #expect(S.readError("[\"\(long)\"]", limits: limits) == "t.json:1:2: a string longer than 100 bytes")
        #expect(S.readError("[\"\(String(repeating: "x", count: 100))\"]", chunkSize: 16, limits: limits) == nil)
    }

    @Test("invalid UTF-8 in a string is a data error at its place")
    func invalidUTF8() {
        let bytes = Array(#"[{"name": "ab"#.utf8) + [0xFF] + Array(#""}]"#.utf8)
        #expect(S.readError(bytes: bytes) == "t.json:1:14: invalid UTF-8 in a string (the byte 0xFF)")
        let overlong = Array(#"["a"#.utf8) + [0xC0, 0xAF] + Array(#""]"#.utf8)
        #expect(S.readError(bytes: overlong) == "t.json:1:4: invalid UTF-8 in a string (the byte 0xC0)")
        let surrogate = Array(#"["a"#.utf8) + [0xED, 0xA0, 0x80] + Array(#""]"#.utf8)
        #expect(S.readError(bytes: surrogate)?.hasPrefix("t.json:1:4: invalid UTF-8 in a string") == true)
    }

    @Test("an escaped lone surrogate becomes U+FFFD, and a pair one character")
    func surrogates() throws {
        let text = #"[{"name": "a\ud800b\udc00c\ud83d\ude00\ud800\u0041", "destination": "D", "startDate": 0, "endDate": 0, "bucketList": []}]"#
        let result = try S.read(text)
        #expect(result.objects.first?.attributes[0] == .string("a\u{FFFD}b\u{FFFD}c😀\u{FFFD}A"))
    }

    @Test("every escape decodes")
    func escapes() throws {
        let text = #"[{"name": "\"\\\/\b\f\n\r\t\u00e9\u0000", "destination": "D", "startDate": 0, "endDate": 0, "bucketList": []}]"#
        let result = try S.read(text)
        #expect(result.objects.first?.attributes[0] == .string("\"\\/\u{8}\u{C}\n\r\té\u{0}"))
    }

    @Test("a UTF-8 byte order mark is skipped and UTF-16 is refused cleanly")
    func byteOrderMarks() throws {
        let result = try S.read(bytes: [0xEF, 0xBB, 0xBF] + Array("[\(Self.romeV3)]".utf8))
        #expect(result.objects == [Self.romeObject])
        #expect(result.trips[0].origin.column == 2)
        #expect(S.readError(bytes: [0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00])?.hasPrefix("t.json:1:1: the input is UTF-16") == true)
        #expect(S.readError(bytes: [0x5B, 0x00, 0x5D, 0x00]) == "t.json:1:1: a NUL byte at the start of the input: UTF-16 or binary data, not UTF-8 JSON")
    }

    @Test("latin1 input encoding reads bytes above 0x7F as ISO 8859-1")
    func latin1() throws {
        let bytes = Array(#"[{"name": "Z"#.utf8) + [0xFC] + Array(#"rich", "destination": "D", "startDate": 0, "endDate": 0, "bucketList": []}]"#.utf8)
        let result = try S.read(bytes: bytes, options: ReadOptions(inputEncoding: "latin1"))
        #expect(result.objects.first?.attributes[0] == .string("Zürich"))
    }

    @Test("the factory makes the JSON reader, reading files")
    func factoryReadsFile() throws {
        let path = try S.temporaryDirectory().appendingPathComponent("in.json").path
        try "[\(Self.romeV3)]".write(toFile: path, atomically: true, encoding: .utf8)
        var reader = try FormatFactory.makeReader(.file(path), format: .json, options: ReadOptions())
        guard case .trip(let record)? = try reader.next() else { Issue.record("expected a trip"); return }
        #expect(record.object == Self.romeObject)
        #expect(record.origin.source == path)
        #expect(try reader.next() == nil)
    }

    @Test("keys read the same plain, escaped, in any order, and near misses are unknown fields")
    func keySpellings() throws {
        let inOrder = #"{"name": "Rome", "destination": "Italy", "startDate": "2024-05-01T00:00:00Z", "endDate": "2024-05-08T00:00:00Z", "bucketList": [{"title": "t", "isInPlan": true}], "livingAccommodation": {"address": "a", "placeName": "p"}}"#
        let plain = try S.read("[\(inOrder)]")
        #expect(plain.trips.count == 1)
        let escaped = inOrder.replacingOccurrences(of: #""name""#, with: #""n\u0061me""#)
            .replacingOccurrences(of: #""title""#, with: #""titl\u0065""#)
            .replacingOccurrences(of: #""address""#, with: #""\u0061ddress""#)
        #expect(try S.read("[\(escaped)]").objects == plain.objects)
        let reversed = #"{"livingAccommodation": {"placeName": "p", "address": "a"}, "bucketList": [{"isInPlan": true, "title": "t"}], "endDate": "2024-05-08T00:00:00Z", "startDate": "2024-05-01T00:00:00Z", "destination": "Italy", "name": "Rome"}"#
        #expect(try S.read("[\(reversed)]").objects == plain.objects)
        for near in ["nam", "names", "name ", "Name", #"name\u0000"#, "bucketListItems", "n"] {
            let bad = inOrder.replacingOccurrences(of: #""destination""#, with: #""\#(near)""#)
            let result = try S.read("[\(bad)]")
            let shown = near == #"name\u0000"# ? "name\u{0}" : near
            #expect(result.rejections.map(\.reason) == ["unknown field '\(shown)' matches no schema version"], "\(near)")
        }
    }

    @Test("a Boolean where a string belongs rejects the trip, and a misspelled literal stops the read")
    func booleanLiterals() throws {
        let bad = Self.romeV3.replacingOccurrences(of: #""Rome""#, with: "true")
        #expect(try S.read("[\(bad)]").rejections.map(\.reason) == ["field 'name': expected a string, found true"])
        let misspelled = #"[{"bucketList": [{"title": "t", "isInPlan": truth}]}]"#
        #expect(S.readError(misspelled) == "t.json:1:45: expected a JSON value, found 'truth'")
    }

    // MARK: - Chunk boundaries

    @Test("tokens split across chunks of any size read the same", arguments: [1, 2, 3, 5, 7, 11, 64])
    func chunkBoundaries(chunkSize: Int) throws {
        let text = """
        \u{FEFF}{"schemaVersion": "3.0.0", "trips": [
        {"name": "Z\\u00fcrich \\"\\\\\\/\\ud83d\\ude00 ü€😀 \(String(repeating: "long ", count: 20))", "destination": "CH",
         "startDate": 7.25e2, "endDate": -1.5E+3, "tripViews": [true, false, null, {"k": "v"}],
         "bucketList": [{"title": "a\\tb", "details": "\\u0000", "hasReservation": true, "isInPlan": false}],
         "livingAccommodation": {"address": "", "placeName": "\\u00e9"}},
        [1], {"name": "x"}, \(Self.romeV3)
        ]}
        """
        let reference = try S.read(text)
        #expect(reference.order == "TRRT")
        let split = try S.read(text, chunkSize: chunkSize)
        #expect(split.objects == reference.objects)
        #expect(split.trips.map(\.origin) == reference.trips.map(\.origin))
        #expect(split.rejections == reference.rejections)
        #expect(split.detection == reference.detection)
    }

    @Test("a rejected record longer than the kept-text limit has no text but is still rejected")
    func longRecordText() throws {
        var limits = JSONLimits()
        limits.maxRecordTextBytes = 64
        let bad = #"{"name": "\#(String(repeating: "x", count: 200))"}"#
        let result = try S.read("[\(bad), \(Self.romeV3)]", chunkSize: 16, limits: limits)
        #expect(result.order == "RT")
        #expect(result.rejections.first?.text == nil)
    }
}
