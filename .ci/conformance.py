#!/usr/bin/env python3
"""Feeds every case of ../shared/conformance to the built tripconv under a time and memory limit and
applies the rules of ../shared/conformance/README.md; then hostile archives and compressed inputs
made here (issue 17: bombs, climbing names, links, devices, encrypted, nested, truncated and corrupt),
which must be refused with exit 65 naming the member, writing nothing anywhere. Prints one line per
failure, then `N passed, N failed`; exits non-zero on any failure. The shared suites are skipped,
saying so, where ../shared is absent; the hostile archives always run.

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
    def __init__(self, suite, path, fmt, expect, must_not_contain=(), cwd=None, no_network=False, says=None,
                 output_dir=False, stdin=False):
        self.suite, self.path, self.fmt, self.expect = suite, path, fmt, expect
        self.must_not_contain, self.cwd, self.no_network = list(must_not_contain), cwd, no_network
        # Hostile archives: what the first line of the error must say; whether the run writes to
        # --output-dir (where nothing may land outside it) and reads the case from standard input.
        self.says, self.output_dir, self.stdin = says, output_dir, stdin

    @property
    def name(self):
        if self.suite == "archives":
            return f"archives:{os.path.basename(self.path)}{' on stdin' if self.stdin else ''}{' to --output-dir' if self.output_dir else ''}"
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


def hostile_archives(d):
    """Writes the hostile archives and compressed inputs into d; returns their cases. Each is made by
    Python's tarfile, zipfile and gzip (no tool of ours), and must be refused with exit 65."""
    import gzip, io, tarfile, zipfile
    trips = open(os.path.join(ROOT, "samples/trips-v3.jsonl"), "rb").read()
    out = []

    def case(name, says, **kw):
        out.append(Case("archives", os.path.join(d, name), None, "reject", says=says, **kw))

    def tar(name, members, mode="w"):
        with tarfile.open(os.path.join(d, name), mode) as t:
            for info, data in members:
                t.addfile(info, io.BytesIO(data) if data is not None else None)

    def reg(n, data=trips):
        i = tarfile.TarInfo(n)
        i.size = len(data)
        return i, data

    def special(n, kind, link=""):
        i = tarfile.TarInfo(n)
        i.type, i.linkname = kind, link
        return i, None

    spaces = b" " * (1 << 20)
    # Bombs: 1 GiB of spaces, about 1 MB compressed, as a gzip stream and as a zip member.
    with gzip.open(os.path.join(d, "bomb.jsonl.gz"), "wb", compresslevel=9) as g:
        for _ in range(1024):
            g.write(spaces)
    case("bomb.jsonl.gz", "decompression bomb")
    with zipfile.ZipFile(os.path.join(d, "bomb.zip"), "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("b.jsonl", "w") as f:
            for _ in range(1024):
                f.write(spaces)
    case("bomb.zip", "decompression bomb")
    # Fifield's overlapping members: 400 central-directory entries naming one 4 MiB member's data.
    with zipfile.ZipFile(os.path.join(d, "overlap.zip"), "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("m.jsonl", spaces * 4)
    raw = bytearray(open(os.path.join(d, "overlap.zip"), "rb").read())
    cd = raw.find(b"PK\x01\x02")
    eocd = raw.find(b"PK\x05\x06")
    entry = bytes(raw[cd:eocd])
    entries = b"".join(entry for _ in range(400))
    tail = bytearray(raw[eocd:])
    tail[8:10] = tail[10:12] = (400).to_bytes(2, "little")
    tail[12:16] = len(entries).to_bytes(4, "little")
    tail[16:20] = cd.to_bytes(4, "little")
    open(os.path.join(d, "overlap.zip"), "wb").write(bytes(raw[:cd]) + entries + bytes(tail))
    # libarchive's seekable zip reader keeps one member per data offset, so this reads as one
    # member: accepted (no trips), or refused; never 1.6 GB.
    out.append(Case("archives", os.path.join(d, "overlap.zip"), None, "accept-or-reject"))
    # More members than a zip file's directory may hold in memory.
    with zipfile.ZipFile(os.path.join(d, "many.zip"), "w") as z:
        for i in range(100_001):
            z.writestr("m%d.md" % i, b"")
    case("many.zip", "more than the 100000 read from one file")
    # Names that climb out, checked with --output-dir: nothing may be written outside it.
    tar("slip.tar", [reg("ok.jsonl"), reg("../evil.jsonl")])
    case("slip.tar", "a '..' in a member's name", output_dir=True)
    tar("absolute.tar", [reg("/tmp/tripconv-evil.jsonl")])
    case("absolute.tar", "an absolute path", output_dir=True)
    with zipfile.ZipFile(os.path.join(d, "slip.zip"), "w") as z:
        z.writestr("../../evil.jsonl", trips)
    case("slip.zip", "a '..' in a member's name", output_dir=True)
    case("slip.zip", "a '..' in a member's name", output_dir=True, stdin=True)
    # Links, devices and FIFOs.
    tar("symlink.tar", [reg("ok.jsonl"), special("link.jsonl", tarfile.SYMTYPE, "/etc/passwd")])
    case("symlink.tar", "a symbolic link", output_dir=True)
    tar("hardlink.tar", [reg("ok.jsonl"), special("hard.jsonl", tarfile.LNKTYPE, "ok.jsonl")])
    case("hardlink.tar", "a hard link")
    tar("fifo.tar", [special("f.jsonl", tarfile.FIFOTYPE)])
    case("fifo.tar", "a device, FIFO or socket")
    tar("device.tar", [special("c.jsonl", tarfile.CHRTYPE)])
    case("device.tar", "a device, FIFO or socket")
    with zipfile.ZipFile(os.path.join(d, "symlink.zip"), "w") as z:
        info = zipfile.ZipInfo("l.jsonl")
        info.create_system, info.external_attr = 3, 0o120777 << 16
        z.writestr(info, "/etc/passwd")
    case("symlink.zip", "a symbolic link")
    # Encrypted (the flag set in the local and central headers).
    with zipfile.ZipFile(os.path.join(d, "encrypted.zip"), "w") as z:
        z.writestr("e.jsonl", trips)
    raw = bytearray(open(os.path.join(d, "encrypted.zip"), "rb").read())
    raw[6] |= 1
    raw[raw.find(b"PK\x01\x02") + 8] |= 1
    open(os.path.join(d, "encrypted.zip"), "wb").write(bytes(raw))
    case("encrypted.zip", "encrypted, not supported")
    # A zip on standard input is read as it streams: its symbolic link is read as a file holding
    # the target's name (never followed), or refused.
    out.append(Case("archives", os.path.join(d, "symlink.zip"), None, "accept-or-reject", stdin=True))
    # A name in Latin-1 bytes (GNU tar): read, the name shown with U+FFFD, or refused.
    with tarfile.open(os.path.join(d, "latin1-name.tar"), "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as t:
        info = tarfile.TarInfo("Troms\u00f8/trips.jsonl")
        info.size = len(trips)
        t.addfile(info, io.BytesIO(trips))
    out.append(Case("archives", os.path.join(d, "latin1-name.tar"), None, "accept-or-reject"))
    # 42.zip's first step: an archive inside an archive.
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("t.jsonl", trips)
    with zipfile.ZipFile(os.path.join(d, "nested.zip"), "w") as z:
        z.writestr("inner.zip", inner.getvalue())
    case("nested.zip", "an archive inside an archive")
    # Truncated and corrupt.
    tar("plain.tar", [reg("a.jsonl", trips * 200), reg("b.jsonl")])
    g = gzip.compress(open(os.path.join(d, "plain.tar"), "rb").read())
    open(os.path.join(d, "truncated.tar.gz"), "wb").write(g[: len(g) // 2])
    case("truncated.tar.gz", "gzip data ends early, at byte ")
    flipped = bytearray(g)
    flipped[len(g) // 2] ^= 0x55
    open(os.path.join(d, "corrupt.tar.gz"), "wb").write(bytes(flipped))
    case("corrupt.tar.gz", "")
    raw = open(os.path.join(d, "plain.tar"), "rb").read()
    open(os.path.join(d, "truncated.tar"), "wb").write(raw[:2048])
    case("truncated.tar", "")
    with zipfile.ZipFile(os.path.join(d, "crc.zip"), "w") as z:
        z.writestr("c.jsonl", trips)
    raw = bytearray(open(os.path.join(d, "crc.zip"), "rb").read())
    raw[40] ^= 0xFF
    open(os.path.join(d, "crc.zip"), "wb").write(bytes(raw))
    case("crc.zip", "ZIP bad CRC")
    case("crc.zip", "ZIP bad CRC", stdin=True)
    return out


def run(binary, case, unshare):
    tmp = tempfile.mkdtemp(prefix="tripconv-conf-")
    try:
        output = os.path.join(tmp, "out.jsonl")
        if case.suite == "archives":
            target = ["--output-dir", os.path.join(tmp, "out")] if case.output_dir else ["-o", output]
            cmd = [binary, "convert", "--to", "jsonl"] + ([] if case.stdin else [case.path]) + target
        else:
            cmd = [binary, "convert", "--from", case.fmt, "--to", "jsonl", case.path, "-o", output]
        if case.no_network and unshare:
            cmd = ["unshare", "-rn"] + cmd
        start = time.monotonic()
        stdin = open(case.path, "rb") if case.stdin else subprocess.DEVNULL
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin,
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
        if case.stdin:
            stdin.close()
        produced = open(output, "rb").read() if os.path.exists(output) else None
        leftovers = [f for f in os.listdir(tmp) if f != "out.jsonl"]
        if case.output_dir:
            # The output directory may hold what came before the refusal; nothing may be elsewhere.
            written = [os.path.relpath(os.path.join(r, f), tmp) for r, _, fs in os.walk(tmp) for f in fs]
            outside = [w for w in written if not w.startswith("out/")]
            outside += [p for p in ("/tmp/tripconv-evil.jsonl",) if os.path.exists(p)]
            if outside:
                return f"written outside --output-dir: {outside}"
            leftovers = [f for f in leftovers if f != "out"]
            # A bulk run ends with its count of inputs converted and failed.
            stderr = "\n".join(l for l in stderr.splitlines() if not l.startswith("tripconv: converted "))
        verdict = judge(case, status, stdout, stderr, produced, leftovers, timed_out, elapsed)
        if verdict is None and case.says is not None:
            first = stderr.splitlines()[0] if stderr else ""
            names = os.path.basename(case.path) if not case.stdin else "<stdin>"
            if names not in first or case.says not in first:
                return f"the error must name the input and say {case.says!r}: {first!r}"
        return verdict
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
    binary = find_binary(args.bin)
    unshare = can_unshare()
    made = tempfile.mkdtemp(prefix="tripconv-hostile-")
    all_cases = hostile_archives(made)
    if os.path.isdir(conformance):
        all_cases += cases(args.shared)
    else:
        print(f"conformance: {conformance} is absent; its suites are skipped (the hostile archives made here still run)")
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
    shutil.rmtree(made, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
