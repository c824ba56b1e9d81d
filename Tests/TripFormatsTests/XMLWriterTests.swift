import Foundation
import Testing
import TripFormats
import TripKit
import TripTestSupport

@Suite("XMLWriter")
struct XMLWriterTests {
    @Test("a 3.0.0 trip is written exactly, indented between elements only")
    func exactThree() throws {
        let trip = xmlTripV3("Paris", destination: "France",
                             items: [xmlItem("Louvre", "Mona Lisa", reserved: true, planned: false)],
                             accommodation: xmlPlace("1 Rue de Rivoli", "Hôtel"))
        let empty = xmlTripV3("Home", start: 1_718_409_600_250, end: 1_718_496_000_000)
        let text = try xmlWrite([trip, empty])
        #expect(text == """
        <?xml version="1.0" encoding="UTF-8"?>
        <trips schemaVersion="3.0.0">
          <trip>
            <name>Paris</name>
            <destination>France</destination>
            <startDate>2024-05-01T00:00:00Z</startDate>
            <endDate>2024-05-08T00:00:00Z</endDate>
            <bucketList>
              <item>
                <title>Louvre</title>
                <details>Mona Lisa</details>
                <hasReservation>true</hasReservation>
                <isInPlan>false</isInPlan>
              </item>
            </bucketList>
            <livingAccommodation>
              <address>1 Rue de Rivoli</address>
              <placeName>Hôtel</placeName>
            </livingAccommodation>
          </trip>
          <trip>
            <name>Home</name>
            <destination>Lisbon</destination>
            <startDate>2024-06-15T00:00:00.250Z</startDate>
            <endDate>2024-06-16T00:00:00Z</endDate>
            <bucketList/>
          </trip>
        </trips>

        """)
    }

    @Test("a 1.0.0 trip is written with start_date and end_date and the declared relationship names")
    func exactOne() throws {
        let trip = xmlTripV1("Kyoto", destination: "Japan", items: [xmlItem("Temple")], accommodation: xmlPlace("", "Ryokan"))
        let text = try xmlWrite([trip], schema: TripSchemaV1.self)
        #expect(text == """
        <?xml version="1.0" encoding="UTF-8"?>
        <trips schemaVersion="1.0.0">
          <trip>
            <name>Kyoto</name>
            <destination>Japan</destination>
            <start_date>2024-05-01T00:00:00Z</start_date>
            <end_date>2024-05-08T00:00:00Z</end_date>
            <bucketList>
              <item>
                <title>Temple</title>
                <details></details>
                <hasReservation>false</hasReservation>
                <isInPlan>false</isInPlan>
              </item>
            </bucketList>
            <livingAccommodation>
              <address></address>
              <placeName>Ryokan</placeName>
            </livingAccommodation>
          </trip>
        </trips>

        """)
    }

    @Test("no trips give an empty trips element")
    func noTrips() throws {
        #expect(try xmlWrite([]) == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<trips schemaVersion=\"3.0.0\">\n</trips>\n")
    }

    @Test("markup characters are escaped, a carriage return is a character reference, tab and line feed stay literal")
    func escaping() throws {
        let text = try xmlWrite([xmlTripV3(" a&b<c>d\"e'f\r\n\tg ]]> ")])
        #expect(text.contains("<name> a&amp;b&lt;c&gt;d\"e'f&#13;\n\tg ]]&gt; </name>"))
    }

    @Test("escaping is the same wherever a markup character falls, in words of eight bytes or after them")
    func escapingAtEveryOffset() throws {
        let pieces = ["a", " ", "&", "<", ">", "\"", "'", "\r", "\n", "\t", "é", "\u{FFFD}", "\u{EFBF}", "€", "😀"]
        var random = SplitMix64(seed: 0x5EED_4321)
        func next() -> Int { Int(random.next() % 1_000_003) }
        var names: [String] = []
        for _ in 0..<500 {
            let plainRun = String(repeating: "x", count: next() % 20)
            names.append("N" + plainRun + (0..<(next() % 12)).map { _ in pieces[next() % pieces.count] }.joined() + plainRun)
        }
        let text = try xmlWrite(names.map { xmlTripV3($0) })
        for name in names {
            let escaped = name.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\r", with: "&#13;")
            #expect(text.contains("<name>\(escaped)</name>\n"), "\(name.debugDescription)")
        }
    }

    @Test("a control character XML 1.0 cannot carry refuses the trip, naming it and the field")
    func controlCharacter() throws {
        let dir = ScratchDirectory()
        let path = dir.path + "/out.xml"
        var writer = try FormatFactory.makeWriter(.file(path), format: .xml, options: WriteOptions(schema: TripSchemaV3.self))
        try writer.write(xmlTripV3("Fine"))
        do {
            try writer.write(xmlTripV3("Bell", items: [xmlItem("ring", "ding\u{07}")]))
            Issue.record("expected an error")
        } catch let error as TripError {
            #expect(error.kind == .data)
            #expect(error.message == "\(path): trip 'Bell': field 'details': U+0007 cannot be written in XML 1.0")
            #expect(error.notes.first?.contains("JSON") == true)
        }
        writer.abort()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("U+FFFE and U+FFFF are refused too")
    func nonCharacters() throws {
        #expect(throws: TripError.self) { try xmlWrite([xmlTripV3("a\u{FFFF}")]) }
        #expect(throws: TripError.self) { try xmlWrite([xmlTripV3("a\u{FFFE}")]) }
    }

    @Test("nothing is visible before finish, and abort leaves no file")
    func atomicOutput() throws {
        let dir = ScratchDirectory()
        let path = dir.path + "/out.xml"
        var writer = try FormatFactory.makeWriter(.file(path), format: .xml, options: WriteOptions())
        try writer.write(xmlTripV3("A"))
        #expect(!FileManager.default.fileExists(atPath: path))
        writer.abort()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }
}
