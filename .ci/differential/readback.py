"""The backward direction: tripconv writes each trip set (given to it as JSON Lines) in CSV, TSV,
JSON, JSON Lines, XML and YAML, and the tools users have must read each file back to the trips."""

import csv
import json
import os
import xml.etree.ElementTree as ET

from cases import Case, Unflatten, nested_trips, run_tool, set_path
from trips import unflatten
from writers_csv import formula_unsafe
from writers_xml import trips_of_xml


class Backward(Case):
    """Input: one JSON Lines file per set, written by Python's json module. Cases with the same format
    (and so the same repertoire) share tripconv's run; each reads its output with another tool."""

    ext = "jsonl"

    def __init__(self, to, reader, repertoire, args=(), variant=""):
        self.to, self.reader, self.repertoire, self.args = to, reader, repertoire, tuple(args)
        self.name = "tripconv-%s%s>%s" % (to, variant, reader)

    @property
    def run_key(self):
        return "tripconv-%s/%s/%s" % (self.to, self.repertoire, " ".join(self.args))

    def write_one(self, trips, path, k):
        with open(path, "w", encoding="utf-8") as f:
            for t in trips:
                f.write(json.dumps(t, ensure_ascii=False) + "\n")

    def read(self, outdir, keys):
        results = {}
        paths = {k: set_path(outdir, k, self.to) for k in keys}
        present = {k: p for k, p in paths.items() if os.path.exists(p)}
        for k in keys:
            if k not in present:
                results[k] = None
        try:
            batch = self.read_batch(present)
        except Unflatten as e:  # the tool failed on the batch: read each file alone to say which
            batch = {}
            for k, p in present.items():
                try:
                    batch.update(self.read_batch({k: p}))
                except Unflatten as e1:
                    batch[k] = e1
        for k in present:
            results[k] = batch[k]
        return results

    def read_batch(self, paths):
        out = {}
        for k, p in paths.items():
            try:
                out[k] = self.read_file(p)
            except Unflatten as e:
                out[k] = e
            except Exception as e:  # a reader's exception is a finding about the file: say which
                out[k] = Unflatten("%s: %s" % (type(e).__name__, e))
        return out

    def read_file(self, path):
        raise NotImplementedError


class PythonCSVReader(Backward):
    """csv.reader; with --csv-safe-formulas, a ' before = + - @ or ' is taken off each cell."""

    def __init__(self, safe_formulas=False):
        if safe_formulas:
            super().__init__("csv", "python-csv", "csv", ["--csv-safe-formulas"], "-safe-formulas")
        else:
            super().__init__("csv", "python-csv", "csv")
        self.safe_formulas = safe_formulas

    def read_file(self, path):
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        if not rows:
            return []
        if self.safe_formulas:
            rows = [[formula_unsafe(c) for c in row] for row in rows]
        return [unflatten(rows[0], cells, "row %d" % n) for n, cells in enumerate(rows[1:], 2)]


def tsv_unescape(cell, where):
    """tripconv(1), FORMATS, tsv: the escapes \\t, \\n, \\r and \\\\ in fields."""
    out, i = [], 0
    while i < len(cell):
        c = cell[i]
        if c == "\\":
            nxt = cell[i + 1:i + 2]
            if nxt not in ("t", "n", "r", "\\"):
                raise Unflatten("%s: a backslash followed by %r, which is no escape tripconv(1) lists" % (where, nxt))
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}[nxt])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class PythonTSVReader(Backward):
    """The TSV layout as tripconv(1) gives it (no quoting, escapes \\t \\n \\r \\\\), read by a few lines
    of Python: a check against the documentation, where Miller is the independent reader."""

    def __init__(self):
        super().__init__("tsv", "python-tsv", "csv")

    def read_file(self, path):
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        if text == "":
            return []
        if not text.endswith("\n"):
            raise Unflatten("no LF at the end")
        lines = text[:-1].split("\n")
        cols = lines[0].split("\t")
        return [unflatten(cols, [tsv_unescape(c, "line %d" % n) for c in line.split("\t")], "line %d" % n)
                for n, line in enumerate(lines[1:], 2)]


class MillerReader(Backward):
    """`mlr --icsv --ojsonl -S --no-auto-unflatten`: Miller parses the CSV (or TSV, with its escapes)
    and gives each record's cells by column, as strings (-S: no type inference, so a name like 1.5 stays
    a string); the harness applies the layout (tripconv(1)'s rules for empty groups) to the flat record.
    Miller's own unflatten is left off because it turns a cell holding the text [] or {} into an empty
    array or map, so it cannot give back a title "[]". Many files per process; FILENAME tells them
    apart."""

    tools = ("mlr",)

    def __init__(self, fmt):
        # Miller 6.6 reads a CR LF inside a quoted CSV field as LF (a lone CR it keeps): no CR for it.
        super().__init__(fmt, "mlr", "csv-nocr" if fmt == "csv" else "csv")
        self.fmt = fmt

    def read_batch(self, paths):
        by_path = {os.path.abspath(p): k for k, p in paths.items()}
        out = {k: [] for k in paths}
        items = sorted(by_path.items())
        for start in range(0, len(items), 400):
            chunk = items[start:start + 400]
            data = run_tool(["mlr", "--i" + self.fmt, "--ojsonl", "-S", "--no-auto-unflatten",
                             "put", "$__file = FILENAME"]
                            + [p for p, _ in chunk])
            for n, line in enumerate(data.decode("utf-8").split("\n"), 1):
                if not line.strip():
                    continue
                rec = json.loads(line, strict=False)  # Miller writes control characters raw in strings
                k = by_path[os.path.abspath(rec.pop("__file"))]
                if isinstance(out[k], Unflatten):
                    continue
                try:
                    out[k].append(self.trip(rec, "record %d" % (len(out[k]) + 1)))
                except Unflatten as e:
                    out[k] = e
        return out

    @staticmethod
    def trip(rec, where):
        if not all(isinstance(v, str) for v in rec.values()):
            raise Unflatten("%s: Miller gave cells that are not strings: %s" % (where, rec))
        return unflatten(list(rec.keys()), list(rec.values()), where)


