import Testing
import TripKit

@Suite("Record builder: version detection, types and required fields")
struct RecordBuilderTests {
    let v1Fields: [(String, ScalarToken)] = [("name", .string("Paris")), ("destination", .string("France")),
                                             ("start_date", .string("2024-05-01")), ("end_date", .string("2024-05-08"))]
    let v3Fields: [(String, ScalarToken)] = [("name", .string("Paris")), ("destination", .string("France")),
                                             ("startDate", .string("2024-05-01")), ("endDate", .string("2024-05-08"))]

    @Test("start_date and end_date detect the oldest matching version, 1.0.0")
    func detectsV1() {
        var b = RecordBuilder(source: "t", format: "json")
        let item = build(&b, v1Fields)
        #expect(item.trip != nil)
        #expect(b.detection.version == SchemaVersion(1, 0, 0))
        #expect(b.detection.evidence == .fields(["start_date", "end_date"]))
    }

    @Test("startDate and endDate detect 3.0.0")
    func detectsV3() {
        var b = RecordBuilder(source: "t", format: "json")
        _ = build(&b, v3Fields)
        #expect(b.detection.version == SchemaVersion(3, 0, 0))
    }

    @Test("a marker wins over the field names")
    func marker() throws {
        var b = RecordBuilder(source: "t", format: "json")
        try b.setMarker("2.0.0", place: "t:1:2")
        let item = build(&b, v1Fields)
        #expect(item.trip != nil)
        #expect(b.detection.version == SchemaVersion(2, 0, 0))
        #expect(b.detection.evidence == .marker("schemaVersion 2.0.0"))
    }

    @Test("a marker that contradicts the fields rejects the record and names both")
    func markerContradiction() throws {
        var b = RecordBuilder(source: "t", format: "json")
        try b.setMarker("3.0.0", place: "t:1:2")
        let r = build(&b, v1Fields).rejection
        #expect(r?.reason.contains("start_date, end_date are 1.0.0 and 2.0.0, but the input is 3.0.0") == true)
    }

    @Test("an unknown marker is a data error")
    func unknownMarker() {
        var b = RecordBuilder(source: "t", format: "json")
        #expect(throws: TripError.self) { try b.setMarker("9.1", place: "t:1:2") }
    }

    @Test("a record mixing versions matches no single version")
    func mixed() {
        var b = RecordBuilder(source: "t", format: "json")
        let r = build(&b, [("name", .string("P")), ("destination", .string("F")),
                           ("start_date", .string("2024-05-01")), ("endDate", .string("2024-05-08"))]).rejection
        #expect(r?.reason == "fields start_date (1.0.0 and 2.0.0), endDate (3.0.0) match no single schema version")
    }

    @Test("an input that changes versions after its first record rejects the odd record")
    func fileMixes() {
        var b = RecordBuilder(source: "t", format: "json")
        _ = build(&b, v1Fields)
        let r = build(&b, record: 2, line: 7, v3Fields).rejection
        #expect(r?.origin.line == 7)
        #expect(r?.reason.contains("an input must not mix versions") == true)
    }

    @Test("unknown fields are named and the record rejected, unless ignored")
    func unknown() {
        var b = RecordBuilder(source: "t", format: "json")
        let r = build(&b, v3Fields + [("rider", .string("x")), ("fare", .number("3"))]).rejection
        #expect(r?.reason == "unknown fields 'rider', 'fare' match no schema version")
        var lenient = RecordBuilder(source: "t", format: "json", options: ReadOptions(ignoreUnknown: true))
        #expect(build(&lenient, v3Fields + [("rider", .string("x"))]).trip != nil)
        #expect(lenient.detection.unknownIgnored == 1)
    }

    @Test("a record with a hundred thousand unknown fields names eight and counts the rest, in linear time")
    func manyUnknown() {
        var b = RecordBuilder(source: "t", format: "json")
        let many = (0..<100_000).map { ("extra\($0)", ScalarToken.string("x")) }
        let r = build(&b, v3Fields + many).rejection
        let shown = (0..<8).map { "'extra\($0)'" }.joined(separator: ", ")
        #expect(r?.reason == "unknown fields \(shown) and 99992 more match no schema version")
        // The next record starts clean.
        #expect(build(&b, record: 2, v3Fields).trip != nil)
    }

    @Test("only the first failure of a record is kept and reported")
    func firstFailure() {
        var b = RecordBuilder(source: "t", format: "json")
        b.beginRecord(origin: RecordOrigin(source: "t", record: 1))
        for (k, v) in v3Fields { b.set(k, v) }
        for i in 0..<100_000 { b.fail("problem \(i)") }
        #expect(b.endRecord().rejection?.reason == "problem 0")
    }

