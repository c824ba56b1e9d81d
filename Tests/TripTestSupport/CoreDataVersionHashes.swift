import Foundation

/// Core Data's entity version hashes of an Xcode model's `contents`, computed in Python (`hashlib`,
/// `xml.etree`) apart from tripconv's `EntityVersionHash`, and written into a store's `Z_METADATA`
/// (`NSStoreModelVersionHashes`) as Core Data keeps them. The rules are those docs/DESIGN-NOTES.md
/// gives ("Telling a store's version by its entity version hashes"), checked against a store Core
/// Data wrote (../shared/real-stores).
public enum CoreDataVersionHashes {
    /// Each entity's hash (hex) of the `contents` file at `contents`.
    public static func of(contents: String) throws -> [String: String] {
        let r = try ExternalTool.python(script, [contents])
        guard r.status == 0, let map = try JSONSerialization.jsonObject(with: r.stdout) as? [String: String] else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: r.stderr])
        }
        return map
    }

    /// Replaces the `NSStoreModelVersionHashes` of the store at `store` by `hashes` (hex).
    public static func write(_ hashes: [String: String], into store: String) throws {
        let r = try ExternalTool.python("""
            import json, plistlib, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            (blob,) = db.execute('SELECT Z_PLIST FROM Z_METADATA').fetchone()
            meta = plistlib.loads(blob)
            meta['NSStoreModelVersionHashes'] = {k: bytes.fromhex(v) for k, v in json.loads(sys.argv[2]).items()}
            db.execute('UPDATE Z_METADATA SET Z_PLIST = ?', (plistlib.dumps(meta, fmt=plistlib.FMT_BINARY),))
            db.commit()
            """, [store, String(decoding: try JSONSerialization.data(withJSONObject: hashes), as: UTF8.self)])
        guard r.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: r.stderr]) }
    }

    static let script = #"""
import hashlib, json, struct, sys
import xml.etree.ElementTree as ET
codes = {'Undefined': 0, 'Integer 16': 100, 'Integer 32': 200, 'Integer 64': 300, 'Decimal': 400, 'Double': 500, 'Float': 600,
         'String': 700, 'Boolean': 800, 'Date': 900, 'Binary': 1000, 'UUID': 1100, 'URI': 1200, 'Transformable': 1800, 'ObjectID': 2000}
root = ET.parse(sys.argv[1]).getroot()
entities = {e.get('name'): e for e in root.findall('entity')}
def props(e):
    # (declaring entity, element) for its own and inherited attributes and relationships, nearest first
    out, seen, cur = [], set(), e
    while cur is not None:
        for p in cur:
            if p.tag in ('attribute', 'relationship') and p.get('name') not in seen:
                seen.add(p.get('name')); out.append((cur.get('name'), p))
        cur = entities.get(cur.get('parentEntity'))
    return out
def yes(el, key): return el.get(key) == 'YES'
def prop_hash(owner, p):
    base = hashlib.sha256(p.get('name').encode() + struct.pack('<h', (1 if yes(p, 'optional') else 0) | (2 if yes(p, 'transient') else 0))
                          + (p.get('versionHashModifier') or '').encode()).digest()
    if p.tag == 'attribute':
        d = base + struct.pack('<i', codes[p.get('attributeType', 'Undefined')])
        d += b'\x01' if yes(p, 'allowsExternalBinaryDataStorage') else b''
        d += b'\x01' if yes(p, 'preserveAfterDeletion') else b''
        return hashlib.sha256(d).digest()
    dest = p.get('destinationEntity')
    d = base + dest.encode()
    inv = p.get('inverseName')
    if inv and dest in entities:
        found = [(o, q) for o, q in props(entities[dest]) if q.tag == 'relationship' and q.get('name') == inv]
        if found and not (found[0][0] == owner and inv == p.get('name')):
            d += inv.encode()
    many = yes(p, 'toMany')
    d += struct.pack('<i', int(p.get('maxCount', 0 if many else 1))) + struct.pack('<i', int(p.get('minCount', 0)))
    d += struct.pack('<h', 1) if yes(p, 'ordered') else b''
    return hashlib.sha256(d).digest()
done = {}
def entity_hash(name):
    if name in done: return done[name]
    e = entities[name]
    d = name.encode() + bytes([1 if yes(e, 'isAbstract') else 0])
    if e.get('parentEntity'): d += entity_hash(e.get('parentEntity'))
    for owner, p in sorted(props(e), key=lambda op: op[1].get('name')):
        if not yes(p, 'transient'): d += prop_hash(owner, p)
    d += (e.get('versionHashModifier') or '').encode()
    tuples = ['.'.join(c.get('value') for c in u.findall('constraint')) for u in e.findall('uniquenessConstraints/uniquenessConstraint')]
    for t in sorted(tuples): d += t.encode()
    done[name] = hashlib.sha256(d).digest()
    return done[name]
print(json.dumps({n: entity_hash(n).hex() for n in entities}))
"""#
}
