"""The tasks: each an input, tripconv's command and its peers' commands on it, and a target."""
import json
import os
import shlex
import shutil
import sys

from common import HERE, MAX_ITEMS, SCRATCH, tc
from datasets import (ARCHIVE_FORMATS, bare_array, cinsert_inputs, compressed, distinct_names, generate, mixed_archive,
                      recipes_export, trips_at_version, trips_of_about)
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
    def __init__(self, label, cmd, out_ext, counter, needs=None, role="peer", same_as=None, clean=None, writes_o=None,
                 expected=None, objects=None):
        self.label, self.cmd, self.out_ext, self.counter = label, cmd, out_ext, counter
        # What this tool's output must hold when not the task's count (a peer on other data), and the
        # objects its run goes through (the object tasks report time per object).
        self.expected, self.objects = expected, objects
        self.needs = needs  # an executable that must exist, or a tuple of them
        self.role = role  # "tripconv", "peer" or "reference"
        self.same_as = same_as  # the label of a tool whose output this one's must equal byte for byte
        self.digest = None  # the sha256 of the first run's output, when compared
        self.clean = clean  # removes what a run leaves besides its output: before each run (untimed) and at the end
        # Whether the command writes the output itself (tripconv -o: a temporary file, fsync'ed, renamed),
        # else it writes standard output, which goes to the output file.
        self.writes_o = writes_o if writes_o is not None else (role == "tripconv" or out_ext == "sqlite")
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
    if want("store2jsonl"):
        tasks.append(coredata_graph_task(n, lambda src, p: tc(src, "--to", "jsonl", "-o", p)))
    tasks += compressed_tasks(n, want, yaml_ok, o)
    tasks += object_tasks(n, want)
    return tasks


def sh(*words):
    """A shell pipeline's words quoted: the tools are given as `sh -c`."""
    return " ".join(shlex.quote(w) for w in words)


