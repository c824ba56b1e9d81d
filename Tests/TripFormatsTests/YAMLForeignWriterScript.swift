// The python3 scripts `YAMLForeignWriterTests` runs to write its files.

extension YAMLForeignWriterTests {
    /// `split_documents(text)`: a stream of YAML documents as the text of each, split at the document
    /// markers, lines that start with "---" alone or "--- " (no line of a document's content may, in
    /// YAML). yq 4 writes the marker alone; yq 3 (Debian's 3.1.0) writes through PyYAML's `dump_all`,
    /// which puts a flow collection on the marker's line (`--- []`), so splitting at "\n---\n" ran
    /// documents together.
    static let splitDocuments = #"""
    import re

    def split_documents(out):
        texts = re.split(r"(?m)^---(?: |$)\n?", out)
        if texts and texts[0] == "":
            texts = texts[1:]          # a writer that marks the first document too
        return [t if t.endswith("\n") else t + "\n" for t in texts]

    """#

    /// Writes trip sets with one writer, a file per set (`DIR/N.yaml`), and prints, as JSON, the
    /// trips each set holds, spelled canonically (dates as milliseconds since 1970). Arguments:
    /// writer, directory, seed, number of sets. Strings are arbitrary Unicode and the words YAML
    /// would read as other types; items and accommodations, dates and whole bucket lists are shared
    /// between trips, so that the writers put anchors and aliases in; some fields at their defaults
    /// are left out, 1.0.0 sets use its legacy spellings half the time, and dates come in other
    /// zones, without a zone, with milliseconds, over years 1 to 9999, and now and then as strings.
    static let writerScript = splitDocuments + #"""
    import sys, os, io, re, json, random, datetime, subprocess
    writer, outdir, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    import yaml
    if writer.startswith("ruamel"):
        from ruamel.yaml import YAML
    rng = random.Random(seed * 1000003 + sum(map(ord, writer)))

    words = ["no", "No", "yes", "Yes", "on", "off", "y", "n", "true", "False", "null", "Null", "~", "", "1.0", "1_000",
             "0x1F", "0o17", "017", "1e3", ".inf", "-.inf", ".nan", "12:30:45", "2024-01-01", "2024-01-01T10:00:00Z", "3.0.0",
             "<<", "=", "- x", "? y", "a: b", "a:b", "a #b", "#c", "'q'", '"d"', "|", ">", "!t", "!!str", "&a", "*a", "%x", "@",
             "`", "[a, b]", "{a: 1}", ",", " lead", "trail ", " both ", "a  b", "l1\nl2", "end\n", "end\n\n", "\n", "\n\n", "cr\r",
             "crlf\r\n", "\ttab", "tab\t", "a\tb", "\\back", "---", "...", "--- x", "é", "Zürich", "東京", "🧳", "😀",
             "\u00a0", "\u2028", "\u2029", "\ufeff", "\x00", "\x01", "\x1b", "\x7f", "\x80", "\x9f", "\ud7ff", "\ue000",
             "\ufffd", "\U0010ffff", "a" * 130, "word " * 30, "long line " * 12 + "\n" + "next " * 20]
    # A writer that may write characters beyond ASCII as they are (PyYAML's allow_unicode, ruamel.yaml's
    # default, yq) writes a NEL inside quotes as a raw line break, which YAML 1.1 readers (its own too)
    # fold into a space: it cannot carry U+0085, so those writers are not given it.
    nel_ok = writer in ("pyyaml-default", "pyyaml-explicit", "pyyaml-stream")
    if nel_ok:
        words.append("\x85nel")

