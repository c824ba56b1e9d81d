// The python3 script `XMLForeignWriterTests` runs to write its files.

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