def compressed_tasks(n, want, yaml_ok, o):
    """Issue 17: compressed inputs and archives, against decompressing first."""
    tasks = []
    q = shlex.quote

    def without(key, title, target, why):
        t = Task(key, title, n, os.path.join(HERE, "bench.py"), n, [], target)
        t.skipped = why
        return t

    if want("gz2csv"):
        title, target = "JSON Lines, gzip -> CSV", "<= 1.1x gzip -dc | tripconv; >= 4x Miller"
        src = compressed(generate(n, "trips.jsonl", "jsonl", ["--duplicates", "0"]), "gzip")
        pipe = "gzip -dc | tripconv --from jsonl --to csv -o F"
        tasks.append(without("gz2csv", title, target, "gzip is not installed") if not src else Task("gz2csv", title, n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "--to", "csv", "-o", p), "csv", count_csv, role="tripconv", same_as=pipe),
            # -o, as tripconv's own run: both write a temporary file, fsync it and rename it into place.
            Tool(pipe, lambda p, src=src: ["sh", "-c", "gzip -dc %s | %s" % (q(src), sh(*tc("--from", "jsonl", "--to", "csv", "-o", p)))],
                 "csv", count_csv, role="reference", writes_o=True),
            # Miller's `cat` starts a new header block whenever the keys change (most trips: 0-5 items, 0-1
            # accommodation), so its output is not one CSV: the checked peer is json2csv's verbs; `cat`, the
            # issue's command, is timed beside it, unchecked.
            Tool("mlr --gzin --ijsonl --ocsv flatten then unsparsify", lambda p, src=src: [
                "mlr", "--gzin", "--ijsonl", "--ocsv", "flatten", "then", "unsparsify", src], "csv", count_csv, needs="mlr"),
            Tool("mlr --gzin --ijsonl --ocsv cat (unchecked)", lambda p, src=src: ["mlr", "--gzin", "--ijsonl", "--ocsv", "cat", src],
                 "csv", None, needs="mlr", role="reference"),
        ], target))

    if want("zst2jsonl"):
        title, target = "CSV, zstd -> JSON Lines", ">= 4x zstd -dc | Miller"
        src = compressed(generate(n, "trips.csv", "csv", ["--duplicates", "0"]), "zstd")
        tasks.append(without("zst2jsonl", title, target, "zstd is not installed") if not src else Task("zst2jsonl", title, n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "--to", "jsonl", "-o", p), "jsonl", count_jsonl, role="tripconv"),
            Tool("zstd -dc | mlr --icsv --ojsonl cat", lambda p, src=src: ["sh", "-c", "zstd -dc %s | mlr --icsv --ojsonl cat" % q(src)],
                 "jsonl", count_jsonl, needs=("zstd", "mlr")),
        ], target))

    if want("zstrss"):
        title, target = "memory: JSON Lines, zstd -> CSV against the plain file", "peak RSS <= the plain file's + 16 MiB"
        plain = generate(n, "trips.jsonl", "jsonl", ["--duplicates", "0"])
        src = compressed(plain, "zstd")
        plain_label = "tripconv trips.jsonl (plain)"
        tasks.append(without("zstrss", title, target, "zstd is not installed") if not src else Task("zstrss", title, n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "--to", "csv", "-o", p), "csv", count_csv, role="tripconv", same_as=plain_label),
            Tool(plain_label, lambda p: tc(plain, "--to", "csv", "-o", p), "csv", count_csv, role="reference"),
        ], target))

    if want("targz2sqlite"):
        files = 1000 if n >= 10000 else max(10, n // 30)
        formats = ARCHIVE_FORMATS if yaml_ok else tuple(f for f in ARCHIVE_FORMATS if f != "yaml")
        src = mixed_archive(n, files, formats)
        unpacked = o("targz2sqlite.unpacked")
        tasks.append(Task("targz2sqlite", ".tar.gz of %d mixed exports (%s; 3.0.0, 2.0.0, 1.0.0) -> one SQLite store" % (
            files, "/".join(formats)), n, src, n, [
            Tool("tripconv", lambda p, src=src: tc(src, "-o", p), "sqlite", count_sqlite, role="tripconv"),
            Tool("tar -xzf, then tripconv on the directory", lambda p, src=src: [
                "sh", "-c", "rm -rf %s && mkdir %s && tar -xzf %s -C %s && %s" % (
                    q(unpacked), q(unpacked), q(src), q(unpacked), sh(*tc(unpacked, "-o", p)))],
                 "sqlite", count_sqlite, needs="tar", clean=lambda: shutil.rmtree(unpacked, ignore_errors=True)),
        ], "<= 1x unpacking first (tar -xzf, then tripconv)"))
    return tasks


# ---------------------------------------------------------------- a store of another app's model (issue 26)

def count_sqlite_json_objects(path):
    """The rows of the entity tables (those with Z_ENT) in `sqlite3 -json`'s output: one array per statement.
    Read as Latin-1: sqlite3 3.40 writes a BLOB's bytes raw into its JSON strings (not UTF-8)."""
    with open(path, encoding="latin-1") as f:
        text = f.read()
    decoder, i, n = json.JSONDecoder(), 0, 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return n
        rows, i = decoder.raw_decode(text, i)
        n += sum(1 for r in rows if "Z_ENT" in r)


def coredata_graph_task(n, tripconv_cmd):
    """The store-reading task (issue 26):
    N objects (.ci/bench/coredata_graph.py: Author, Book, Tag, an ordered to-many and a many-to-many)
    to JSON Lines, one line an object. `tripconv_cmd(src, out)` gives tripconv's command, e.g.
    `lambda src, p: tc(src, "--to", "jsonl", "-o", p)`. The peer is `sqlite3 -json` dumping the entity
    tables and the join table, no relationship resolved (the issue's peer)."""
    from coredata_graph import write
    d = os.path.join(SCRATCH, "data", str(n))
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "graph.store")
    if not os.path.exists(src):
        write(n, src)
    sql = "SELECT * FROM ZAUTHOR; SELECT * FROM ZBOOK; SELECT * FROM ZTAG; SELECT * FROM Z_2TAGS;"
    return Task("store2jsonl", "Core Data store of any model -> JSON Lines", n, src, n, [
        Tool("tripconv", lambda p, src=src: tripconv_cmd(src, p), "jsonl", count_jsonl, role="tripconv"),
        Tool("sqlite3 -json (4 tables, no relationships)", lambda p, src=src: ["sqlite3", "-readonly", "-json", src, sql], "json",
             count_sqlite_json_objects, needs="sqlite3"),
    ], "at least as fast as sqlite3 -json, bounded memory")


