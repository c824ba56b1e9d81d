#!/usr/bin/env python3
"""Makes the compressed and archived samples (issue 17) with Python's own gzip and tarfile, never
tripconv's writers, with fixed times and owners so the same script gives the same bytes:

  compressed-v1.json.gz   trips-v1.json as gzip keeps it (a legacy export compressed on its server)
  backup-2021.tar.gz      a backup of mixed exports: 2019/trips.json (1.0.0 JSON), 2020/trips.csv
                          (2.0.0 CSV, no marker), 2020/late.jsonl.gz (a compressed member, 2.0.0),
                          2021/trips.xml (3.0.0 XML), 2021/trips.yaml (1.0.0 YAML), and a README.txt
                          and a macOS ._ file that are passed over

usage: python3 samples/make-archives.py   (from the repository's root)
"""
import gzip
import io
import os
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))


def sample(name):
    return open(os.path.join(HERE, name), "rb").read()


def gzipped(data):
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as g:
        g.write(data)
    return out.getvalue()


open(os.path.join(HERE, "compressed-v1.json.gz"), "wb").write(gzipped(sample("trips-v1.json")))

members = [
    ("backup/2019/trips.json", sample("trips-v1.json")),
    ("backup/2020/trips.csv", sample("trips-v2.csv")),
    ("backup/2020/late.jsonl.gz", gzipped(sample("trips-v2.jsonl"))),
    ("backup/2021/trips.xml", sample("trips-v3.xml")),
    ("backup/2021/trips.yaml", sample("trips-v1.yaml")),
    ("backup/README.txt", b"Trips exported from the app, one folder a year.\n"),
    ("backup/2021/._trips.xml", b"\x00\x05\x16\x07 macOS metadata"),
]
tar = io.BytesIO()
with tarfile.open(fileobj=tar, mode="w", format=tarfile.PAX_FORMAT) as t:
    for directory in ["backup", "backup/2019", "backup/2020", "backup/2021"]:
        info = tarfile.TarInfo(directory)
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1609459200
        t.addfile(info)
    for name, data in members:
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), 0o644, 1609459200
        t.addfile(info, io.BytesIO(data))
open(os.path.join(HERE, "backup-2021.tar.gz"), "wb").write(gzipped(tar.getvalue()))
