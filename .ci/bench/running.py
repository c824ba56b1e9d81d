"""Running a task's tools, alternating their order from run to run, and the start-up comparison."""
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess

from common import SCRATCH, TRIPCONV
from datasets import generate
from measuring import count_csv, count_jsonl, count_sqlite, measure


# ---------------------------------------------------------------- running

def run_task(task, runs, keep_outputs):
    out = os.path.join(SCRATCH, "out", str(task.n))
    active = []
    for t in task.tools:
        missing = [x for x in ([t.needs] if isinstance(t.needs, str) else t.needs or []) if not shutil.which(x)]
        if missing:
            t.checked = (None, "skipped: %s is not installed" % ", ".join(missing))
            continue
        active.append(t)
    failed = set()
    for r in range(runs):
        order = active if r % 2 == 0 else list(reversed(active))
        for t in order:
            if t in failed:
                continue
            slug = "%s.%s" % (task.key, "".join(ch if ch.isalnum() else "_" for ch in t.label)[:40])
            path = os.path.join(out, slug + "." + t.out_ext)
            if os.path.exists(path):
                os.remove(path)
            if t.clean:
                t.clean()
            run = measure(t.cmd(path), os.path.join(out, slug + ".stdout") if t.writes_o else path,
                          os.path.join(out, slug + ".stderr"))
            t.runs.append(run)
            if run.status != 0:
                t.checked = (False, "exit %d: %s" % (run.status, run.stderr.strip()[:400]))
                failed.add(t)
                continue
            if r == 0 and t.counter:
                try:
                    got, want = t.counter(path), t.expected if t.expected is not None else task.expected
                    ok = got == want
                    t.checked = (ok, "%d %s%s" % (got, "objects" if t.objects and t.role == "tripconv" else "trips",
                                                  "" if ok else " (expected %d)" % want))
                except Exception as e:  # a malformed output is a wrong output
                    t.checked = (False, "unreadable output: %s" % e)
                if not t.checked[0]:
                    failed.add(t)
            elif r == 0:
                t.checked = (True, "ran")
            if r == 0 and t.checked[0] and (t.same_as or any(u.same_as == t.label for u in active)):
                t.digest = digest(path)
            if not keep_outputs and r == runs - 1 and os.path.exists(path):
                os.remove(path)
    for t in active:
        if t.clean and not keep_outputs:
            t.clean()
    compare_outputs(task)


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def compare_outputs(task):
    """A tool whose output must be the same bytes as another's (Tool.same_as): passes only when it is."""
    for t in task.tools:
        if not t.same_as or not t.checked or not t.checked[0]:
            continue
        other = next(u for u in task.tools if u.label == t.same_as)
        if other.digest is None:
            t.checked = (t.checked[0], t.checked[1] + "; not compared (%s has no output)" % other.label)
        elif other.digest == t.digest:
            t.checked = (True, t.checked[1] + "; = %s's output byte for byte" % other.label.split(" (")[0])
        else:
            t.checked = (False, t.checked[1] + "; DIFFERS from %s's output" % other.label.split(" (")[0])


def startup_task(runs):
    """tripconv --version and 3-trip conversions (JSON Lines, CSV, a SQLite store), against jq doing the
    same (the sqlite3 tool for the store): what a script calling tripconv once per file pays each time."""
    from tasks import jq_csv_filter  # tasks imports nothing of this module's
    three = generate(3, "trips.json", "json", ["--duplicates", "0"])
    out = os.path.join(SCRATCH, "out", "3")
    os.makedirs(out, exist_ok=True)
    store, peer_store = os.path.join(out, "startup.sqlite"), os.path.join(out, "startup-peer.sqlite")
    peer_sql = "CREATE TABLE trips(trip); INSERT INTO trips SELECT value FROM json_each(readfile('%s'), '$.trips')" % three
    # (name, tripconv's command, the peer's, counts tripconv's trips (None: nothing to count), a store to remove before each run)
    pairs = [
        ("--version", [TRIPCONV, "--version"], ["jq", "--version"], None, None),
        ("3-trip JSON -> JSON Lines", [TRIPCONV, "-q", three, "--to", "jsonl"], ["jq", "-c", ".trips[]", three], count_jsonl, None),
        ("3-trip JSON -> CSV", [TRIPCONV, "-q", three, "--to", "csv"], ["jq", "-r", jq_csv_filter(".trips[]"), three], count_csv, None),
        ("3-trip JSON -> SQLite", [TRIPCONV, "-q", three, "-o", store], ["sqlite3", peer_store, peer_sql], lambda _: count_sqlite(store),
         (store, peer_store)),
    ]
    results = []
    hf = shutil.which("hyperfine")
    for name, mine, theirs, count, stores in pairs:
        row = {"name": name, "tripconv": None, "jq": None, "peer": theirs[0]}
        timed = {}
        for who, cmd in (("tripconv", mine), ("jq", theirs)):
            if not shutil.which(cmd[0]) and not os.path.exists(cmd[0]):
                continue
            ms = []
            rss = []
            status = 0
            # With hyperfine, these runs only check the command and take its RSS; hyperfine times it.
            for _ in range(3 if hf and runs >= 10 else runs):
                for f in stores or ():
                    if os.path.exists(f):
                        os.remove(f)
                m = measure(cmd, os.path.join(out, "startup.out"), os.path.join(out, "startup.err"))
                status = status or m.status
                ms.append(m.seconds * 1000)
                rss.append(m.rss_kib)
            if status != 0:
                row[who] = {"error": "exit %d" % status}
                continue
            if who == "tripconv" and count is not None:
                got = count(os.path.join(out, "startup.out"))
                if got != 3:
                    row[who] = {"error": "wrote %d trips, expected 3" % got}
                    continue
            row[who] = {"ms": statistics.median(ms), "min_ms": min(ms), "mean_ms": statistics.mean(ms),
                        "rss_kib": statistics.median(rss), "how": "bench.py, /usr/bin/time"}
            timed[who] = cmd
        if hf and runs >= 10 and timed:
            # Both commands in one hyperfine run (tripconv's first), so that the ratio compares like with like.
            jf = os.path.join(out, "hyperfine.json")
            prepare = ["--prepare", "rm -f " + " ".join(shlex.quote(f) for f in stores)] if stores else []
            r = subprocess.run(["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", jf, *prepare,
                                "--output", "null", *[shlex.join(c) for c in timed.values()]], capture_output=True, text=True)
            if r.returncode == 0:
                for who, result in zip(timed, json.load(open(jf))["results"]):
                    row[who].update({"ms": result["median"] * 1000, "min_ms": result["min"] * 1000,
                                     "mean_ms": result["mean"] * 1000, "how": "hyperfine -N"})
        if row["tripconv"] and row["jq"] and "ms" in row["tripconv"] and "ms" in row["jq"]:
            # tripconv's time over the peer's, same run (higher is worse for tripconv, unlike the tasks' ratios).
            row["ratio_min"] = row["tripconv"]["min_ms"] / row["jq"]["min_ms"]
            row["ratio_mean"] = row["tripconv"]["mean_ms"] / row["jq"]["mean_ms"]
        results.append(row)
    return results
