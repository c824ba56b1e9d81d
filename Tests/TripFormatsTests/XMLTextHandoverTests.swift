import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Reads a document with libxml2 on its own thread and on the reader's, and expects the two to
/// agree trip for trip; returns the threaded reading.
func xmlReadBothWays(_ bytes: [UInt8], options: ReadOptions = ReadOptions(),
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> ReadItems {
    let dir = ScratchDirectory()
    let path = dir.file("in.xml", bytes)
    return try withExtendedLifetime(dir) {
        var threaded = try XMLRecordReader(.file(path), options: options, threaded: true)
        var here = try XMLRecordReader(.file(path), options: options, threaded: false)
        let a = try ReadItems(reading: &threaded), b = try ReadItems(reading: &here)
        #expect(a.objects == b.objects, "threaded and unthreaded reads differ", sourceLocation: sourceLocation)
        #expect(a.rejections.map(\.reason) == b.rejections.map(\.reason), sourceLocation: sourceLocation)
        #expect(a.rejections.map(\.text) == b.rejections.map(\.text), sourceLocation: sourceLocation)
        #expect(a.detection == b.detection, sourceLocation: sourceLocation)
        return a
    }
}

func xmlReadBothWays(_ text: String, options: ReadOptions = ReadOptions(),
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> ReadItems {
    try xmlReadBothWays(Array(text.utf8), options: options, sourceLocation: sourceLocation)
}

/// The error reading gives, one way.
private func readError(_ text: String, threaded: Bool) -> TripError? {
    let dir = ScratchDirectory()
    let path = dir.file("in.xml", text)
    return withExtendedLifetime(dir) {
        do {
            var reader = try XMLRecordReader(.file(path), options: ReadOptions(), threaded: threaded)
            _ = try ReadItems(reading: &reader)
            return nil
        } catch let e as TripError { return e } catch { return TripError(.io, "\(error)") }
    }
}

/// A 3.0.0 trip's dates, as attributes.
private let dates = "startDate=\"2024-05-01T00:00:00Z\" endDate=\"2024-05-08T00:00:00Z\""

/// Every place libxml2 hands text over: attribute values (where it re-escapes `&`), element text,
/// CDATA, each of them cut across its callbacks and the reader's 64 KiB chunks. What it hands over
/// must become exactly the value the document means.
@Suite("XML: text as libxml2 hands it over")
struct XMLTextHandoverTests {
    // MARK: - The `&` in attributes (issue 13's silent corruption)

    @Test("an & in an attribute is read as &, written &amp;, &#38; or &#x26;, at every level, both ways")
    func ampersandInAttributes() throws {
        let result = try xmlReadBothWays("""
        <trips schemaVersion="3.0.0">
          <trip name="AT&amp;T" destination="Tom &#38; Jerry &#x26; co" \(dates)>
            <bucketList><item title="R&amp;D" details="&amp;amp; is &amp;#38;" hasReservation="true"/></bucketList>
            <livingAccommodation address="1 &amp; 2 Main St" placeName="B&#38;B"/>
          </trip>
          <trip name="&amp;" destination="&amp;&amp;&#38;" \(dates)><bucketList title="list &amp; item"/></trip>
        </trips>
        """)
        #expect(result.rejections.isEmpty)
        #expect(result.objects == [
            xmlTripV3("AT&T", destination: "Tom & Jerry & co", start: 1_714_521_600_000, end: 1_715_126_400_000,
                      items: [xmlItem("R&D", "&amp; is &#38;", reserved: true)], accommodation: xmlPlace("1 & 2 Main St", "B&B")),
            xmlTripV3("&", destination: "&&&", start: 1_714_521_600_000, end: 1_715_126_400_000, items: [xmlItem("list & item")]),
        ])
    }

    @Test("the same name as an attribute and as an element reads as the same name")
    func sameNameBothForms() throws {
        let result = try xmlReadBothWays("""
        <trips schemaVersion="1.0.0">
          <trip name="AT&amp;T" destination="D" start_date="2024-05-01" end_date="2024-05-02"/>
          <trip><name>AT&amp;T</name><destination>D</destination><start_date>2024-05-01</start_date><end_date>2024-05-02</end_date></trip>
        </trips>
        """)
        #expect(result.objects.map { $0.attributes[0] } == [.string("AT&T"), .string("AT&T")])
    }

    @Test("a rejection's reason quotes an attribute's value as the document means it", arguments: [true, false])
    func rejectionReason(threaded: Bool) throws {
        let dir = ScratchDirectory()
        let path = dir.file("in.xml", "<trips><trip name=\"A&amp;B\" destination=\"D\" startDate=\"soon &amp; later\" endDate=\"2024-05-02\"/></trips>")
        var reader = try XMLRecordReader(.file(path), options: ReadOptions(), threaded: threaded)
        let result = try ReadItems(reading: &reader)
        #expect(result.rejections.map(\.reason) == ["field 'startDate': expected an ISO 8601 date, found 'soon & later'"])
        // The rejection's text is the trip's source, as written.
        #expect(result.rejections.map(\.text) == ["<trip name=\"A&amp;B\" destination=\"D\" startDate=\"soon &amp; later\" endDate=\"2024-05-02\"/>"])
    }

    @Test("the schemaVersion attribute is read as the document means it", arguments: [true, false])
    func markerAttribute(threaded: Bool) throws {
        let error = readError("<trips schemaVersion=\"3.0.0 &amp; more\"></trips>", threaded: threaded)
        #expect(error?.message.hasSuffix("in.xml:1:1: unknown schema version '3.0.0 & more'") == true, "\(String(describing: error))")
        let dir = ScratchDirectory()
        let path = dir.file("in.xml", "<trips schemaVersion=\"&#50;.0&#x2E;0\"></trips>")
        var reader = try XMLRecordReader(.file(path), options: ReadOptions(), threaded: threaded)
        let result = try ReadItems(reading: &reader)
        #expect(result.detection.version == SchemaVersion(2, 0, 0))
    }

    // MARK: - How this libxml2 hands attributes over, and the decoding

    /// Attribute values as the document writes them, and what they mean (XML 1.0 §3.3.3:
    /// references are replaced; a literal tab, line feed, CR or CR LF is one space each; a
    /// character reference to one is that character).
    static let attributeCases: [(written: String, meant: String)] = [
        ("&amp;", "&"), ("&#38;", "&"), ("&#x26;", "&"), ("&amp;amp;", "&amp;"), ("&amp;#38;", "&#38;"),
        ("&lt;&gt;&quot;&apos;", "<>\"'"), ("&#60;&#62;&#34;&#39;", "<>\"'"), ("&#x3C;&#x3e;", "<>"),
        ("&#x1F600;&#128512;😀", "😀😀😀"), ("&#233;é&#xE9;", "ééé"), ("&#xFFFD;&#x10FFFF;", "\u{FFFD}\u{10FFFF}"),
        ("a\tb\nc\r\nd\re", "a b c d e"), ("a&#9;b&#10;c&#13;&#10;d&#13;e", "a\tb\nc\r\nd\re"),
        ("  lead and trail  ", "  lead and trail  "), ("", ""), ("no references", "no references"),
        ("&amp;&lt;&amp;", "&<&"), ("x&amp;", "x&"), ("&#38;&#38;&#38;&#38;", "&&&&"),
    ]

    @Test("every reference and whitespace form in an attribute becomes the value meant, through this libxml2 and the decoding")
    func attributeForms() throws {
        for (written, meant) in Self.attributeCases {
            // libxml2's own hand-over, decoded as the reader decodes it.
            guard var handed = XMLAttributeValue.probe(Array("<a b=\"\(written)\"/>".utf8)) else {
                Issue.record("libxml2 gave no attribute for \(written)")
                continue
            }
            if XMLAttributeValue.ampersands == .escaped {
                let n = handed.withUnsafeMutableBufferPointer { XMLAttributeValue.decode($0.baseAddress!, count: $0.count) }
                handed.removeLast(handed.count - n)
            }
            #expect(String(decoding: handed, as: UTF8.self) == meant, "written \(written.debugDescription)")
            // The same through the reader, as an item's title (the parse thread's copy).
            let result = try xmlReadBothWays("<trips><trip name=\"N\" destination=\"D\" \(dates)><bucketList><item title=\"\(written)\"/></bucketList></trip></trips>")
            #expect(result.objects.first?.relationships[0] == .toMany([xmlItem(meant)]), "written \(written.debugDescription)")
        }
    }

    @Test("the probe finds that this libxml2 hands an & over as the document means it, or escaped so that decoding gives it")
    func probe() throws {
        let handed = try #require(XMLAttributeValue.probe(Array("<a b=\"&amp;\"/>".utf8)))
        switch XMLAttributeValue.ampersands {
        case .verbatim:
            #expect(handed == [0x26])
        case .escaped:
            #expect(handed != [0x26])
            var bytes = handed
            let n = bytes.withUnsafeMutableBufferPointer { XMLAttributeValue.decode($0.baseAddress!, count: $0.count) }
            #expect(Array(bytes[..<n]) == [0x26])
        }
    }

    @Test("the decoding decodes every reference, keeps an & that starts none, and never grows a value")
    func decoding() {
        let cases: [(String, String)] = [
            ("&#38;", "&"), ("a&#38;b&#38;", "a&b&"), ("&amp;&lt;&gt;&quot;&apos;", "&<>\"'"), ("&#x1F600;", "😀"),
            ("&#128;&#x800;&#65536;", "\u{80}\u{800}\u{10000}"), ("&", "&"), ("&;", "&;"), ("&#;", "&#;"), ("&#x;", "&#x;"),
            ("&#xD800;", "&#xD800;"), ("&#x110000;", "&#x110000;"), ("&#99999999999;", "&#99999999999;"), ("&#38", "&#38"),
            ("&nbsp;", "&nbsp;"), ("&ampx;", "&ampx;"), ("&#12a;", "&#12a;"), ("no ampersand", "no ampersand"), ("", ""),
            ("&#x0000041;", "A"),
        ]
        for (input, output) in cases {
            var bytes = Array(input.utf8)
            let n = bytes.withUnsafeMutableBufferPointer { XMLAttributeValue.decode($0.baseAddress ?? UnsafeMutablePointer(bitPattern: 8)!, count: $0.count) }
            #expect(n <= input.utf8.count)
            #expect(String(decoding: bytes[..<n], as: UTF8.self) == output, "\(input)")
        }
    }

    // MARK: - Element text

    @Test("every reference in element text becomes the character meant, and literal whitespace stays")
    func textForms() throws {
        let cases: [(String, String)] = [
            ("&amp;&#38;&#x26;", "&&&"), ("&lt;&gt;&quot;&apos;&#60;&#62;&#34;&#39;", "<>\"'<>\"'"),
            ("&#x1F600;&#128512;😀", "😀😀😀"), ("a\tb\nc&#13;&#10;d&#9;", "a\tb\nc\r\nd\t"), ("&amp;amp;", "&amp;"),
            (" &amp; ", " & "), ("&amp; &amp;", "& &"), ("\" ' >", "\" ' >"), ("<![CDATA[&amp;<>]]>&amp;", "&amp;<>&"),
            ("a<!-- c -->b<?pi x?>c", "abc"), ("  <!-- c -->  ", "    "),
        ]
        for (written, meant) in cases {
            let result = try xmlReadBothWays("<trips><trip><name>\(written)</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-02</endDate></trip></trips>")
            #expect(result.objects.first?.attributes[0] == .string(meant), "written \(written.debugDescription)")
        }
    }

    // MARK: - Across chunks and callbacks

    /// A document whose `marker` starts `shift` bytes before the end of the first 64 KiB chunk:
    /// a padding trip of the right length comes first.
    static func straddling(_ trip: String, marker: String, shift: Int) -> String {
        let head = "<trips>\n<trip><name>pad</name><destination>"
        let middle = "</destination><startDate>2024-05-01</startDate><endDate>2024-05-02</endDate></trip>\n"
        let offset = trip.utf8.count - (trip.components(separatedBy: marker).dropFirst().joined(separator: marker).utf8.count + marker.utf8.count)
        let padding = XMLLimits.chunkSize - shift - head.utf8.count - middle.utf8.count - offset
        let text = head + String(repeating: "p", count: padding) + middle + trip + "\n</trips>\n"
        let bytes = Array(text.utf8), m = Array(marker.utf8)
        precondition(Array(bytes[(XMLLimits.chunkSize - shift)...].prefix(m.count)) == m, "the marker is not at the border")
        return text
    }

    @Test("a value cut by a chunk border at any byte reads whole: references, CDATA, multi-byte characters, attributes")
    func acrossChunkBorders() throws {
        let trip = "<trip name=\"a&amp;b&#x1F600;c&lt;d\" destination=\"D\" \(dates)><bucketList><item><title>x&amp;y&#233;z😀w</title>"
            + "<details><![CDATA[é😀]]]]><![CDATA[>&amp;<b>]]></details></item></bucketList></trip>"
        for marker in ["a&amp;b", "x&amp;y", "<![CDATA[é"] {
            for shift in 0..<24 {
                let text = Self.straddling(trip, marker: marker, shift: shift)
                let result = try xmlReadBothWays(text)
                #expect(result.rejections.isEmpty)
                #expect(result.objects.count == 2)
                #expect(result.objects.last?.attributes[0] == .string("a&b😀c<d"), "\(marker) shift \(shift)")
                #expect(result.objects.last?.relationships[0] == .toMany([xmlItem("x&yéz😀w", "é😀]]>&amp;<b>")]),
                        "\(marker) shift \(shift)")
            }
        }
    }

    @Test("a CDATA section longer than several chunks, handed over in many callbacks, reads whole", arguments: [true, false])
    func longCDATA(threaded: Bool) throws {
        // 200 KB of one-, two-, three- and four-byte characters, with brackets that nearly close it.
        let unit = "aé€😀]]\n]>"
        let long = String(repeating: unit, count: 200_000 / unit.utf8.count)
        let text = "<trips><trip><name>N</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-02</endDate>"
            + "<bucketList><item><title>T</title><details><![CDATA[\(long)]]></details></item></bucketList></trip></trips>"
        let dir = ScratchDirectory()
        let path = dir.file("in.xml", text)
        var reader = try XMLRecordReader(.file(path), options: ReadOptions(), threaded: threaded)
        let result = try ReadItems(reading: &reader)
        #expect(result.rejections.isEmpty)
        #expect(result.objects.first?.relationships[0] == .toMany([xmlItem("T", long)]))
    }
}
