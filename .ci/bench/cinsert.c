/* cinsert: the floor for "JSON -> SQLite store". A plain C program that inserts the very rows
 * tripconv's store holds, with prepared statements (one row per sqlite3_step) in one transaction,
 * under the same pragmas tripconv uses for a new store (journal_mode OFF, synchronous OFF,
 * locking_mode EXCLUSIVE). It does no parsing: the runner (bench.py) dumps tripconv's output store
 * into a flat row file first, so this measures only what SQLite itself costs.
 *
 *   cc -O2 -o cinsert cinsert.c -lsqlite3
 *   cinsert SCHEMA.sql INSERTS.sql ROWS.bin OUT.db
 *
 * SCHEMA.sql: the CREATE statements (sqlite3 STORE .schema). INSERTS.sql: one INSERT statement with
 * ? parameters per line, line k for table k. ROWS.bin: rows, each [u8 table][u8 ncols] then per value
 * [u8 type 'n'|'i'|'f'|'t'|'b'][u32 little-endian length][bytes] (integers and reals as decimal text).
 * Prints "rows N" on success. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TABLES 16

static void die(const char *what, sqlite3 *db) {
    fprintf(stderr, "cinsert: %s%s%s\n", what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
    exit(1);
}

static char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) die(path, NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) die("cannot read input", NULL);
    buf[n] = 0;
    fclose(f);
    *size = (size_t)n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: cinsert SCHEMA.sql INSERTS.sql ROWS.bin OUT.db\n"); return 64; }
    size_t schemaSize, insertsSize, rowsSize;
    char *schema = slurp(argv[1], &schemaSize);
    char *inserts = slurp(argv[2], &insertsSize);
    unsigned char *rows = (unsigned char *)slurp(argv[3], &rowsSize);

    remove(argv[4]);
    sqlite3 *db;
    if (sqlite3_open(argv[4], &db) != SQLITE_OK) die("open", db);
    if (sqlite3_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
                         "BEGIN", NULL, NULL, NULL) != SQLITE_OK) die("pragmas", db);
    if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) die("schema", db);

    sqlite3_stmt *stmts[MAX_TABLES] = {0};
    int tables = 0;
    for (char *line = strtok(inserts, "\n"); line && tables < MAX_TABLES; line = strtok(NULL, "\n")) {
        if (sqlite3_prepare_v2(db, line, -1, &stmts[tables], NULL) != SQLITE_OK) die("prepare", db);
        tables++;
    }

    size_t at = 0;
    long count = 0;
    char number[64];
    while (at + 2 <= rowsSize) {
        int table = rows[at], ncols = rows[at + 1];
        at += 2;
        if (table >= tables) die("row for an unknown table", NULL);
        sqlite3_stmt *s = stmts[table];
        for (int c = 0; c < ncols; c++) {
            unsigned char type = rows[at];
            uint32_t len = (uint32_t)rows[at + 1] | (uint32_t)rows[at + 2] << 8 | (uint32_t)rows[at + 3] << 16 |
                           (uint32_t)rows[at + 4] << 24;
            const char *bytes = (const char *)rows + at + 5;
            at += 5 + len;
            int rc;
            switch (type) {
            case 'n': rc = sqlite3_bind_null(s, c + 1); break;
            case 'i': memcpy(number, bytes, len); number[len] = 0;
                      rc = sqlite3_bind_int64(s, c + 1, strtoll(number, NULL, 10)); break;
            case 'f': memcpy(number, bytes, len); number[len] = 0;
                      rc = sqlite3_bind_double(s, c + 1, strtod(number, NULL)); break;
            case 't': rc = sqlite3_bind_text(s, c + 1, bytes, (int)len, SQLITE_STATIC); break;
            default:  rc = sqlite3_bind_blob(s, c + 1, bytes, (int)len, SQLITE_STATIC); break;
            }
            if (rc != SQLITE_OK) die("bind", db);
        }
        if (sqlite3_step(s) != SQLITE_DONE) die("insert", db);
        sqlite3_reset(s);
        count++;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die("commit", db);
    for (int t = 0; t < tables; t++) sqlite3_finalize(stmts[t]);
    if (sqlite3_close(db) != SQLITE_OK) die("close", db);
    printf("rows %ld\n", count);
    return 0;
}
