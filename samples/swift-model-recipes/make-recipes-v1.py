#!/usr/bin/env python3
"""Writes recipes-v1.json and the CSV tables directory recipes-v1-tables/: a recipe book exported at
1.0.0 of Recipes.swift, written here with Python's json and csv (not by tripconv), for the tests of a
plan's run. Two recipes share the title "Pancakes" (2.0.0 makes titles unique); quantities are Int
(2.0.0 makes them String); a note is missing (3.0.0 makes summary required, default ""); the chefs
are an entity 3.0.0 removes.

`make-recipes-v1.py DIR --recipes N [--distinct FRACTION] [--seed S]` writes DIR/recipes-v1-N.jsonl
instead: N recipes at 1.0.0 in JSON Lines (N/100 chefs, N recipes of which FRACTION (default 0.75)
have distinct 18-byte titles, the rest repeating one of them, N ingredients each belonging to a
recipe), for the benchmarks and the tests of a plan's deduplication in bounded memory."""
import csv
import json
import os
import sys

CHEFS = [{"@key": 1, "name": "Ana"}, {"@key": 2, "name": "Ben"}]
RECIPES = [
    {"@key": 1, "title": "Pancakes", "servings": 4, "notes": "fluffy", "chef": 1},
    {"@key": 2, "title": "Soup", "servings": 2, "notes": None, "chef": 2},
    {"@key": 3, "title": "Pancakes", "servings": 6, "notes": None, "chef": 2},
    {"@key": 4, "title": "Salad", "servings": 1, "notes": "quick", "chef": None},
]
INGREDIENTS = [
    {"@key": 1, "name": "flour", "quantity": 200, "recipe": 1},
    {"@key": 2, "name": "milk", "quantity": 300, "recipe": 1},
    {"@key": 3, "name": "leek", "quantity": 2, "recipe": 2},
    {"@key": 4, "name": "egg", "quantity": 3, "recipe": 3},
]


def graph():
    chefs = [dict(c, recipes=[r["@key"] for r in RECIPES if r["chef"] == c["@key"]]) for c in CHEFS]
    recipes = [dict(r, ingredients=[i["@key"] for i in INGREDIENTS if i["recipe"] == r["@key"]]) for r in RECIPES]
    return {"Chef": chefs, "Recipe": recipes, "Ingredient": INGREDIENTS}


def write(folder):
    with open(os.path.join(folder, "recipes-v1.json"), "w") as f:
        json.dump(graph(), f, indent=2)
        f.write("\n")
    tables = os.path.join(folder, "recipes-v1-tables")
    os.makedirs(tables, exist_ok=True)
    for name, rows, columns in [("Chef", CHEFS, ["@key", "name"]),
                                ("Recipe", RECIPES, ["@key", "title", "servings", "notes", "chef"]),
                                ("Ingredient", INGREDIENTS, ["@key", "name", "quantity", "recipe"])]:
        with open(os.path.join(tables, name + ".csv"), "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(columns)
            for row in rows:
                out.writerow(["" if row[c] is None else row[c] for c in columns])


def write_large(folder, n, distinct_fraction, seed):
    import random
    rng = random.Random(seed)
    distinct = max(1, int(n * distinct_fraction))
    titles = list(range(distinct)) + [rng.randrange(distinct) for _ in range(n - distinct)]
    rng.shuffle(titles)
    chefs = max(1, n // 100)
    path = os.path.join(folder, "recipes-v1-%d.jsonl" % n)
    with open(path, "w") as f:
        for c in range(1, chefs + 1):
            f.write(json.dumps({"@entity": "Chef", "@key": c, "name": "chef %d" % c,
                                "recipes": list(range(c, n + 1, chefs))}) + "\n")
        for r in range(1, n + 1):
            notes = None if rng.random() < 0.3 else "notes %d" % rng.randrange(1000)
            f.write(json.dumps({"@entity": "Recipe", "@key": r, "title": "Recipe %011d" % titles[r - 1],
                                "servings": rng.randrange(1, 9), "notes": notes, "ingredients": [r],
                                "chef": (r - 1) % chefs + 1}) + "\n")
        for i in range(1, n + 1):
            f.write(json.dumps({"@entity": "Ingredient", "@key": i, "name": "ingredient %d" % i,
                                "quantity": rng.randrange(1, 500), "recipe": i}) + "\n")
    return path


if __name__ == "__main__":
    args = sys.argv[1:]
    folder = args[0] if args and not args[0].startswith("--") else os.path.dirname(os.path.abspath(__file__))
    if "--recipes" in args:
        def option(name, default):
            return args[args.index(name) + 1] if name in args else default
        print(write_large(folder, int(option("--recipes", 0)), float(option("--distinct", 0.75)), int(option("--seed", 1))))
    else:
        write(folder)
