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

/// Shapes no writer above makes, written by hand.
@Suite("XML shapes written by hand")
struct XMLHandWrittenShapeTests {
    static let dates = "startDate=\"2024-05-01T00:00:00Z\" endDate=\"2024-05-08T00:00:00Z\""

    @Test("attributes in another namespace are ignored, even with a field's local name; those in the element's own are fields")
    func namespacedAttributes() throws {
        let result = try xmlReadBothWays("""
        <t:trips xmlns:t="urn:example:trips" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:v="urn:vendor"
                 xsi:schemaLocation="urn:example:trips trips.xsd" t:schemaVersion="3.0.0" v:exported="2024">
          <t:trip v:name="not the name" xml:lang="en" t:destination="D" \(Self.dates)>
            <t:name xsi:type="string-less">N</t:name>
            <t:bucketList v:count="1"><t:item t:title="T" v:title="not the title" xml:space="preserve"/></t:bucketList>
            <t:livingAccommodation xsi:type="v:Hotel" t:placeName="Inn" v:placeName="not it"><t:address>A</t:address></t:livingAccommodation>
          </t:trip>
        </t:trips>
        """)
        #expect(result.rejections.map(\.reason) == [])
        #expect(result.detection.version == SchemaVersion(3, 0, 0))
        #expect(result.objects == [xmlTripV3("N", destination: "D", start: 1_714_521_600_000, end: 1_715_126_400_000,
                                             items: [xmlItem("T")], accommodation: xmlPlace("A", "Inn"))])
    }

    @Test("an element's namespace attribute in another namespace does not make a field attribute")
    func fieldElementWithForeignAttribute() throws {
        // A field element may carry attributes of other namespaces (xsi:type, xml:space) and
        // namespace declarations; an attribute of no namespace on it is still refused.
        let good = try xmlReadBothWays("""
        <trips><trip xmlns:v="urn:v"><name xmlns:w="urn:w" xml:space="preserve" v:x="1">N</name><destination>D</destination>\
        <startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>
        """)
        #expect(good.rejections.map(\.reason) == [])
        #expect(good.objects.map { $0.attributes[0] } == [.string("N")])
        let bad = try xmlReadBothWays("""
        <trips><trip><name lang="en">N</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>
        """)
        #expect(bad.rejections.map(\.reason) == ["field 'name': expected text, found the attribute 'lang'"])
    }

    @Test("a default namespace on the root, and one declared again lower down with a prefix, read as none")
    func defaultAndRedeclaredNamespaces() throws {
        let result = try xmlReadBothWays("""
        <trips xmlns="urn:example:trips" schemaVersion="3.0.0">
          <trip name="A" destination="D" \(Self.dates)/>
          <x:trip xmlns:x="urn:example:trips" x:name="B" destination="D" \(Self.dates)><x:bucketList><item title="T"/></x:bucketList></x:trip>
          <trip xmlns="urn:other" name="C" destination="D" \(Self.dates)/>
        </trips>
        """)
        #expect(result.rejections.map(\.reason) == [])
        #expect(result.objects.map { $0.attributes[0] } == [.string("A"), .string("B"), .string("C")])
        #expect(result.objects[1].relationships[0] == .toMany([xmlItem("T")]))
    }

    @Test("comments and processing instructions anywhere: before and after the root, between trips, in trips, lists, items and fields")
    func commentsEverywhere() throws {
        let result = try xmlReadBothWays("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- exported --><?app version="2"?>
        <!DOCTYPE trips SYSTEM "trips.dtd">
        <!-- after the DOCTYPE -->
        <trips schemaVersion="3.0.0"><!-- first -->
          <?pi between?>
          <trip><!-- in a trip --><name>A<!-- in a field -->B<?pi in a field?>C</name><?pi?>
            <destination><!-- only a comment --></destination>
            <startDate><?pi?>2024-05-01T00:00:00Z<!-- after --></startDate><endDate>2024-05-08T00:00:00Z</endDate>
            <bucketList><!-- c --><item><!-- c --><title>  <!-- spaces around -->  </title><?pi?></item><?pi?></bucketList>
            <livingAccommodation><!-- c --><address><![CDATA[a]]><!-- c --><![CDATA[b]]> c </address></livingAccommodation><!-- c -->
          </trip><!-- between -->
          <trip name="B" destination="D" \(Self.dates)><!-- in an empty trip --></trip>
        </trips>
        <!-- after the root --><?pi after?>

        """)
        #expect(result.rejections.map(\.reason) == [])
        #expect(result.objects == [
            xmlTripV3("ABC", destination: "", start: 1_714_521_600_000, end: 1_715_126_400_000,
                      items: [xmlItem("    ")], accommodation: xmlPlace("ab c ", "")),
            xmlTripV3("B", destination: "D", start: 1_714_521_600_000, end: 1_715_126_400_000),
        ])
    }

    @Test("text, CDATA and references mixed in one field, on one line and across lines")
    func mixedText() throws {
        let result = try xmlReadBothWays("""
        <trips><trip><name>a<![CDATA[<b>]]>&amp;<![CDATA[]]>&#x1F600;<![CDATA[ & ]]>z</name><destination>
        line &amp;
        <![CDATA[line]]>
        </destination><startDate>2024-05-01</startDate><endDate>2024-05-02</endDate></trip></trips>
        """)
        #expect(result.objects.map { $0.attributes[0] } == [.string("a<b>&😀 & z")])
        #expect(result.objects.map { $0.attributes[1] } == [.string("\nline &\nline\n")])
    }
}

/// Writes trips as XML with ElementTree or lxml in a style, reads the file back with the other
/// library to check it, and prints the values it wrote (as a reader must read them) as JSON.
/// Arguments: the style (JSON), the trips (a JSON file), the output path.
let xmlForeignWriterScript = #"""
import json, random, sys

cfg = json.loads(sys.argv[1])
data = json.load(open(sys.argv[2], encoding='utf-8'))
out = sys.argv[3]
rnd = random.Random(cfg['seed'])
W = cfg['writer']
if W == 'lxml':
    from lxml import etree as E
else:
    import xml.etree.ElementTree as E

NS = 'urn:example:trips'
XSI = 'http://www.w3.org/2001/XMLSchema-instance'
VENDOR = 'urn:example:vendor'
XMLNS = 'http://www.w3.org/XML/1998/namespace'
ns = cfg['namespace']
if W == 'etree':
    E.register_namespace('t', NS)
    E.register_namespace('xsi', XSI)
    E.register_namespace('v', VENDOR)

def q(tag):
    return tag if ns == 'none' else '{%s}%s' % (NS, tag)

def aq(name):
    return '{%s}%s' % (NS, name) if ns == 'qualified' else name

def as_attribute():
    mode = cfg['attributes']
    return mode == 'all' or (mode == 'mixed' and rnd.random() < 0.5)

def norm_text(s):
    # What XML's end-of-line handling makes of text ElementTree writes: it writes CR as is.
    return s.replace('\r\n', '\n').replace('\r', '\n') if W == 'etree' else s

def markup(parent):
    # A comment or processing instruction, now and then, where a producer may put one.
    if cfg['comments'] and rnd.random() < 0.3:
        parent.append(E.Comment(' a note & <b> ') if rnd.random() < 0.5 else E.PI('tripconv-test', 'x="&" <y>'))

def field(parent, name, value, allow_attribute=True):
    """Writes one field as an attribute or an element; returns the value a reader must read."""
    if allow_attribute and as_attribute():
        parent.set(aq(name), value)
        return value
    e = E.SubElement(parent, q(name))
    if cfg['comments'] and rnd.random() < 0.3:
        # Not between the CR and LF of a CR LF: each part's end-of-line handling is its own.
        cuts = [i for i in range(1, len(value)) if value[:i].strip() and value[i:].strip() and value[i - 1:i + 1] != '\r\n']
        if cuts:
            i = rnd.choice(cuts)
            e.text = value[:i]
            c = E.Comment('inside') if rnd.random() < 0.5 else E.PI('inside', 'a field')
            e.append(c)
            c.tail = value[i:]
            return norm_text(value[:i]) + norm_text(value[i:])
    if W == 'lxml' and cfg['cdata'] and value and ']]>' not in value and '\r' not in value and encodable(value) and rnd.random() < 0.5:
        e.text = E.CDATA(value)
        return value
    e.text = value
    return norm_text(value)

def encodable(value):
    # CDATA cannot hold a character reference: its text must be in the document's encoding.
    try:
        value.encode(cfg['encoding'].replace('-be-bom', '-be'))
        return True
    except UnicodeEncodeError:
        return False

def foreign(element, attributes):
    if cfg['foreign']:
        for k, v in attributes:
            element.set(k, v)

nsmap = {}
if W == 'lxml':
    if ns == 'default': nsmap[None] = NS
    elif ns in ('prefixed', 'qualified'): nsmap['t'] = NS
    if cfg['foreign']: nsmap.update({'xsi': XSI, 'v': VENDOR})
    root = E.Element(q(data['root']), nsmap=nsmap)
else:
    root = E.Element(q(data['root']))
root.set(aq('schemaVersion'), data['version'])
foreign(root, [('{%s}schemaLocation' % XSI, NS + ' trips.xsd')])
expected = []
for trip in data['trips']:
    markup(root)
    t = E.SubElement(root, q('trip'))
    foreign(t, [('{%s}id' % VENDOR, '7'), ('{%s}lang' % XMLNS, 'en')])
    want = {'fields': {}, 'items': [], 'accommodation': None}
    for name, value in trip['fields']:
        markup(t)
        want['fields'][name] = field(t, name, value)
    if trip['items'] or rnd.random() < 0.5:
        lst = E.SubElement(t, q(data['list']))
        for item in trip['items']:
            markup(lst)
            it = E.SubElement(lst, q(rnd.choice(data['itemNames'])))
            foreign(it, [('{%s}note' % VENDOR, 'x & <y>')])
            got = {}
            for name, value in item:
                markup(it)
                got[name] = field(it, name, value)
            want['items'].append(got)
    if trip['accommodation'] is not None:
        a = E.SubElement(t, q(data['one']))
        foreign(a, [('{%s}type' % XSI, 'v:Hotel')])
        got = {}
        for name, value in trip['accommodation']:
            markup(a)
            got[name] = field(a, name, value)
        want['accommodation'] = got
    markup(t)
    expected.append(want)

enc = cfg['encoding']
if W == 'etree':
    tree = E.ElementTree(root)
    if cfg['pretty']:
        E.indent(tree)
    if enc == 'utf-16-be-bom':
        body = E.tostring(root, encoding='unicode')
        blob = b'\xfe\xff' + ("<?xml version='1.0' encoding='UTF-16'?>\n" + body).encode('utf-16-be')
        open(out, 'wb').write(blob)
    else:
        tree.write(out, encoding=enc, xml_declaration=cfg['declaration'] or enc not in ('utf-8', 'us-ascii'))
else:
    if cfg['comments']:
        root.addprevious(E.Comment(' before the root '))
        root.addprevious(E.PI('before', 'the root'))
        root.addnext(E.Comment(' after the root '))
    tree = root.getroottree()
    if enc == 'utf-16-be-bom':
        body = E.tostring(root, encoding='unicode', pretty_print=cfg['pretty'])
        blob = b'\xfe\xff' + ("<?xml version='1.0' encoding='UTF-16'?>\n" + body).encode('utf-16-be')
    else:
        blob = E.tostring(tree, encoding=enc.upper(), pretty_print=cfg['pretty'],
                          xml_declaration=cfg['declaration'] or enc not in ('utf-8', 'us-ascii'))
    open(out, 'wb').write(blob)

# The file read back with the other library: it must mean what we say it means.
def local(tag):
    return tag.rsplit('}', 1)[-1] if isinstance(tag, str) else None

def ours(key):
    return not key.startswith('{') or key.startswith('{%s}' % NS)

try:
    from lxml import etree as L
except ImportError:
    L = None
if W == 'etree' and L is not None:
    doc = L.parse(out).getroot()
    string = lambda e: e.xpath('string()')
else:
    import xml.etree.ElementTree as L
    doc = L.parse(out).getroot()
    string = lambda e: ''.join(e.itertext())
elements = lambda e: [c for c in e if isinstance(c.tag, str)]

def fields(e):
    d = {local(k): v for k, v in e.attrib.items() if ours(k)}
    for c in elements(e):
        d[local(c.tag)] = string(c)
    return d

reread = []
for t in elements(doc):
    got = {'fields': {}, 'items': [], 'accommodation': None}
    for k, v in t.attrib.items():
        if ours(k): got['fields'][local(k)] = v
    for c in elements(t):
        name = local(c.tag)
        if name == data['list']:
            got['items'] = [fields(i) for i in elements(c)]
        elif name == data['one']:
            got['accommodation'] = fields(c)
        else:
            got['fields'][name] = string(c)
    reread.append(got)
if reread != expected:
    for i, (a, b) in enumerate(zip(reread, expected)):
        if a != b:
            sys.exit('trip %d: read back %r, meant %r' % (i + 1, a, b))
    sys.exit('%d trips read back, %d meant' % (len(reread), len(expected)))
json.dump({'trips': expected}, sys.stdout)
"""#