class PythonJSONReader(Backward):
    def __init__(self, fmt):
        super().__init__(fmt, "python-json", "any")

    def read_file(self, path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if self.to == "json":
            doc = json.loads(text)
            if doc.get("schemaVersion") != "3.0.0":
                raise Unflatten("schemaVersion is %r" % doc.get("schemaVersion"))
            objs = doc["trips"]
        else:
            objs = [json.loads(line) for line in text.split("\n") if line.strip()]
        return nested_trips(objs, "")


class JQReader(Backward):
    """jq reads every output in one process (`jq -c`); each trip it prints, with the file name jq gives,
    is then parsed by Python's json. A trip jq misreads prints differently."""

    tools = ("jq",)

    def __init__(self, fmt):
        super().__init__(fmt, "jq", "any")

    def read_batch(self, paths):
        by_path = {os.path.abspath(p): k for k, p in paths.items()}
        out = {k: [] for k in paths}
        program = "[input_filename, .schemaVersion, .trips[]]" if self.to == "json" else "[input_filename, null, .]"
        items = sorted(by_path.items())
        for start in range(0, len(items), 400):
            chunk = items[start:start + 400]
            data = run_tool(["jq", "-c", program] + [p for p, _ in chunk])
            for line in data.decode("utf-8").split("\n"):
                if not line:
                    continue
                rec = json.loads(line)
                k = by_path[os.path.abspath(rec[0])]
                if self.to == "json" and rec[1] != "3.0.0":
                    out[k] = Unflatten("schemaVersion is %r" % rec[1])
                if isinstance(out[k], Unflatten):
                    continue
                try:
                    out[k] += nested_trips(rec[2:], "")
                except Unflatten as e:
                    out[k] = e
        return out


class ElementTreeReader(Backward):
    def __init__(self):
        super().__init__("xml", "elementtree", "xml")

    def read_file(self, path):
        root = ET.parse(path).getroot()
        if root.get("schemaVersion") != "3.0.0":
            raise Unflatten("schemaVersion is %r" % root.get("schemaVersion"))
        return trips_of_xml(root)


class LxmlReader(Backward):
    modules = ("lxml",)

    def __init__(self):
        super().__init__("xml", "lxml", "xml")

    def read_file(self, path):
        from lxml import etree
        root = etree.parse(path, etree.XMLParser(resolve_entities=False, huge_tree=True)).getroot()
        if root.get("schemaVersion") != "3.0.0":
            raise Unflatten("schemaVersion is %r" % root.get("schemaVersion"))
        return trips_of_xml(root)


class PyYAMLReader(Backward):
    """yaml.safe_load, PyYAML's pure-Python loader (YAML 1.1: a plain `no` would be false, a plain
    2024-01-01 a date; tripconv must quote such strings). Dates may come back as datetimes."""

    modules = ("yaml",)

    def __init__(self):
        super().__init__("yaml", "pyyaml", "any")

    def read_file(self, path):
        import yaml
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        if doc.get("schemaVersion") != "3.0.0":
            raise Unflatten("schemaVersion is %r" % doc.get("schemaVersion"))
        return nested_trips(doc["trips"] or [], "")


class RuamelReader(Backward):
    """ruamel.yaml's default round-trip loader (YAML 1.2)."""

    modules = ("ruamel.yaml",)

    def __init__(self):
        super().__init__("yaml", "ruamel", "any")
        self._yaml = None

    def read_file(self, path):
        if self._yaml is None:
            from ruamel.yaml import YAML
            self._yaml = YAML()
        with open(path, encoding="utf-8") as f:
            doc = self._yaml.load(f)
        if doc.get("schemaVersion") != "3.0.0":
            raise Unflatten("schemaVersion is %r" % doc.get("schemaVersion"))
        return nested_trips(doc["trips"] or [], "")


def backward_cases():
    return [
        PythonCSVReader(), MillerReader("csv"), PythonCSVReader(safe_formulas=True),
        PythonTSVReader(), MillerReader("tsv"),
        PythonJSONReader("json"), JQReader("json"),
        PythonJSONReader("jsonl"), JQReader("jsonl"),
        ElementTreeReader(), LxmlReader(),
        PyYAMLReader(), RuamelReader(),
    ]
