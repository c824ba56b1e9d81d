"""The writers users have, each writing trip sets into files that tripconv must read to exactly the
trips written (the forward direction)."""

import concurrent.futures
import csv
import io
import json
import os
import random
import xml.etree.ElementTree as ET

from cases import Forward, Unflatten, diff, expected, nested_trips, run_tool, set_path
from trips import ITEM_KEYS, PLACE_KEYS, TRIP_KEYS, datetime_of, flatten, header, unflatten

# ---------------------------------------------------------------------------------------------
# Python's csv module

QUOTING = {"minimal": csv.QUOTE_MINIMAL, "all": csv.QUOTE_ALL, "nonnumeric": csv.QUOTE_NONNUMERIC}
DELIMITERS = {"comma": ",", "semicolon": ";", "tab": "\t", "pipe": "|"}
TERMINATORS = {"crlf": "\r\n", "lf": "\n", "cr": "\r"}
FORMULA_STARTS = ("=", "+", "-", "@", "'")
# QUOTE_NONE is left out: it writes no quotes and, with an escapechar, escapes delimiters and line
# breaks with a backslash (`a\,b`), a dialect of Python's own that RFC 4180 readers (Miller, csvkit,
# spreadsheets, tripconv) read as the characters written. tripconv does not read it, by design.


def formula_safe(cell):
    """A cell as a spreadsheet-safe exporter writes it: a ' before a text that starts with = + - @ or '
    (what tripconv's --csv-safe-formulas writes and, reading, takes off)."""
    return "'" + cell if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


def formula_unsafe(cell):
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell


def csv_read_back(path, encoding, delimiter, skip_sep_line, booleans, safe_formulas=False):
    """Python's csv module reading a file it wrote: the rows, unflattened by the harness's rules."""
    with open(path, newline="", encoding=encoding) as f:
        text = f.read()
    if text.startswith("\ufeff"):
        text = text[1:]
    if skip_sep_line:
        first, _, text = text.partition("\n")
        assert first.rstrip("\r") == "sep=" + delimiter, first
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    if not rows:
        return []
    if safe_formulas:
        rows = [[formula_unsafe(c) for c in row] for row in rows]
    cols = rows[0]
    out = []
    for n, cells in enumerate(rows[1:], 2):
        cells = [booleans.get(c, c) if "." in col and col.split(".")[-1] in ("hasReservation", "isInPlan")
                 else c for col, c in zip(cols, cells)]
        out.append(unflatten(cols, cells, "row %d" % n))
    return out


class PythonCSV(Forward):
    """csv.DictWriter over rows flattened the Miller way; cells of absent items and accommodations
    are the writer's restval, '' (which QUOTE_ALL and QUOTE_NONNUMERIC write as "")."""

    ext = "csv"

    def __init__(self, quoting, delimiter, terminator, encoding="utf-8", bom=False, python_bools=False,
                 sep_line=False, args=(), name=None, repertoire=None, note="", last_line_end=True,
                 safe_formulas=False):
        self.quoting, self.delimiter, self.terminator = quoting, delimiter, terminator
        self.encoding, self.bom, self.python_bools, self.sep_line = encoding, bom, python_bools, sep_line
        self.last_line_end, self.safe_formulas = last_line_end, safe_formulas
        self.args = tuple(args)
        self.name = name or "python-csv-%s-%s-%s" % (quoting, delimiter, terminator)
        if repertoire:
            self.repertoire = repertoire
        elif quoting == "minimal" and terminator == "lf":
            self.repertoire = "csv-nocr"
        elif quoting == "minimal" and terminator == "cr":
            self.repertoire = "csv-nolf"
        else:
            self.repertoire = "csv"
        self.note = note

    def write_one(self, trips, path, k):
        delim = DELIMITERS[self.delimiter]
        lt = TERMINATORS[self.terminator]
        boolean = (lambda b: b) if self.python_bools else (lambda b: "true" if b else "false")
        f = io.StringIO(newline="")
        if self.bom:
            f.write("\ufeff")
        if self.sep_line:
            f.write("sep=" + delim + lt)
        w = csv.DictWriter(f, header(trips), restval="", quoting=QUOTING[self.quoting], delimiter=delim,
                           lineterminator=lt)
        w.writeheader()
        for t in trips:
            row = flatten(t, boolean)
            if self.safe_formulas:
                row = {c: formula_safe(v) for c, v in row.items()}
            w.writerow(row)
        text = f.getvalue()
        if not self.last_line_end:
            text = text[:-len(lt)]
        with open(path, "w", newline="", encoding=self.encoding) as out:
            out.write(text)

    def oracle(self, path, trips, k):
        booleans = {"True": "true", "False": "false"} if self.python_bools else {}
        got = csv_read_back(path, self.encoding, DELIMITERS[self.delimiter], self.sep_line, booleans,
                            self.safe_formulas)
        return diff(expected(trips), got)


