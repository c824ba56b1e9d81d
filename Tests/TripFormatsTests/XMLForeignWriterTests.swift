import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

// XML as other producers write it: python3's xml.etree.ElementTree and lxml write arbitrary trips
// in the shapes real exports come in (fields as attributes or elements, mixed in one trip;
// namespaces, default, prefixed, and with qualified attributes; attributes of other namespaces;
// comments and processing instructions anywhere; CDATA; UTF-8, UTF-16 LE and BE with a BOM,
// ISO-8859-1, US-ASCII with character references; pretty-printed or on one line), and tripconv
// must read each file to exactly the trips written, with libxml2 on its own thread and not.
//
// The writer script also reads its file back with the other library (lxml for ElementTree's
// files, ElementTree for lxml's), and stops unless that reading gives the values it says it
// wrote: the expected values are checked by an independent reader before they are compared.
// The one loss on the writers' side: ElementTree writes a CR in element text as it is, which
// XML's end-of-line handling makes a line feed, so the script expects that.
//
// TRIPCONV_XML_FOREIGN_SEED picks another seed and TRIPCONV_XML_FOREIGN_TRIPS another count
// (CI: the fixed seed below, 150 trips per style: 2,100 trips through ElementTree, 2,550 through lxml).

/// One way a producer writes a document.
struct XMLForeignStyle: CustomTestStringConvertible, Sendable {
    var writer: String
    var attributes = "mixed"
    var namespace = "none"
    var foreign = false
    var encoding = "utf-8"
    var declaration = true
    var pretty = false
    var comments = false
    var cdata = false
    var schema: String = "3.0.0"
    /// 1.0.0's legacy element names (`bucketListItem` for the list, `livingAccommodations`).
    var legacyNames = false

    var testDescription: String {
        var words = [writer, "fields \(attributes)", "namespace \(namespace)", encoding, pretty ? "pretty" : "one line", "schema \(schema)"]
        if foreign { words.append("foreign attributes") }
        if comments { words.append("comments and PIs") }
        if cdata { words.append("CDATA") }
        if !declaration { words.append("no declaration") }
        if legacyNames { words.append("legacy names") }
        return words.joined(separator: ", ")
    }

