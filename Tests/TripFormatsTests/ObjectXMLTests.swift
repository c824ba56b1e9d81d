import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

@Suite("Objects of any model in XML")
struct ObjectXMLTests {
    static func write(_ dir: ScratchDirectory) throws -> String {
        let path = dir.path("objects.xml")
        try ObjectGraph.write(with: XMLObjectWriter(.file(path), options: WriteOptions()))
        return path
    }

    @Test("an object document reads back to the same objects")
    func roundTrip() throws {
        let dir = ScratchDirectory()
        let path = try Self.write(dir)
        let read = try ObjectGraph.readAll(XMLObjectReader(path: path, model: ObjectGraph.model, options: ReadOptions()))
        #expect(read.rejected.isEmpty, "\(read.rejected)")
        #expect(ObjectGraph.plain(read.objects) == ObjectGraph.objects)
    }

    @Test("xmllint accepts the document", .enabled(if: ExternalTool.path("xmllint") != nil, "xmllint is not installed (apt-get install libxml2-utils)"))
    func xmllint() throws {
        let dir = ScratchDirectory()
        let path = try Self.write(dir)
        let run = try ExternalTool.run(ExternalTool.path("xmllint")!, ["--noout", "--nonet", path])
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test("ElementTree reads every object, key, value and reference as written", .needsPython3)
    func elementTreeReads() throws {
        let dir = ScratchDirectory()
        let path = try Self.write(dir)
        let script = """
        import json, sys, xml.etree.ElementTree as ET
        root = ET.parse(sys.argv[1]).getroot()
        print(json.dumps([[o.tag, o.get('key'), [[c.tag, c.text or '', [r.text or '' for r in c]] for c in o]] for o in root]))
        """
        let run = try ExternalTool.python(script, [path])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try JSONSerialization.jsonObject(with: run.stdout) as! [[Any]]
        let names = ObjectNaming(ObjectGraph.model) { _, _ in true }
        for o in ObjectGraph.objects { try names.note(o) }
        #expect(objects.count == ObjectGraph.objects.count)
        for (element, o) in zip(objects, ObjectGraph.objects) {
            let model = ObjectGraph.model
            #expect(element[0] as? String == model.entities[o.entity].name)
            #expect(element[1] as? String == (names.hasKey(o.entity) ? String(o.key) : nil))
            var expected: [[AnyHashable]] = []
            for (slot, a) in model.allAttributes(of: o.entity).enumerated() {
                if let text = ObjectValueText.text(o.attributes[slot]) { expected.append([a.name, text, [String]()]) }
            }
            for (slot, r) in model.allRelationships(of: o.entity).enumerated() where !o.relationships[slot].isEmpty {
                expected.append([r.name, "\n      ", try o.relationships[slot].map { try names.name(of: $0, in: "") }])
            }
            let children = (element[2] as! [[Any]]).map { c -> [AnyHashable] in [c[0] as! String, c[1] as! String, c[2] as! [String]] }
            let trimmed = children.map { c -> [AnyHashable] in (c[2] as! [String]).isEmpty ? c : [c[0], "\n      ", c[2]] }
            #expect(trimmed == expected, "\(model.entities[o.entity].name) \(o.key)")
        }
    }

    @Test("a document ElementTree wrote reads as the objects", .needsPython3)
    func readsElementTree() throws {
        let dir = ScratchDirectory()
        let path = dir.path("et.xml")
        let script = """
        import sys, xml.etree.ElementTree as ET
        root = ET.Element('objects')
        for name, price in [('Bolt <M6> & "nut"', '0.25'), ('', None)]:
            item = ET.SubElement(root, 'Item')
            ET.SubElement(item, 'name').text = name
            if price: ET.SubElement(item, 'price').text = price
        part = ET.SubElement(root, 'Part', key='9')
        ET.SubElement(part, 'seen').text = '2001-01-01T00:00:01.5+01:00'
        ref = ET.SubElement(ET.SubElement(part, 'items'), 'ref'); ref.text = ''
        ref = ET.SubElement(part.find('items'), 'ref'); ref.text = 'Bolt <M6> & "nut"'
        ET.ElementTree(root).write(sys.argv[1], encoding='utf-8', xml_declaration=True)
        """
        let run = try ExternalTool.python(script, [path])
        #expect(run.status == 0, "\(run.stderr)")
        let model = ObjectModel(entities: [
            EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false), AttributeDescription("price", .decimal)],
                              uniquenessConstraints: [["name"]]),
            EntityDescription("Part", attributes: [AttributeDescription("seen", .date)],
                              relationships: [RelationshipDescription("items", to: "Item", toMany: true, ordered: true)]),
        ])
        let read = try ObjectGraph.readAll(XMLObjectReader(path: path, model: model, options: ReadOptions()))
        #expect(read.rejected.isEmpty, "\(read.rejected)")
        let o = ObjectGraph.origin
        #expect(ObjectGraph.plain(read.objects) == [
            ObjectRecord(entity: 0, key: 1, attributes: [.string("Bolt <M6> & \"nut\""), .decimal("0.25")], relationships: [], origin: o),
            ObjectRecord(entity: 0, key: 2, attributes: [.string(""), .null], relationships: [], origin: o),
            ObjectRecord(entity: 1, key: 9, attributes: [.date(-3598.5)],
                         relationships: [[ObjectReference(entity: 0, key: 2), ObjectReference(entity: 0, key: 1)]], origin: o),
        ])
    }

    @Test("whitespace between an object's elements means nothing, where a chunk of input ends inside it too")
    func whitespaceAcrossChunks() throws {
        let dir = ScratchDirectory()
        let padding = String(repeating: " ", count: 5000)
        let body = (1...200).map { "<Item>\(padding)<name>n\($0)</name>\(padding)<weight>\($0)</weight></Item>\n" }.joined()
        let path = dir.file("padded.xml", "<objects>\n\(body)</objects>\n")
        let read = try ObjectGraph.readAll(XMLObjectReader(path: path, model: ObjectGraph.model, options: ReadOptions()))
        #expect(read.rejected.isEmpty, "\(read.rejected.prefix(2))")
        #expect(ObjectGraph.plain(read.objects) == (1...200).map {
            ObjectRecord(entity: 1, key: Int64($0), attributes: [.string("n\($0)"), .double(Double($0))], relationships: [[], []], origin: ObjectGraph.origin)
        })
    }

    @Test("a value XML cannot carry is an error naming the object, and no document is left")
    func controlCharacter() throws {
        let dir = ScratchDirectory()
        let path = dir.path("objects.xml")
        var objects = ObjectGraph.objects
        objects[1].attributes[11] = .string("bell \u{7}")
        #expect { try ObjectGraph.write(objects, with: XMLObjectWriter(.file(path), options: WriteOptions())) } throws: { error in
            (error as? TripError)?.kind == .data && "\(error)".contains("Component of key 20: 'note': U+0007 cannot be written in XML 1.0")
        }
        #expect(dir.names().isEmpty)
    }

    @Test("bad objects are set aside with their places; a broken document ends the read with its place")
    func badObjects() throws {
        let dir = ScratchDirectory()
        let path = dir.file("bad.xml", """
        <?xml version="1.0"?>
        <objects>
          <Item><name>Iron</name><weight>heavy</weight></Item>
          <Item><weight>1</weight></Item>
          <Item><name>Tin</name><colour>red</colour></Item>
          <Dog key="2"><legs>4</legs><owner><ref>Zinc</ref></owner></Dog>
          <Robot key="1"/>
          <Dog key="3"><legs>4</legs><friends><ref>2</ref></friends></Dog>
        </objects>
        """)
        let removals = ObjectReferenceRemovals()
        let read = try ObjectGraph.readAll(XMLObjectReader(path: path, model: ObjectGraph.model, options: ReadOptions(), removals: removals))
        let places = read.rejected.map { "\($0.origin): \($0.reason)" }
        #expect(places == [
            "\(path):3:3: <weight>: expected a Double, found 'heavy'",
            "\(path):4:3: <name>: a Item must have one",
            "\(path):5:3: <colour> is no attribute or relationship of a Item",
            "\(path):7:3: <Robot> is no entity of the model",
        ])
        // Dog 2 is kept, its owner (no Item is Zinc) removed.
        #expect(removals.firstMessages == ["\(path):6:3: 'owner': 'Zinc' names no Item; the reference is removed, the object kept"], "\(removals.firstMessages)")
        #expect(ObjectGraph.plain(read.objects) == [
            ObjectRecord(entity: 4, key: 2, attributes: [.int(4), .null], relationships: [[], []], origin: ObjectGraph.origin),
            ObjectRecord(entity: 4, key: 3, attributes: [.int(4), .null], relationships: [[], [ObjectReference(entity: 4, key: 2)]],
                         origin: ObjectGraph.origin),
        ])
        let broken = dir.file("broken.xml", "<objects>\n  <Item><name>Iron</Item>\n</objects>\n")
        #expect { _ = try ObjectGraph.readAll(XMLObjectReader(path: broken, model: ObjectGraph.model, options: ReadOptions())) } throws: { error in
            (error as? TripError)?.kind == .data && "\(error)".contains("\(broken):2:")
        }
    }
}