def python_csv_cases():
    cases = []
    for q in QUOTING:
        for d in DELIMITERS:
            for t in ("crlf", "lf"):
                cases.append(PythonCSV(q, d, t))
    cases += [
        PythonCSV("minimal", "comma", "cr", note="old Mac line ends"),
        PythonCSV("all", "semicolon", "cr"),
        PythonCSV("minimal", "comma", "crlf", last_line_end=False, name="python-csv-minimal-comma-crlf-no-last-eol",
                  note="no line end after the last row"),
        PythonCSV("all", "comma", "lf", last_line_end=False, name="python-csv-all-comma-lf-no-last-eol"),
        PythonCSV("minimal", "comma", "crlf", safe_formulas=True, args=["--csv-safe-formulas"],
                  name="python-csv-safe-formulas",
                  note="a ' before each cell starting with = + - @ ', read with --csv-safe-formulas"),
        PythonCSV("minimal", "comma", "crlf", python_bools=True, name="python-csv-minimal-comma-crlf-pybool",
                  note="booleans as Python writes bool objects: True, False"),
        PythonCSV("nonnumeric", "comma", "crlf", python_bools=True,
                  name="python-csv-nonnumeric-comma-crlf-pybool",
                  note="QUOTE_NONNUMERIC with bool objects: True and False unquoted among quoted strings"),
        PythonCSV("minimal", "comma", "crlf", encoding="utf-8-sig", name="python-csv-utf8bom-minimal-comma",
                  note="UTF-8 with a byte-order mark (Excel's 'CSV UTF-8')"),
        PythonCSV("all", "semicolon", "crlf", encoding="utf-8-sig", name="python-csv-utf8bom-all-semicolon"),
        PythonCSV("minimal", "tab", "crlf", encoding="utf-16-le", bom=True, name="python-csv-utf16le-tab",
                  note="UTF-16 LE with BOM, tab-separated: a spreadsheet's 'Unicode text' export"),
        PythonCSV("minimal", "tab", "crlf", encoding="utf-16-be", bom=True, name="python-csv-utf16be-tab"),
        PythonCSV("minimal", "comma", "crlf", encoding="latin-1", args=["--input-encoding", "latin1"],
                  name="python-csv-latin1-comma", repertoire="latin1"),
        PythonCSV("minimal", "semicolon", "crlf", encoding="cp1252", args=["--input-encoding", "windows-1252"],
                  name="python-csv-cp1252-semicolon", repertoire="cp1252"),
        PythonCSV("minimal", "semicolon", "crlf", sep_line=True, name="python-csv-excel-sep-semicolon",
                  note="an Excel 'sep=;' first line"),
        PythonCSV("minimal", "pipe", "lf", args=["--csv-delimiter", "|"], name="python-csv-option-pipe",
                  note="the delimiter given with --csv-delimiter"),
        PythonCSV("all", "tab", "lf", args=["--csv-delimiter", "tab"], name="python-csv-option-tab"),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# Miller: its own flatten and CSV / TSV writers

def run_parallel(fn, items, workers=2):
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(fn, items):
            pass


class Miller(Forward):
    """`mlr --ijson --ocsv flatten then unsparsify` on a JSON array of the trips. (Without the explicit
    `flatten`, Miller flattens at output, after unsparsify has seen the unflattened records, and writes
    a new header block wherever the flattened keys change: several tables in one file.)"""

    tools = ("mlr",)
    repertoire = "csv"

    def __init__(self, fmt):
        self.fmt = fmt
        self.name = "mlr-" + fmt
        self.ext = fmt

    def write(self, items, directory):
        def one(item):
            k, trips = item
            data = json.dumps(trips, ensure_ascii=False).encode("utf-8")
            out = run_tool(["mlr", "--ijson", "--o" + self.fmt, "flatten", "then", "unsparsify"], stdin=data)
            with open(set_path(directory, k, self.ext), "wb") as f:
                f.write(out)
        run_parallel(one, items)

    def write_one(self, trips, path, k):
        data = json.dumps(trips, ensure_ascii=False).encode("utf-8")
        with open(path, "wb") as f:
            f.write(run_tool(["mlr", "--ijson", "--o" + self.fmt, "flatten", "then", "unsparsify"], stdin=data))


# ---------------------------------------------------------------------------------------------
# jq: JSON pretty and compact, ASCII, and JSON Lines

class JQ(Forward):
    """jq re-serializes the JSON Python's json module wrote (ensure_ascii, so every non-ASCII character
    reaches jq as a \\u escape, non-BMP ones as surrogate pairs). Many files go through one jq
    process (its start-up costs 14 ms); each output is cut out of jq's stream at the file names the
    program prints before each input's output."""

    tools = ("jq",)

    def __init__(self, name, flags, program, ext):
        self.name, self.flags, self.program, self.ext = name, list(flags), program, ext

    def _source(self, trips):
        return json.dumps({"schemaVersion": "3.0.0", "trips": trips})

    def write(self, items, directory):
        src = os.path.join(directory, "jq-src-%d" % items[0][0]) if items else directory
        os.makedirs(src, exist_ok=True)
        for start in range(0, len(items), 400):
            batch = items[start:start + 400]
            names = []
            for k, trips in batch:
                p = os.path.join(src, "%05d.json" % k)
                with open(p, "w") as f:
                    f.write(self._source(trips))
                names.append(p)
            out = run_tool(["jq"] + self.flags + ["(input_filename | \"\\u0001\" + .), (%s)" % self.program]
                           + names)
            self._split(out, directory)
        for name in os.listdir(src):
            os.remove(os.path.join(src, name))
        os.rmdir(src)

    def _split(self, out, directory):
        # Each file's output follows a line holding its name as a JSON string starting with \u0001; jq
        # writes that string as "\u0001..." whatever the flags, and no line of a trip starts so.
        current, chunk = None, []
        for line in out.split(b"\n"):
            if line.startswith(b'"\\u0001'):
                if current:
                    self._put(current, chunk, directory)
                k = int(os.path.basename(json.loads(line)[1:]).split(".")[0])
                current, chunk = set_path(directory, k, self.ext), []
            else:
                chunk.append(line)
        if current:
            self._put(current, chunk, directory)

    def _put(self, path, lines, directory):
        while lines and lines[-1] == b"":
            lines.pop()
        with open(path, "wb") as f:
            f.write(b"\n".join(lines) + (b"\n" if lines else b""))

    def write_one(self, trips, path, k):
        out = run_tool(["jq"] + self.flags + [self.program], stdin=self._source(trips).encode())
        with open(path, "wb") as f:
            f.write(out)


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


# ---------------------------------------------------------------------------------------------
# YAML: PyYAML and ruamel.yaml

def yaml_loader():
    import yaml
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class PyYAMLWriter(Forward):
    ext = "yaml"
    modules = ("yaml",)

    def __init__(self, name, wrapper=True, datetimes=False, **options):
        self.name, self.wrapper, self.datetimes, self.options = name, wrapper, datetimes, options
        self.repertoire = "yaml-unicode" if options.get("allow_unicode") else "any"

    def document(self, trips):
        if self.datetimes:
            trips = [dict(t, startDate=datetime_of(t["startDate"]), endDate=datetime_of(t["endDate"]))
                     for t in trips]
        return {"schemaVersion": "3.0.0", "trips": trips} if self.wrapper else trips

    def write_one(self, trips, path, k):
        import yaml
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump(self.document(trips), f, **self.options)

    def oracle(self, path, trips, k):
        import yaml
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=yaml_loader())
        if self.wrapper:
            doc = doc["trips"]
        return diff(expected(trips), nested_trips(doc, "oracle"))


