"""What the benchmark's modules share: where the tree, the scratch directory and the binaries are, and
the log. The binaries are .build/release's, or those of the directory TRIPCONV_BENCH_BIN names (bench.py
--bin sets it: a build made with another --scratch-path)."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCRATCH = os.path.join(ROOT, ".build-bench")
BIN = os.path.abspath(os.environ.get("TRIPCONV_BENCH_BIN") or os.path.join(ROOT, ".build", "release"))
TRIPCONV = os.path.join(BIN, "tripconv")
TRIPGEN = os.path.join(BIN, "tripgen")
MAX_ITEMS = 5  # tripgen writes 0-5 bucket-list items per trip


def log(msg=""):
    print(msg, flush=True)


def tc(*args):
    return [TRIPCONV, "-q", *args]
