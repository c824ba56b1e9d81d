import Foundation
import Testing
import TripFormats
import TripKit
import TripTestSupport

/// A trip as another XML reader sees it: element texts by name.
private struct ForeignTrip: Codable, Equatable {
    var fields: [String: String]
    var items: [[String: String]]
    var accommodation: [String: String]?
}

/// python3's xml.etree reads the file and prints each trip's element texts as JSON.
private let elementTreeScript = """
import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "trips", root.tag
out = {"version": root.get("schemaVersion"), "trips": []}
text = lambda e: e.text or ""
for trip in root:
    assert trip.tag == "trip", trip.tag
    t = {"fields": {}, "items": [], "accommodation": None}
    for child in trip:
        if child.tag == "bucketList":
            t["items"] = [{f.tag: text(f) for f in item} for item in child]
            assert all(item.tag == "item" for item in child)
        elif child.tag == "livingAccommodation":
            t["accommodation"] = {f.tag: text(f) for f in child}
        else:
            assert len(child) == 0
            t["fields"][child.tag] = text(child)
    out["trips"].append(t)
sys.stdout.write(json.dumps(out))
"""

/// What we mean to have written, in the same form.
private func intended(_ object: ModelObject, schema: any VersionedSchema.Type) -> ForeignTrip {
    func texts(_ o: ModelObject, _ entity: Entity) -> [String: String] {
        var d: [String: String] = [:]
        for (i, a) in entity.attributes.enumerated() where !a.isTransient {
            switch o.attributes[i] {
            case .string(let s): d[a.name] = s
            case .date(let t): d[a.name] = t.iso8601
            case .bool(let b): d[a.name] = b ? "true" : "false"
            case .int(let n): d[a.name] = String(n)
            case .null: break
            }
        }
        return d
    }
    let root = schema.rootEntity
    var trip = ForeignTrip(fields: texts(object, root), items: [], accommodation: nil)
    for (i, r) in root.relationships.enumerated() {
        let destination = schema.entity(r.destination)!
        switch object.relationships[i] {
        case .toMany(let items): trip.items = items.map { texts($0, destination) }
        case .toOne(let a): trip.accommodation = a.map { texts($0, destination) }
        }
    }
    return trip
}

private struct ForeignDocument: Codable { var version: String?; var trips: [ForeignTrip] }

@Suite("XMLIndependentReaders")
struct XMLIndependentReaderTests {
    @Test("xmllint accepts what the writer writes", .enabled(if: ExternalTool.path("xmllint") != nil, "xmllint is not installed (apt-get install libxml2-utils)"),
          arguments: [TripSchemaV3.self, TripSchemaV1.self] as [any VersionedSchema.Type])
    func xmllintAccepts(schema: any VersionedSchema.Type) throws {
        var generator = ArbitraryTrips.xml(seed: 7, schema: schema)
        let dir = ScratchDirectory()
        let path = dir.file("out.xml", try xmlWrite((0..<200).map { _ in generator.trip() }, schema: schema))
        let run = try ExternalTool.run(ExternalTool.path("xmllint")!, ["--noout", "--nonet", path])
        #expect(run.status == 0, "xmllint: \(run.stderr)")
        #expect(run.stderr.isEmpty)
    }

    @Test("python3's xml.etree reads exactly the values meant", .enabled(if: ExternalTool.path("python3") != nil, "python3 is not installed"),
          arguments: [(TripSchemaV3.self, 21), (TripSchemaV1.self, 22)] as [(any VersionedSchema.Type, UInt64)])
    func elementTreeReads(schema: any VersionedSchema.Type, seed: UInt64) throws {
        try Self.check(schema: schema, seed: seed, script: elementTreeScript, reader: "xml.etree")
    }

    static let hasLXML: Bool = {
        guard let python = ExternalTool.path("python3") else { return false }
        return (try? ExternalTool.run(python, ["-c", "import lxml.etree"]))?.status == 0
    }()

    @Test("python3's lxml (libxml2 with its own settings, entities substituted) reads exactly the values meant",
          .enabled(if: hasLXML, "python3's lxml is not installed (python3 -m pip install lxml)"),
          arguments: [(TripSchemaV3.self, 23), (TripSchemaV1.self, 24)] as [(any VersionedSchema.Type, UInt64)])
    func lxmlReads(schema: any VersionedSchema.Type, seed: UInt64) throws {
        let script = elementTreeScript.replacingOccurrences(of: "import xml.etree.ElementTree as ET", with: "from lxml import etree as ET")
        try Self.check(schema: schema, seed: seed, script: script, reader: "lxml")
    }

    static func check(schema: any VersionedSchema.Type, seed: UInt64, script text: String, reader: String) throws {
        var generator = ArbitraryTrips.xml(seed: seed, schema: schema)
        let trips = (0..<200).map { _ in generator.trip() }
        let dir = ScratchDirectory()
        let path = dir.file("out.xml", try xmlWrite(trips, schema: schema))
        let script = dir.file("read.py", text)
        let run = try ExternalTool.run(ExternalTool.path("python3")!, [script, path])
        #expect(run.status == 0, "python3: \(run.stderr)")
        let document = try JSONDecoder().decode(ForeignDocument.self, from: run.stdout)
        #expect(document.version == schema.versionIdentifier.description)
        let expected = trips.map { intended($0, schema: schema) }
        #expect(document.trips.count == expected.count)
        for (i, (got, want)) in zip(document.trips, expected).enumerated() where got != want {
            Issue.record("trip \(i + 1): \(reader) read \(got), meant \(want)")
            break
        }
    }
}
