import Foundation
import Testing
import TripFormats
import TripKit
import TripTestSupport

/// A 3.0.0 trip's fields in element form, for building inputs.
private func tripElements(_ name: String = "A") -> String {
    "<name>\(name)</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate>"
}

@Suite("XMLReader")
struct XMLReaderTests {
    // MARK: - Shapes

    @Test("the 1.0.0 legacy spellings bucketListItem and livingAccommodations are read, tripViews ignored")
    func legacySpellings() throws {
        let result = try xmlRead(TestPaths.samples + "/trips-v1.xml")
        #expect(result.detection.version == SchemaVersion(1, 0, 0))
        #expect(result.detection.evidence == .marker("schemaVersion 1.0.0"))
        #expect(result.detection.transientIgnored == 1)
        #expect(result.rejections.isEmpty)
        let paris = xmlTripV1("Paris Getaway", destination: "Paris, France", start: 1_714_555_800_000, end: 1_715_191_200_000,
                              items: [xmlItem("Louvre", "Mona Lisa & the Winged Victory", reserved: true, planned: true),
                                      xmlItem("Seine cruise", "Evening boat, <dinner> included", reserved: false, planned: true)],
                              accommodation: xmlPlace("12 Rue de Rivoli, 75001 Paris", "Hôtel du Louvre"))
        #expect(result.objects.count == 3)
        #expect(result.objects.first == paris)
        // The duplicate name keeps its own bucket list.
        #expect(result.objects[2].attributes[0] == .string("Paris Getaway"))
        #expect(result.objects[2].relationships[0] == .toMany([xmlItem("Eiffel Tower", "Summit tickets for 19:00", reserved: true)]))
    }

