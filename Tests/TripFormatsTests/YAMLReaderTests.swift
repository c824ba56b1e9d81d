import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

@Suite("YAMLReader")
struct YAMLReaderTests {
    typealias S = YAMLTestSupport

    static let paris = """
      - name: Paris
        destination: France
        startDate: 2024-05-01T09:30:00Z
        endDate: 2024-05-08T00:00:00Z

    """

    // MARK: - Shapes

    @Test("the top-level schemaVersion is read as the version marker")
    func marker() throws {
        let r = try S.read("schemaVersion: \"3.0.0\"\ntrips:\n" + Self.paris)
        #expect(r.detection.version == SchemaVersion(3, 0, 0))
        #expect(r.detection.evidence == .marker("schemaVersion 3.0.0"))
        #expect(r.objects == [S.trip("Paris", "France", "2024-05-01T09:30:00Z", "2024-05-08T00:00:00Z")])
    }

    @Test("an unknown schema version is a data error naming its place")
    func unknownMarker() {
        let e = S.readError("schemaVersion: \"9.9\"\ntrips: []\n")
        #expect(e?.message == "t.yaml:1:16: unknown schema version '9.9'")
    }

    @Test("a bare sequence of trips is read, its version told by its fields")
    func bareSequence() throws {
        let r = try S.read(Self.paris)
        #expect(r.trips.count == 1)
        #expect(r.detection.version == SchemaVersion(3, 0, 0))
        #expect(r.trips[0].origin == RecordOrigin(source: "t.yaml", record: 1, line: 1, column: 5))
    }

    @Test("a stream of documents each holding one trip or a sequence of trips is read")
    func multiDocument() throws {
        let text = """
        ---
        name: A
        destination: X
        startDate: 2024-01-01
        endDate: 2024-01-02
        ---
        - name: B
          destination: Y
          startDate: 2024-01-01
          endDate: 2024-01-02
        - name: C
          destination: Z
          startDate: 2024-01-01
          endDate: 2024-01-02
        ...
        ---
        name: D
        destination: W
        startDate: 2024-01-01
        endDate: 2024-01-02

        """
        let r = try S.read(text)
        #expect(r.objects.map { $0.attributes[0] } == [.string("A"), .string("B"), .string("C"), .string("D")])
        #expect(r.trips.map { $0.origin.line } == [2, 7, 11, 17])
    }

    @Test("an empty stream, an empty document and an empty sequence are zero trips")
    func emptyInputs() throws {
        for text in ["", "# only a comment\n", "---\n", "[]\n", "trips: []\n", "schemaVersion: \"1.0.0\"\ntrips:\n", "--- ~\n"] {
            let r = try S.read(text)
            #expect(r.trips.isEmpty && r.rejections.isEmpty, "\(text.debugDescription)")
        }
    }

    @Test("valid YAML that is not trips is a shape error with its place")
    func shapeErrors() {
        #expect(S.readError("hello\n")?.message == "t.yaml:1:1: expected a trip mapping or a sequence of trips, found a scalar 'hello'")
        #expect(S.readError("- 1\n- 2\n")?.message == "t.yaml:1:3: expected a trip mapping, found a scalar '1'")
        #expect(S.readError("a: 1\n")?.message == "t.yaml:1:1: expected a trip mapping or a sequence of trips, found a mapping whose first key is 'a'")
        #expect(S.readError("{}\n")?.message == "t.yaml:1:1: expected a trip mapping or a sequence of trips, found an empty mapping")
        #expect(S.readError("trips: 5\n")?.message == "t.yaml:1:8: expected a sequence of trips, found a scalar '5'")
        #expect(S.readError("trips: []\nextra: 1\n")?.message == "t.yaml:2:1: unknown top-level key 'extra'")
        #expect(S.readError("- [1]\n")?.message == "t.yaml:1:3: expected a trip mapping, found a sequence")
    }

    @Test("a syntax error is thrown with libyaml's place and problem")
    func syntaxError() {
        let e = S.readError("trips:\n  - name: A\n   bad: [\n")
        #expect(e?.kind == .data)
        #expect(e?.message.hasPrefix("t.yaml:3:") == true, "\(e?.message ?? "no error")")
    }

    @Test("invalid UTF-8 is a data error")
    func invalidUTF8() {
        #expect(throws: TripError.self) { try S.read(bytes: Array("- name: ".utf8) + [0xFF, 0xFE, 0x41, 10]) }
    }

    // MARK: - Versions and fields