    def text():
        k = rng.randrange(5)
        if k == 0:
            return rng.choice(words)
        if k == 1:
            return rng.choice(words) + rng.choice(words)
        pool = [chr(rng.randrange(0x20, 0x7f)) for _ in range(6)] + ["\n", "\r", "\t", " ", ":", ": ", " #", "'", '"', "\\",
                "é", "ß", "\u4e2d", "\U0001F600", "\u00a0", "\u0300", chr(rng.randrange(0, 0x20)), chr(rng.randrange(0x80, 0xd800)),
                chr(rng.randrange(0xe000, 0xfffe)), chr(rng.randrange(0x10000, 0x110000))]
        s = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 30)))
        return s if nel_ok else s.replace("\x85", "")

    zones = [datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=5, minutes=30)),
             datetime.timezone(datetime.timedelta(hours=-8)), None]
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

    def when():
        if rng.random() < 0.1:
            lo, hi = -62135596800000 + 86400000, 253402300799000 - 86400000   # years 1 to 9999
        else:
            lo, hi = -2208988800000, 4102444799999                            # 1900 to 2100
        ms = rng.randrange(lo, hi)
        if rng.random() < 0.5:
            ms -= ms % 1000
        d = epoch + datetime.timedelta(milliseconds=ms)
        z = rng.choice(zones)
        d = d.replace(tzinfo=None) if z is None else d.astimezone(z)
        return ms, d

    def as_string_date(d):
        if d.tzinfo is None:
            d = d.replace(tzinfo=datetime.timezone.utc)
        s = d.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")[:19]
        if d.microsecond:
            s += ".%03d" % (d.microsecond // 1000)
        return s + "Z"

    def trip_set(version):
        """The document to write, and what it holds spelled canonically, for the expectation."""
        trips, canon = [], []
        shared_items, shared_accs, shared_dates, shared_lists = [], [], [], []
        for _ in range(rng.choice([0, 1, 1, 2, 3, 4])):
            if shared_lists and rng.random() < 0.05:
                items, citems = rng.choice(shared_lists)
            else:
                items, citems = [], []
                for _ in range(rng.choice([0, 0, 1, 2, 3, 6])):
                    if shared_items and rng.random() < 0.15:
                        it, cit = rng.choice(shared_items)
                    else:
                        cit = {"title": text(), "details": text(), "hasReservation": rng.random() < 0.5, "isInPlan": rng.random() < 0.5}
                        it = dict(cit)
                        if rng.random() < 0.1:              # fields at their defaults left out
                            for k, v in (("details", ""), ("hasReservation", False), ("isInPlan", False)):
                                if it[k] == v and rng.random() < 0.7:
                                    del it[k]
                        shared_items.append((it, cit))
                    items.append(it); citems.append(cit)
                if items:
                    shared_lists.append((items, citems))
            acc, cacc = None, None
            if rng.random() < 0.65:
                if shared_accs and rng.random() < 0.2:
                    acc, cacc = rng.choice(shared_accs)
                else:
                    cacc = {"address": text(), "placeName": text() or "x"}
                    acc = dict(cacc)
                    shared_accs.append((acc, cacc))
            dates = []
            for _ in range(2):
                if shared_dates and rng.random() < 0.15:
                    dates.append(rng.choice(shared_dates))
                else:
                    ms, d = when()
                    if rng.random() < 0.05 or writer == "yq":
                        d = as_string_date(d)               # a date as a string (JSON has no other)
                    dates.append((ms, d)); shared_dates.append((ms, d))
            start, end = ("start_date", "end_date") if version != "3.0.0" else ("startDate", "endDate")
            bl, la = "bucketList", "livingAccommodation"
            if version == "1.0.0" and rng.random() < 0.5:
                bl, la = "bucketListItem", "livingAccommodations"
            t = {"name": text() or "n", "destination": text() or "d", start: dates[0][1], end: dates[1][1], bl: items}
            if acc is not None or rng.random() < 0.7:
                t[la] = acc
            if version == "3.0.0" and rng.random() < 0.1:
                t["tripViews"] = rng.randrange(0, 100)
            trips.append(t)
            canon.append({"name": t["name"], "destination": t["destination"], "startDate": {"$date": dates[0][0]},
                          "endDate": {"$date": dates[1][0]}, "bucketList": citems, "livingAccommodation": cacc})
        marked = not (writer == "pyyaml-stream" or (version == "1.0.0" and rng.random() < 0.5))
        # A bare sequence (as 1.0.0's exports are), or one document per trip; else the wrapper.
        doc = {"schemaVersion": version, "trips": trips} if marked else trips
        return doc, {"version": version, "marked": marked, "trips": canon}

    def dump(doc):
        s = io.StringIO()
        if writer == "pyyaml-default":
            yaml.safe_dump(doc, s)
        elif writer == "pyyaml-flow":
            yaml.safe_dump(doc, s, default_flow_style=True, allow_unicode=rng.random() < 0.5)
        elif writer == "pyyaml-unicode":
            yaml.safe_dump(doc, s, allow_unicode=True, sort_keys=False)
        elif writer == "pyyaml-narrow":
            yaml.safe_dump(doc, s, allow_unicode=True, sort_keys=False, width=rng.randrange(6, 30),
                           default_flow_style=rng.choice([False, None]))
        elif writer == "pyyaml-explicit":
            yaml.safe_dump(doc, s, explicit_start=True, explicit_end=rng.random() < 0.5, sort_keys=False,
                           indent=rng.choice([2, 4]))
        elif writer == "pyyaml-stream":
            yaml.safe_dump_all(doc, s, explicit_start=True, sort_keys=False)
        elif writer == "ruamel-rt":
            YAML().dump(doc, s)
        elif writer == "ruamel-indented":
            y = YAML()
            y.indent(mapping=2, sequence=4, offset=2)
            y.width = rng.choice([80, 4096])       # narrower, its folding loses spaces around tabs
            y.explicit_start = rng.random() < 0.5
            y.dump(doc, s)
        elif writer == "ruamel-safe":
            y = YAML(typ="safe", pure=rng.random() < 0.5)
            y.width = rng.choice([80, 4096])       # at 80 its folding of double-quoted text loses and adds spaces
            y.default_flow_style = rng.choice([False, None])
            y.allow_unicode = rng.random() < 0.5
            y.dump(doc, s)
        else:
            raise SystemExit(f"unknown writer {writer}")
        return s.getvalue()

    def load(text):
        if writer.startswith("ruamel"):
            return list(YAML(typ="safe", pure=True).load_all(text))
        return list(yaml.safe_load_all(text))

    def carries(doc, text):
        """Whether the writer's own reader reads its text back as the document it was given; and for
        ruamel.yaml, which writes YAML 1.2, whether PyYAML, a YAML 1.1 reader as libyaml is, does too."""
        if writer == "yq":
            doc = json.loads(json.dumps(doc))
        try:
            back = load(text)
        except Exception:
            return False            # not even YAML to the writer's own reader
        if instants(back if writer == "pyyaml-stream" else back[0]) != instants(doc):
            return False
        if writer.startswith("ruamel"):
            try:
                if scalar_texts(yaml.compose(text)) != scalar_texts(YAML(typ="safe", pure=True).compose(text)):
                    return "1.2"
            except Exception:
                return "1.2"
        return True

    def instants(v):
        """Zoned datetimes as the instants they are, in naive UTC, as the expectations hold them: ruamel.yaml
        before 0.18 (Debian's 0.17.21) reads a zoned timestamp back as naive UTC, later ones keep the zone."""
        if isinstance(v, datetime.datetime) and v.tzinfo is not None:
            return v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        if isinstance(v, dict):
            return {k: instants(x) for k, x in v.items()}
        if isinstance(v, list):
            return [instants(x) for x in v]
        return v

    def scalar_texts(node):
        """A node tree as its scalars' texts, whoever's nodes they are (types left out: they are the
        schema's business, and YAML 1.1 and 1.2 type plain scalars differently)."""
        kind = type(node).__name__
        if kind == "ScalarNode":
            return node.value
        if kind == "SequenceNode":
            return [scalar_texts(n) for n in node.value]
        return [(scalar_texts(k), scalar_texts(v)) for k, v in node.value]

    def as_json(doc):
        """JSON as jq writes it: UTF-8, with escapes only where JSON needs them (and for the characters
        PyYAML, yq's parser, refuses raw or takes for line breaks); no surrogate pairs, which it refuses."""
        def raw(m):
            if m.group(1) is None:
                return m.group(0)                                   # an escaped backslash
            hi = int(m.group(1), 16)
            c = hi if m.group(2) is None else 0x10000 + ((hi - 0xD800) << 10) + int(m.group(2), 16) - 0xDC00
            keep = c < 0x20 or 0x7F <= c <= 0x9F or c in (0x2028, 0x2029, 0xFFFE, 0xFFFF)
            return m.group(0) if keep else chr(c)
        return re.sub(r"\\\\|\\u([0-9a-f]{4})(?:\\u(d[c-f][0-9a-f]{2}))?", raw, json.dumps(doc, ensure_ascii=True))

    def yq_one(doc):
        r = subprocess.run(["yq", "-y", "."], input=as_json(doc).encode(), capture_output=True)
        if r.returncode != 0:
            print("yq failed: " + r.stderr.decode(), file=sys.stderr); sys.exit(2)
        return r.stdout.decode()

    versions = ["1.0.0", "2.0.0", "3.0.0"]
    sets = [trip_set(rng.choice(versions)) for _ in range(count)]
    if writer == "yq":
        # One run of yq for all sets: a stream of JSON documents in, a stream of YAML documents out.
        stream = "---\n".join(as_json(doc) + "\n" for doc, _ in sets)
        r = subprocess.run(["yq", "-y", "."], input=stream.encode(), capture_output=True)
        if r.returncode != 0:
            print("yq failed: " + r.stderr.decode(), file=sys.stderr); sys.exit(2)
        texts = split_documents(r.stdout.decode())
        if len(texts) != count:
            print(f"yq gave {len(texts)} documents for {count}", file=sys.stderr); sys.exit(2)
    else:
        texts = [dump(doc) for doc, _ in sets]

    # A set the writer itself cannot carry (its own reader reads back something else: emitter defects
    # at narrow widths, around tabs and non-BMP characters) is replaced by another; how many is reported.
    # A set that ruamel.yaml writes in YAML 1.2 only (a YAML 1.1 reader reads another value or an
    # error: in flow context a plain scalar may start with ':' in 1.2, not in 1.1) is counted apart.
    uncarried, example, only12, example12 = 0, None, 0, None
    for i in range(count):
        while (carried := carries(sets[i][0], texts[i])) is not True:
            if carried == "1.2":
                only12 += 1
                example12 = example12 or texts[i][:400]
            else:
                uncarried += 1
                example = example or repr(sets[i][0])[:400]
            if uncarried > count // 3:
                print(f"{writer} cannot carry {uncarried} sets (seed {seed}), e.g. {example}", file=sys.stderr); sys.exit(2)
            sets[i] = trip_set(rng.choice(versions))
            texts[i] = dump(sets[i][0]) if writer != "yq" else yq_one(sets[i][0])
    expected = []
    for i, ((doc, canon), text) in enumerate(zip(sets, texts)):
        with open(os.path.join(outdir, f"{i}.yaml"), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        expected.append(canon)
    print(json.dumps({"sets": expected, "uncarried": uncarried, "example": example, "only12": only12, "example12": example12},
                     ensure_ascii=True))
    """#
}
