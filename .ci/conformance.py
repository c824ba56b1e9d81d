#!/usr/bin/env python3
"""Feeds every case of ../shared/conformance to the built tripconv under a time and memory limit and
applies the rules of ../shared/conformance/README.md. Prints one line per failure, then
`N passed, N failed`; exits non-zero on any failure. Skips, saying so, where ../shared is absent.

usage: .ci/conformance.py [--bin PATH] [--shared DIR] [--jobs N]
"""
import argparse, concurrent.futures, json, os, resource, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME_LIMIT = 10.0
RSS_LIMIT_KB = 500 * 1024


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=None)
    p.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    return p.parse_args()


def find_binary(explicit):
    for b in [explicit, os.path.join(ROOT, ".build/debug/tripconv"), os.path.join(ROOT, ".build/release/tripconv")]:
        if b and os.access(b, os.X_OK):
            return b
    sys.exit("conformance: no built tripconv; run swift build first")


def can_unshare():
    try:
        return subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=5).returncode == 0
    except Exception:
        return False


class Case:
    def __init__(self, suite, path, fmt, expect, must_not_contain=(), cwd=None, no_network=False):
        self.suite, self.path, self.fmt, self.expect = suite, path, fmt, expect
        self.must_not_contain, self.cwd, self.no_network = list(must_not_contain), cwd, no_network

    @property
    def name(self):
        return f"{self.suite}:{os.path.basename(os.path.dirname(self.path)) + '/' if self.suite == 'yaml' else ''}{os.path.basename(self.path)} as {self.fmt}"


def cases(shared):
    c = os.path.join(shared, "conformance")
    out = []
    jdir = os.path.join(c, "JSONTestSuite/test_parsing")
    for f in sorted(os.listdir(jdir)):
        kind = {"n": "reject", "y": "shape-or-empty", "i": "no-crash"}[f[0]]
        out.append(Case("json", os.path.join(jdir, f), "json", kind))
        # The JSON Lines reader is a separate path: every file as one-line documents must not crash.
        out.append(Case("json", os.path.join(jdir, f), "jsonl", "no-crash" if kind != "reject" else "reject-or-no-crash"))
    for f in sorted(os.listdir(os.path.join(c, "csv-spectrum/csvs"))):
        out.append(Case("csv", os.path.join(c, "csv-spectrum/csvs", f), "csv", "reject"))
    for suite in ["commons-csv", "csvlint"]:
        for e in json.load(open(os.path.join(c, suite, "EXPECTATIONS.json"))):
            fmt = "tsv" if e["file"].endswith(".tsv") else "csv"
            out.append(Case("csv", os.path.join(c, suite, e["file"]), fmt, "reject"))
    ydir = os.path.join(c, "yaml-test-suite/cases")
    for d in sorted(os.listdir(ydir)):
        base = os.path.join(ydir, d)
        subdirs = [base] if os.path.exists(os.path.join(base, "in.yaml")) else [os.path.join(base, s) for s in sorted(os.listdir(base))]
        for s in subdirs:
            if os.path.exists(os.path.join(s, "in.yaml")):
                out.append(Case("yaml", os.path.join(s, "in.yaml"), "yaml", "reject-or-empty"))
    for e in json.load(open(os.path.join(c, "libxml2/manifest.json"))):
        p = os.path.join(c, "libxml2", e["file"])
        expect = {"reject": "reject", "either": "no-crash"}.get(e["expect"], "reject-or-empty")
        if e["file"].startswith("entity-expansion/"):
            expect = "reject-or-empty"
        out.append(Case("xml", p, "xml", expect, cwd=os.path.dirname(p), no_network=True))
    for e in json.load(open(os.path.join(c, "attacks/manifest.json"))):
        p = os.path.join(c, "attacks", e["file"])
        fmt = "xml" if p.endswith(".xml") else "yaml"
        expect = {"reject": "reject", "reject-or-no-leak": "reject-or-no-leak",
                  "accept-without-fetch-or-reject": "accept-or-reject", "reject-or-accept": "reject-or-empty",
                  "reject-or-bounded": "reject-or-empty", "reject-or-accept-as-strings": "reject-or-empty"}[e["expect"]]
        out.append(Case("attacks", p, fmt, expect, e.get("must_not_contain", []), cwd=os.path.dirname(p), no_network=True))
    return out


