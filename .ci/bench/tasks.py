"""The tasks: each an input, tripconv's command and its peers' commands on it, and a target."""
import json
import os
import sys

from common import HERE, MAX_ITEMS, SCRATCH, tc
from datasets import bare_array, cinsert_inputs, distinct_names, generate
from measuring import count_csv, count_json, count_jsonl, count_sqlite


# ---------------------------------------------------------------- peers' programs

CSV_COLUMNS = (["name", "destination", "startDate", "endDate",
                "livingAccommodation.address", "livingAccommodation.placeName"]
               + ["bucketList.%d.%s" % (i, f) for i in range(1, MAX_ITEMS + 1)
                  for f in ("title", "details", "hasReservation", "isInPlan")])


def jq_csv_filter(each):
    """A jq program writing the same columns, in the same order, as tripconv (Miller's flatten names)."""
    fields = [".name", ".destination", ".startDate", ".endDate", "(.livingAccommodation | .address, .placeName)"]
    for i in range(MAX_ITEMS):
        fields.append("(.bucketList[%d] | .title, .details, .hasReservation, .isInPlan)" % i)
    header = "[" + ", ".join(json.dumps(c) for c in CSV_COLUMNS) + "]"
    return "%s, (%s | [%s]) | @csv" % (header, each, ", ".join(fields))


# ---------------------------------------------------------------- tasks

class Tool:
    def __init__(self, label, cmd, out_ext, counter, needs=None, role="peer"):
        self.label, self.cmd, self.out_ext, self.counter = label, cmd, out_ext, counter
        self.needs = needs  # an executable that must exist
        self.role = role  # "tripconv", "peer" or "reference"
        self.runs = []
        self.checked = None  # None: not checked, else (ok, message)


class Task:
    def __init__(self, key, title, n, input_path, expected, tools, target, bytes_path=None):
        self.key, self.title, self.n, self.input, self.expected = key, title, n, input_path, expected
        self.tools, self.target = tools, target
        self.bytes = os.path.getsize(bytes_path or input_path)
        self.skipped = None


