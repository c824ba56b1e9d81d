"""The data sets: tripgen's exports, cached under .build-bench/data/N/, and what peers need made of them."""
import itertools
import json
import os
import shutil
import sqlite3
import struct
import subprocess

from common import SCRATCH, TRIPGEN, log, tc


# ---------------------------------------------------------------- data sets

def run_checked(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()[:500]))
    return r


def generate(n, name, fmt, extra=()):
    d = os.path.join(SCRATCH, "data", str(n))
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name)
    if not os.path.exists(path):
        tmp = path + ".part." + fmt
        run_checked([TRIPGEN, "--trips", str(n), "--seed", "1", "--to", fmt, "-o", tmp, *extra])
        os.replace(tmp, path)
    return path


def compressed(plain, tool):
    """PLAIN compressed by gzip (-6, the default) or zstd (-3, the default) beside it; None when the
    compressor is not installed."""
    path = plain + {"gzip": ".gz", "zstd": ".zst"}[tool]
    if not os.path.exists(path):
        if not shutil.which(tool):
            return None
        with open(path + ".part", "wb") as out:
            r = subprocess.run([tool, "-n", "-6", "-c", plain] if tool == "gzip" else [tool, "-3", "-q", "-c", plain],
                               stdout=out, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s %s: exit %d: %s" % (tool, plain, r.returncode, r.stderr.strip()[:300]))
        os.replace(path + ".part", path)
    return path


ARCHIVE_FORMATS = ("json", "jsonl", "csv", "xml", "yaml")
ARCHIVE_VERSIONS = ("3.0.0", "2.0.0", "1.0.0")


def mixed_archive(n, files, formats):
    """A .tar.gz of FILES small exports holding the N trips of trips.jsonl between them, in turn in each
    of FORMATS and each of schema 3.0.0, 2.0.0 and 1.0.0 (tripconv --target-version);
    ten folders, members in name order. Made once (about a minute at 1M) and cached."""
    d = os.path.join(SCRATCH, "data", str(n))
    path = os.path.join(d, "mixed-%d-%s.tar.gz" % (files, "-".join(formats)))
    if os.path.exists(path):
        return path
    src = generate(n, "trips.jsonl", "jsonl", ["--duplicates", "0"])
    work = os.path.join(d, "mixed.part")
    shutil.rmtree(work, ignore_errors=True)
    piece = os.path.join(work, "piece.jsonl")
    with open(src, encoding="utf-8") as lines:
        for i in range(files):
            fmt = formats[i % len(formats)]
            version = ARCHIVE_VERSIONS[i % len(ARCHIVE_VERSIONS)]  # 3 and 5 formats: every pair in 15 files
            folder = os.path.join(work, "exports", "batch-%02d" % (i * 10 // files))
            os.makedirs(folder, exist_ok=True)
            with open(piece, "w", encoding="utf-8") as f:
                f.writelines(itertools.islice(lines, (i + 1) * n // files - i * n // files))
            member = os.path.join(folder, "export-%04d-v%s.%s" % (i, version[0], fmt))
            run_checked(tc(piece, "--to", fmt, "--target-version", version, "-o", member))
    os.remove(piece)
    run_checked(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0",
                 "-czf", path + ".part", "-C", work, "exports"])
    shutil.rmtree(work)
    os.replace(path + ".part", path)
    return path


def bare_array(wrapped):
    """tripconv's JSON writer puts one trip per line between a header line and `]}`: the same trips
    as a bare JSON array, for the peers that want one (Miller)."""
    path = wrapped.replace(".json", ".array.json")
    if not os.path.exists(path):
        with open(wrapped, encoding="utf-8") as f, open(path + ".part", "w", encoding="utf-8") as out:
            first = f.readline()
            assert first.startswith("{") and first.rstrip().endswith("["), first[:80]
            out.write("[\n")
            for line in f:
                out.write("]\n" if line.startswith("]}") else line)
        os.replace(path + ".part", path)
    return path


def distinct_names(wrapped):
    cache = wrapped + ".names"
    if os.path.exists(cache):
        return int(open(cache).read())
    names = set()
    with open(wrapped, encoding="utf-8") as f:
        f.readline()
        for line in f:
            line = line.rstrip("\n").rstrip(",")
            if line.startswith("{"):
                names.add(json.loads(line)["name"])
    open(cache, "w").write(str(len(names)))
    return len(names)


def tripconv_can(fmt):
    """Whether this build writes (and so reads) FORMAT; yaml may not be implemented yet."""
    d = os.path.join(SCRATCH, "probe")
    os.makedirs(d, exist_ok=True)
    r = subprocess.run([TRIPGEN, "--trips", "1", "--to", fmt, "-o", os.path.join(d, "one." + fmt)],
                       capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def cinsert_inputs(n, src, out):
    """Dumps the rows of tripconv's store for `src` into cinsert's input files (outside any timing)."""
    d = os.path.join(SCRATCH, "data", str(n))
    schema, inserts, rows = (os.path.join(d, "cinsert." + x) for x in ("schema.sql", "inserts.sql", "rows.bin"))
    if os.path.exists(rows):
        return schema, inserts, rows, None
    store = os.path.join(out, "cinsert-source.sqlite")
    if os.path.exists(store):
        os.remove(store)
    r = subprocess.run(tc(src, "-o", store), capture_output=True, text=True)
    if r.returncode != 0:
        log("  (no C probe: tripconv could not write the store: %s)" % r.stderr.strip()[:300])
        return None
    db = sqlite3.connect(store)
    ddl = [s for (s,) in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")]
    stmts, count = [], 0
    with open(rows + ".part", "wb") as f:
        for k, table in enumerate(tables):
            cols = [c[1] for c in db.execute('PRAGMA table_info("%s")' % table)]
            stmts.append('INSERT INTO "%s" (%s) VALUES (%s)' % (
                table, ", ".join('"%s"' % c for c in cols), ", ".join("?" * len(cols))))
            for row in db.execute('SELECT * FROM "%s" ORDER BY rowid' % table):
                f.write(struct.pack("<BB", k, len(row)))
                for v in row:
                    if v is None:
                        t, b = b"n", b""
                    elif isinstance(v, int):
                        t, b = b"i", str(v).encode()
                    elif isinstance(v, float):
                        t, b = b"f", repr(v).encode()
                    elif isinstance(v, str):
                        t, b = b"t", v.encode("utf-8")
                    else:
                        t, b = b"b", bytes(v)
                    f.write(t + struct.pack("<I", len(b)) + b)
                count += 1
    db.close()
    with open(schema, "w", encoding="utf-8") as f:
        f.write(";\n".join(ddl) + ";\n")
    with open(inserts, "w", encoding="utf-8") as f:
        f.write("\n".join(stmts) + "\n")
    os.replace(rows + ".part", rows)
    return schema, inserts, rows, count


# ---------------------------------------------------------------- objects of another model (issue 27)

def recipes_export(n):
    """The recipe book at 1.0.0 (samples/swift-model-recipes: Chef, Recipe, Ingredient), about N objects
    as JSON Lines, written by recipes_data.py; returns (path, (objects, chefs, recipes, ingredients,
    distinct titles))."""
    import recipes_data
    d = os.path.join(SCRATCH, "data", str(n))
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "recipes-v1.jsonl")
    if not os.path.exists(path):
        recipes_data.write(n, path)
    return path, recipes_data.counts(path)


def trip_objects(path):
    """The objects in tripgen's JSON Lines: each trip, its bucket-list items and its living accommodation
    (the three entities of SampleTrips' model), cached beside the file."""
    cache = path + ".objects"
    if not os.path.exists(cache):
        n = 0
        with open(path, encoding="utf-8") as f:
            for line in f:
                t = json.loads(line)
                n += 1 + len(t.get("bucketList") or ()) + (t.get("livingAccommodation") is not None)
        with open(cache, "w") as f:
            f.write(str(n))
    return int(open(cache).read())


def trips_of_about(objects, name, extra):
    """tripgen's JSON Lines (NAME, with EXTRA options) holding about OBJECTS objects (trips, items,
    accommodations): the trip count is told from a 1,000-trip sample; returns (path, trips, objects)."""
    sample = generate(1000, "trips.jsonl", "jsonl", ["--duplicates", "0"])
    trips = max(1, round(objects * 1000 / trip_objects(sample)))
    path = generate(trips, name, "jsonl", extra)
    return path, trips, trip_objects(path)


def trips_at_version(path, version):
    """PATH (trips at 3.0.0) written by tripconv at VERSION beside it (untimed), cached."""
    out = path.replace(".jsonl", "-v%s.jsonl" % version[0])
    if not os.path.exists(out):
        run_checked(tc(path, "--to", "jsonl", "--target-version", version, "-o", out + ".part.jsonl"))
        os.replace(out + ".part.jsonl", out)
    return out