def run(binary, case, unshare):
    tmp = tempfile.mkdtemp(prefix="tripconv-conf-")
    try:
        output = os.path.join(tmp, "out.jsonl")
        cmd = [binary, "convert", "--from", case.fmt, "--to", "jsonl", case.path, "-o", output]
        if case.no_network and unshare:
            cmd = ["unshare", "-rn"] + cmd
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             cwd=case.cwd or ROOT, start_new_session=True)
        try:
            stdout, stderr = p.communicate(timeout=TIME_LIMIT)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            stdout, stderr = p.communicate()
            timed_out = True
        elapsed = time.monotonic() - start
        status = p.returncode
        stderr = stderr.decode("utf-8", "replace")
        produced = open(output, "rb").read() if os.path.exists(output) else None
        leftovers = [f for f in os.listdir(tmp) if f != "out.jsonl"]
        return judge(case, status, stdout, stderr, produced, leftovers, timed_out, elapsed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def judge(case, status, stdout, stderr, produced, leftovers, timed_out, elapsed):
    if timed_out:
        return f"hang: over {TIME_LIMIT:.0f} s"
    if status is None or status < 0 or status >= 128:
        return f"crash: exit status {status}"
    if "Fatal error" in stderr or "Stack dump" in stderr or "Current stack trace" in stderr:
        return "crash: a fatal error or stack trace on stderr"
    if leftovers:
        return f"temporary files left behind: {leftovers}"
    lines = [l for l in stderr.splitlines() if l]
    clean = (0 < status < 128 and lines and lines[0].startswith("tripconv: ")
             and all(l.startswith("note: ") for l in lines[1:]) and not stdout and produced is None)
    accepted_empty = status == 0 and (produced is None or produced.strip() == b"")
    for s in case.must_not_contain:
        if (produced and s.encode() in produced) or s in stderr:
            return f"leak: output contains {s!r}"
    if produced is not None and status == 0:
        try:
            produced.decode("utf-8")
        except UnicodeDecodeError:
            return "output is not valid UTF-8"
    e = case.expect
    if e == "reject":
        if status != 65:
            return f"must be rejected with exit 65, got {status}: {lines[:1]}"
        return None if clean else f"not a clean rejection: {lines[:3]}"
    if e in ("shape-or-empty", "reject-or-empty", "reject-or-no-leak"):
        if accepted_empty or (clean and status == 65):
            return None
        return f"neither a clean rejection nor zero trips: exit {status}, {lines[:2]}"
    if e == "accept-or-reject":
        return None if status == 0 or clean else f"unclean: exit {status}, {lines[:2]}"
    if e in ("no-crash", "reject-or-no-crash"):
        return None
    return f"unknown expectation {e}"


def main():
    args = parse_args()
    conformance = os.path.join(args.shared, "conformance")
    if not os.path.isdir(conformance):
        print(f"conformance: {conformance} is absent; skipped")
        return 0
    binary = find_binary(args.bin)
    unshare = can_unshare()
    all_cases = cases(args.shared)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for case, verdict in zip(all_cases, pool.map(lambda c: run(binary, c, unshare), all_cases)):
            if verdict:
                failed += 1
                print(f"FAIL {case.name}: {verdict}")
    # Peak memory of any one run: the children's high-water mark.
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kb > RSS_LIMIT_KB:
        failed += 1
        print(f"FAIL memory: a run reached {peak_kb // 1024} MB, over {RSS_LIMIT_KB // 1024} MB")
    print(f"conformance: peak RSS of any run {peak_kb // 1024} MB; network namespace {'on' if unshare else 'unavailable'}")
    print(f"{len(all_cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
