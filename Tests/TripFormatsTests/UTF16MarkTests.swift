import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Text with a byte order mark is read in the encoding the mark tells, whatever `--input-encoding`
/// says (issue 25, item 10): JSON and JSON Lines as CSV already were (and CSV now for UTF-8's mark
/// under latin1 or windows-1252 too); YAML (libyaml and the block scanner) and XML (libxml2) checked
/// to do the same. Files written by Python's json, csv, PyYAML and ElementTree.
@Suite("UTF-16 and UTF-8 byte order marks")
struct UTF16MarkTests {
    static let hasYAML = ExternalTool.python3 != nil && ((try? ExternalTool.python("import yaml").status) == 0)

    /// Writes `t-ENCODING.FORMAT` for each encoding (Python's codecs: `utf-16` puts the machine's
    /// mark, `utf-8-sig` UTF-8's) and format.
    static let writer = #"""
    import codecs, csv, io, json, os, sys, yaml
    import xml.etree.ElementTree as ET
    out = sys.argv[1]
    trips = [{"name": "Zoë's trip", "destination": "Köln 🏰", "startDate": "2024-06-01T08:00:00Z", "endDate": "2024-06-03T20:00:00Z"},
             {"name": "Ski", "destination": "Tahoe", "startDate": "2025-01-18T07:30:00Z", "endDate": "2025-01-26T16:00:00Z"}]
    doc = {"schemaVersion": "3.0.0", "trips": trips}
    marks = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE, "utf-8": codecs.BOM_UTF8}
    for enc, mark in marks.items():
        def put(fmt, text):
            open(os.path.join(out, 't-%s.%s' % (enc, fmt)), 'wb').write(mark + text.encode(enc))
        put('json', json.dumps(doc, ensure_ascii=False, indent=1))
        put('jsonl', ''.join(json.dumps(t, ensure_ascii=False) + '\n' for t in trips))
        put('yaml', yaml.safe_dump(doc, allow_unicode=True))
        table = io.StringIO(newline='')
        w = csv.DictWriter(table, fieldnames=list(trips[0])); w.writeheader(); w.writerows(trips)
        put('csv', table.getvalue())
        root = ET.Element('trips', schemaVersion='3.0.0')
        for t in trips:
            e = ET.SubElement(root, 'trip')
            for k, v in t.items(): ET.SubElement(e, k).text = v
        put('xml', ET.tostring(root, encoding='unicode'))
    """#

    @Test("JSON, JSON Lines, YAML, XML and CSV with a UTF-16LE, UTF-16BE or UTF-8 mark read to the trips written, under any --input-encoding",
          .enabled(if: hasYAML, "needs python3 with PyYAML"), arguments: [Format.json, .jsonl, .yaml, .xml, .csv])
    func marked(format: Format) throws {
        let scratch = ScratchDirectory()
        let w = try ExternalTool.python(Self.writer, [scratch.path])
        #expect(w.status == 0, "\(w.stderr)")
        for encoding in ["utf-16-le", "utf-16-be", "utf-8"] {
            for option in ["utf-8", "latin1", "windows-1252"] where format != .xml || option == "utf-8" {
                let path = scratch.path("t-\(encoding).\(format.rawValue)")
                var reader = try FormatFactory.makeReader(.file(path), format: format, options: ReadOptions(inputEncoding: option))
                let read = try ReadItems(reading: &reader)
                let names = read.objects.map { $0.attributes[0].stringValue ?? "?" }
                let places = read.objects.map { $0.attributes[1].stringValue ?? "?" }
                #expect(names == ["Zoë's trip", "Ski"] && places == ["Köln 🏰", "Tahoe"], "\(path) under \(option): \(read.rejections)")
                #expect(read.rejections.isEmpty)
            }
        }
    }
}