    @Test("a missing required field is named", arguments: ["name", "destination", "startDate", "endDate"])
    func missing(field: String) {
        var b = RecordBuilder(source: "t", format: "json")
        let r = build(&b, v3Fields.filter { $0.0 != field }).rejection
        #expect(r?.reason == "missing required field '\(field)'")
    }

    @Test("a record with no dates at all is checked against the current version")
    func noDates() {
        var b = RecordBuilder(source: "t", format: "json")
        let r = build(&b, [("name", .string("P")), ("destination", .string("F"))]).rejection
        #expect(r?.reason == "missing required field 'startDate'")
    }

    @Test("null in a required field is missing")
    func nullRequired() {
        var b = RecordBuilder(source: "t", format: "yaml")
        let r = build(&b, [("name", .plain("~")), ("destination", .string("F")),
                           ("startDate", .string("2024-05-01")), ("endDate", .string("2024-05-08"))]).rejection
        #expect(r?.reason == "missing required field 'name'")
    }

    @Test("a value of the wrong type is named with what was found")
    func wrongType() {
        var b = RecordBuilder(source: "t", format: "json")
        let r = build(&b, [("name", .number("12")), ("destination", .string("F")),
                           ("startDate", .string("2024-05-01")), ("endDate", .string("2024-05-08"))]).rejection
        #expect(r?.reason == "field 'name': expected a string, found the number 12")
        var b2 = RecordBuilder(source: "t", format: "json")
        let r2 = build(&b2, v3Fields, items: [[("title", .string("x")), ("isInPlan", .string("yes"))]]).rejection
        #expect(r2?.reason == "field 'isInPlan': expected true or false, found the string 'yes'")
        var b3 = RecordBuilder(source: "t", format: "json")
        let r3 = build(&b3, [("name", .string("P")), ("destination", .string("F")),
                             ("startDate", .string("soon")), ("endDate", .string("2024-05-08"))]).rejection
        #expect(r3?.reason == "field 'startDate': expected an ISO 8601 date, found 'soon'")
    }

