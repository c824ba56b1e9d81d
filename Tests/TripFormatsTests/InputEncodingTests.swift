import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// `--input-encoding` is read once per reader, by `TextEncoding.of`, and the value passed on.
@Suite("Input encoding option")
struct InputEncodingTests {
    static func error(_ body: () throws -> Void) -> TripError? {
        do { try body(); return nil } catch let e as TripError { return e } catch { return TripError(.io, "\(error)") }
    }

    @Test("an unknown input encoding is a usage error from every text reader", arguments: [Format.csv, .tsv, .json, .jsonl, .xml])
    func unknown(format: Format) {
        let scratch = ScratchDirectory()
        let path = scratch.file("t.\(format.rawValue)", "")
        let e = Self.error { _ = try FormatFactory.makeReader(.file(path), format: format, options: ReadOptions(inputEncoding: "ebcdic")) }
        #expect(e?.kind == .usage)
        #expect(e?.message == "unsupported input encoding 'ebcdic'")
    }

    @Test("the XML reader made directly refuses an unknown input encoding, as the JSON reader does")
    func xmlReaderDirectly() {
        let scratch = ScratchDirectory()
        let path = scratch.file("t.xml", "<trips/>")
        let options = ReadOptions(inputEncoding: "ebcdic")
        #expect(Self.error { _ = try XMLRecordReader(.file(path), options: options) }?.kind == .usage)
        #expect(Self.error { _ = try JSONRecordReader(.file(path), format: .json, options: options) }?.kind == .usage)
    }

    @Test("a tables-layout directory is read in the encoding given, and refuses an unknown one")
    func tablesDirectory() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path("export")
        try FileSystem.makeDirectory(dir)
        scratch.file("export/trips.csv", Array("trip_id,name,destination,startDate,endDate\n1,".utf8) + [0x53, 0xE3, 0x6F]
                     + Array(",x,2024-05-01,2024-05-02\n".utf8))
        let e = Self.error { _ = try CSVFormat.makeReader(.file(dir), format: .csv, options: ReadOptions(inputEncoding: "ebcdic")) }
        #expect(e?.kind == .usage)
        var reader = try CSVFormat.makeReader(.file(dir), format: .csv, options: ReadOptions(inputEncoding: "latin1"))
        guard case .trip(let t)? = try reader.next() else { Issue.record("no trip"); return }
        #expect(t.object.attributes[0] == .string("São"))
    }

    @Test("libxml2 is told the encoding of a document that declares none, except UTF-8", arguments: TextEncoding.allCases)
    func libxml2Names(encoding: TextEncoding) {
        let name = XMLTripParser.libxml2EncodingName(encoding)
        #expect((name == nil) == (encoding == .utf8))
    }
}
