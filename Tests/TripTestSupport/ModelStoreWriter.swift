import Foundation
import TripKit

/// Writes Core Data-layout stores with a model cache from an `ObjectModel`, in Python (`sqlite3`,
/// `plistlib` with `plistlib.UID`, `zlib` raw DEFLATE): a writer independent of tripconv's reader,
/// laying the store out as Core Data does (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`, a table per
/// root entity with `Z_PK`, `Z_ENT`, `Z_OPT`, a column per attribute and to-one, a hidden `Z<n><NAME>`
/// on the destination for a to-many without an inverse, `Z_<n><NAME>` join tables for many-to-many
/// with clash-numbered columns, `REFLEXIVE` for one that is its own inverse), `rows` objects per entity.
///
/// `damage` spoils the model cache: `truncate` (half its bytes), `baduid` (a UID past `$objects`),
/// `notdeflate` (bytes that are no DEFLATE stream), `cycle` (the first two entities each other's
/// superentity), `nocache` (no `Z_MODELCACHE` table).
public enum ModelStoreWriter {
    public static func write(_ model: ObjectModel, to path: String, rows: Int = 2, damage: String = "none",
                             frameworkVersion: Int = 1345) throws -> ExternalTool.Result {
        let spec: [String: Any] = [
            "versions": model.versionIdentifiers, "framework": frameworkVersion, "rows": rows, "damage": damage,
            "entities": model.entities.map { e -> [String: Any] in
                [
                    "name": e.name, "super": e.superentity ?? NSNull(), "abstract": e.isAbstract, "unique": e.uniquenessConstraints,
                    "attributes": e.attributes.map { a -> [String: Any] in
                        ["name": a.name, "code": a.kind.rawValue, "optional": a.isOptional, "transient": a.isTransient,
                         "default": a.defaultValue.map(defaultSpec) ?? NSNull(), "class": a.valueClassName ?? NSNull(),
                         "transformer": a.valueTransformerName ?? NSNull(), "external": a.allowsExternalStorage]
                    },
                    "relationships": e.relationships.map { r -> [String: Any] in
                        ["name": r.name, "dest": r.destination, "inverse": r.inverse ?? NSNull(), "max": r.isToMany ? 0 : 1,
                         "ordered": r.isOrdered, "optional": r.isOptional,
                         "rule": ["noAction": 0, "nullify": 1, "cascade": 2, "deny": 3][r.deleteRule.rawValue]!]
                    },
                ]
            },
        ]
        let json = try JSONSerialization.data(withJSONObject: spec)
        return try ExternalTool.python(script, [path], stdin: json)
    }

    static func defaultSpec(_ v: ObjectValue) -> [Any] {
        switch v {
        case .null: return ["null"]
        case .string(let s): return ["string", s]
        case .int(let i): return ["int", i]
        case .double(let d): return ["real", d]
        case .decimal(let s): return ["decimal", s]
        case .bool(let b): return ["bool", b]
        case .date(let t): return ["date", t]
        case .data(let b): return ["data", b.map(Int.init)]
        case .uuid(let u): return ["uuid", u.bytes.map(Int.init)]
        case .url(let s): return ["url", s]
        }
    }

