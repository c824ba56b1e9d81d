#!/usr/bin/env python3
"""A Core Data store of N objects across three entities with relationships, laid out as Core Data lays
one out (written by Python's sqlite3, not by tripconv), for the store-reading benchmark (issue 26).

    coredata_graph.py N OUT.store

Entities (numbers as Core Data gives them, by name): Author (1), Book (2), Tag (3); N/10 authors, N*8/10
books, N/10 tags. Author: name (unique), born (Date), rating (Double), id (UUID); its books an ordered
to-many (Book.author, Z_FOK_AUTHOR). Book: title, pages (Int32), published (Date), inPrint (Bool),
author (to-one); tags a many-to-many with Tag.books (join table Z_2TAGS, one or two tags a book).
Foreign keys are indexed as Core Data indexes them. The same N gives the same bytes.
"""
import os
import random
import sqlite3
import sys


def write(n, path):
    authors, tags = max(1, n // 10), max(1, n // 10)
    books = max(1, n - authors - tags)
    tmp = path + ".part"
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(tmp + suffix):
            os.remove(tmp + suffix)
    rng = random.Random(1)
    db = sqlite3.connect(tmp, isolation_level=None)
    db.executescript("""
    PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
    CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
    CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
    CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
    CREATE TABLE ZAUTHOR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBORN TIMESTAMP, ZRATING FLOAT,
        ZNAME VARCHAR, ZID BLOB );
    CREATE TABLE ZBOOK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZINPRINT INTEGER, ZPAGES INTEGER,
        ZAUTHOR INTEGER, Z_FOK_AUTHOR INTEGER, ZPUBLISHED TIMESTAMP, ZTITLE VARCHAR );
    CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR );
    CREATE TABLE Z_2TAGS ( Z_2BOOKS INTEGER, Z_3TAGS INTEGER, PRIMARY KEY (Z_2BOOKS, Z_3TAGS) );
    """)
    db.execute("BEGIN")
    db.executemany("INSERT INTO Z_PRIMARYKEY VALUES (?, ?, 0, ?)", [(1, "Author", authors), (2, "Book", books), (3, "Tag", tags)])
    db.execute("INSERT INTO Z_METADATA VALUES (1, 'BENCH', NULL)")
    db.executemany("INSERT INTO ZAUTHOR VALUES (?, 1, 1, ?, ?, ?, ?)", (
        (k, rng.uniform(-1e9, 7e8), round(rng.uniform(0, 5), 2), "Author %d" % k, rng.randbytes(16)) for k in range(1, authors + 1)))
    fok = [0] * (authors + 1)

    def book(k):
        a = rng.randint(1, authors)
        fok[a] += 1
        return (k, rng.randint(0, 1), rng.randint(20, 2000), a, fok[a] * 1024, rng.uniform(0, 7e8), "Book %d of the series" % k)
    db.executemany("INSERT INTO ZBOOK VALUES (?, 2, 1, ?, ?, ?, ?, ?, ?)", (book(k) for k in range(1, books + 1)))
    db.executemany("INSERT INTO ZTAG VALUES (?, 3, 1, ?)", ((k, "tag-%d" % k) for k in range(1, tags + 1)))

    def pairs():
        for k in range(1, books + 1):
            first = rng.randint(1, tags)
            yield (k, first)
            if rng.random() < 0.5:
                second = rng.randint(1, tags)
                if second != first:
                    yield (k, second)
    db.executemany("INSERT INTO Z_2TAGS VALUES (?, ?)", pairs())
    for sql in ["CREATE UNIQUE INDEX Z_Author_UNIQUE_name ON ZAUTHOR (ZNAME COLLATE BINARY ASC)",
                "CREATE INDEX ZBOOK_ZAUTHOR_INDEX ON ZBOOK (ZAUTHOR)",
                "CREATE INDEX Z_2TAGS_Z_3TAGS_INDEX ON Z_2TAGS (Z_3TAGS, Z_2BOOKS)", "COMMIT"]:
        db.execute(sql)
    db.close()
    os.replace(tmp, path)
    return authors + books + tags


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(write(int(sys.argv[1]), sys.argv[2]))