# ---------------------------------------------------------------- a plan of another app's model (issue 27)

RECIPES_PLAN = os.path.join(HERE, "..", "..", "samples", "swift-model-recipes", "recipes-plan.json")


def distinct_jsonl_names(path):
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            names.add(json.loads(line)["name"])
    return len(names)


def object_tasks(n, want):
    """Issue 27's speed item: N objects of a model of three entities with references (the recipe book,
    samples/swift-model-recipes, read with its plan) through the general engine, against about N
    SampleTrips objects (trips, bucket-list items, accommodations) through the trip path, in the same
    run: time per object, and the ratio (target <= 1.5x the trip path's)."""
    tasks = []
    if not (want("objects") or want("objplan")):
        return tasks
    src, (objects, chefs, recipes, ingredients, distinct) = recipes_export(n)
    plan = os.path.abspath(RECIPES_PLAN)
    if want("objects"):
        trips_src, trips, trip_objs = trips_of_about(objects, "trips.jsonl", ["--duplicates", "0"])
        tasks.append(Task("objects", "%d recipe objects at 1.0.0 (Chef %d, Recipe %d, Ingredient %d) JSON Lines -> JSON Lines, "
                          "--model recipes-plan.json" % (objects, chefs, recipes, ingredients), n, src, objects, [
            Tool("tripconv --model recipes-plan.json (1.0.0 -> 1.0.0)", lambda p, src=src: tc(
                src, "--model", plan, "--source-version", "1.0.0", "--target-version", "1.0.0", "--to", "jsonl", "-o", p),
                 "jsonl", count_jsonl, role="tripconv", objects=objects),
            Tool("tripconv, SampleTrips trips.jsonl (%d trips = %d objects)" % (trips, trip_objs), lambda p, s=trips_src: tc(
                s, "--to", "jsonl", "-o", p), "jsonl", count_jsonl, role="reference", expected=trips, objects=trip_objs),
        ], "<= 1.5x the trip path's time per object"))
    if want("objplan"):
        dedup_src, trips, trip_objs = trips_of_about(objects, "dedup.jsonl", ["--duplicates", "0.10"])
        v1 = trips_at_version(dedup_src, "1.0.0")
        tasks.append(Task("objplan", "%d recipe objects 1.0.0 -> 3.0.0 (the plan's stages; --dedupe merge of 10 %% repeated titles) "
                          "JSON Lines -> JSON Lines" % objects, n, src, distinct + ingredients, [
            Tool("tripconv --model recipes-plan.json --dedupe merge", lambda p, src=src: tc(
                src, "--model", plan, "--source-version", "1.0.0", "--dedupe", "merge", "--to", "jsonl", "-o", p),
                 "jsonl", count_jsonl, role="tripconv", objects=objects),
            Tool("tripconv, SampleTrips 1.0.0 -> 3.0.0 --dedupe merge (%d trips = %d objects)" % (trips, trip_objs),
                 lambda p, s=v1: tc(s, "--dedupe", "merge", "--to", "jsonl", "-o", p), "jsonl", count_jsonl, role="reference",
                 expected=distinct_jsonl_names(dedup_src), objects=trip_objs),
        ], "<= 1.5x the trip path's time per object"))
    return tasks
