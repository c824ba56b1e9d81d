#!/usr/bin/env python3
"""The recipe book of samples/swift-model-recipes at 1.0.0 (three entities with references), N objects
as JSON Lines in the shape tripconv writes (one object a line, "@entity" first, entity by entity:
Chef, Recipe, Ingredient), written here by Python's json, not by tripconv, for the benchmark's
object tasks (issue 27).

    recipes_data.py N OUT.jsonl      # prints: objects chefs recipes ingredients distinct_titles

Per recipe 0-5 ingredients (i % 6, as tripgen's 0-5 bucket-list items), a chef per 40 recipes (every
tenth recipe has none), notes on two recipes in three; 10 % of the recipes repeat an earlier title
(2.0.0 makes titles unique: the plan's dedupe merges them); 2 % of the texts are nasty (quotes,
commas, a newline, CR LF, non-ASCII). Quantities are Int (2.0.0 makes them String). The same N gives
the same bytes; about N objects (the counts are printed, the last line of the file's `.counts`).
"""
import json
import os
import random
import sys

NASTY = ['say "hi", then go', "two\nlines", "crlf\r\nhere", "Crème brûlée — ½ tsp", "tab\there, and; more"]


def text(rng, base):
    return base + " " + rng.choice(NASTY) if rng.random() < 0.02 else base


def write(n, path):
    rng = random.Random(1)
    recipes = max(1, round(n / (1 + 2.5 + 1 / 40)))
    chefs = max(1, (recipes + 39) // 40)
    titles, recipe_rows, chef_recipes = [], [], [[] for _ in range(chefs)]
    ingredient_rows = []
    for r in range(1, recipes + 1):
        if titles and rng.random() < 0.10:
            title = rng.choice(titles)
        else:
            title = text(rng, "Recipe %d" % r)
            titles.append(title)
        chef = None if r % 10 == 0 else (r - 1) % chefs + 1
        if chef:
            chef_recipes[chef - 1].append(r)
        first = len(ingredient_rows) + 1
        for i in range(r % 6):
            ingredient_rows.append((text(rng, "ingredient %d" % rng.randrange(5000)), rng.randrange(1, 1000), r))
        notes = None if r % 3 == 0 else text(rng, "notes of recipe %d" % r)
        recipe_rows.append((title, 1 + r % 8, notes, list(range(first, len(ingredient_rows) + 1)), chef))
    tmp = path + ".part"
    dump = lambda o: json.dumps(o, ensure_ascii=False, separators=(", ", ": "))
    with open(tmp, "w", encoding="utf-8") as f:
        for c in range(1, chefs + 1):
            f.write(dump({"@entity": "Chef", "@key": c, "name": "Chef %d" % c, "recipes": chef_recipes[c - 1]}) + "\n")
        for k, (title, servings, notes, ingredients, chef) in enumerate(recipe_rows, 1):
            f.write(dump({"@entity": "Recipe", "@key": k, "title": title, "servings": servings, "notes": notes,
                          "ingredients": ingredients, "chef": chef}) + "\n")
        for k, (name, quantity, recipe) in enumerate(ingredient_rows, 1):
            f.write(dump({"@entity": "Ingredient", "@key": k, "name": name, "quantity": quantity, "recipe": recipe}) + "\n")
    counts = (chefs + recipes + len(ingredient_rows), chefs, recipes, len(ingredient_rows), len(titles))
    with open(path + ".counts", "w") as f:
        f.write(" ".join(map(str, counts)) + "\n")
    os.replace(tmp, path)
    return counts


def counts(path):
    """(objects, chefs, recipes, ingredients, distinct titles) of a file `write` made."""
    with open(path + ".counts") as f:
        return tuple(int(x) for x in f.read().split())


if __name__ == "__main__":
    print(*write(int(sys.argv[1]), sys.argv[2]))
