"""Medians, rates and the verdicts against each task's target."""
import statistics


def fmt_mib(kib):
    return "%.0f" % (kib / 1024) if kib >= 10240 else "%.1f" % (kib / 1024)


def summarize(task):
    rows = []
    for t in task.tools:
        if not t.runs or (t.checked and t.checked[0] is False):
            rows.append((t, None))
            continue
        sec = statistics.median(r.seconds for r in t.runs)
        rss = statistics.median(r.rss_kib for r in t.runs)
        rows.append((t, {"s": sec, "mbs": task.bytes / 1e6 / sec, "tps": task.n / sec, "rss": rss}))
    return rows


def verdicts(task, rows):
    """(text, met) for the task's target, from the medians of this run."""
    stats = {t.label: s for t, s in rows if s}
    mine = next((s for t, s in rows if t.role == "tripconv" and s), None)
    if not mine:
        return "tripconv did not run", False
    peers = [(t.label, s) for t, s in rows if t.role == "peer" and s]
    refs = [(t.label, s) for t, s in rows if t.role == "reference" and s]
    notes, met = [], True
    need = {"csv2jsonl": 4, "json2csv": 3, "jsonl2csv": 3, "yaml2json": 5, "xml2json": 3, "json2sqlite": 5,
            "dedup": 5, "gz2csv": 4, "zst2jsonl": 4, "targz2sqlite": 1}.get(task.key)  # zstrss: memory only
    if need is None:
        pass
    elif peers:
        label, best = min(peers, key=lambda p: p[1]["s"])
        ratio = best["s"] / mine["s"]
        ok = ratio >= need
        met &= ok
        notes.append("%.2fx %s (target >= %dx) %s" % (ratio, label.split(" ")[0], need, "met" if ok else "MISSED"))
    else:
        notes.append("no peer ran")
        met = False
    if task.key == "yaml2json" and peers:
        share = mine["rss"] / peers[0][1]["rss"]
        ok = share < 0.1
        met &= ok
        notes.append("memory %.3f of gojq's (target < 0.1) %s" % (share, "met" if ok else "MISSED"))
    for label, s in refs:
        if label.startswith("xmllint"):
            f = mine["s"] / s["s"]
            ok = f <= 1.5
            met &= ok
            notes.append("%.2fx xmllint --stream's time (target <= 1.5x) %s" % (f, "met" if ok else "MISSED"))
        if label.startswith("gzip -dc"):
            f = mine["s"] / s["s"]
            ok = f <= 1.1
            met &= ok
            notes.append("%.2fx the time of gzip -dc | tripconv (target <= 1.1x) %s" % (f, "met" if ok else "MISSED"))
        if label.startswith("mlr"):  # timed beside the checked peer, not judged
            notes.append("%.2fx %s" % (s["s"] / mine["s"], label))
        if task.key == "zstrss":
            extra = (mine["rss"] - s["rss"]) / 1024
            ok = extra <= 16
            met &= ok
            notes.append("peak RSS %s MiB, the plain file's %s MiB: %+.1f MiB (target <= +16 MiB) %s; %.2fx its time" % (
                fmt_mib(mine["rss"]), fmt_mib(s["rss"]), extra, "met" if ok else "MISSED", mine["s"] / s["s"]))
        if task.key in ("objects", "objplan"):
            me = next(t for t, m in rows if t.role == "tripconv" and m)
            peer = next(t for t, m in rows if t.label == label)
            a, b = 1e6 * mine["s"] / me.objects, 1e6 * s["s"] / peer.objects
            ok = a / b <= 1.5
            met &= ok
            notes.append("%.3f us/object, the trip path %.3f us/object: %.2fx its time per object (target <= 1.5x) %s; "
                         "peak RSS %s MiB, the trip path's %s MiB" % (a, b, a / b, "met" if ok else "MISSED",
                                                                       fmt_mib(mine["rss"]), fmt_mib(s["rss"])))
        if label.startswith("C probe"):
            f = s["s"] / mine["s"]
            ok = f >= 0.7
            met &= ok
            notes.append("%.0f %% of the C probe's rate (target >= 70 %%) %s" % (100 * f, "met" if ok else "MISSED"))
    return "; ".join(notes), met