    @Test("1.0.0's legacy spellings bucketListItem and livingAccommodations are read")
    func legacySpellings() throws {
        let text = """
        - name: Rome
          destination: Italy
          start_date: 2023-04-01T08:00:00Z
          end_date: 2023-04-03T08:00:00Z
          bucketListItem:
            - title: Colosseum
          livingAccommodations:
            address: Via Roma 1
            placeName: Casa

        """
        let r = try S.read(text)
        #expect(r.detection.version == SchemaVersion(1, 0, 0))
        #expect(r.objects == [S.tripV1("Rome", "Italy", "2023-04-01T08:00:00Z", "2023-04-03T08:00:00Z",
                                       items: [S.item("Colosseum")], accommodation: S.accommodation("Via Roma 1", "Casa"))])
    }

    @Test("tripViews is ignored and counted")
    func tripViewsIgnored() throws {
        let r = try S.read(Self.paris + "    tripViews: 12\n")
        #expect(r.objects == [S.trip("Paris", "France", "2024-05-01T09:30:00Z", "2024-05-08T00:00:00Z")])
        #expect(r.detection.transientIgnored == 1)
    }

    @Test("plain scalars that YAML would type are strings in string fields", arguments: [
        ("no", "no"), ("1e3", "1e3"), ("0o17", "0o17"), ("2024-05-01", "2024-05-01"), ("yes", "yes"), ("1_000", "1_000"),
        ("\"null\"", "null"), ("'~'", "~"), (".inf", ".inf"), ("0x1F", "0x1F"), ("12:30", "12:30"), ("!!str 5", "5"),
    ])
    func typedLookingStrings(_ written: String, _ value: String) throws {
        let r = try S.read("- name: \(written)\n  destination: \(written)\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n")
        #expect(r.rejections.isEmpty)
        #expect(r.objects.first?.attributes[0] == .string(value))
        #expect(r.objects.first?.attributes[1] == .string(value))
    }

    @Test("a null spelling in a required field is rejected with its place", arguments: ["~", "null", "Null", "NULL", "", "!!null x0"])
    func nullInRequiredField(_ spelling: String) throws {
        let value = spelling == "!!null x0" ? "!!null ''" : spelling
        let r = try S.read("- destination: X\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n  name: \(value)\n")
        #expect(r.trips.isEmpty)
        #expect(r.rejections.first?.reason == "missing required field 'name'")
        #expect(r.rejections.first?.origin.description == "t.yaml:1:3")
    }

    @Test("YAML 1.1 and 1.2 Boolean spellings are read", arguments: [
        ("true", true), ("True", true), ("TRUE", true), ("yes", true), ("Yes", true), ("on", true), ("ON", true), ("y", true),
        ("false", false), ("False", false), ("FALSE", false), ("no", false), ("No", false), ("off", false), ("n", false),
        ("!!bool yes", true),
    ])
    func booleans(_ spelling: String, _ value: Bool) throws {
        let r = try S.read(Self.paris + "    bucketList:\n      - title: T\n        hasReservation: \(spelling)\n")
        #expect(r.objects.first?.relationships[0].objects.first?.attributes[2] == .bool(value))
    }

    @Test("a quoted Boolean spelling is a string, which a Boolean field rejects")
    func quotedBoolean() throws {
        let r = try S.read(Self.paris + "    bucketList:\n      - title: T\n        hasReservation: \"true\"\n")
        #expect(r.rejections.first?.reason == "field 'hasReservation': expected true or false, found the string 'true'")
    }

    @Test("YAML timestamps, ISO 8601 dates and epoch numbers are read as dates", arguments: [
        ("2001-12-14 21:59:43.10 -5", "2001-12-15T02:59:43.100Z"),
        ("2001-12-14t21:59:43.10-05:00", "2001-12-15T02:59:43.100Z"),
        ("2001-12-15T02:59:43.1Z", "2001-12-15T02:59:43.100Z"),
        ("2002-12-14", "2002-12-14T00:00:00Z"),
        ("\"2024-05-01T09:30:00+02:00\"", "2024-05-01T07:30:00Z"),
        ("!!timestamp 2024-05-01", "2024-05-01T00:00:00Z"),
        ("0", "2001-01-01T00:00:00Z"),
        ("!!int 0x10", "2001-01-01T00:00:16Z"),
    ])
    func timestamps(_ written: String, _ iso: String) throws {
        let r = try S.read("- name: A\n  destination: B\n  startDate: \(written)\n  endDate: 2024-01-02\n")
        #expect(r.rejections.isEmpty)
        #expect(r.objects.first?.attributes[2] == S.date(iso))
    }

    @Test("a value of the wrong shape rejects the record, and reading goes on")
    func wrongShapes() throws {
        let text = """
        - name: [a, b]
          destination: X
          startDate: 2024-01-01
          endDate: 2024-01-02
        - name: B
          destination: X
          startDate: 2024-01-01
          endDate: 2024-01-02
          bucketList: {title: x}
        - name: C
          destination: X
          startDate: 2024-01-01
          endDate: 2024-01-02
          bucketList: [x]
        - name: D
          destination: X
          startDate: 2024-01-01
          endDate: 2024-01-02
          extra: {deep: [1, 2]}
        - name: E
          destination: X
          startDate: 2024-01-01
          endDate: 2024-01-02

        """
        let r = try S.read(text)
        #expect(r.rejections.map(\.reason) == [
            "field 'name': expected a string, found a sequence",
            "field 'bucketList': expected a list of objects, found a mapping",
            "field 'bucketList': expected an object in the list, found a scalar 'x'",
            "unknown field 'extra' matches no schema version",
        ])
        #expect(r.rejections.map { $0.origin.line } == [1, 5, 10, 15])
        #expect(r.objects.map { $0.attributes[0] } == [.string("E")])
    }

    // MARK: - Anchors, aliases, merge keys, tags

    @Test("anchors and aliases are resolved")
    func aliases() throws {
        let text = """
        - name: A
          destination: &d Lisbon
          startDate: &s 2024-05-01
          endDate: 2024-05-02
          bucketList: &items
            - title: Tram 28
              isInPlan: true
          livingAccommodation: &home {address: Rua 1, placeName: Casa}
        - name: B
          destination: *d
          startDate: *s
          endDate: 2024-05-03
          bucketList: *items
          livingAccommodation: *home

        """
        let r = try S.read(text)
        #expect(r.rejections.isEmpty)
        #expect(r.objects.count == 2)
        #expect(r.objects[1].attributes[1] == .string("Lisbon"))
        #expect(r.objects[1].relationships == r.objects[0].relationships)
        #expect(r.objects[1].relationships[0].objects == [S.item("Tram 28", isInPlan: true)])
    }

    @Test("a whole trip can be an alias")
    func aliasedTrip() throws {
        let r = try S.read("- &t {name: A, destination: B, startDate: 2024-01-01, endDate: 2024-01-02}\n- *t\n")
        #expect(r.objects.count == 2 && r.objects[0] == r.objects[1])
    }

    @Test("an alias to nothing is a data error")
    func undefinedAlias() {
        #expect(S.readError("- name: *nope\n")?.message == "t.yaml:1:9: alias '*nope' names no anchor before it")
    }

    @Test("merge keys are honoured in trips, items and accommodations, explicit keys winning")
    func mergeKeys() throws {
        let text = """
        - &base
          name: Base
          destination: Nowhere
          startDate: 2024-01-01
          endDate: 2024-01-02
        - <<: *base
          name: Copy
          bucketList:
            - &item {title: Walk, details: Slow, hasReservation: yes}
            - {<<: *item, title: Run}
          livingAccommodation:
            <<: [{address: First}, {address: Second, placeName: Second}]
        - destination: Explicit
          <<: [*base, {name: Ignored, bucketList: [{title: Merged}]}]

        """
        let r = try S.read(text)
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        #expect(r.objects.count == 3)
        #expect(r.objects[1] == S.trip("Copy", "Nowhere", "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z",
                                      items: [S.item("Walk", details: "Slow", hasReservation: true),
                                              S.item("Run", details: "Slow", hasReservation: true)],
                                      accommodation: S.accommodation("First", "Second")))
        #expect(r.objects[2] == S.trip("Base", "Explicit", "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z",
                                      items: [S.item("Merged")]))
    }

    @Test("a merge key whose value is not a mapping rejects the record")
    func badMerge() throws {
        let r = try S.read("- <<: 5\n  name: A\n  destination: B\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n")
        #expect(r.rejections.first?.reason == "merge key '<<' expects a mapping or a sequence of mappings, found a scalar '5'")
    }

    @Test("standard tags are honoured")
    func standardTags() throws {
        let text = """
        - name: !!str 2024-05-01
          destination: ! yes
          startDate: !!timestamp 2024-05-01 10:00:00
          endDate: !!str 2024-05-02
          bucketList: !!seq
            - !!map {title: !!str true, hasReservation: !!bool on, isInPlan: !!bool "false"}
          livingAccommodation: !!null ~

        """
        let r = try S.read(text)
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        #expect(r.objects == [S.trip("2024-05-01", "yes", "2024-05-01T10:00:00Z", "2024-05-02T00:00:00Z",
                                     items: [S.item("true", hasReservation: true)])])
    }

    @Test("a standard tag that contradicts the field rejects the record", arguments: [
        ("name: !!timestamp 2024-05-01", "field 'name': expected a string, found the timestamp '2024-05-01'"),
        ("name: !!bool maybe", "field 'name': 'maybe' is not a !!bool value"),
        ("name: !!int 12", "field 'name': expected a string, found the number 12"),
        ("name: !!bool true", "field 'name': expected a string, found true"),
    ])
    func contradictingTags(_ line: String, _ reason: String) throws {
        let r = try S.read("- \(line)\n  destination: B\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n")
        #expect(r.rejections.first?.reason == reason)
    }

    @Test("an unknown tag is a data error, never executed", arguments: [
        "!!python/object/apply:os.system [\"echo hi\"]", "!ruby/object:Gem::Installer {}", "!custom plain", "!!float 1.5",
        "!<tag:example.com,2024:x> v",
    ])
    func unknownTags(_ value: String) {
        let e = S.readError("- name: A\n  destination: \(value)\n")
        #expect(e?.kind == .data)
        #expect(e?.message.hasPrefix("t.yaml:2:16: unknown tag") == true, "\(e?.message ?? "no error")")
    }

    // MARK: - Limits

    @Test("an alias bomb is refused with a data error")
    func aliasBomb() throws {
        var text = "- name: A\n  destination: B\n  startDate: 2024-01-01\n  endDate: 2024-01-02\n  bucketList:\n"
        text += "    - title: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for (prev, name) in zip("abcdefgh", "bcdefghi") {
            text += "    - title: &\(name) [" + Array(repeating: "*\(prev)", count: 9).joined(separator: ", ") + "]\n"
        }
        text += "    - title: *i\n"
        let start = Date()
        let e = S.readError(text)
        #expect(e?.kind == .data)
        #expect(e?.message.contains("refused as an alias bomb") == true, "\(e?.message ?? "no error")")
        #expect(Date().timeIntervalSince(start) < 10)
    }

    @Test("an alias to the node that contains it is refused, not looped")
    func aliasCycle() {
        let e = S.readError("- &t\n  name: Loop\n  bucketList:\n    - *t\n")
        #expect(e?.message == "t.yaml:4:7: alias '*t' refers to a node that contains it, a cycle")
    }

    @Test("nesting deeper than the limit is refused without overflowing the stack")
    func deepNesting() {
        let e = S.readError("- name: " + String(repeating: "[", count: 100_000))
        #expect(e?.message.hasPrefix("t.yaml:1:") == true && e?.message.hasSuffix(": nesting deeper than 256 levels") == true,
                "\(e?.message ?? "no error")")
        let blocks = S.readError("- name:\n  " + String(repeating: "- ", count: 10_000) + "x\n")
        #expect(blocks?.message.hasSuffix(": nesting deeper than 256 levels") == true, "\(blocks?.message ?? "no error")")
        let mappings = S.readError(String(repeating: "{a: ", count: 10_000))
        #expect(mappings?.kind == .data)
    }

    @Test("a scalar longer than the limit is refused")
    func longScalar() {
        let e = S.readError("- name: " + String(repeating: "x", count: (1 << 20) + 1) + "\n")
        #expect(e?.message.contains("is longer than the limit of 1048576") == true, "\(e?.message ?? "no error")")
    }

    @Test("many legitimate aliases in a large input are not taken for a bomb")
    func manyAliases() throws {
        var text = "- &base {name: T0, destination: D, startDate: 2024-01-01, endDate: 2024-01-02, bucketList: [&i {title: a, details: b}], livingAccommodation: &h {address: x, placeName: y}}\n"
        for n in 1..<3000 { text += "- {<<: *base, name: T\(n), bucketList: [*i, *i, *i], livingAccommodation: *h}\n" }
        let r = try S.read(text)
        #expect(r.rejections.isEmpty)
        #expect(r.trips.count == 3000)
        #expect(r.objects.last?.relationships[0].objects.count == 3)
    }

    @Test("the trips before a syntax error are read before the error is thrown, with or without the parse thread",
          arguments: [true, false])
    func tripsBeforeError(threaded: Bool) throws {
        var text = ""
        for n in 0..<2000 { text += "- {name: T\(n), destination: D, startDate: 2024-01-01, endDate: 2024-01-02}\n" }
        text += "- name: [unclosed\n"
        var reader = YAMLRecordReader(parser: YAMLEventParser(bytes: Array(text.utf8), name: "t.yaml"), options: ReadOptions(),
                                      threaded: threaded)
        var trips = 0
        var error: TripError? = nil
        do {
            while let item = try reader.next() { if case .trip = item { trips += 1 } }
        } catch let e as TripError { error = e }
        #expect(trips == 2000)
        #expect(error?.message.hasPrefix("t.yaml:2002:") == true, "\(error?.message ?? "no error")")
        #expect(throws: TripError.self) { try reader.next() }
    }

    @Test("a reader dropped in the middle of its input lets go without reading the rest")
    func droppedReader() throws {
        var text = ""
        for n in 0..<50_000 { text += "- {name: T\(n), destination: D, startDate: 2024-01-01, endDate: 2024-01-02}\n" }
        let start = Date()
        for _ in 0..<20 {
            var reader = YAMLRecordReader(parser: YAMLEventParser(bytes: Array(text.utf8), name: "t.yaml"), options: ReadOptions())
            guard case .trip(let first)? = try reader.next() else { Issue.record("no trip"); return }
            #expect(first.object.attributes[0] == .string("T0"))
        }
        #expect(Date().timeIntervalSince(start) < 20)
    }

    @Test("reading a file through the factory gives the same trips")
    func factoryReader() throws {
        let path = S.temporaryPath()
        try ("schemaVersion: \"3.0.0\"\ntrips:\n" + Self.paris).write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try S.readFile(path)
        #expect(r.objects == [S.trip("Paris", "France", "2024-05-01T09:30:00Z", "2024-05-08T00:00:00Z")])
        #expect(r.trips[0].origin.source == path)
    }

    @Test("a missing file is a no-input error")
    func missingFile() {
        #expect(throws: TripError(.noInput, "/nonexistent/x.yaml: cannot open: No such file or directory")) {
            _ = try FormatFactory.makeReader(.file("/nonexistent/x.yaml"), format: .yaml, options: ReadOptions())
        }
    }
}

