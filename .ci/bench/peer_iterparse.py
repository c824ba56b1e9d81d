#!/usr/bin/env python3
"""Peer for XML -> JSON: python3's ElementTree iterparse, streaming, a trip at a time.

    peer_iterparse.py IN.xml > OUT.json

Writes the same shape tripconv writes ({"schemaVersion": ..., "trips": [...]}, one trip per line),
with the booleans typed and each trip element cleared once written."""
import json
import sys
import xml.etree.ElementTree as ET

BOOLS = {"hasReservation", "isInPlan"}


def value(e):
    if e.tag in BOOLS:
        return e.text == "true"
    return e.text or ""


def trip(e):
    t = {}
    for c in e:
        if len(c):
            if c.tag == "bucketList":
                t[c.tag] = [{g.tag: value(g) for g in item} for item in c]
            else:
                t[c.tag] = {g.tag: value(g) for g in c}
        elif c.tag == "bucketList":
            t[c.tag] = []
        else:
            t[c.tag] = value(c)
    return t


def main():
    out = sys.stdout
    first = True
    version = "3.0.0"
    depth = 0
    root = None
    for event, e in ET.iterparse(sys.argv[1], events=("start", "end")):
        if event == "start":
            depth += 1
            if depth == 1:
                root = e
                version = e.get("schemaVersion", version)
                out.write('{"schemaVersion": %s, "trips": [\n' % json.dumps(version))
            continue
        depth -= 1
        if depth == 1 and e.tag == "trip":
            if not first:
                out.write(",\n")
            first = False
            out.write(json.dumps(trip(e), ensure_ascii=False))
            root.clear()  # drops the written trip (and any before it) from the tree
    out.write("\n]}\n")


main()
