"""What a case is: a writer of files that tripconv reads (forward), or tripconv writing files that
another tool reads (backward). Each case is one summary line."""

import concurrent.futures
import json
import os
import subprocess

from trips import Unflatten, diff, expected, from_nested, show


def set_path(directory, k, ext):
    return os.path.join(directory, "s%05d.%s" % (k, ext))


class Case:
    """One writer (forward) or one reader (backward).

    name         the name `--writers` picks and the summary shows
    repertoire   the characters the files can carry (trips.REPERTOIRES)
    ext          the extension of the files tripconv reads
    to           tripconv's --to
    args         more tripconv options
    tools        programs it needs on PATH; modules: Python modules it needs
    run_key      cases with the same key share one tripconv run over the same files
    """
    repertoire = "any"
    ext = "jsonl"
    to = "jsonl"
    args = ()
    tools = ()
    modules = ()
    note = ""

    @property
    def run_key(self):
        return self.name

    def write(self, items, directory):
        """Writes each (k, trips) of `items` to directory/sKKKKK.ext."""
        for k, trips in items:
            self.write_one(trips, set_path(directory, k, self.ext), k)

    def write_one(self, trips, path, k):
        raise NotImplementedError

    def oracle(self, path, trips, k):
        """The writer's own library reading its file back: None when it gives the trips written, else why
        not (then the harness expects what the writer cannot carry, a harness error)."""
        return None

    def read(self, outdir, keys):
        """Reads tripconv's output of each set: {k: trips or Unflatten}."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# Reading what tripconv wrote, in the forward direction: its JSON Lines, with Python's json.

def read_jsonl_file(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Unflatten("tripconv's JSON Lines output is not UTF-8: %s" % e)
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip() == "":
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise Unflatten("line %d of tripconv's JSON Lines output does not parse: %s: %s" % (n, e, show(line)))
        out.append(obj)
    return out


class Forward(Case):
    """A writer users have; tripconv converts its files to JSON Lines, which Python's json reads."""

    def read(self, outdir, keys):
        results = {}
        for k in keys:
            path = set_path(outdir, k, "jsonl")
            if not os.path.exists(path):
                results[k] = None
                continue
            try:
                results[k] = read_jsonl_file(path)
            except Unflatten as e:
                results[k] = e
        return results


def compare(want_raw, got):
    """None when `got` (a list of trips, an Unflatten, or None for no output) is the expected reading of
    `want_raw`; else why not."""
    if got is None:
        return "no output"
    if isinstance(got, Exception):
        return str(got)
    return diff(expected(want_raw), got)


def check_oracle(case, path, trips, k):
    try:
        return case.oracle(path, trips, k)
    except Exception as e:  # a writer's reader that raises is the same finding as one that differs
        return "%s: %s" % (type(e).__name__, e)


def run_tool(argv, stdin=None, timeout=120):
    """Runs a program; its stdout (bytes), or raises with its stderr."""
    p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if p.returncode != 0:
        raise Unflatten("%s exited %d: %s" % (argv[0], p.returncode,
                                              p.stderr.decode("utf-8", "replace").strip()[:500]))
    return p.stdout


def run_parallel(fn, items, workers=2):
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(fn, items):
            pass


def nested_trips(objs, where):
    return [from_nested(o, "%s trip %d" % (where, i + 1)) for i, o in enumerate(objs)]
