"""The PostgreSQL benchmark's inputs, made from tripgen's JSON by Python alone (not by tripconv), so the
peers load rows that tripconv had no hand in (issue 16).

    python3 .ci/bench/pg_data.py trips.json OUTDIR [--shards 4] [--shared 0.10]

Writes into OUTDIR:
- trips.csv, bucket_list_items.csv, living_accommodations.csv: the rows of a 3.0.0 store, with explicit
  ids (trips numbered 1.. in input order, items and accommodations numbered 1.. in the order met) and
  trip_id; every field quoted (so an empty string is never read as NULL), no header, LF between rows
  (a CR or LF inside a field is quoted). Items' position counts from 0, as tripconv's stores do.
- shard-K.json (K = 0..shards-1): the input cut into consecutive slices; in shard K, every trip whose
  index in the shard is a multiple of 1/shared (every 10th) takes the name of the next trip in shard K+1
  (cyclically), which keeps its own: `shared` of every shard's names also occur in another shard.
  all.json: the shards concatenated, in order (the single loader's input).
Prints one JSON object: the row counts, and the shards' trips, distinct names and their name_sum.

`normalized` and `check_jsonl` check an export against the JSON it came from: the same trips, fields and
order of items, dates compared to the millisecond whatever their spelling.
"""
import argparse, csv, hashlib, json, os, sys


def rows_of(trips):
    """The three tables' rows, in the order a loader meeting the trips in order would number them."""
    trip_rows, item_rows, acc_rows = [], [], []
    for trip_id, t in enumerate(trips, 1):
        trip_rows.append((trip_id, t["name"], t["destination"], t["startDate"], t["endDate"]))
        for position, i in enumerate(t.get("bucketList") or []):
            item_rows.append((len(item_rows) + 1, trip_id, position, i["title"], i.get("details", ""),
                              "true" if i.get("hasReservation") else "false", "true" if i.get("isInPlan") else "false"))
        a = t.get("livingAccommodation")
        if a is not None:
            acc_rows.append((len(acc_rows) + 1, trip_id, a.get("address", ""), a.get("placeName", "")))
    return trip_rows, item_rows, acc_rows


def write_csv(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerows(rows)


def write_json(path, version, trips):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"schemaVersion": version, "trips": []}, ensure_ascii=False)[:-2])
        for n, t in enumerate(trips):
            f.write((",\n" if n else "\n") + json.dumps(t, ensure_ascii=False))
        f.write("\n]}\n")


def shards_of(trips, count, shared):
    """`count` consecutive slices; in each, every round(1/shared)-th trip renamed after a trip of the next."""
    size = -(-len(trips) // count)
    slices = [[dict(t) for t in trips[k * size:(k + 1) * size]] for k in range(count)]
    step = max(1, round(1 / shared)) if shared > 0 else 0
    if step and count > 1:
        for k, mine in enumerate(slices):
            theirs = slices[(k + 1) % count]
            for i in range(0, len(mine), step):
                if i + 1 < len(theirs):
                    mine[i]["name"] = theirs[i + 1]["name"]  # index i+1 is never renamed itself (step > 1)
    return slices


def prepare(src, out, shards=4, shared=0.10):
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    trips, version = doc["trips"], doc.get("schemaVersion", "3.0.0")
    os.makedirs(out, exist_ok=True)
    trip_rows, item_rows, acc_rows = rows_of(trips)
    write_csv(os.path.join(out, "trips.csv"), trip_rows)
    write_csv(os.path.join(out, "bucket_list_items.csv"), item_rows)
    write_csv(os.path.join(out, "living_accommodations.csv"), acc_rows)
    info = {"trips": len(trip_rows), "items": len(item_rows), "accommodations": len(acc_rows),
            "distinct_names": len({t["name"] for t in trips})}
    del trip_rows, item_rows, acc_rows
    if shards:
        slices = shards_of(trips, shards, shared)
        for k, s in enumerate(slices):
            write_json(os.path.join(out, "shard-%d.json" % k), version, s)
        everything = [t for s in slices for t in s]
        write_json(os.path.join(out, "all.json"), version, everything)
        info["shard_trips"] = [len(s) for s in slices]
        names = {t["name"] for t in everything}
        info["shards_distinct_names"], info["shards_name_sum"] = len(names), name_sum(names)
    return info


def name_sum(names):
    """pg_sql.NAME_SUM in Python: the sum over the names of the first 60 bits of each one's md5."""
    return sum(int(hashlib.md5(n.encode("utf-8")).hexdigest()[:15], 16) for n in names)


def _date(s):
    """`2024-05-01T10:00:00Z`, `…00.000Z` and `…00.5Z` spell the same instant: normalized to `…00.000Z`."""
    body = s[:-1] if s.endswith("Z") else s
    whole, _, fraction = body.partition(".")
    return whole + "." + (fraction + "000")[:3] + "Z"


def normalized(t):
    """A trip as a hashable value: its fields, items in order, accommodation (missing when null)."""
    items = tuple((i["title"], i.get("details", ""), bool(i.get("hasReservation")), bool(i.get("isInPlan")))
                  for i in t.get("bucketList") or [])
    a = t.get("livingAccommodation")
    return (t["name"], t["destination"], _date(t["startDate"]), _date(t["endDate"]), items,
            None if a is None else (a.get("address", ""), a.get("placeName", "")))


def reference(src):
    """The trips of a JSON input by name (the names are unique: the bench's inputs have no duplicates)."""
    with open(src, encoding="utf-8") as f:
        return {t["name"]: normalized(t) for t in json.load(f)["trips"]}


def check_jsonl(path, ref):
    """Every line of `path` one JSON trip equal to the reference's of its name, each name once, all there.
    Returns None when so, else what differs first."""
    seen = 0
    names = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            t = normalized(json.loads(line))
            if ref.get(t[0]) != t:
                return "line %d differs from the input's trip %r: %r" % (n, t[0], t)
            if t[0] in names:
                return "line %d repeats %r" % (n, t[0])
            names.add(t[0])
            seen += 1
    return None if seen == len(ref) else "%d trips, the input has %d" % (seen, len(ref))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--shared", type=float, default=0.10)
    a = ap.parse_args()
    json.dump(prepare(a.src, a.out, a.shards, a.shared), sys.stdout)
    print()