    static let script = #"""
import decimal, json, plistlib, sqlite3, sys, zlib
from plistlib import UID
spec = json.load(sys.stdin)
path = sys.argv[1]
objects = ['$null']
classes = {}
def add(o):
    objects.append(o)
    return UID(len(objects) - 1)
def cls(name, chain):
    if name not in classes:
        classes[name] = add({'$classname': name, '$classes': chain + ['NSObject']})
    return classes[name]
strings = {}
def s(text):
    if text is None:
        return UID(0)
    if text not in strings:
        strings[text] = add(text)
    return strings[text]
def array(uids, name='NSArray'):
    return add({'NS.objects': list(uids), '$class': cls(name, [name] if name == 'NSArray' else [name, 'NSArray'])})
def dictionary(pairs):
    return add({'NS.keys': [k for k, _ in pairs], 'NS.objects': [v for _, v in pairs],
                '$class': cls('NSMutableDictionary', ['NSMutableDictionary', 'NSDictionary'])})
def default(d):
    if d is None:
        return UID(0)
    kind, value = d[0], d[1] if len(d) > 1 else None
    if kind == 'string': return s(value)
    if kind in ('int', 'real', 'bool'): return add(value)
    if kind == 'date': return add({'NS.time': float(value), '$class': cls('NSDate', ['NSDate'])})
    if kind == 'data': return add(bytes(value))
    if kind == 'uuid': return add({'NS.uuidbytes': bytes(value), '$class': cls('NSUUID', ['NSUUID'])})
    if kind == 'url': return add({'NS.base': UID(0), 'NS.relative': s(value), '$class': cls('NSURL', ['NSURL'])})
    if kind == 'decimal':
        # As NSDecimalNumber's encodeWithCoder: writes it: a 128-bit mantissa in eight little-endian 16-bit words.
        t = decimal.Decimal(value).as_tuple()
        m = int(''.join(map(str, t.digits)) or '0')
        return add({'NS.exponent': t.exponent, 'NS.length': (m.bit_length() + 15) // 16, 'NS.negative': bool(t.sign), 'NS.compact': True,
                    'NS.mantissa.bo': 1, 'NS.mantissa': m.to_bytes(16, 'little'),
                    '$class': cls('NSDecimalNumber', ['NSDecimalNumber', 'NSNumber', 'NSValue'])})
    return UID(0)
model = add(None)
ents = {e['name']: add(None) for e in spec['entities']}
props = {}
for e in spec['entities']:
    for p in e['attributes'] + e['relationships']:
        props[(e['name'], p['name'])] = add(None)
for e in spec['entities']:
    pairs = []
    for a in e['attributes']:
        flags = 1 | (2 if a['optional'] else 0) | (8 if a['transient'] else 0) | 0xF0
        o = {'$class': cls('NSAttributeDescription', ['NSAttributeDescription', 'NSPropertyDescription']),
             'NSPropertyName': s(a['name']), 'NSEntity': ents[e['name']], 'NSAttributeType': a['code'], '_P': flags,
             'NSDefaultValue': default(a['default']), 'NSAttributeValueClassName': s(a['class']),
             'NSValueTransformerName': s(a['transformer']), 'NSRenamingIdentifier': s(a['name']), 'NSFlagsKey': 4 if a.get('external') else 0}
        if a['optional']: o['NSIsOptional'] = True
        if a['transient']: o['NSIsTransient'] = True
        objects[props[(e['name'], a['name'])].data] = o
        pairs.append((s(a['name']), props[(e['name'], a['name'])]))
    for r in e['relationships']:
        flags = 1 | (2 if r['optional'] else 0) | (0x400 if r['ordered'] else 0) | 0xF0
        inv = props.get((r['dest'], r['inverse']), UID(0)) if r['inverse'] else UID(0)
        o = {'$class': cls('NSRelationshipDescription', ['NSRelationshipDescription', 'NSPropertyDescription']),
             'NSPropertyName': s(r['name']), 'NSEntity': ents[e['name']], 'NSDestinationEntity': ents[r['dest']],
             'NSInverseRelationship': inv, '_NSInverseRelationshipName': s(r['inverse']), '_NSDestinationEntityName': s(r['dest']),
             'NSMinCount': 0, 'NSMaxCount': r['max'], 'NSDeleteRule': r['rule'], '_P': flags, 'NSRenamingIdentifier': s(r['name'])}
        if r['optional']: o['NSIsOptional'] = True
        if r['ordered']: o['NSIsOrdered'] = True
        objects[props[(e['name'], r['name'])].data] = o
        pairs.append((s(r['name']), props[(e['name'], r['name'])]))
    subs = [(s(x['name']), ents[x['name']]) for x in spec['entities'] if x['super'] == e['name']]
    o = {'$class': cls('NSEntityDescription', ['NSEntityDescription']), 'NSEntityName': s(e['name']),
         'NSClassNameForEntity': s(e['name']), 'NSManagedObjectModel': model,
         'NSSuperentity': ents[e['super']] if e['super'] else UID(0), 'NSSubentities': dictionary(subs),
         'NSProperties': dictionary(pairs), 'NSRenamingIdentifier': s(e['name']), 'NSVersionHashModifier': UID(0),
         'NSUniqueTuples': array([array([s(n) for n in t], 'NSMutableArray') for t in e['unique']], 'NSMutableArray')}
    if e['abstract']: o['NSIsAbstract'] = True
    objects[ents[e['name']].data] = o
names = sorted(ents)
number = {n: i + 1 for i, n in enumerate(names)}
if spec['damage'] == 'cycle':
    objects[ents[names[0]].data]['NSSuperentity'] = ents[names[1]]
    objects[ents[names[1]].data]['NSSuperentity'] = ents[names[0]]
keys = array([s(n) for n in names])
mapping = add({'$class': cls('NSKnownKeysMappingStrategy1', ['NSKnownKeysMappingStrategy1', 'NSKnownKeysMappingStrategy']),
               'keys': keys, 'length': len(names), 'version': 1})
known = add({'$class': cls('NSKnownKeysDictionary1', ['NSKnownKeysDictionary1', 'NSKnownKeysDictionary', 'NSMutableDictionary', 'NSDictionary']),
             'values': array([ents[n] for n in names]), 'searchMapping': mapping, 'version': 1})
objects[model.data] = {'$class': cls('NSManagedObjectModel', ['NSManagedObjectModel']), 'NSEntities': known,
                       'NSVersionIdentifiers': array([s(v) for v in spec['versions']], 'NSSet'), 'NSFetchRequestTemplates': UID(0)}
if spec['damage'] == 'baduid':
    objects[model.data]['NSEntities'] = UID(len(objects) + 40)
archive = plistlib.dumps({'$version': 100000, '$archiver': 'NSKeyedArchiver', '$top': {'root': model}, '$objects': objects},
                         fmt=plistlib.FMT_BINARY)
c = zlib.compressobj(9, zlib.DEFLATED, -15)
blob = c.compress(archive) + c.flush()
if spec['damage'] == 'truncate': blob = blob[:len(blob) // 2]
if spec['damage'] == 'notdeflate': blob = b'\xff' * 64
db = sqlite3.connect(path)
byname = {e['name']: e for e in spec['entities']}
def root(n):
    while byname[n]['super']: n = byname[n]['super']
    return n
db.execute('CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)')
db.execute('CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)')
if spec['damage'] != 'nocache':
    db.execute('CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)')
    db.execute('INSERT INTO Z_MODELCACHE VALUES (?)', (blob,))
meta = {'NSStoreModelVersionIdentifiers': spec['versions'], 'NSPersistenceFrameworkVersion': spec['framework'],
        'NSStoreType': 'SQLite', 'NSStoreModelVersionHashesVersion': 3,
        'NSStoreModelVersionHashes': {n: bytes(32) for n in names}}
db.execute('INSERT INTO Z_METADATA VALUES (1, ?, ?)', ('0F2C1D8E-4B6A-4E8B-9C1D-2A3B4C5D6E7F', plistlib.dumps(meta, fmt=plistlib.FMT_BINARY)))
types = {100: 'INTEGER', 200: 'INTEGER', 300: 'INTEGER', 400: 'DECIMAL', 500: 'FLOAT', 600: 'FLOAT', 700: 'VARCHAR',
         800: 'INTEGER', 900: 'TIMESTAMP', 1000: 'BLOB', 1100: 'BLOB', 1200: 'BLOB', 1800: 'BLOB'}
def declaring(n, name):
    while n:
        for x in byname[n]['relationships']:
            if x['name'] == name: return n, x
        n = byname[n]['super']
    return None, None
columns = {}
for n in names:
    r = root(n)
    cols = columns.setdefault(r, [])
    for a in byname[n]['attributes']:
        if not a['transient']: cols.append('Z' + a['name'].upper() + ' ' + types.get(a['code'], 'BLOB'))
    for rel in byname[n]['relationships']:
        inv = declaring(rel['dest'], rel['inverse'])[1] if rel['inverse'] else None
        if rel['max'] == 1: cols.append('Z' + rel['name'].upper() + ' INTEGER')
        elif inv is None:
            # A to-many without an inverse: a hidden to-one on the destination's root table, Z<n><NAME>.
            hidden = '%d%s' % (number[n], rel['name'].upper())
            columns.setdefault(root(rel['dest']), []).append('Z' + hidden + ' INTEGER')
            if rel['ordered']: columns.setdefault(root(rel['dest']), []).append('Z_FOK_' + hidden + ' INTEGER')
        elif rel['ordered'] and inv['max'] == 1:
            columns.setdefault(root(rel['dest']), []).append('Z_FOK_' + rel['inverse'].upper() + ' INTEGER')
for n in names:
    db.execute('INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)', (number[n], n, number[byname[n]['super']] if byname[n]['super'] else 0,
                                                               spec['rows'] * len(names)))
pk = 0
for n in names:
    if root(n) != n: continue
    table = 'Z' + n.upper()
    db.execute('CREATE TABLE %s ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER%s )' % (table, ''.join(', ' + c for c in columns.get(n, []))))
for n in names:
    if byname[n]['abstract']: continue
    for _ in range(spec['rows']):
        pk += 1
        db.execute('INSERT INTO Z%s (Z_PK, Z_ENT, Z_OPT) VALUES (?, ?, 1)' % root(n).upper(), (pk, number[n]))
# Many-to-many join tables, named after one side (Z_<n><NAME>, n the declaring entity): a column per side,
# Z_<n><NAME> holding the keys of entity n that relationship NAME points at, a name met before numbered
# (AddressBook's Z_22PARENTGROUPS(Z_22CONTACTS, Z_19PARENTGROUPS1)); the order Z_FOK_<n><NAME>, numbered on
# its own; a relationship that is its own inverse Z_<n><NAME>(Z_<n><NAME>, REFLEXIVE).
used = {}
def numbered(base):
    k = used.get(base, 0)
    used[base] = k + 1
    return base if k == 0 else base + str(k)
for n in names:
    for rel in byname[n]['relationships']:
        owner, inv = declaring(rel['dest'], rel['inverse']) if rel['inverse'] else (None, None)
        if rel['max'] == 1 or inv is None or inv['max'] == 1: continue
        table = 'Z_%d%s' % (number[n], rel['name'].upper())
        if (owner, inv['name']) == (n, rel['name']):
            db.execute('CREATE TABLE %s ( %s INTEGER, REFLEXIVE INTEGER, PRIMARY KEY (%s, REFLEXIVE) )' % (table, table, table))
            continue
        if (owner, inv['name']) < (n, rel['name']): continue
        keys = [numbered('Z_%d%s' % (number[x['dest']], x['name'].upper())) for x in (inv, rel)]
        foks = [numbered('Z_FOK_%d%s' % (number[x['dest']], x['name'].upper())) for x in (inv, rel) if x['ordered']]
        db.execute('CREATE TABLE %s ( %s, PRIMARY KEY (%s) )' % (table, ', '.join(c + ' INTEGER' for c in keys + foks), ', '.join(keys)))
db.commit()
db.close()
"""#
}
