#!/usr/bin/env python3
"""Writes recipes-v1.json and the CSV tables directory recipes-v1-tables/: a recipe book exported at
1.0.0 of Recipes.swift, written here with Python's json and csv (not by tripconv), for the tests of a
plan's run. Two recipes share the title "Pancakes" (2.0.0 makes titles unique); quantities are Int
(2.0.0 makes them String); a note is missing (3.0.0 makes summary required, default ""); the chefs
are an entity 3.0.0 removes."""
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


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
