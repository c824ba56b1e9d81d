#!/usr/bin/env python3
"""Writes the samples that other tools wrote (samples/dialect-*), with those tools' own writers:
Python's csv module in the ways spreadsheets and scripts write CSV, ElementTree for XML with fields
as attributes, PyYAML in flow style. R's write.csv shape is written by hand (R is not a dependency):
it is what write.csv(df) prints for a data frame of these trips.

Run from the repository root: python3 samples/make-dialects.py
"""
import csv
import xml.etree.ElementTree as ET

import yaml

# A 1.0.0 export: "Lisbon Break" and "Alps Hike" each appear twice, with different bucket lists.
V1 = [
    {"name": "Lisbon Break", "destination": "Lisbon, Portugal", "start_date": "2023-04-10T09:00:00Z",
     "end_date": "2023-04-14T18:00:00Z",
     "bucketListItem": [{"title": "Tram 28", "details": "Board at Martim Moniz", "hasReservation": False, "isInPlan": True},
                        {"title": "Pastéis de Belém", "details": "", "hasReservation": False, "isInPlan": True}],
     "livingAccommodations": {"address": "Rua Augusta 100", "placeName": "Casa \"Azul\""}},
    {"name": "Alps Hike", "destination": "Zermatt; Switzerland", "start_date": "2023-07-01T06:00:00Z",
     "end_date": "2023-07-08T17:00:00Z",
     "bucketListItem": [{"title": "Gornergrat", "details": "First train up, 7:00", "hasReservation": True, "isInPlan": True}],
     "livingAccommodations": None},
    {"name": "Lisbon Break", "destination": "Lisbon, Portugal", "start_date": "2023-04-10T09:00:00Z",
     "end_date": "2023-04-15T12:00:00Z",
     "bucketListItem": [{"title": "Tram 28", "details": "Board at Martim Moniz", "hasReservation": False, "isInPlan": True},
                        {"title": "Sintra", "details": "Pena Palace & gardens", "hasReservation": True, "isInPlan": False},
                        {"title": "", "details": "a day left open", "hasReservation": False, "isInPlan": False}],
     "livingAccommodations": {"address": "Rua Augusta 100", "placeName": "Casa \"Azul\""}},
    {"name": "Alps Hike", "destination": "Zermatt; Switzerland", "start_date": "2023-07-01T06:00:00Z",
     "end_date": "2023-07-08T17:00:00Z",
     "bucketListItem": [{"title": "Matterhorn Glacier Paradise", "details": "Cable car, <3883 m>", "hasReservation": False, "isInPlan": True}],
     "livingAccommodations": {"address": "Bahnhofstrasse 5", "placeName": "Hotel Bellevue"}},
]

ITEM_FIELDS = ["title", "details", "hasReservation", "isInPlan"]


def flatten(trips, start, end, items, place):
    """Miller's flatten convention, the way a script that builds its rows writes it."""
    longest = max(len(t[items]) for t in trips)
    header = ["name", "destination", start, end, place + ".address", place + ".placeName"]
    for n in range(1, longest + 1):
        header += [f"{items}.{n}.{f}" for f in ITEM_FIELDS]
    rows = []
    for t in trips:
        p = t[place]
        row = [t["name"], t["destination"], t[start], t[end], p and p["address"], p and p["placeName"]]
        for n in range(longest):
            if n < len(t[items]):
                i = t[items][n]
                row += [i["title"], i["details"], "true" if i["hasReservation"] else "false", "true" if i["isInPlan"] else "false"]
            else:
                row += [None, None, None, None]   # csv writes None as an empty field
        rows.append(row)
    return header, rows


def v3(trips):
    return [{"name": t["name"], "destination": t["destination"], "startDate": t["start_date"], "endDate": t["end_date"],
             "bucketList": t["bucketListItem"], "livingAccommodation": t["livingAccommodations"]} for t in trips]


# 1. Every field quoted, as Python's QUOTE_ALL, R and csvkit write: empty cells are "".
header, rows = flatten(V1, "start_date", "end_date", "bucketListItem", "livingAccommodations")
with open("samples/dialect-quote-all-v1.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f, quoting=csv.QUOTE_ALL)
    w.writerow(header)
    w.writerows(rows)

# 2. A European spreadsheet's export: Excel's sep=; first line, semicolons, CRLF, a UTF-8 BOM.
header, rows = flatten(v3(V1[:2]), "startDate", "endDate", "bucketList", "livingAccommodation")
with open("samples/dialect-semicolon-sep.csv", "w", newline="", encoding="utf-8-sig") as f:
    f.write("sep=;\r\n")
    w = csv.writer(f, delimiter=";")
    w.writerow(header)
    w.writerows(rows)

# 3. A spreadsheet's "Unicode text" export: UTF-16 LE with its BOM, tab-separated, CRLF.
header, rows = flatten(v3(V1[2:]), "startDate", "endDate", "bucketList", "livingAccommodation")
with open("samples/dialect-unicode-text.txt", "w", newline="", encoding="utf-16") as f:
    w = csv.writer(f, delimiter="\t")
    w.writerow(header)
    w.writerows(rows)

# 4. R's write.csv(df): row names under an unnamed first column, every name and string quoted,
#    logicals bare (TRUE/FALSE), and NA (bare) for a missing value.
header, rows = flatten(v3(V1[:2]), "startDate", "endDate", "bucketList", "livingAccommodation")
with open("samples/dialect-r-write.csv", "w", newline="", encoding="utf-8") as f:
    def cell(h, v):
        if v is None:
            return "NA"
        if h.endswith(("hasReservation", "isInPlan")):
            return v.upper()
        return '"' + v.replace('"', '""') + '"'
    f.write(",".join(['""'] + ['"' + h + '"' for h in header]) + "\n")
    for n, row in enumerate(rows, 1):
        f.write(",".join([f'"{n}"'] + [cell(h, v) for h, v in zip(header, row)]) + "\n")

# 5. XML with fields as attributes, the way ElementTree writes objects as elements with attributes.
root = ET.Element("trips", schemaVersion="1.0.0")
for t in V1:
    trip = ET.SubElement(root, "trip", name=t["name"], destination=t["destination"],
                         start_date=t["start_date"], end_date=t["end_date"])
    items = ET.SubElement(trip, "bucketListItem")
    for i in t["bucketListItem"]:
        ET.SubElement(items, "bucketListItem", title=i["title"], details=i["details"],
                      hasReservation="true" if i["hasReservation"] else "false",
                      isInPlan="true" if i["isInPlan"] else "false")
    if t["livingAccommodations"]:
        ET.SubElement(trip, "livingAccommodations", **t["livingAccommodations"])
ET.indent(root)
ET.ElementTree(root).write("samples/dialect-attributes-v1.xml", encoding="utf-8", xml_declaration=True)

# 6. PyYAML in flow style, 1.0.0 with the old spellings.
with open("samples/dialect-flow-v1.yaml", "w", encoding="utf-8") as f:
    yaml.safe_dump(V1, f, default_flow_style=True, allow_unicode=True, sort_keys=False, width=100)
