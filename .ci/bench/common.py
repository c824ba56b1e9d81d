"""What the benchmark's modules share: where the tree, the scratch directory and the binaries are, and
the log."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCRATCH = os.path.join(ROOT, ".build-bench")
TRIPCONV = os.path.join(ROOT, ".build", "release", "tripconv")
TRIPGEN = os.path.join(ROOT, ".build", "release", "tripgen")
MAX_ITEMS = 5  # tripgen writes 0-5 bucket-list items per trip


def log(msg=""):
    print(msg, flush=True)


def tc(*args):
    return [TRIPCONV, "-q", *args]
