"""Writers of YAML: PyYAML and ruamel.yaml."""

from cases import Forward, diff, expected, nested_trips
from trips import datetime_of

# ---------------------------------------------------------------------------------------------
# YAML: PyYAML and ruamel.yaml

def yaml_loader():
    import yaml
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class PyYAMLWriter(Forward):
    ext = "yaml"
    modules = ("yaml",)

    def __init__(self, name, wrapper=True, datetimes=False, **options):
        self.name, self.wrapper, self.datetimes, self.options = name, wrapper, datetimes, options
        self.repertoire = "yaml-unicode" if options.get("allow_unicode") else "any"

    def document(self, trips):
        if self.datetimes:
            trips = [dict(t, startDate=datetime_of(t["startDate"]), endDate=datetime_of(t["endDate"]))
                     for t in trips]
        return {"schemaVersion": "3.0.0", "trips": trips} if self.wrapper else trips

    def write_one(self, trips, path, k):
        import yaml
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump(self.document(trips), f, **self.options)

    def oracle(self, path, trips, k):
        import yaml
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=yaml_loader())
        if self.wrapper:
            doc = doc["trips"]
        return diff(expected(trips), nested_trips(doc, "oracle"))


class RuamelWriter(Forward):
    ext = "yaml"
    modules = ("ruamel.yaml",)
    repertoire = "yaml-unicode"  # ruamel.yaml writes non-ASCII as is, as PyYAML's allow_unicode does

    def __init__(self, name, explicit_start=False, indent=None):
        self.name, self.explicit_start, self.indent = name, explicit_start, indent
        self._yaml = None

    def yaml(self):
        if self._yaml is None:
            from ruamel.yaml import YAML
            y = YAML()
            # ruamel.yaml folds a long double-quoted scalar after an escape such as \x04 with no
            # backslash at the break, so the break reads back as a space (0.19.1; PyYAML folds right and
            # covers folding): no folding here.
            y.width = 1 << 30
            y.explicit_start = self.explicit_start
            if self.indent:
                y.indent(**self.indent)
            self._yaml = y
        return self._yaml

    def write_one(self, trips, path, k):
        with open(path, "w", encoding="utf-8") as f:
            self.yaml().dump({"schemaVersion": "3.0.0", "trips": trips}, f)

    def oracle(self, path, trips, k):
        from ruamel.yaml import YAML
        if not hasattr(self, "_safe"):
            self._safe = YAML(typ="safe")  # ruamel.yaml's own loader, its faster kind
        with open(path, encoding="utf-8") as f:
            doc = self._safe.load(f)
        return diff(expected(trips), nested_trips(doc["trips"], "oracle"))
