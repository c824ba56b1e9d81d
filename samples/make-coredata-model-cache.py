#!/usr/bin/env python3
"""Writes the Z_MODELCACHE blob of samples/make-coredata-vN.sql: SampleTrips' model at version N as
Core Data keeps it in a store, an NSManagedObjectModel archived with NSKeyedArchiver (a binary property
list of $objects joined by UIDs) and compressed with raw DEFLATE (zlib's wbits -15), as a SwiftData app
built from SampleTrips' models would leave it. No Apple framework wrote it: the archive holds the keys
Core Data's encodeWithCoder: writes and tripconv reads (Sources/TripFormats/CoreData/ModelCache.swift
lists them), with Python's plistlib and zlib, so the same bytes come out on every run.

The model is SampleTrips' schema at that version (Sources/TripKit/Schema/TripSchemaV*.swift) as the
sample's tables lay it out: every attribute with its Core Data type and default; Trip's bucketList and
livingAccommodation with the inverses the tables hold columns for (BucketListItem.trip,
LivingAccommodation.trip: ZTRIP); at 3.0.0 startDate and endDate renamed from start_date and end_date
(NSRenamingIdentifier), the transient tripViews, cascade delete rules; the unique name from 2.0.0.

Run from the repository root, then rebuild the store as the script's header says:
    python3 samples/make-coredata-model-cache.py 3
    rm -f samples/coredata-v3.store && sqlite3 samples/coredata-v3.store < samples/make-coredata-v3.sql
"""
import plistlib
import re
import sys
import zlib
from plistlib import UID

STRING, INT64, BOOL, DATE = 700, 300, 800, 900
NULLIFY, CASCADE = 1, 2


def model(version):
    """SampleTrips at `version`: {entity: (attributes, relationships, unique)}."""
    v3 = version == 3
    dates = [("startDate", DATE, None, False, "start_date"), ("endDate", DATE, None, False, "end_date")] if v3 else \
            [("start_date", DATE, None, False, None), ("end_date", DATE, None, False, None)]
    trip_attributes = [("name", STRING, None, False, None), ("destination", STRING, None, False, None)] + dates
    if v3:
        trip_attributes.append(("tripViews", INT64, 0, True, None))
    rule = CASCADE if v3 else NULLIFY
    return {
        "Trip": (trip_attributes,
                 [("bucketList", "BucketListItem", "trip", True, rule), ("livingAccommodation", "LivingAccommodation", "trip", False, rule)],
                 [["name"]] if version >= 2 else []),
        "BucketListItem": ([("title", STRING, None, False, None), ("details", STRING, "", False, None),
                            ("hasReservation", BOOL, False, False, None), ("isInPlan", BOOL, False, False, None)],
                           [("trip", "Trip", "bucketList", False, NULLIFY)], []),
        "LivingAccommodation": ([("address", STRING, "", False, None), ("placeName", STRING, "", False, None)],
                                [("trip", "Trip", "livingAccommodation", False, NULLIFY)], []),
    }


