#!/usr/bin/env python3
"""Peer for JSON -> SQLite store: sqlite-utils (the library behind `sqlite-utils insert`) inserting
trips, bucket-list items and accommodations into their own tables, with the child rows pointing at
their trip's id, in one transaction (insert_all batches).

    peer_sqlite_utils.py IN.json OUT.db"""
import json
import os
import sys

import sqlite_utils


def main():
    src, dst = sys.argv[1], sys.argv[2]
    if os.path.exists(dst):
        os.remove(dst)
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    trips = doc["trips"] if isinstance(doc, dict) else doc
    db = sqlite_utils.Database(dst)
    rows, items, places = [], [], []
    for i, t in enumerate(trips, 1):
        rows.append({"id": i, "name": t["name"], "destination": t["destination"],
                     "startDate": t["startDate"], "endDate": t["endDate"]})
        for p, b in enumerate(t.get("bucketList") or []):
            items.append({"trip_id": i, "position": p, **b})
        a = t.get("livingAccommodation")
        if a:
            places.append({"trip_id": i, **a})
    with db.conn:
        db["trips"].insert_all(rows, pk="id", batch_size=1000)
        db["bucket_list_items"].insert_all(items, foreign_keys=[("trip_id", "trips", "id")], batch_size=1000)
        db["living_accommodations"].insert_all(places, foreign_keys=[("trip_id", "trips", "id")], batch_size=1000)
    print("trips %d" % len(rows))


main()
