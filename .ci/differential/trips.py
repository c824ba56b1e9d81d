"""Arbitrary trip sets, what each format can carry, and how two trip lists compare.

A trip is a dict with the keys of the 3.0.0 schema, in its order:
  name, destination, startDate, endDate (str, ISO 8601 UTC as tripconv writes them),
  bucketList (list of {title, details: str, hasReservation, isInPlan: bool}),
  livingAccommodation ({address, placeName: str} or None).
"""

import datetime
import random
import unicodedata

TRIP_KEYS = ["name", "destination", "startDate", "endDate", "bucketList", "livingAccommodation"]
ITEM_KEYS = ["title", "details", "hasReservation", "isInPlan"]
STRING_ITEM_KEYS = ["title", "details"]
PLACE_KEYS = ["address", "placeName"]

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


# ---------------------------------------------------------------------------------------------
# Dates

def format_ms(ms):
    """Milliseconds since 1970 as tripconv writes a date: whole seconds, or three fractional digits."""
    d = EPOCH + datetime.timedelta(milliseconds=ms)
    text = d.strftime("%Y-%m-%dT%H:%M:%S")
    if d.year < 1000:  # strftime does not pad %Y on every platform
        text = "%04d%s" % (d.year, text[text.index("-"):])
    if d.microsecond:
        text += ".%03d" % (d.microsecond // 1000)
    return text + "Z"


def datetime_of(text):
    """A date string of ours as an aware datetime (for writers that take datetime objects)."""
    core = text[:-1]
    if "." in core:
        base, frac = core.split(".")
        micro = int(frac.ljust(6, "0"))
    else:
        base, micro = core, 0
    d = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return d.replace(microsecond=micro)


def normalize_datetime(value):
    """A datetime a YAML or other reader gave back, as our date string; None if it is not exact to the ms."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    value = value.astimezone(datetime.timezone.utc)
    if value.microsecond % 1000:
        return None
    delta = value - EPOCH
    ms = (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    return format_ms(ms)


SPECIAL_MS = [
    0,                      # 1970-01-01T00:00:00Z
    -1,                     # 1969-12-31T23:59:59.999Z: a negative time with milliseconds
    978307200000,           # 2001-01-01, the reference date
    978307199999,           # a millisecond before it
    951782400000,           # 2000-02-29
    4102444799999,          # 2099-12-31T23:59:59.999Z
    -2208988800000,         # 1900-01-01
    253402300799999,        # 9999-12-31T23:59:59.999Z
    1718438400250,          # 2024-06-15T08:00:00.250Z
]
MS_LOW, MS_HIGH = -2208988800000, 7258118400000  # 1900 .. 2200


def gen_ms(rng):
    r = rng.random()
    if r < 0.06:
        return rng.choice(SPECIAL_MS)
    ms = rng.randrange(MS_LOW, MS_HIGH)
    if r < 0.55:
        return ms - ms % 1000          # whole seconds
    if r < 0.75:
        return ms - ms % 60000         # whole minutes
    return ms                          # any millisecond


# ---------------------------------------------------------------------------------------------
# What a format can carry: a predicate on characters, and the pools strings are drawn from.

def is_surrogate(c):
    return 0xD800 <= ord(c) <= 0xDFFF


def xml_char(c):
    o = ord(c)
    return (o in (0x9, 0xA, 0xD) or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or 0x10000 <= o <= 0x10FFFF)


def _cp1252(c):
    try:
        c.encode("cp1252")
        return True
    except UnicodeEncodeError:
        return False


class Repertoire:
    """The characters a writer can carry, by name; `allows(c)` decides."""

    def __init__(self, name, allows, why):
        self.name = name
        self.allows = allows
        self.why = why

    def fits(self, s):
        return all(self.allows(c) for c in s)


REPERTOIRES = {r.name: r for r in [
    Repertoire("any", lambda c: not is_surrogate(c),
               "any Unicode scalar value (JSON, YAML)"),
    Repertoire("csv", lambda c: c != "\0" and not is_surrogate(c),
               "any Unicode scalar value but NUL"),
    Repertoire("csv-nocr", lambda c: c not in "\0\r" and not is_surrogate(c),
               "no NUL, no CR: Python's csv writer with lineterminator '\\n' and QUOTE_MINIMAL writes a "
               "field holding a CR unquoted, so no reader can tell it from a line end; and Miller 6.6 reads "
               "a CR LF inside a quoted field as LF"),
    Repertoire("csv-nolf", lambda c: c not in "\0\n" and not is_surrogate(c),
               "no NUL, no LF: Python's csv writer with lineterminator '\\r' and QUOTE_MINIMAL writes a "
               "field holding a LF unquoted, so no reader can tell it from a line end"),
    Repertoire("latin1", lambda c: 0 < ord(c) <= 0xFF,
               "Latin-1 without NUL"),
    Repertoire("cp1252", lambda c: c != "\0" and _cp1252(c),
               "what Windows-1252 encodes (Python's cp1252 codec), without NUL"),
    Repertoire("xml", xml_char,
               "XML 1.0 characters (tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD, U+10000 up)"),
    Repertoire("xml-noamp", lambda c: xml_char(c) and c != "&",
               "XML 1.0 characters but &: `xmlstarlet ed -s ... -t elem -v VALUE` takes VALUE as XML "
               "content, so `-v '&amp;'` makes the text '&' (entity references are expanded)"),
    Repertoire("yaml-unicode", lambda c: not is_surrogate(c) and c != "\x85",
               "any Unicode scalar value but U+0085: PyYAML and ruamel.yaml with allow_unicode write a "
               "NEL raw in a quoted scalar as a line break, and read it back as a space"),
    Repertoire("xml-nocr", lambda c: xml_char(c) and c != "\r",
               "XML 1.0 characters but CR: ElementTree writes a CR in text raw, and an XML parser "
               "reads it as LF"),
]}


def _ranges(*pairs):
    return [(a, b) for a, b in pairs]


# Pools: (weight, kind, payload). kind "list": a choice of whole strings; "range": one code point from
# one of the ranges. Each repertoire keeps the members it allows.
POOLS = [
    (30, "list", ["a", "b", "Paris", "Trip", "x", "Z", "42", "0", "day 3", "Rue", "hotel", "A1"]),
    (8, "list", [" ", " ", "  "]),
    (8, "list", [",", ";", "\t", "|"]),
    (7, "list", ['"', "'", '""', "''", '"x"']),
    (6, "list", ["\n", "\r\n", "\r", "\n\n"]),
    (6, "list", ["&", "<", ">", '"', "'", "&amp;", "&#38;", "&lt;", "]]>", "<!--", "<![CDATA[x]]>", "<a/>"]),
    (4, "list", ["\\", "\\n", "\\t", "\\\\", "\\r", "\\N"]),
    (4, "list", ["- ", "? ", ": ", " #", "#", "!", "&a", "*a", "%", "@", "`", "{", "}", "[", "]", ">", "|",
                 "---", "...", "!!str"]),
    (3, "list", ["=", "+", "-", "@", "'="]),
    (8, "list", ["é", "ß", "ñ", "ü", "©", "±", "¿", "ÿ", "\u00a0", "\u00ad", "Ø", "å", "Ç", "×", "°"]),
    (4, "list", ["€", "‚", "ƒ", "„", "…", "†", "‰", "Š", "‹", "Œ", "Ž", "‘", "’", "“", "”", "•", "–", "—",
                 "˜", "™", "š", "›", "œ", "ž", "Ÿ"]),
    (8, "range", _ranges((0x100, 0x2FF), (0x370, 0x4FF), (0x590, 0x6FF), (0x900, 0x97F), (0x4E00, 0x9FFF),
                         (0xAC00, 0xD7A3), (0x3040, 0x30FF), (0x300, 0x36F))),
    (3, "range", _ranges((0x20, 0xD7FF), (0xE000, 0xFFFF))),
    (5, "list", ["\u0085", "\u2028", "\u2029", "\ufeff", "\u200b", "\u200e", "\u202e", "\ufffd", "\ufffe",
                 "\uffff", "e\u0301", "\u0301", "\u00a0", "\u3000", "\u180e", "\ue000", "\uf8ff"]),
    (5, "range", _ranges((0x1F300, 0x1FAFF))),
    (3, "range", _ranges((0x10000, 0x10FFFF))),
    (2, "list", ["\U0001FFFE", "\U0010FFFF", "\U00010000", "\U0001D11E", "\U00020000", "\U000E0001"]),
    (4, "range", _ranges((0x1, 0x1F), (0x7F, 0x9F))),
    (1, "list", ["\0"]),
]

WHOLE_VALUES = [
    "no", "yes", "true", "false", "True", "FALSE", "on", "off", "y", "n", "null", "Null", "NULL", "~",
    "1.5", "-0", "0x1F", "1e3", "007", ".inf", "-.inf", ".nan", "1_000", "0o17", "+1", "-1", "12:30:00",
    "2024-01-01", "2024-01-01T00:00:00Z", "2024-06-15 08:00:00", "=SUM(A1:A3)", "=1+2", "+33 1 23", "-x",
    "@cmd", "'quoted", "sep=;", "[]", "{}", "[1, 2]", "{a: 1}", '"quoted"', "'single'", " ", "  lead",
    "trail  ", " both ", "\t", "a\nb", "a\r\nb", "NaN", "None", "<<", "=", "#", "-", "|", ">",
]


class Generator:
    def __init__(self, repertoire):
        self.rep = repertoire
        self.pools = []
        for weight, kind, payload in POOLS:
            if kind == "list":
                members = [s for s in payload if repertoire.fits(s)]
                if members:
                    self.pools.append((weight, kind, members))
            else:
                self.pools.append((weight, kind, payload))
        self.weights = [w for w, _, _ in self.pools]
        self.whole = [s for s in WHOLE_VALUES if repertoire.fits(s)]

    def piece(self, rng):
        _, kind, payload = rng.choices(self.pools, weights=self.weights)[0]
        if kind == "list":
            return rng.choice(payload)
        for _ in range(8):
            a, b = rng.choice(payload)
            c = chr(rng.randint(a, b))
            if self.rep.allows(c):
                return c
        return "a"

    def string(self, rng, nonempty=False, scale=1):
        r = rng.random()
        if r < 0.12:
            s = rng.choice(self.whole)
        elif r < 0.2:
            s = ""
        else:
            n = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 12]) if rng.random() < 0.97 else rng.randint(20, 120)
            n *= scale
            s = "".join(self.piece(rng) for _ in range(n))
            if rng.random() < 0.1:
                s = " " + s
            if rng.random() < 0.1:
                s = s + " "
        if nonempty and s == "":
            s = self.piece(rng)
        return s

    def trip(self, rng, scale=1):
        ms1 = gen_ms(rng)
        ms2 = min(ms1 + rng.randrange(0, 30 * 86400000), 253402300799999) if rng.random() < 0.9 else gen_ms(rng)
        n = rng.choice([0, 0, 1, 1, 1, 2, 2, 3, 4]) if rng.random() < 0.95 else rng.randint(5, 12)
        items = [{"title": self.string(rng, scale=scale), "details": self.string(rng, scale=scale),
                  "hasReservation": rng.random() < 0.5, "isInPlan": rng.random() < 0.5} for _ in range(n)]
        place = None
        if rng.random() < 0.6:
            place = {"address": self.string(rng, scale=scale), "placeName": self.string(rng, scale=scale)}
        return {"name": self.string(rng, nonempty=True, scale=scale),
                "destination": self.string(rng, nonempty=True, scale=scale),
                "startDate": format_ms(ms1), "endDate": format_ms(ms2), "bucketList": items,
                "livingAccommodation": place}

    def trip_set(self, rng):
        # One set in two hundred is big (40-80 trips, strings up to 30 times longer, files of 100 KB and
        # more), so that readers cross the borders of the chunks they read in (64 KiB for XML).
        big = rng.random() < 0.005
        if big:
            count, scale = rng.randint(40, 80), rng.choice([1, 10, 30])
        else:
            count, scale = (rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5]) if rng.random() < 0.95 else rng.randint(6, 15)), 1
        trips, names = [], set()
        for i in range(count):
            t = self.trip(rng, scale)
            # Names are unique within a set (compared as tripconv compares them: by their UTF-8 bytes, that
            # is, as Python compares str), so `--dedupe fail` must pass and the order is the order written.
            while t["name"] in names:
                t["name"] += " %d" % i if self.rep.fits(" 0123456789") else "x"
            names.add(t["name"])
            trips.append(t)
        return trips


_generators = {}


def trip_set(seed, repertoire_name, k):
    """The k-th trip set of a seed for a repertoire: the same on every machine and every run."""
    gen = _generators.get(repertoire_name)
    if gen is None:
        gen = _generators[repertoire_name] = Generator(REPERTOIRES[repertoire_name])
    rng = random.Random("%d/%s/%d" % (seed, repertoire_name, k))
    return gen.trip_set(rng)


# ---------------------------------------------------------------------------------------------
# What a trip set should read back as

def expected(trips):
    """The trips tripconv (or another reader) should give for `trips`: an accommodation whose two fields
    are empty is the same as none (tripconv(1), FORMATS: "an accommodation whose fields are both empty
    is the same as none"), in every format."""
    out = []
    for t in trips:
        t = dict(t)
        p = t["livingAccommodation"]
        if p is not None and p["address"] == "" and p["placeName"] == "":
            t["livingAccommodation"] = None
        out.append(t)
    return out


def show(value, limit=160):
    """A value for a message: Python's repr (escapes controls), cut to `limit`."""
    r = repr(value)
    return r if len(r) <= limit else r[:limit] + "...(%d chars)" % len(r)


def _diff_value(path, want, got):
    if type(want) is not type(got):
        return "%s: expected %s, found %s" % (path, show(want), show(got))
    if want != got:
        if isinstance(want, str):
            # The first difference first, with some context, so that a long value's message still says it.
            i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
            def char(s):
                if i >= len(s):
                    return "the end"
                return "%s (%s)" % (show(s[i]), unicodedata.name(s[i], "U+%04X" % ord(s[i])))
            lo = max(0, i - 12)
            return "%s: at character %d expected %s, found %s: expected %s%s, found %s%s" % (
                path, i, char(want), char(got), "..." if lo else "", show(want[lo:i + 24], 80),
                "..." if lo else "", show(got[lo:i + 24], 80))
        return "%s: expected %s, found %s" % (path, show(want), show(got))
    return None


def diff(want, got):
    """The first difference between two trip lists, as one line, or None when they are equal."""
    if not isinstance(got, list):
        return "expected a list of trips, found %s" % show(got)
    if len(want) != len(got):
        return "expected %d trips %s, found %d %s" % (
            len(want), show([t["name"] for t in want]), len(got),
            show([t.get("name") if isinstance(t, dict) else t for t in got]))
    for i, (w, g) in enumerate(zip(want, got)):
        where = "trip %d (%s)" % (i + 1, show(w["name"], 60))
        if not isinstance(g, dict):
            return "%s: expected an object, found %s" % (where, show(g))
        if list(g.keys()) != TRIP_KEYS and set(g.keys()) != set(TRIP_KEYS):
            return "%s: expected the keys %s, found %s" % (where, TRIP_KEYS, list(g.keys()))
        for key in TRIP_KEYS[:4]:
            d = _diff_value("%s %s" % (where, key), w[key], g[key])
            if d:
                return d
        wl, gl = w["bucketList"], g["bucketList"]
        if not isinstance(gl, list) or len(wl) != len(gl):
            return "%s bucketList: expected %d items, found %s" % (
                where, len(wl), show(gl) if not isinstance(gl, list) else "%d: %s" % (len(gl), show(gl, 300)))
        for j, (wi, gi) in enumerate(zip(wl, gl)):
            if not isinstance(gi, dict) or set(gi.keys()) != set(ITEM_KEYS):
                return "%s bucketList[%d]: expected an item with %s, found %s" % (where, j + 1, ITEM_KEYS, show(gi))
            for key in ITEM_KEYS:
                d = _diff_value("%s bucketList[%d].%s" % (where, j + 1, key), wi[key], gi[key])
                if d:
                    return d
        wp, gp = w["livingAccommodation"], g["livingAccommodation"]
        if wp is None or gp is None:
            if wp is not gp:
                return "%s livingAccommodation: expected %s, found %s" % (where, show(wp), show(gp))
        else:
            if not isinstance(gp, dict) or set(gp.keys()) != set(PLACE_KEYS):
                return "%s livingAccommodation: expected %s, found %s" % (where, show(wp), show(gp))
            for key in PLACE_KEYS:
                d = _diff_value("%s livingAccommodation.%s" % (where, key), wp[key], gp[key])
                if d:
                    return d
    return None


# ---------------------------------------------------------------------------------------------
# Miller's flatten convention for CSV, both ways

def header(trips):
    """The columns, in the order the issue and tripconv's own writer use."""
    width = max((len(t["bucketList"]) for t in trips), default=0)
    cols = ["name", "destination", "startDate", "endDate",
            "livingAccommodation.address", "livingAccommodation.placeName"]
    for i in range(1, width + 1):
        cols += ["bucketList.%d.%s" % (i, k) for k in ITEM_KEYS]
    return cols


def flatten(trip, boolean=lambda b: "true" if b else "false"):
    """One trip as a row dict; absent cells (no accommodation, fewer items) are left out, for the CSV
    writer's restval."""
    row = {k: trip[k] for k in TRIP_KEYS[:4]}
    p = trip["livingAccommodation"]
    if p is not None:
        row["livingAccommodation.address"] = p["address"]
        row["livingAccommodation.placeName"] = p["placeName"]
    for i, item in enumerate(trip["bucketList"], 1):
        for k in ITEM_KEYS:
            v = item[k]
            row["bucketList.%d.%s" % (i, k)] = boolean(v) if isinstance(v, bool) else v
    return row


class Unflatten(Exception):
    pass


def parse_bool(text, where):
    if text in ("true", "false"):
        return text == "true"
    raise Unflatten("%s: expected true or false, found %s" % (where, show(text)))


def unflatten(columns, cells, where=""):
    """A row of a CSV or TSV tripconv wrote, by the rules tripconv(1) gives for reading one: an item
    group whose cells are all empty is no item, an accommodation whose cells are empty is none, and an
    empty cell in a present column is the empty string."""
    if len(cells) != len(columns):
        raise Unflatten("%s: %d cells under %d columns" % (where, len(cells), len(columns)))
    row = dict(zip(columns, cells))
    trip = {}
    for k in TRIP_KEYS[:4]:
        if k not in row:
            raise Unflatten("%s: no column %s" % (where, k))
        trip[k] = row.pop(k)
    address = row.pop("livingAccommodation.address", "")
    place = row.pop("livingAccommodation.placeName", "")
    items = []
    i = 1
    while "bucketList.%d.title" % i in row:
        group = [row.pop("bucketList.%d.%s" % (i, k), None) for k in ITEM_KEYS]
        if None in group:
            raise Unflatten("%s: item %d lacks a column" % (where, i))
        if any(group):
            items.append({"title": group[0], "details": group[1],
                          "hasReservation": parse_bool(group[2], "%s bucketList.%d.hasReservation" % (where, i)),
                          "isInPlan": parse_bool(group[3], "%s bucketList.%d.isInPlan" % (where, i))})
        i += 1
    if row:
        raise Unflatten("%s: unexpected columns %s" % (where, sorted(row)))
    trip["bucketList"] = items
    trip["livingAccommodation"] = None if address == "" and place == "" else {"address": address,
                                                                              "placeName": place}
    return trip


def from_nested(obj, where="", strings_only_dates=True):
    """A trip a JSON, YAML or XML reader gave back (nested dicts and lists), checked for exact types and
    turned into our dict. YAML readers may give dates as datetimes; those are turned into our strings."""
    if not isinstance(obj, dict):
        raise Unflatten("%s: expected a mapping, found %s" % (where, show(obj)))
    trip = {}
    for k in TRIP_KEYS[:4]:
        if k not in obj:
            raise Unflatten("%s: no key %s in %s" % (where, k, show(obj)))
        v = obj[k]
        if isinstance(v, datetime.datetime) and k in ("startDate", "endDate"):
            v = normalize_datetime(v) or v
        trip[k] = str(v) if isinstance(v, str) else v
    items = obj.get("bucketList", [])
    if not isinstance(items, list):
        raise Unflatten("%s: bucketList is %s" % (where, show(items)))
    trip["bucketList"] = [{k: (str(v) if isinstance(v, str) else v) for k, v in dict(i).items()}
                          if isinstance(i, dict) else i for i in items]
    p = obj.get("livingAccommodation")
    if isinstance(p, dict):
        p = {k: (str(v) if isinstance(v, str) else v) for k, v in dict(p).items()}
        if p.get("address") == "" and p.get("placeName") == "":
            p = None
    trip["livingAccommodation"] = p
    extra = set(obj.keys()) - set(TRIP_KEYS)
    if extra:
        raise Unflatten("%s: unexpected keys %s" % (where, sorted(extra)))
    return trip