def archive(version):
    entities = model(version)
    objects = ["$null"]
    classes, strings = {}, {}

    def add(o):
        objects.append(o)
        return UID(len(objects) - 1)

    def cls(name, chain):
        if name not in classes:
            classes[name] = add({"$classname": name, "$classes": chain + ["NSObject"]})
        return classes[name]

    def s(text):
        if text is None:
            return UID(0)
        if text not in strings:
            strings[text] = add(text)
        return strings[text]

    def array(uids, name="NSArray"):
        return add({"NS.objects": list(uids), "$class": cls(name, [name] if name == "NSArray" else [name, "NSArray"])})

    def dictionary(pairs):
        return add({"NS.keys": [k for k, _ in pairs], "NS.objects": [v for _, v in pairs],
                    "$class": cls("NSMutableDictionary", ["NSMutableDictionary", "NSDictionary"])})

    root = add(None)
    names = sorted(entities)
    ents = {n: add(None) for n in names}
    props = {(n, p[0]): add(None) for n in names for p in entities[n][0] + entities[n][1]}
    for n in names:
        attributes, relationships, unique = entities[n]
        pairs = []
        for name, code, default, transient, renamed in attributes:
            o = {"$class": cls("NSAttributeDescription", ["NSAttributeDescription", "NSPropertyDescription"]),
                 "NSPropertyName": s(name), "NSEntity": ents[n], "NSAttributeType": code, "_P": 1 | (8 if transient else 0),
                 "NSDefaultValue": UID(0) if default is None else (s(default) if code == STRING else add(default)),
                 "NSRenamingIdentifier": s(renamed or name), "NSFlagsKey": 0}
            if transient:
                o["NSIsTransient"] = True
            objects[props[(n, name)].data] = o
            pairs.append((s(name), props[(n, name)]))
        for name, destination, inverse, to_many, delete_rule in relationships:
            o = {"$class": cls("NSRelationshipDescription", ["NSRelationshipDescription", "NSPropertyDescription"]),
                 "NSPropertyName": s(name), "NSEntity": ents[n], "NSDestinationEntity": ents[destination],
                 "NSInverseRelationship": props[(destination, inverse)], "_NSInverseRelationshipName": s(inverse),
                 "_NSDestinationEntityName": s(destination), "NSMinCount": 0, "NSMaxCount": 0 if to_many else 1,
                 "NSDeleteRule": delete_rule, "_P": 3, "NSIsOptional": True, "NSRenamingIdentifier": s(name)}
            objects[props[(n, name)].data] = o
            pairs.append((s(name), props[(n, name)]))
        objects[ents[n].data] = {
            "$class": cls("NSEntityDescription", ["NSEntityDescription"]), "NSEntityName": s(n), "NSClassNameForEntity": s(n),
            "NSManagedObjectModel": root, "NSSuperentity": UID(0), "NSSubentities": dictionary([]), "NSProperties": dictionary(pairs),
            "NSRenamingIdentifier": s(n), "NSVersionHashModifier": UID(0),
            "NSUniqueTuples": array([array([s(x) for x in t], "NSMutableArray") for t in unique], "NSMutableArray")}
    mapping = add({"$class": cls("NSKnownKeysMappingStrategy1", ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy"]),
                   "keys": array([s(n) for n in names]), "length": len(names), "version": 1})
    known = add({"$class": cls("NSKnownKeysDictionary1", ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary"]),
                 "values": array([ents[n] for n in names]), "searchMapping": mapping, "version": 1})
    # 1.0.0's app set no version identifier (its Z_METADATA says [""]); the others say theirs.
    identifiers = [] if version == 1 else ["%d.0.0" % version]
    objects[root.data] = {"$class": cls("NSManagedObjectModel", ["NSManagedObjectModel"]), "NSEntities": known,
                          "NSVersionIdentifiers": array([s(v) for v in identifiers], "NSSet"), "NSFetchRequestTemplates": UID(0)}
    return plistlib.dumps({"$version": 100000, "$archiver": "NSKeyedArchiver", "$top": {"root": root}, "$objects": objects},
                          fmt=plistlib.FMT_BINARY, sort_keys=False)


def blob(version):
    c = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    return c.compress(archive(version)) + c.flush()


def main():
    for arg in sys.argv[1:] or ["1", "2", "3"]:
        version = int(arg)
        path = "samples/make-coredata-v%d.sql" % version
        with open(path, encoding="utf-8") as f:
            script = f.read()
        line = "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (X'%s');" % blob(version).hex().upper()
        script, n = re.subn(r"^INSERT INTO Z_MODELCACHE \(Z_CONTENT\) VALUES \(X'[0-9A-F]*'\);$", line, script, flags=re.M)
        if n != 1:
            sys.exit("%s: no Z_MODELCACHE insert to replace" % path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(script)


if __name__ == "__main__":
    main()