@Suite("YAMLSamples")
struct YAMLSamplesTests {
    typealias S = YAMLTestSupport
    static let samples = TestPaths.samples

    @Test("the 1.0.0 sample reads as five 1.0.0 trips, duplicate names with different bucket lists")
    func legacySample() throws {
        let r = try S.readFile(Self.samples + "/trips-v1.yaml")
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        #expect(r.detection.version == SchemaVersion(1, 0, 0))
        #expect(r.objects.map { $0.attributes[0] } == ["Family Visit", "Ski Week", "Family Visit", "Conference", "Ski Week"].map(Value.string))
        #expect(r.objects[0].relationships[0].objects.map { $0.attributes[0] } == [.string("Apple Park Visitor Center"), .string("Stevens Creek Trail")])
        #expect(r.objects[2].relationships[0].objects.map { $0.attributes[0] } == [.string("Stevens Creek Trail"), .string("Farmers market")])
        #expect(r.objects[0].attributes[2] == S.date("2024-06-14T08:00:00Z"))
        #expect(r.objects[3].attributes[2] == S.date("2024-06-10T15:00:00.250Z"))
        #expect(r.objects[3].relationships[1].objects.first?.attributes[1] == .string("Hotel \"Fairmont\""))
    }

    @Test("the 3.0.0 sample is in the writer's exact form: read and written again, it is unchanged")
    func currentSample() throws {
        let path = Self.samples + "/trips-v3.yaml"
        let r = try S.readFile(path)
        #expect(r.detection.version == SchemaVersion(3, 0, 0))
        #expect(r.objects.count == 3)
        #expect(try S.write(r.objects) == String(contentsOfFile: path, encoding: .utf8))
    }

    @Test("the stream sample reads as four 3.0.0 trips, with its block scalar, merge key and transient field")
    func streamSample() throws {
        let r = try S.readFile(Self.samples + "/stream.yaml")
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        #expect(r.detection.version == SchemaVersion(3, 0, 0))
        #expect(r.detection.transientIgnored == 1)
        #expect(r.objects.map { $0.attributes[0] } == ["Lisbon long weekend", "Porto", "Sintra", "Faro"].map(Value.string))
        #expect(r.objects[0].attributes[2] == S.date("2024-05-01T08:30:00Z"))
        #expect(r.objects[0].relationships[0].objects[1].attributes[1] == .string("Manteigaria, Rua do Loreto 2\nOpen until midnight\n"))
        #expect(r.objects[3].relationships[0].objects == [S.item("Praia de Faro", details: "Bus 16"),
                                                          S.item("Ilha Deserta", details: "Bus 16", hasReservation: true)])
    }
}
