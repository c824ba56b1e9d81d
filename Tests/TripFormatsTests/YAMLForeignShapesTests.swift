import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// The shapes other producers write YAML in, by hand: escapes and line folding in every scalar style
/// (checked against PyYAML's reading of the same text), anchors, aliases and merge keys, tags, block
/// scalars with their chomping, quoted keys, flow mappings in block sequences, strings that look like
/// other types, and the documents the trips app exports at each schema version. Each is read as a
/// file (the block scanner when it fits, else libyaml) and through a pipe (libyaml), and where the
/// scanner reads it, its events must be libyaml's.
@Suite("YAML shapes other producers write")
struct YAMLForeignShapesTests {
    typealias S = YAMLTestSupport

    /// Reads `text` both ways, and checks the scanner against libyaml; the two readings must agree.
    static func readBothWays(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ReadItems {
        let bytes = Array(text.utf8)
        let path = S.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        YAMLBlockScannerTests.compare(bytes, sourceLocation: sourceLocation)
        let fromFile = try S.readFile(path)
        let fromPipe = try YAMLForeignWriterTests.readThroughPipe(bytes)
        #expect(fromFile.objects == fromPipe.objects, "a file and a pipe read differently", sourceLocation: sourceLocation)
        #expect(fromFile.rejections.map(\.reason) == fromPipe.rejections.map(\.reason), sourceLocation: sourceLocation)
        return fromFile
    }

    /// The error both ways of reading throw (the same message but for the file's name), or nil.
    static func errorBothWays(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        let path = S.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try? Data(bytes).write(to: URL(fileURLWithPath: path))
        var fileError: String?, pipeError: String?
        do { _ = try S.readFile(path) } catch { fileError = "\(error)".replacingOccurrences(of: path, with: "IN") }
        do { _ = try YAMLForeignWriterTests.readThroughPipe(bytes) } catch {
            pipeError = "\(error)".replacingOccurrences(of: #"/dev/fd/\d+"#, with: "IN", options: .regularExpression)
        }
        #expect(fileError == pipeError)
        return fileError
    }

    // MARK: - Scalars, against PyYAML

    /// A one-trip document whose destination, and first item's title, are `scalar` as written
    /// (continuation lines indented under their key).
    static func document(_ scalar: String) -> String {
        let indented = scalar.replacingOccurrences(of: "\n", with: "\n      ")
            .replacingOccurrences(of: "\n      \n", with: "\n\n")
        return """
        schemaVersion: "3.0.0"
        trips:
          - name: N
            destination: \(indented)
            startDate: 2024-01-01T00:00:00Z
            endDate: 2024-01-02T00:00:00Z
            bucketList:
              - title: \(scalar.replacingOccurrences(of: "\n", with: "\n          ").replacingOccurrences(of: "\n          \n", with: "\n\n"))
            livingAccommodation: null

        """
    }

    /// What PyYAML's composer makes of each document's destination and first title: their texts
    /// (no types), or the error's first line.
    static let pyyamlScalars = #"""
    import sys, json, yaml
    out = []
    for text in json.load(sys.stdin):
        try:
            root = yaml.compose(text)
            trip = dict((k.value, v) for k, v in root.value)["trips"].value[0]
            fields = dict((k.value, v) for k, v in trip.value)
            item = dict((k.value, v) for k, v in fields["bucketList"].value[0].value)
            values = {"destination": fields["destination"].value, "title": item["title"].value}
            if any(0xD800 <= ord(c) <= 0xDFFF for v in values.values() for c in v):
                # PyYAML takes "\uD800" for a lone surrogate, which is no character: YAML refuses it.
                values = {"error": "a surrogate escape"}
            out.append(values)
        except (yaml.YAMLError, ValueError) as e:   # PyYAML lets chr() fail on \U00110000
            out.append({"error": str(e).splitlines()[0]})
    print(json.dumps(out, ensure_ascii=True))
    """#

    /// Escapes, line folding and escaped line breaks in double quotes; folding in single quotes and in
    /// plain multi-line scalars; CR LF; characters beyond the BMP.
    static let scalars: [String] = [
        #""\x41\x7e\xA0\xe9\xFF""#, #""\u00e9\u4E2D\uFFFD\u0000x""#, #""\U0001F600\U0010FFFF\U00000041""#,
        #""\N\_\L\P""#, #""\0\a\b\t\n\v\f\r\e""#, "\"tab\\\there\"", #""\ \"\/\\""#,
        #""line one\nline two\n""#, "\"a\n  b\"", "\"a\n\n  b\"", "\"a\n\n\n  b\"", "\"a   \n   b\"",
        "\"a\\\n  b\"", "\"a \\\n  b\"", "\"a\\\n  \\ b\"", "\"a\\\n\n  b\"", "\"\\\n  lead\"", "\"end\\\n\"",
        "\"a\\\r\n  b\"", "\"a\r\n  b\"", "\"a\r\n\r\n  b\"",
        "'a\n  b'", "'a\n\n  b'", "'it''s\n  ''quoted'''", "'a   \n   b  '", "' lead\n  trail '", "'a\r\n  b'",
        "plain\n  folded", "plain\n\n  with a blank line", "plain#not a comment\n  more", "😀 plain\n  🧳",
        "\"😀 \\U0001F9F3\"", "'😀 ''🧳'''", "\"\u{10FFFF}\"",
        // Refused by YAML: both readers must refuse them, not pass them on.
        #""\uD800""#, #""\q""#, #""\x4""#, "\"\\U00110000\"", "a:b\n  c: d",
    ]

    @Test("scalars with escapes and line folding read as PyYAML reads them, both ways",
          .enabled(if: S.hasPyYAML, "python3 with PyYAML is not installed (pip install PyYAML)"))
    func scalarsAgainstPyYAML() throws {
        let documents = Self.scalars.map(Self.document)
        let input = try JSONSerialization.data(withJSONObject: documents)
        let result = try ExternalTool.python(Self.pyyamlScalars, stdin: input)
        try #require(result.status == 0, "PyYAML failed: \(result.stderr)")
        let answers = try YAMLTestJSON.parseAll(result.out)
        guard case .sequence(let each)? = answers.first, each.count == documents.count else {
            Issue.record("unexpected answer: \(result.out.prefix(300))")
            return
        }
        var compared = 0, refused = 0
        defer { #expect(compared + refused == Self.scalars.count && refused == 5, "\(compared) compared, \(refused) refused") }
        for (scalar, (text, answer)) in zip(Self.scalars, zip(documents, each)) {
            guard case .mapping(let a) = answer else { continue }
            if case .string(let pyError)? = a["error"] {
                refused += 1
                let error = Self.errorBothWays(text)
                #expect(error != nil, "\(scalar.debugDescription): PyYAML refuses it (\(pyError)), we read it")
                continue
            }
            guard case .string(let destination)? = a["destination"], case .string(let title)? = a["title"] else { continue }
            let r: ReadItems
            do { r = try Self.readBothWays(text) } catch {
                Issue.record("\(scalar.debugDescription): PyYAML reads \(destination.debugDescription), we refuse it: \(error)")
                continue
            }
            guard let trip = r.objects.first, r.rejections.isEmpty else {
                Issue.record("\(scalar.debugDescription): not read: \(r.rejections)")
                continue
            }
            compared += 1
            #expect(trip.attributes[1].exactly(.string(destination)),
                    "\(scalar.debugDescription) as a destination: we read \(trip.attributes[1]), PyYAML \(destination.debugDescription)")
            #expect(trip.relationships[0].objects.first?.attributes[0].exactly(.string(title)) == true,
                    "\(scalar.debugDescription) as a title: we read \(String(describing: trip.relationships[0].objects.first?.attributes[0])), PyYAML \(title.debugDescription)")
        }
    }

    @Test("a double-quoted scalar on one line: the scanner's escapes give libyaml's text, every escape and its edges")
    func scannerEscapes() throws {
        // Every escape letter, alone, first, last and doubled; hex digits of both cases; the largest
        // values; text around them with quotes and backslashes.
        let escapes = [#"\0"#, #"\a"#, #"\b"#, #"\t"#, "\\\t", #"\n"#, #"\v"#, #"\f"#, #"\r"#, #"\e"#, #"\ "#, #"\""#, #"\/"#,
                       #"\\"#, #"\N"#, #"\_"#, #"\L"#, #"\P"#, #"\x00"#, #"\x7F"#, #"\x80"#, #"\xfF"#, #"\u0000"#, #"\u007f"#,
                       #"\u0085"#, #"\u2028"#, #"\uFEFF"#, #"\uFFFE"#, #"\uffff"#, #"\uD7FF"#, #"\uE000"#, #"\U0001F600"#,
                       #"\U0010FFFF"#, #"\U00000000"#, #"\'"#]
        var scanned = 0
        for e in escapes {
            for value in ["\"\(e)\"", "\"x\(e)\"", "\"\(e)y\"", "\"\(e)\(e)\"", "\"'\(e)\\\\\"", "\"é\(e)😀\""] {
                let text = "schemaVersion: \"3.0.0\"\ntrips:\n  - name: \(value)\n    destination: \(value)\n"
                if YAMLBlockScannerTests.compare(text) { scanned += 1 }
            }
        }
        // The scanner takes all but `\<TAB>` (a tab on the line) and `\'` (which it leaves to libyaml).
        #expect(scanned == (escapes.count - 2) * 6)
    }

    // MARK: - Shapes, with their trips

    static func t(_ name: String, _ destination: String, items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
        S.trip(name, destination, "2024-05-01T09:30:00Z", "2024-05-08T18:00:00Z", items: items, accommodation: accommodation)
    }

    static func t1(_ name: String, _ destination: String, items: [ModelObject] = [], accommodation: ModelObject? = nil) -> ModelObject {
        S.tripV1(name, destination, "2024-05-01T09:30:00Z", "2024-05-08T18:00:00Z", items: items, accommodation: accommodation)
    }

    @Test("anchors and aliases as PyYAML writes them: an item, an accommodation, a date and a bucket list reused")
    func anchorsAsPyYAMLWrites() throws {
        let text = """
        schemaVersion: 3.0.0
        trips:
        - bucketList: &id001
          - &id002
            details: ''
            hasReservation: false
            isInPlan: true
            title: 'no'
          - *id002
          destination: Lisbon
          endDate: &id003 2024-05-08 18:00:00+00:00
          livingAccommodation: &id004
            address: Rua 1
            placeName: Casa
          name: A
          startDate: 2024-05-01 09:30:00+00:00
        - bucketList: *id001
          destination: Porto
          endDate: *id003
          livingAccommodation: *id004
          name: B
          startDate: 2024-05-01 09:30:00+00:00

        """
        let r = try Self.readBothWays(text)
        let items = [S.item("no", isInPlan: true), S.item("no", isInPlan: true)]
        let home = S.accommodation("Rua 1", "Casa")
        #expect(r.rejections.isEmpty)
        #expect(r.objects == [Self.t("A", "Lisbon", items: items, accommodation: home), Self.t("B", "Porto", items: items, accommodation: home)])
    }

    @Test("merge keys are honoured: a trip, an item and an accommodation built on an anchored one, explicit keys winning")
    func mergeKeys() throws {
        let text = """
        schemaVersion: "3.0.0"
        trips:
          - &base
            name: A
            destination: Lisbon
            startDate: 2024-05-01T09:30:00Z
            endDate: 2024-05-08T18:00:00Z
            livingAccommodation: &stay {address: Rua 1, placeName: Casa}
          - <<: *base
            name: B
            bucketList:
              - &walk {title: Walk, details: Slow, hasReservation: yes}
              - <<: *walk
                title: Run
            livingAccommodation:
              <<: *stay
              placeName: Other
          - {<<: [*base, {name: ignored, destination: Faro}], name: C}

        """
        let r = try Self.readBothWays(text)
        let walk = S.item("Walk", details: "Slow", hasReservation: true)
        let run = S.item("Run", details: "Slow", hasReservation: true)
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        #expect(r.objects == [Self.t("A", "Lisbon", accommodation: S.accommodation("Rua 1", "Casa")),
                              Self.t("B", "Lisbon", items: [walk, run], accommodation: S.accommodation("Rua 1", "Other")),
                              Self.t("C", "Lisbon", accommodation: S.accommodation("Rua 1", "Casa"))])
    }

    @Test("tags: !!str keeps what looks like another type a string; a quoted '<<' is a key, not a merge")
    func tags() throws {
        let text = """
        - name: !!str 123
          destination: !!str yes
          startDate: !!timestamp 2024-05-01T09:30:00Z
          endDate: !<tag:yaml.org,2002:str> 2024-05-08T18:00:00Z
          bucketList:
            - {title: !!str null, details: !!str ~, hasReservation: !!bool true}
            - {title: !!str 1.0, details: !!str 2024-01-01, isInPlan: !!bool "yes"}
            - {title: !!%73tr on, details: !!str "no"}
          livingAccommodation: !!map
            address: !!str 0x1F
            placeName: !!str .inf

        """
        let r = try Self.readBothWays(text)
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        #expect(r.objects == [Self.t("123", "yes",
                                     items: [S.item("null", details: "~", hasReservation: true),
                                             S.item("1.0", details: "2024-01-01", isInPlan: true),
                                             S.item("on", details: "no")],
                                     accommodation: S.accommodation("0x1F", ".inf"))])
        // A quoted `<<` is an ordinary key, unknown to the schema: not a merge.
        let quoted = try Self.readBothWays("- name: A\n  destination: B\n  startDate: 2024-05-01T09:30:00Z\n  endDate: 2024-05-08T18:00:00Z\n  '<<': {name: C}\n")
        #expect(quoted.objects.first?.attributes[0] == .string("A") || !quoted.rejections.isEmpty)
    }

    @Test("folded and literal block scalars with every chomping, and indentation indicators")
    func blockScalars() throws {
        let text = """
        - name: |
            literal
              indented
            last
          destination: >
            folded
            into one

            paragraph two
          startDate: 2024-05-01T09:30:00Z
          endDate: 2024-05-08T18:00:00Z
          bucketList:
            - title: |-
                strip
              details: |+
                keep


            - title: >-
                folded strip
              details: >+
                folded keep

            - title: |2
                 two spaces kept
              details: >
                more
                  indented stays
                back

          livingAccommodation:
            address: |
              1 Main St
              Apt 2
            placeName: >-
              Inn

        """
        let r = try Self.readBothWays(text)
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        let want = S.trip("literal\n  indented\nlast\n", "folded into one\nparagraph two\n",
                            "2024-05-01T09:30:00Z", "2024-05-08T18:00:00Z",
                            items: [S.item("strip", details: "keep\n\n\n"),
                                    S.item("folded strip", details: "folded keep\n\n"),
                                    S.item(" two spaces kept\n", details: "more\n  indented stays\nback\n")],
                            accommodation: S.accommodation("1 Main St\nApt 2\n", "Inn"))
        #expect(r.objects.first.map { $0.sameValues(as: want) } == true, "\(r.objects)")
    }

    @Test("quoted keys, flow mappings in block sequences, and strings that look like other types, quoted")
    func quotedKeysAndFlow() throws {
        let text = """
        "schemaVersion": '3.0.0'
        'trips':
        - "name": 'no'
          'destination': "yes"
          "start\\x44ate": 2024-05-01T09:30:00Z
          endDate: 2024-05-08T18:00:00Z
          bucketList:
          - {title: 'on', details: 'null', hasReservation: true}
          - {"title": '~', 'details': "1.0", isInPlan: yes}
          - {title: '2024-01-01', details: ''}
          - title: ' lead and trail '
            details: "a # not a comment: and a colon\\nnew line\\ttab 😀 \\U0001F9F3"
          livingAccommodation: {address: '#1', placeName: 'a: b'}

        """
        let r = try Self.readBothWays(text)
        #expect(r.rejections.isEmpty, "\(r.rejections)")
        #expect(r.objects == [Self.t("no", "yes",
                                     items: [S.item("on", details: "null", hasReservation: true),
                                             S.item("~", details: "1.0", isInPlan: true),
                                             S.item("2024-01-01"),
                                             S.item(" lead and trail ", details: "a # not a comment: and a colon\nnew line\ttab 😀 🧳")],
                                     accommodation: S.accommodation("#1", "a: b"))])
    }

    @Test("documents the trips app exports at each schema version read to their trips")
    func appExports() throws {
        let v1 = """
        # SampleTrips 1.0.0
        - name: Family Visit
          destination: Cupertino
          start_date: 2024-05-01 09:30:00 +00:00
          end_date: 2024-05-08T18:00:00Z
          bucketListItem:
            - title: Apple Park
              details: Rooftop
              hasReservation: no
              isInPlan: yes
          livingAccommodations:
            address: 1 Infinite Loop
            placeName: Aunt May's
        - name: Family Visit
          destination: Cupertino, CA
          start_date: 2024-05-01T09:30:00Z
          end_date: 2024-05-08T18:00:00Z
          bucketList: []
          livingAccommodation: ~

        """
        let r1 = try Self.readBothWays(v1)
        #expect(r1.detection.version == SchemaVersion(1, 0, 0))
        #expect(r1.objects == [Self.t1("Family Visit", "Cupertino", items: [S.item("Apple Park", details: "Rooftop", isInPlan: true)],
                                       accommodation: S.accommodation("1 Infinite Loop", "Aunt May's")),
                               Self.t1("Family Visit", "Cupertino, CA")])

        let v2 = """
        schemaVersion: "2.0.0"
        trips:
          - name: Kyoto
            destination: 京都
            start_date: 2024-05-01T09:30:00Z
            end_date: 2024-05-08T18:00:00.000Z
            bucketList:
              - title: "Fushimi Inari"
                details: ""
                hasReservation: false
                isInPlan: true
            livingAccommodation: null

        """
        let r2 = try Self.readBothWays(v2)
        #expect(r2.detection.version == SchemaVersion(2, 0, 0))
        #expect(r2.objects == [Self.t1("Kyoto", "京都", items: [S.item("Fushimi Inari", isInPlan: true)])])

        let v3 = """
        schemaVersion: "3.0.0"
        trips:
          - name: Reykjavík
            destination: Iceland
            startDate: 2024-05-01T09:30:00Z
            endDate: 2024-05-08T18:00:00Z
            bucketList:
              - title: Northern lights
                details: "Check the aurora forecast\\nand the cloud cover"
                hasReservation: false
                isInPlan: true
            livingAccommodation:
              address: Laugavegur 1
              placeName: Guesthouse Aurora
            tripViews: 3

        """
        let r3 = try Self.readBothWays(v3)
        #expect(r3.detection.version == SchemaVersion(3, 0, 0))
        #expect(r3.objects == [Self.t("Reykjavík", "Iceland",
                                      items: [S.item("Northern lights", details: "Check the aurora forecast\nand the cloud cover", isInPlan: true)],
                                      accommodation: S.accommodation("Laugavegur 1", "Guesthouse Aurora"))])
    }
}

extension Value {
    /// Equality with strings compared scalar by scalar (Swift's `==` takes "é" and "e\u{301}" for equal).
    func exactly(_ other: Value) -> Bool {
        if case .string(let a) = self, case .string(let b) = other { return a.unicodeScalars.elementsEqual(b.unicodeScalars) }
        return self == other
    }
}

extension ModelObject {
    /// The same values with strings compared scalar by scalar, to-many and to-one objects included.
    func sameValues(as other: ModelObject) -> Bool {
        guard attributes.count == other.attributes.count, relationships.count == other.relationships.count,
              zip(attributes, other.attributes).allSatisfy({ $0.exactly($1) }) else { return false }
        for (a, b) in zip(relationships, other.relationships) {
            let x = a.objects, y = b.objects
            guard x.count == y.count, zip(x, y).allSatisfy({ $0.sameValues(as: $1) }) else { return false }
        }
        return true
    }
}