    @Test("scalar fields may be attributes of trip, item and livingAccommodation")
    func attributesAsFields() throws {
        let result = try xmlRead(text: """
        <trips><trip name="A" destination="D" startDate="2024-05-01" endDate="2024-05-08">
          <bucketList><item title="T" details="x" hasReservation="true"/></bucketList>
          <livingAccommodation address="Street" placeName="Inn"/>
        </trip></trips>
        """)
        #expect(result.objects == [xmlTripV3("A", destination: "D", items: [xmlItem("T", "x", reserved: true)],
                                             accommodation: xmlPlace("Street", "Inn"))])
    }

    @Test("items may be named item or bucketListItem, inside bucketList or bucketListItem")
    func itemNames() throws {
        let current = try xmlRead(text: """
        <trips><trip>\(tripElements("A"))<bucketList><item><title>1</title></item><bucketListItem><title>2</title></bucketListItem></bucketList></trip></trips>
        """)
        #expect(current.objects.map { $0.relationships[0] } == [.toMany([xmlItem("1"), xmlItem("2")])])
        // bucketListItem as the list's name is 1.0.0's spelling.
        let legacy = try xmlRead(text: """
        <trips><trip><name>B</name><destination>D</destination><start_date>2024-05-01</start_date><end_date>2024-05-02</end_date>\
        <bucketListItem><item><title>3</title></item><bucketListItem><title>4</title></bucketListItem></bucketListItem></trip></trips>
        """)
        #expect(legacy.rejections.isEmpty)
        #expect(legacy.objects.map { $0.relationships[0] } == [.toMany([xmlItem("3"), xmlItem("4")])])
        #expect(legacy.detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("a bucketListItem in a trip that holds item fields is one item, and may repeat")
    func repeatedItemElements() throws {
        let result = try xmlRead(text: """
        <trips schemaVersion="1.0.0"><trip><name>A</name><destination>D</destination><start_date>2024-05-01</start_date><end_date>2024-05-02</end_date>
          <bucketListItem><title>1</title><isInPlan>true</isInPlan></bucketListItem>
          <bucketListItem title="2"/>
        </trip></trips>
        """)
        #expect(result.objects.first?.relationships[0] == .toMany([xmlItem("1", planned: true), xmlItem("2")]))
    }

    @Test("the root may have any name")
    func anyRootName() throws {
        let result = try xmlRead(text: "<export><trip>\(tripElements())</trip></export>")
        #expect(result.objects.count == 1)
    }

    @Test("an empty root is a list of no trips")
    func emptyRoot() throws {
        let result = try xmlRead(text: "<?xml version=\"1.0\"?>\n<trips schemaVersion=\"2.0.0\"/>\n")
        #expect(result.trips.isEmpty)
        #expect(result.detection.version == SchemaVersion(2, 0, 0))
    }

    @Test("an empty name element is the empty string and an empty bucketList is an empty list")
    func emptyElements() throws {
        let result = try xmlRead(text: "<trips><trip><name/><destination></destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate><bucketList/></trip></trips>")
        #expect(result.objects == [xmlTripV3("", destination: "")])
    }

    @Test("no livingAccommodation element means none, and no bucketList an empty list")
    func absentRelationships() throws {
        let result = try xmlRead(text: "<trips><trip>\(tripElements())</trip></trips>")
        #expect(result.objects.first?.relationships == [.toMany([]), .toOne(nil)])
    }

    // MARK: - Text

    @Test("CDATA sections and character references give their text")
    func cdataAndReferences() throws {
        let result = try xmlRead(text: """
        <trips><trip><name><![CDATA[<b>&amp;</b>]]> &amp; &#233;&#x1F9F3;&lt;&gt;&quot;&apos;</name><destination>D</destination>\
        <startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>
        """)
        #expect(result.objects.first?.attributes[0] == .string("<b>&amp;</b> & é🧳<>\"'"))
    }

    @Test("values keep their whitespace exactly: leading and trailing spaces, tabs, line feeds, and CR written as &#13;")
    func whitespacePreserved() throws {
        let result = try xmlRead(text: "<trips>\n  <trip>\n    <name>  two\tthree\n four&#13;\n&#13; </name>\n    <destination>\n</destination>\n    <startDate>2024-05-01</startDate><endDate>2024-05-08</endDate>\n  </trip>\n</trips>\n")
        #expect(result.objects.first?.attributes[0] == .string("  two\tthree\n four\r\n\r "))
        #expect(result.objects.first?.attributes[1] == .string("\n"))
    }

    @Test("a literal CRLF in a value is a line feed, as XML's end-of-line handling says")
    func literalCRLF() throws {
        let result = try xmlRead(text: "<trips><trip><name>a\r\nb\rc</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>")
        #expect(result.objects.first?.attributes[0] == .string("a\nb\nc"))
    }

    // MARK: - Encodings

    @Test("UTF-16 with a byte order mark is read", arguments: [true, false])
    func utf16(littleEndian: Bool) throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><trips><trip>\(tripElements("Zürich 🚆"))</trip></trips>"
        var bytes: [UInt8] = littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]
        for unit in text.utf16 {
            let pair = [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            bytes += littleEndian ? pair : pair.reversed()
        }
        let result = try xmlRead(bytes: bytes)
        #expect(result.objects.first?.attributes[0] == .string("Zürich 🚆"))
    }

    @Test("ISO-8859-1 declared in the XML declaration is converted")
    func latin1Declared() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><trips><trip><name>Caf".utf8)
        bytes += [0xE9, 0x20, 0xE0, 0x20, 0xFF]
        bytes += Array("</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>".utf8)
        let result = try xmlRead(bytes: bytes)
        #expect(result.objects.first?.attributes[0] == .string("Café à ÿ"))
    }

    @Test("an undeclared document is UTF-8, unless the input encoding says Latin-1")
    func latin1Option() throws {
        var bytes = Array("<trips><trip><name>Caf".utf8)
        bytes += [0xE9]
        bytes += Array("</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>".utf8)
        #expect(throws: TripError.self) { try xmlRead(bytes: bytes) }
        let result = try xmlRead(bytes: bytes, options: ReadOptions(inputEncoding: "latin1"))
        #expect(result.objects.first?.attributes[0] == .string("Café"))
    }

    @Test("the Latin-1 input encoding does not override a document's own declaration")
    func latin1OptionYieldsToDeclaration() throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><trips><trip>\(tripElements("Café"))</trip></trips>"
        let result = try xmlRead(text: text, options: ReadOptions(inputEncoding: "latin1"))
        #expect(result.objects.first?.attributes[0] == .string("Café"))
    }

    // MARK: - Version and origin

    @Test("the root's schemaVersion attribute is the version marker")
    func marker() throws {
        let result = try xmlRead(text: "<trips schemaVersion=\"2.0.0\"><trip><name>A</name><destination>D</destination><start_date>2024-05-01</start_date><end_date>2024-05-02</end_date></trip></trips>")
        #expect(result.detection.version == SchemaVersion(2, 0, 0))
        #expect(result.detection.evidence == .marker("schemaVersion 2.0.0"))
    }

    @Test("an unknown schemaVersion is a data error placed at the root")
    func unknownMarker() throws {
        let error = xmlReadError(text: "<?xml version=\"1.0\"?>\n<trips schemaVersion=\"9.9\">\n</trips>")
        #expect(error?.kind == .data)
        #expect(error?.message.hasSuffix("input.xml:2:1: unknown schema version '9.9'") == true)
    }

    @Test("each trip's origin is its record number, line and column")
    func origins() throws {
        let result = try xmlRead(text: "<trips>\n  <trip>\(tripElements("A"))</trip>\n\n    <trip\n name=\"B\" destination=\"D\" startDate=\"2024-05-01\" endDate=\"2024-05-02\"/>\n</trips>")
        #expect(result.trips.map(\.origin.record) == [1, 2])
        #expect(result.trips.map(\.origin.line) == [2, 4])
        #expect(result.trips.map(\.origin.column) == [3, 5])
    }

    // MARK: - Bad records and bad documents

    @Test("an unknown field rejects its record by name, and reading goes on")
    func unknownField() throws {
        let result = try xmlRead(text: "<trips><trip>\(tripElements("A"))<rider>x</rider></trip><trip>\(tripElements("B"))</trip></trips>")
        #expect(result.rejections.map(\.reason) == ["unknown field 'rider' matches no schema version"])
        #expect(result.objects.count == 1)
    }

    @Test("names past the resolver's cache still resolve: 300 unknown names, then known fields and items")
    func manyNames() throws {
        let unknown = (0..<300).map { "<u\($0)>x</u\($0)>" }.joined()
        let trip = "<trip>\(unknown)\(tripElements("A"))<bucketList><item><title>T</title><isInPlan>true</isInPlan></item></bucketList></trip>"
        let result = try xmlRead(text: "<trips>\(trip)\(trip.replacingOccurrences(of: "<name>A", with: "<name>B"))</trips>",
                                 options: ReadOptions(ignoreUnknown: true))
        #expect(result.rejections.isEmpty)
        #expect(result.detection.unknownIgnored == 600)
        #expect(result.objects.map { $0.attributes[0] } == [.string("A"), .string("B")])
        #expect(result.objects.allSatisfy { $0.relationships[0] == .toMany([xmlItem("T", planned: true)]) })
    }

    @Test("an element inside a scalar field rejects the record")
    func elementInScalar() throws {
        let result = try xmlRead(text: "<trips><trip><name>a<b>c</b></name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>")
        #expect(result.rejections.map(\.reason) == ["field 'name': expected text, found the element <b>"])
    }

    @Test("text between a trip's fields rejects the record")
    func strayText() throws {
        let result = try xmlRead(text: "<trips><trip>oops\(tripElements())</trip></trips>")
        #expect(result.rejections.map(\.reason) == ["unexpected text 'oops' in <trip>"])
    }

    @Test("a root child that is not a trip is a data error with its place")
    func shapeError() throws {
        let error = xmlReadError(text: "<?xml version=\"1.0\"?>\n<trips>\n    <foo/>\n</trips>")
        #expect(error?.kind == .data)
        #expect(error?.message.hasSuffix("input.xml:3:5: expected a <trip> element, found <foo>") == true)
    }

    @Test("text directly in the root is a data error")
    func textInRoot() throws {
        let error = xmlReadError(text: "<trips>\n  hello\n</trips>")
        #expect(error?.message.hasSuffix("input.xml:2:3: expected a <trip> element, found the text 'hello'") == true)
    }

    @Test("a syntax error is placed FILE:LINE:COLUMN in one lowercase line")
    func syntaxError() throws {
        let error = xmlReadError(text: "<trips>\n  <trip>\n  </tirp>\n</trips>")
        #expect(error?.kind == .data)
        #expect(error?.message.hasSuffix("input.xml:3:10: opening and ending tag mismatch: trip line 2 and tirp") == true)
        #expect(error?.message.contains("\n") == false)
    }

    @Test("an input that ends inside the document says so; one of whitespace alone has no root, one of no bytes is no document (issue 25)")
    func truncated() throws {
        let error = xmlReadError(text: "<trips>\n  <trip>\(tripElements())")
        #expect(error?.message.contains("unexpected end of input inside <trip>") == true)
        let blank = xmlReadError(text: "  \n")
        #expect(blank?.message.hasSuffix("input.xml:2:1: expected a root element, found the end of input") == true, "\(String(describing: blank))")
        let empty = xmlReadError(text: "")
        #expect(empty?.kind == .data && empty?.message.contains("input.xml: no bytes: a JSON or XML document") == true, "\(String(describing: empty))")
    }

    @Test("trips before a syntax error are handed out before the error")
    func tripsBeforeError() throws {
        let dir = ScratchDirectory()
        let path = dir.file("in.xml", "<trips><trip>\(tripElements())</trip><oops></trips>")
        try withExtendedLifetime(dir) {
            var reader = try FormatFactory.makeReader(.file(path), format: .xml, options: ReadOptions())
            guard case .trip = try reader.next() else { Issue.record("expected a trip first"); return }
            #expect(throws: TripError.self) { try reader.next() }
        }
    }

    @Test("a DOCTYPE that names an external DTD is ignored, and nothing is fetched")
    func externalDTDIgnored() throws {
        let dir = ScratchDirectory()
        let fifo = dir.path + "/trips.dtd"
        #expect(mkfifo(fifo, 0o600) == 0)
        let path = dir.file("in.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE trips SYSTEM \"trips.dtd\">\n<trips><trip>\(tripElements())</trip></trips>")
        // Opening the FIFO would block the reader: the read finishing at all shows it was not opened.
        let result = try withExtendedLifetime(dir) { try xmlReadWithDeadline(path) }
        #expect(result?.objects.count == 1)
    }

    @Test("a DOCTYPE with declarations is refused")
    func internalSubsetRefused() throws {
        let error = xmlReadError(text: "<!DOCTYPE trips [\n<!ENTITY x \"y\">\n]>\n<trips/>")
        #expect(error?.kind == .data)
        #expect(error?.message.hasSuffix("input.xml:2:1: DTD declarations are not allowed, found <!ENTITY x>") == true)
    }

    @Test("an entity reference other than the predefined five is refused")
    func entityReferenceRefused() throws {
        let error = xmlReadError(text: "<!DOCTYPE trips SYSTEM \"t.dtd\">\n<trips><trip><name>&x;</name></trip></trips>")
        #expect(error?.kind == .data)
        #expect(error?.message.contains("'x'") == true || error?.message.contains("&x;") == true)
    }

    @Test("what libxml2 2.9.14's push parser lets through is refused: a DOCTYPE without a space, brackets after it, half a UTF-16 unit")
    func pushParserGaps() throws {
        #expect(xmlReadError(text: "<!DOCTYPEtrips>\n<trips/>\n")?.message.hasSuffix("input.xml:1:10: expected a space after '<!DOCTYPE', found 't'") == true)
        #expect(xmlReadError(text: "<!DOCTYPE trips>[]>\n<trips/>\n")?.message.contains("expected the root element after the DOCTYPE") == true)
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "<trips/>".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let error = #expect(throws: TripError.self) { try xmlRead(bytes: utf16 + [0x0A]) }
        #expect(error?.message.contains("the input ends inside a character") == true)
    }

    @Test("elements are known by local name, so a default namespace changes nothing; namespaced attributes are ignored")
    func namespaces() throws {
        let result = try xmlRead(text: """
        <trips xmlns="urn:example:trips" xmlns:x="urn:x" schemaVersion="3.0.0"><trip x:id="7" xml:lang="en">\(tripElements("N"))</trip></trips>
        """)
        #expect(result.rejections.isEmpty)
        #expect(result.objects.map { $0.attributes[0] } == [.string("N")])
    }

    @Test("nesting deeper than the limit is a data error")
    func depthLimit() throws {
        let deep = String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300)
        let error = xmlReadError(text: "<trips><trip><extra>\(deep)</extra></trip></trips>")
        #expect(error?.message.contains("nested deeper than 256 levels") == true)
    }

    @Test("a field's text longer than the limit rejects the record, in bounded memory")
    func textLimit() throws {
        let long = String(repeating: "x", count: (1 << 20) + 1)
        let result = try xmlRead(text: "<trips><trip><name>\(long)</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip><trip>\(tripElements("B"))</trip></trips>")
        #expect(result.rejections.map(\.reason) == ["field 'name': text longer than 1048576 bytes"])
        #expect(result.objects.count == 1)
    }

    @Test("a missing file is a no-input error")
    func missingFile() throws {
        #expect(throws: TripError(.noInput, "/nonexistent/x.xml: cannot open: No such file or directory")) {
            try xmlRead("/nonexistent/x.xml")
        }
    }
}

/// Reads a file on another thread and gives up after a few seconds (nil), so that a reader that
/// blocked opening a FIFO fails the test instead of hanging it.
func xmlReadWithDeadline(_ path: String, seconds: Double = 5) throws -> XMLReadResult? {
    final class Box: @unchecked Sendable { var result: Result<XMLReadResult, Error>? }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    Thread {
        box.result = Result { try xmlRead(path) }
        done.signal()
    }.start()
    guard done.wait(timeout: .now() + seconds) == .success else {
        Issue.record("reading \(path) did not finish: it blocked opening a file it must not open")
        // Unblock the reader: open every FIFO beside the input for writing, then close it.
        let dir = (path as NSString).deletingLastPathComponent
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            let fd = open(dir + "/" + name, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        return nil
    }
    return try box.result?.get()
}
