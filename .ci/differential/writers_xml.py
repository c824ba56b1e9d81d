"""Writers of XML: ElementTree, lxml and xmlstarlet; and the reading of trips out of an element tree."""

import random
import xml.etree.ElementTree as ET

from cases import Forward, Unflatten, diff, expected, run_parallel, run_tool, set_path
from trips import ITEM_KEYS, PLACE_KEYS, TRIP_KEYS

# ---------------------------------------------------------------------------------------------
# XML: ElementTree, lxml, xmlstarlet

def xml_tree(E, trips, style, rng=None):
    """The trips as an element tree of module E (ElementTree or lxml): style 'elements' (each field an
    element, as tripconv writes), 'attributes' (each field an attribute of its trip, item or
    accommodation) or 'mixed' (a choice per trip, item and accommodation)."""
    def pick():
        if style == "mixed":
            return rng.random() < 0.5
        return style == "attributes"

    root = E.Element("trips")
    root.set("schemaVersion", "3.0.0")

    def fields(parent, obj, keys):
        if pick():
            for key in keys:
                parent.set(key, text_of(obj[key]))
        else:
            for key in keys:
                E.SubElement(parent, key).text = text_of(obj[key])

    for t in trips:
        trip = E.SubElement(root, "trip")
        fields(trip, t, TRIP_KEYS[:4])
        bl = E.SubElement(trip, "bucketList")
        for item in t["bucketList"]:
            fields(E.SubElement(bl, "item"), item, ITEM_KEYS)
        if t["livingAccommodation"] is not None:
            fields(E.SubElement(trip, "livingAccommodation"), t["livingAccommodation"], PLACE_KEYS)
    return root


def text_of(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return v


def trips_of_xml(root):
    """Trips from a parsed document in tripconv's XML layout, fields as elements or attributes
    (ElementTree and lxml elements alike)."""
    def field(el, key, where):
        child = [c for c in el if c.tag == key]
        if key in el.attrib:
            if child:
                raise Unflatten("%s: %s both as attribute and element" % (where, key))
            return el.attrib[key]
        if len(child) != 1:
            raise Unflatten("%s: %d <%s> elements" % (where, len(child), key))
        if len(child[0]):
            raise Unflatten("%s: <%s> has children" % (where, key))
        return child[0].text or ""

    def boolean(text, where):
        if text not in ("true", "false"):
            raise Unflatten("%s: expected true or false, found %r" % (where, text))
        return text == "true"

    if root.tag != "trips":
        raise Unflatten("root is <%s>" % root.tag)
    trips = []
    for n, el in enumerate(root, 1):
        where = "trip %d" % n
        if el.tag != "trip":
            raise Unflatten("%s: <%s>" % (where, el.tag))
        t = {k: field(el, k, where) for k in TRIP_KEYS[:4]}
        lists = [c for c in el if c.tag == "bucketList"]
        items = []
        for item in (lists[0] if lists else []):
            i = {k: field(item, k, where) for k in ITEM_KEYS}
            i["hasReservation"] = boolean(i["hasReservation"], where)
            i["isInPlan"] = boolean(i["isInPlan"], where)
            items.append(i)
        t["bucketList"] = items
        places = [c for c in el if c.tag == "livingAccommodation"]
        p = None
        if places:
            p = {k: field(places[0], k, where) for k in PLACE_KEYS}
            if p["address"] == "" and p["placeName"] == "":
                p = None
        t["livingAccommodation"] = p
        trips.append(t)
    return trips


class ElementTreeWriter(Forward):
    ext = "xml"

    def __init__(self, style):
        self.style = style
        self.name = "elementtree-" + style
        # ElementTree escapes a CR in an attribute (&#13;) but writes it raw in text.
        self.repertoire = "xml" if style == "attributes" else "xml-nocr"

    def write_one(self, trips, path, k):
        root = xml_tree(ET, trips, self.style)
        if self.style == "elements":
            ET.indent(root, space="  ")
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)

    def oracle(self, path, trips, k):
        return diff(expected(trips), trips_of_xml(ET.parse(path).getroot()))


class LxmlWriter(Forward):
    ext = "xml"
    modules = ("lxml",)
    repertoire = "xml"

    def __init__(self, style, encoding, pretty):
        self.style, self.encoding, self.pretty = style, encoding, pretty
        self.name = "lxml-%s-%s" % (style, encoding.lower())

    def write_one(self, trips, path, k):
        from lxml import etree
        root = xml_tree(etree, trips, self.style, random.Random("mixed/%d" % k))
        data = etree.tostring(root, encoding=self.encoding, xml_declaration=True, pretty_print=self.pretty)
        with open(path, "wb") as f:
            f.write(data)

    def oracle(self, path, trips, k):
        from lxml import etree
        parser = etree.XMLParser(resolve_entities=False, huge_tree=True)
        return diff(expected(trips), trips_of_xml(etree.parse(path, parser).getroot()))


class XMLStarlet(Forward):
    """`xmlstarlet ed` building the document from an empty root, a subnode per field (`-s ... -t elem`),
    the items' fields as attributes (`-t attr`), the way a shell script makes an export."""

    tools = ("xmlstarlet",)
    ext = "xml"
    name = "xmlstarlet-ed"
    repertoire = "xml-noamp"

    def argv(self, trips):
        # An action that changes nothing comes first, as `ed` with no action prints its usage.
        a = ["xmlstarlet", "ed", "-u", "/trips/@schemaVersion", "-v", "3.0.0"]
        for i, t in enumerate(trips, 1):
            a += ["-s", "/trips", "-t", "elem", "-n", "trip", "-v", ""]
            tp = "/trips/trip[%d]" % i
            for key in TRIP_KEYS[:4]:
                a += ["-s", tp, "-t", "elem", "-n", key, "-v", t[key]]
            a += ["-s", tp, "-t", "elem", "-n", "bucketList", "-v", ""]
            for j, item in enumerate(t["bucketList"], 1):
                a += ["-s", tp + "/bucketList", "-t", "elem", "-n", "item", "-v", ""]
                ip = "%s/bucketList/item[%d]" % (tp, j)
                for key in ITEM_KEYS:
                    a += ["-s", ip, "-t", "attr", "-n", key, "-v", text_of(item[key])]
            if t["livingAccommodation"] is not None:
                a += ["-s", tp, "-t", "elem", "-n", "livingAccommodation", "-v", ""]
                for key in PLACE_KEYS:
                    a += ["-s", tp + "/livingAccommodation", "-t", "elem", "-n", key,
                          "-v", t["livingAccommodation"][key]]
        return a

    SKELETON = b'<?xml version="1.0" encoding="UTF-8"?>\n<trips schemaVersion="3.0.0"/>\n'

    def write(self, items, directory):
        def one(item):
            k, trips = item
            self.write_one(trips, set_path(directory, k, self.ext), k)
        run_parallel(one, items)

    def write_one(self, trips, path, k):
        with open(path, "wb") as f:
            f.write(run_tool(self.argv(trips), stdin=self.SKELETON))

    def oracle(self, path, trips, k):
        return diff(expected(trips), trips_of_xml(ET.parse(path).getroot()))
