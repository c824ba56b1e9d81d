"""Measuring a run (wall time, peak RSS, exit status) and checking what it wrote (how many trips)."""
import csv
import json
import os
import sqlite3
import subprocess
import time

csv.field_size_limit(1 << 30)


# ---------------------------------------------------------------- measuring

class Run:
    def __init__(self, seconds, rss_kib, status, stderr):
        self.seconds, self.rss_kib, self.status, self.stderr = seconds, rss_kib, status, stderr


GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def measure(cmd, stdout_path, stderr_path):
    """Runs cmd with stdout to a file: wall seconds, peak RSS (KiB), exit status, stderr.

    Peak RSS comes from GNU time's %M (the child's rusage): the rusage that os.wait4 gives a child
    forked from this Python process counts Python's own pages held before the exec (~20 MiB), which
    would hide the small figures. Without /usr/bin/time, wait4's figure is used and says so."""
    rss_path = stderr_path + ".rss"
    full = [GNU_TIME, "-f", "%M", "-o", rss_path, *cmd] if GNU_TIME else cmd
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss
    if GNU_TIME:
        with open(rss_path) as f:
            lines = f.read().split()
        # GNU time writes "Command exited with non-zero status N" before %M when the child fails.
        rss = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    with open(stderr_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return Run(seconds, rss, code, text)


# ---------------------------------------------------------------- checking outputs

def count_jsonl(path):
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                json.loads(line)
                n += 1
    return n


def count_json(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        doc = doc.get("trips")
    if not isinstance(doc, list):
        raise ValueError("no list of trips")
    return len(doc)


def count_csv(path):
    with open(path, encoding="utf-8", newline="") as f:
        rows = sum(1 for row in csv.reader(f) if row)
    return rows - 1  # the header


def count_sqlite(path):
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT count(*) FROM trips").fetchone()[0]
    finally:
        db.close()


def count_rows_line(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for word in text.split("\n"):
        if word.startswith("rows "):
            return int(word.split()[1])
    raise ValueError("no 'rows N' line")


COUNTERS = {"jsonl": count_jsonl, "json": count_json, "csv": count_csv, "sqlite": count_sqlite,
            "none": None}