def make_tasks(n, selected, yaml_ok, yaml_why, cinsert):
    d = os.path.join(SCRATCH, "data", str(n))
    out = os.path.join(SCRATCH, "out", str(n))
    os.makedirs(out, exist_ok=True)

    def o(name):
        return os.path.join(out, name)

    tasks = []
    want = lambda k: not selected or k in selected

    if want("csv2jsonl"):
        src = generate(n, "trips.csv", "csv", ["--duplicates", "0"])
        tasks.append(Task("csv2jsonl", "CSV -> JSON Lines", n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "--to", "jsonl", "-o", p), "jsonl", count_jsonl, role="tripconv"),
            Tool("mlr --icsv --ojsonl cat", lambda p, src=src: ["mlr", "--icsv", "--ojsonl", "cat", src], "jsonl",
                 count_jsonl, needs="mlr"),
        ], ">= 4x Miller"))

    if want("json2csv"):
        src = bare_array(generate(n, "trips.json", "json", ["--duplicates", "0"]))
        tasks.append(Task("json2csv", "JSON array -> CSV", n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "--to", "csv", "-o", p), "csv", count_csv, role="tripconv"),
            Tool("gojq -r '.[] | [...] | @csv'", lambda p, src=src: ["gojq", "-r", jq_csv_filter(".[]"), src], "csv",
                 count_csv, needs="gojq"),
            Tool("mlr --ijson --ocsv flatten then unsparsify", lambda p, src=src: ["mlr", "--ijson", "--ocsv", "flatten", "then", "unsparsify", src], "csv",
                 count_csv, needs="mlr"),
        ], ">= 3x the faster peer"))

    if want("jsonl2csv"):
        src = generate(n, "trips.jsonl", "jsonl", ["--duplicates", "0"])
        tasks.append(Task("jsonl2csv", "JSON Lines -> CSV", n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "--to", "csv", "-o", p), "csv", count_csv, role="tripconv"),
            Tool("jq -nr 'inputs | [...] | @csv'", lambda p, src=src: ["jq", "-nr", jq_csv_filter("inputs"), src], "csv", count_csv,
                 needs="jq"),
        ], ">= 3x jq"))

    if want("yaml2json"):
        if not yaml_ok:
            t = Task("yaml2json", "YAML -> JSON", n, os.path.join(HERE, "bench.py"), n, [], ">= 5x gojq, < 1/10 of its memory")
            t.skipped = "tripconv cannot write/read yaml in this build (%s)" % yaml_why
            tasks.append(t)
        else:
            src = generate(n, "trips.yaml", "yaml", ["--duplicates", "0"])
            tasks.append(Task("yaml2json", "YAML -> JSON", n, src, n, [
                Tool("tripconv", lambda p, src=src: tc(src, "--to", "json", "-o", p), "json", count_json, role="tripconv"),
                Tool("gojq --yaml-input -c .", lambda p, src=src: ["gojq", "--yaml-input", "-c", ".", src], "json",
                     count_json, needs="gojq"),
            ], ">= 5x gojq, < 1/10 of its memory"))

    if want("xml2json"):
        src = generate(n, "trips.xml", "xml", ["--duplicates", "0"])
        tasks.append(Task("xml2json", "XML -> JSON", n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "--to", "json", "-o", p), "json", count_json, role="tripconv"),
            Tool("python3 ElementTree iterparse", lambda p, src=src: [sys.executable, os.path.join(HERE, "peer_iterparse.py"), src],
                 "json", count_json),
            Tool("xsltproc trips-to-json.xsl", lambda p, src=src: ["xsltproc", os.path.join(HERE, "trips-to-json.xsl"), src],
                 "json", count_json, needs="xsltproc"),
            Tool("xmllint --noout --stream", lambda p, src=src: ["xmllint", "--noout", "--stream", src], "txt", None,
                 needs="xmllint", role="reference"),
        ], ">= 3x the faster peer; <= 1.5x xmllint --stream time"))

    if want("json2sqlite"):
        src = generate(n, "trips.json", "json", ["--duplicates", "0"])
        tools = [
            Tool("tripconv", lambda p, src=src: tc(src, "-o", p), "sqlite", count_sqlite, role="tripconv"),
            Tool("sqlite-utils (insert_all, 3 tables)", lambda p, src=src: [sys.executable, os.path.join(HERE, "peer_sqlite_utils.py"), src, p],
                 "sqlite", count_sqlite),
        ]
        if cinsert:
            files = cinsert_inputs(n, src, out)
            if files:
                schema, inserts, rows, nrows = files
                t = Tool("C probe (cinsert.c, same rows)", lambda p, a=(cinsert, schema, inserts, rows): [*a, p], "sqlite",
                         count_sqlite, role="reference")
                tools.append(t)
        tasks.append(Task("json2sqlite", "JSON -> SQLite store", n, src, n, tools,
                          ">= 5x sqlite-utils; >= 70 % of the C probe's rate"))

    if want("dedup"):
        src = generate(n, "dedup.json", "json", ["--duplicates", "0.10"])
        distinct = distinct_names(src)
        tasks.append(Task("dedup", "dedupe 10 % duplicate names, JSON -> JSON Lines (merge)", n, src, distinct, [
            Tool("tripconv --dedupe merge", lambda p, src=src: tc(src, "--to", "jsonl", "--dedupe", "merge", "-o", p), "jsonl",
                 count_jsonl, role="tripconv"),
            Tool("jq -c 'reduce .trips[] ...' (keep last)",
                 lambda p, src=src: ["jq", "-c", "reduce .trips[] as $t ({}; .[$t.name] = $t) | .[]", src], "jsonl",
                 count_jsonl, needs="jq"),
        ], ">= 5x jq"))
    return tasks
