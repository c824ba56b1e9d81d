"""Writers of CSV and TSV: Python's csv module in its dialects and encodings, and Miller."""

import csv
import io
import json

from cases import Forward, diff, expected, run_parallel, run_tool, set_path
from trips import flatten, header, unflatten

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