    func configuration(seed: UInt64) -> String {
        let object: [String: Any] = [
            "writer": writer, "seed": seed, "attributes": attributes, "namespace": namespace, "foreign": foreign,
            "encoding": encoding, "declaration": declaration, "pretty": pretty, "comments": comments, "cdata": cdata,
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The shapes each writer is run in.
    static func all(_ writer: String) -> [XMLForeignStyle] {
        let s = XMLForeignStyle(writer: writer)
        var styles = [
            s,
            { var x = s; x.attributes = "all"; return x }(),
            { var x = s; x.attributes = "none"; x.pretty = true; return x }(),
            { var x = s; x.attributes = "all"; x.pretty = true; x.comments = true; return x }(),
            { var x = s; x.namespace = "default"; x.foreign = true; x.pretty = true; return x }(),
            { var x = s; x.namespace = "prefixed"; x.foreign = true; x.comments = true; return x }(),
            { var x = s; x.namespace = "qualified"; x.foreign = true; x.attributes = "all"; return x }(),
            { var x = s; x.encoding = "utf-16"; x.comments = true; return x }(),
            { var x = s; x.encoding = "utf-16-be-bom"; x.pretty = true; return x }(),
            { var x = s; x.encoding = "iso-8859-1"; x.namespace = "default"; return x }(),
            { var x = s; x.encoding = "us-ascii"; x.declaration = false; x.attributes = "all"; return x }(),
            { var x = s; x.declaration = false; x.comments = true; x.pretty = true; return x }(),
            { var x = s; x.schema = "1.0.0"; x.comments = true; return x }(),
            { var x = s; x.schema = "1.0.0"; x.legacyNames = true; x.pretty = true; return x }(),
        ]
        if writer == "lxml" {
            styles += [
                { var x = s; x.cdata = true; x.attributes = "none"; return x }(),
                { var x = s; x.cdata = true; x.comments = true; x.pretty = true; x.encoding = "utf-16"; return x }(),
                { var x = s; x.cdata = true; x.namespace = "prefixed"; x.encoding = "iso-8859-1"; return x }(),
            ]
        }
        return styles
    }
}

/// A trip as field texts by name, as both sides see it.
struct XMLForeignTrip: Equatable, CustomStringConvertible {
    var fields: [String: String]
    var items: [[String: String]]
    var accommodation: [String: String]?

    var description: String {
        "fields \(fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.debugDescription)" }), "
            + "items \(items.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.debugDescription)" } }), "
            + "accommodation \(accommodation.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.debugDescription)" } } ?? [])"
    }

    static func text(_ v: Value) -> String? {
        switch v {
        case .string(let s): return s
        case .date(let t): return t.iso8601
        case .bool(let b): return b ? "true" : "false"
        case .int(let n): return String(n)
        case .null: return nil
        }
    }

    static func pairs(_ o: ModelObject, _ entity: Entity) -> [(String, String)] {
        entity.attributes.enumerated().compactMap { i, a in
            a.isTransient ? nil : text(o.attributes[i]).map { (a.name, $0) }
        }
    }

    init(fields: [String: String], items: [[String: String]], accommodation: [String: String]?) {
        self.fields = fields
        self.items = items
        self.accommodation = accommodation
    }

    /// A trip as a reader gave it.
    init(_ o: ModelObject, schema: any VersionedSchema.Type) {
        let root = schema.rootEntity
        fields = Dictionary(uniqueKeysWithValues: Self.pairs(o, root))
        items = []
        for (i, r) in root.relationships.enumerated() {
            let d = schema.entity(r.destination)!
            switch o.relationships[i] {
            case .toMany(let list): items = list.map { Dictionary(uniqueKeysWithValues: Self.pairs($0, d)) }
            case .toOne(let a): accommodation = a.map { Dictionary(uniqueKeysWithValues: Self.pairs($0, d)) }
            }
        }
    }

    /// As a JSON object from the writer script.
    init(json: [String: Any]) {
        fields = json["fields"] as? [String: String] ?? [:]
        items = json["items"] as? [[String: String]] ?? []
        accommodation = json["accommodation"] as? [String: String]
    }

    /// An accommodation of nothing but defaults is read as none, as from any format.
    func readBack(schema: any VersionedSchema.Type) -> XMLForeignTrip {
        var t = self
        if let a = accommodation, let r = schema.rootEntity.relationships.first(where: { !$0.isToMany }),
           let d = schema.entity(r.destination),
           d.attributes.allSatisfy({ a[$0.name] == $0.defaultValue.flatMap(Self.text) }) {
            t.accommodation = nil
        }
        return t
    }

    /// With every CR and CR LF a line feed: what survives any writer.
    var linesNormalized: XMLForeignTrip {
        // By scalars: a CR before a combining mark is one Character with it, which a String search misses.
        func lines(_ s: String) -> String {
            var out = String.UnicodeScalarView(), afterCR = false
            for c in s.unicodeScalars {
                if c == "\n", afterCR { afterCR = false; continue }
                afterCR = c == "\r"
                out.append(afterCR ? "\n" : c)
            }
            return String(out)
        }
        func n(_ d: [String: String]) -> [String: String] { d.mapValues(lines) }
        return XMLForeignTrip(fields: n(fields), items: items.map(n), accommodation: accommodation.map(n))
    }
}

@Suite("XML written by other producers")
struct XMLForeignWriterTests {
    static let python = ExternalTool.python3
    static let hasLXML: Bool = {
        guard let python else { return false }
        return (try? ExternalTool.run(python, ["-c", "import lxml.etree"]))?.status == 0
    }()
    static let seed = ProcessInfo.processInfo.environment["TRIPCONV_XML_FOREIGN_SEED"].flatMap { UInt64($0) } ?? 1313
    static let count = ProcessInfo.processInfo.environment["TRIPCONV_XML_FOREIGN_TRIPS"].flatMap { Int($0) } ?? 150