    @Test("the schema types untyped text: YAML's no is a string in a string field and false in a Bool")
    func schemaDecides() throws {
        var b = RecordBuilder(source: "t", format: "yaml")
        let t = try #require(build(&b, [("name", .plain("no")), ("destination", .plain("1e3")),
                                        ("startDate", .plain("2024-05-01")), ("endDate", .plain("2024-05-08"))],
                                     items: [[("title", .plain("0o17")), ("hasReservation", .plain("no")), ("isInPlan", .plain("Yes"))]]).trip)
        #expect(t.object.attributes[0] == .string("no"))
        #expect(t.object.attributes[1] == .string("1e3"))
        let item = t.object.relationships[0].objects[0]
        #expect(item.attributes == [.string("0o17"), .string(""), .bool(false), .bool(true)])
    }

    @Test("item fields default: details to empty, the Booleans to false")
    func defaults() throws {
        var b = RecordBuilder(source: "t", format: "json")
        let t = try #require(build(&b, v3Fields, items: [[("title", .string("Louvre"))]]).trip)
        #expect(t.object.relationships[0].objects[0].attributes == [.string("Louvre"), .string(""), .bool(false), .bool(false)])
    }

    @Test("an item without a title is rejected")
    func itemTitle() {
        var b = RecordBuilder(source: "t", format: "json")
        let r = build(&b, v3Fields, items: [[("details", .string("x"))]]).rejection
        #expect(r?.reason == "missing required field 'title' of a BucketListItem")
    }

    @Test("an accommodation whose fields are both empty is none")
    func emptyAccommodation() throws {
        var b = RecordBuilder(source: "t", format: "json")
        let t = try #require(build(&b, v3Fields, accommodation: [("address", .string("")), ("placeName", .null)]).trip)
        #expect(t.object.relationships[1] == .toOne(nil))
        let t2 = try #require(build(&b, v3Fields, accommodation: [("placeName", .string("Hotel"))]).trip)
        #expect(t2.object.relationships[1] == .toOne(ModelObject(attributes: [.string(""), .string("Hotel")])))
    }

    @Test("1.0.0's legacy spellings bucketListItem and livingAccommodations are read")
    func legacy() throws {
        var b = RecordBuilder(source: "t", format: "json")
        let t = try #require(build(&b, v1Fields, items: [[("title", .string("Eiffel"))]], itemsKey: "bucketListItem",
                                     accommodation: [("address", .string("1 Rue"))], accommodationKey: "livingAccommodations").trip)
        #expect(t.object.relationships[0].objects.count == 1)
        #expect(t.object.relationships[1].objects.count == 1)
        #expect(b.detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("a transient tripViews is ignored and counted")
    func transient() throws {
        var b = RecordBuilder(source: "t", format: "json")
        let t = try #require(build(&b, v3Fields + [("tripViews", .number("12"))]).trip)
        #expect(t.object.attributes[4] == .int(0))
        #expect(b.detection.transientIgnored == 1)
    }

    @Test("a field given twice is rejected")
    func twice() {
        var b = RecordBuilder(source: "t", format: "json")
        let r = build(&b, v3Fields + [("name", .string("again"))]).rejection
        #expect(r?.reason == "field 'name' is given twice")
    }

    @Test("--source-version overrides detection")
    func override() {
        var b = RecordBuilder(source: "t", format: "json", options: ReadOptions(sourceVersion: SchemaVersion(2, 0, 0)))
        #expect(build(&b, v1Fields).trip != nil)
        #expect(b.detection.version == SchemaVersion(2, 0, 0))
        #expect(b.detection.evidence == .override)
    }

    @Test("numeric dates use the epoch option")
    func epoch() throws {
        var b = RecordBuilder(source: "t", format: "json", options: ReadOptions(dateEpoch: .unix))
        let t = try #require(build(&b, [("name", .string("P")), ("destination", .string("F")),
                                        ("startDate", .number("1714555800")), ("endDate", .number("1714555800.5"))]).trip)
        #expect(t.object.attributes[2] == .date(ts("2024-05-01T09:30:00Z")))
        #expect(t.object.attributes[3] == .date(ts("2024-05-01T09:30:00.500Z")))
    }

    @Test("setting a field from bytes gives what the same string or text as a token gives",
          arguments: ["name", "startDate", "endDate", "tripViews", "bucketList", "livingAccommodation", "hasReservation", "title"])
    func bytesMatchTokens(field: String) {
        let samples = ["", "Paris", "Zürich ✈", "2024-05-01T09:30:00Z", "2024-05-01T09:30:00.120Z", "2024-02-30T09:30:00Z",
                       "2024-05-01T09:30:00+02:00", "2024-05-01", "1714555800", "true", "false", "TRUE", "yes", "0",
                       "null", "~", " true", "2024-05-01T09:30:00.12Z"]
        for sample in samples {
            for isText in [false, true] {
                let token: ScalarToken = isText ? .text(sample) : .string(sample)
                var byToken = RecordBuilder(source: "t", format: "json")
                var byBytes = RecordBuilder(source: "t", format: "json")
                let expected = buildSetting(&byToken, field) { b, f in b.set(f, token) }
                let got = buildSetting(&byBytes, field) { b, f in
                    var copy = sample
                    copy.withUTF8 { utf8 in
                        let raw = UnsafeRawBufferPointer(utf8)
                        if isText { b.set(f, text: raw) } else { b.set(f, string: raw) }
                    }
                }
                #expect(got.trip?.object == expected.trip?.object, "\(field) = \(sample.debugDescription), text: \(isText)")
                #expect(got.rejection?.reason == expected.rejection?.reason, "\(field) = \(sample.debugDescription), text: \(isText)")
                #expect(byBytes.detection == byToken.detection)
            }
        }
    }

    @Test("setting a field from a Boolean gives what the same Boolean as a token gives",
          arguments: ["name", "startDate", "tripViews", "bucketList", "livingAccommodation", "hasReservation", "isInPlan", "title"])
    func boolMatchesToken(field: String) {
        for value in [false, true] {
            var byToken = RecordBuilder(source: "t", format: "json")
            var byBool = RecordBuilder(source: "t", format: "json")
            let expected = buildSetting(&byToken, field) { b, f in b.set(f, .bool(value)) }
            let got = buildSetting(&byBool, field) { b, f in b.set(f, bool: value) }
            #expect(got.trip?.object == expected.trip?.object, "\(field) = \(value)")
            #expect(got.rejection?.reason == expected.rejection?.reason, "\(field) = \(value)")
            #expect(byBool.detection == byToken.detection)
        }
    }

    @Test("objects nested deeper than ever before are built, and the next record starts clean")
    func deepNesting() throws {
        var b = RecordBuilder(source: "t", format: "json")
        // Before the version is known (related objects kept pending), then after it.
        for round in 0..<2 {
            b.beginRecord(origin: RecordOrigin(source: "test", record: 2 * round + 1))
            for (k, v) in v3Fields { b.set(k, v) }
            // An object where a string belongs, 40 deep: each level is a frame of its own.
            for _ in 0..<40 {
                b.beginObject(b.field("name")!)
                b.set("destination", .string("x"))
            }
            let rejected = b.endRecord()
            #expect(rejected.rejection?.reason == "field 'name': expected a string, found an object")
            let item = build(&b, record: 2 * round + 2, v3Fields,
                             items: [[("title", .string("Louvre")), ("isInPlan", .bool(true))]],
                             accommodation: [("address", .string("1 Rue"))])
            let trip = try #require(item.trip)
            #expect(trip.object == object(TestTrip(name: "Paris", destination: "France", start: "2024-05-01", end: "2024-05-08",
                                                   items: [("Louvre", "", false, true)], accommodation: ("1 Rue", ""))))
        }
    }

    @Test("the first record's related objects, kept until its version is known, are built as later records' are")
    func pendingMatchesEager() throws {
        var b = RecordBuilder(source: "t", format: "json")
        let items: [[(String, ScalarToken)]] = [[("title", .string("Louvre"))], [("title", .string("Orsay")), ("details", .string("d"))]]
        let first = try #require(build(&b, v1Fields, items: items, itemsKey: "bucketListItem",
                                       accommodation: [("placeName", .string("Ritz"))], accommodationKey: "livingAccommodations").trip)
        let second = try #require(build(&b, record: 2, v1Fields, items: items, itemsKey: "bucketListItem",
                                        accommodation: [("placeName", .string("Ritz"))], accommodationKey: "livingAccommodations").trip)
        #expect(first.object == second.object)
        #expect(first.object.relationships[0].objects.map(\.attributes[0]) == [.string("Louvre"), .string("Orsay")])
        #expect(first.object.relationships[1].objects.map(\.attributes) == [[.string(""), .string("Ritz")]])
    }

    @Test("invalid UTF-8 set from bytes is repaired as String(decoding:) repairs it, short or long")
    func bytesRepairInvalidUTF8() throws {
        let samples: [[UInt8]] = [[0x61, 0xFF, 0x62], [0xC3], Array("a long string past fifteen bytes".utf8) + [0xE2, 0x82],
                                  [0xED, 0xA0, 0x80] + Array(repeating: 0x7A, count: 20)]
        for bytes in samples {
            for isText in [false, true] {
                let expected = String(decoding: bytes, as: UTF8.self)
                var b = RecordBuilder(source: "t", format: "json")
                let item = buildSetting(&b, "name") { b, f in
                    bytes.withUnsafeBytes { raw in
                        if isText { b.set(f, text: raw) } else { b.set(f, string: raw) }
                    }
                }
                let trip = try #require(item.trip)
                #expect(trip.object.attributes[0] == .string(expected), "\(bytes), text: \(isText)")
            }
        }
    }

    @Test("an attribute with a legacy spelling takes whichever spelling the record gives")
    func legacyAttributeSpelling() throws {
        // Two fields fill one slot here, so objects are built the general way, not slot by slot.
        let vocabulary = SchemaVocabulary([RecordBuilderLegacySchema.self])
        let cases: [([(String, ScalarToken)], [Value])] = [
            ([("label", .string("x"))], [.string("x"), .string("")]),
            ([("title", .string("x")), ("note", .string("n"))], [.string("x"), .string("n")]),
            ([("note", .string("n")), ("label", .string("x"))], [.string("x"), .string("n")]),
        ]
        for (fields, attributes) in cases {
            var b = RecordBuilder(vocabulary: vocabulary, source: "t", format: "json")
            b.beginRecord(origin: RecordOrigin(source: "test", record: 1))
            for (k, v) in fields { b.set(k, v) }
            let trip = try #require(b.endRecord().trip, "\(fields)")
            #expect(trip.object.attributes == attributes)
        }
    }

    /// A 3.0.0 trip with one item, where `field` (of the trip, or else of the item) is set by `setter`.
    private func buildSetting(_ b: inout RecordBuilder, _ field: String, _ setter: (inout RecordBuilder, Int) -> Void) -> ReadItem {
        b.beginRecord(origin: RecordOrigin(source: "test", record: 1))
        for (k, v) in v3Fields where k != field { b.set(k, v) }
        if let f = b.field(field) { setter(&b, f) }
        let items = b.field("bucketList")!
        if field != "bucketList" {
            b.beginObject(items)
            if field != "title" { b.set("title", .string("Louvre")) }
            if let f = b.field(field) { setter(&b, f) }
            b.endObject()
        }
        return b.endRecord()
    }
}

/// A one-version schema whose first attribute has a legacy spelling.
private enum RecordBuilderLegacySchema: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let entities: [Entity] = [
        Entity("Thing", attributes: [Attribute("title", .string), Attribute("note", .string, default: .string(""))],
               legacySpellings: ["label": "title"]),
    ]
}