class RuamelWriter(Forward):
    ext = "yaml"
    modules = ("ruamel.yaml",)
    repertoire = "yaml-unicode"  # ruamel.yaml writes non-ASCII as is, as PyYAML's allow_unicode does

    def __init__(self, name, explicit_start=False, indent=None):
        self.name, self.explicit_start, self.indent = name, explicit_start, indent
        self._yaml = None

    def yaml(self):
        if self._yaml is None:
            from ruamel.yaml import YAML
            y = YAML()
            # ruamel.yaml folds a long double-quoted scalar after an escape such as \x04 with no
            # backslash at the break, so the break reads back as a space (0.19.1; PyYAML folds right and
            # covers folding): no folding here.
            y.width = 1 << 30
            y.explicit_start = self.explicit_start
            if self.indent:
                y.indent(**self.indent)
            self._yaml = y
        return self._yaml

    def write_one(self, trips, path, k):
        with open(path, "w", encoding="utf-8") as f:
            self.yaml().dump({"schemaVersion": "3.0.0", "trips": trips}, f)

    def oracle(self, path, trips, k):
        from ruamel.yaml import YAML
        if not hasattr(self, "_safe"):
            self._safe = YAML(typ="safe")  # ruamel.yaml's own loader, its faster kind
        with open(path, encoding="utf-8") as f:
            doc = self._safe.load(f)
        return diff(expected(trips), nested_trips(doc["trips"], "oracle"))


def forward_cases():
    return python_csv_cases() + [
        Miller("csv"),
        Miller("tsv"),
        ElementTreeWriter("elements"),
        ElementTreeWriter("attributes"),
        LxmlWriter("elements", "ISO-8859-1", pretty=True),
        LxmlWriter("mixed", "UTF-16", pretty=False),
        XMLStarlet(),
        PyYAMLWriter("pyyaml-block", allow_unicode=True, sort_keys=False, default_flow_style=False),
        PyYAMLWriter("pyyaml-flow", default_flow_style=True),
        PyYAMLWriter("pyyaml-datetimes-bare-list", wrapper=False, datetimes=True, sort_keys=False),
        PyYAMLWriter("pyyaml-canonical", canonical=True),
        RuamelWriter("ruamel-rt"),
        RuamelWriter("ruamel-rt-indented", explicit_start=True, indent={"mapping": 2, "sequence": 4, "offset": 2}),
        JQ("jq-json", [], ".", "json"),
        JQ("jq-ascii-compact", ["-a", "-c"], ".", "json"),
        JQ("jq-jsonl", ["-c"], ".trips[]", "jsonl"),
    ]