    @Test("python3's xml.etree.ElementTree writes; tripconv reads exactly the trips written",
          .enabled(if: python != nil, "python3 is not installed"), arguments: XMLForeignStyle.all("etree"))
    func elementTree(style: XMLForeignStyle) throws {
        try Self.check(style)
    }

    @Test("lxml writes; tripconv reads exactly the trips written",
          .enabled(if: hasLXML, "python3's lxml is not installed (python3 -m pip install lxml)"), arguments: XMLForeignStyle.all("lxml"))
    func lxml(style: XMLForeignStyle) throws {
        try Self.check(style)
    }

    static func check(_ style: XMLForeignStyle) throws {
        let schema: any VersionedSchema.Type = style.schema == "1.0.0" ? TripSchemaV1.self : TripSchemaV3.self
        // Each style its own trips, from the seed and the style's place in its list.
        let index = XMLForeignStyle.all(style.writer).firstIndex { $0.testDescription == style.testDescription } ?? 0
        let seed = Self.seed &+ UInt64(index) &* 7919
        var generator = ArbitraryTrips.xml(seed: seed, schema: schema)
        let trips = (0..<Self.count).map { _ in generator.trip() }
        let dir = ScratchDirectory()
        let root = schema.rootEntity
        let input: [String: Any] = [
            "root": "trips", "version": schema.versionIdentifier.description,
            "list": style.legacyNames ? "bucketListItem" : root.relationships.first { $0.isToMany }!.name,
            "one": style.legacyNames ? "livingAccommodations" : root.relationships.first { !$0.isToMany }!.name,
            "itemNames": ["item", "bucketListItem"],
            "trips": trips.map { trip -> [String: Any] in
                var t: [String: Any] = ["fields": XMLForeignTrip.pairs(trip, root).map { [$0.0, $0.1] }, "items": [], "accommodation": NSNull()]
                for (i, r) in root.relationships.enumerated() {
                    let d = schema.entity(r.destination)!
                    switch trip.relationships[i] {
                    case .toMany(let list): t["items"] = list.map { XMLForeignTrip.pairs($0, d).map { [$0.0, $0.1] } }
                    case .toOne(let a): if let a { t["accommodation"] = XMLForeignTrip.pairs(a, d).map { [$0.0, $0.1] } }
                    }
                }
                return t
            },
        ]
        let inputPath = dir.file("trips.json", Array(try JSONSerialization.data(withJSONObject: input)))
        let script = dir.file("write.py", xmlForeignWriterScript)
        let output = dir.path("written.xml")
        let run = try ExternalTool.run(Self.python!, [script, style.configuration(seed: seed), inputPath, output])
        try #require(run.status == 0, "the writer script failed (seed \(seed)): \(run.stderr)")
        let written = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        let expected = try #require(written["trips"] as? [[String: Any]]).map { XMLForeignTrip(json: $0).readBack(schema: schema) }
        // The writer wrote what it was given, but for the loss it owns up to.
        let intended = trips.map { XMLForeignTrip($0, schema: schema).readBack(schema: schema) }
        #expect(expected.count == intended.count)
        if let i = (0..<min(expected.count, intended.count)).first(where: { expected[$0].linesNormalized != intended[$0].linesNormalized }) {
            Issue.record("seed \(seed), \(style.testDescription): the writer script lost values of trip \(i + 1): it says it wrote\n  \(expected[i])\nfor\n  \(intended[i])")
        }

        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: output)))
        let result = try xmlReadBothWays(bytes)
        #expect(result.rejections.map(\.reason) == [], "seed \(seed)")
        #expect(result.detection.version == schema.versionIdentifier)
        let read = result.objects.map { XMLForeignTrip($0, schema: schema) }
        #expect(read.count == expected.count, "seed \(seed)")
        if let i = (0..<min(read.count, expected.count)).first(where: { read[$0] != expected[$0] }) {
            let shown = String(decoding: bytes.prefix(4000), as: UTF8.self)
            Issue.record("seed \(seed), \(style.testDescription): trip \(i + 1) read as\n  \(read[i])\nwritten as\n  \(expected[i])\n(the file starts: \(shown.debugDescription))")
        }
    }
}
