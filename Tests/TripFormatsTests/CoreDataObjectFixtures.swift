import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// A model with every attribute kind and every kind of relationship, and a store of it written by
/// Python's sqlite3 as Core Data lays one out (not by tripconv): tables `Z<ROOT>`, `Z_PRIMARYKEY`,
/// columns `Z<NAME>`, a clash numbered `ZFORMAT1`, an ordered to-many's `Z_FOK_AUTHOR`, the
/// many-to-many join table `Z_2TAGS` with its `Z_FOK_6TAGS`, and two sub-entities in `ZMEDIA`.
enum LibraryStore {
    static let model = ObjectModel(entities: [
        EntityDescription("Audio", superentity: "Media", attributes: [
            AttributeDescription("seconds", .int32), AttributeDescription("format", .string),
        ]),
        EntityDescription("Author", attributes: [
            AttributeDescription("name", .string, isOptional: false), AttributeDescription("born", .date),
            AttributeDescription("rating", .double), AttributeDescription("score", .float),
            AttributeDescription("count16", .int16), AttributeDescription("count32", .int32), AttributeDescription("count64", .int64),
            AttributeDescription("price", .decimal), AttributeDescription("active", .bool), AttributeDescription("photo", .binary),
            AttributeDescription("settings", .transformable), AttributeDescription("id", .uuid), AttributeDescription("homepage", .uri),
            AttributeDescription("scratch", .string, isTransient: true),
        ], relationships: [
            RelationshipDescription("books", to: "Book", inverse: "author", toMany: true, ordered: true, deleteRule: .cascade),
            RelationshipDescription("mentor", to: "Author", inverse: "mentees"),
            RelationshipDescription("mentees", to: "Author", inverse: "mentor", toMany: true),
        ], uniquenessConstraints: [["name"]]),
        EntityDescription("Book", attributes: [AttributeDescription("title", .string)], relationships: [
            RelationshipDescription("author", to: "Author", inverse: "books"),
            RelationshipDescription("tags", to: "Tag", inverse: "books", toMany: true, ordered: true),
        ]),
        EntityDescription("Media", attributes: [AttributeDescription("title", .string)], relationships: [
            RelationshipDescription("book", to: "Book"),
        ]),
        EntityDescription("Tag", attributes: [AttributeDescription("label", .string)], relationships: [
            RelationshipDescription("books", to: "Book", inverse: "tags", toMany: true),
            RelationshipDescription("featured", to: "Media"),
        ]),
        EntityDescription("Video", superentity: "Media", attributes: [
            AttributeDescription("width", .int32), AttributeDescription("format", .string),
        ]),
    ])

    /// Positions in the model.
    static let audio = 0, author = 1, book = 2, media = 3, tag = 4, video = 5

    /// The Python script: writes the store at argv[1]; argv[2] `wal` leaves every row in a `-wal`
    /// (the files are copied to argv[3] while the writer still has them open), `walclosed` makes a
    /// WAL-mode store and closes it (no `-wal` is left), `damage=SQL` runs SQL after the rows are in.
    static let script = #"""
        import sqlite3, sys, uuid, plistlib, shutil, os
        path = sys.argv[1]
        mode = sys.argv[2] if len(sys.argv) > 2 else ""
        db = sqlite3.connect(path, isolation_level=None)
        if mode in ("wal", "walclosed"):
            db.execute("PRAGMA journal_mode=WAL")
        if mode == "wal":
            db.execute("PRAGMA wal_autocheckpoint=0")
        db.executescript("""
        CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
        CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
        CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
        CREATE TABLE ZAUTHOR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZACTIVE INTEGER, ZCOUNT16 INTEGER,
            ZCOUNT32 INTEGER, ZCOUNT64 INTEGER, ZMENTOR INTEGER, ZBORN TIMESTAMP, ZRATING FLOAT, ZSCORE FLOAT, ZPRICE DECIMAL,
            ZNAME VARCHAR, ZHOMEPAGE VARCHAR, ZPHOTO BLOB, ZSETTINGS BLOB, ZID BLOB );
        CREATE TABLE ZBOOK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHOR INTEGER, Z_FOK_AUTHOR INTEGER, ZTITLE VARCHAR );
        CREATE TABLE ZMEDIA ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSECONDS INTEGER, ZWIDTH INTEGER, ZBOOK INTEGER,
            ZTITLE VARCHAR, ZFORMAT VARCHAR, ZFORMAT1 VARCHAR );
        CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFEATURED INTEGER, ZLABEL VARCHAR );
        CREATE TABLE Z_2TAGS ( Z_2BOOKS INTEGER, Z_6TAGS INTEGER, Z_FOK_6TAGS INTEGER, PRIMARY KEY (Z_2BOOKS, Z_6TAGS) );
        CREATE INDEX Z_2TAGS_Z_6TAGS_INDEX ON Z_2TAGS (Z_6TAGS, Z_2BOOKS);
        CREATE INDEX ZAUTHOR_ZMENTOR_INDEX ON ZAUTHOR (ZMENTOR);
        CREATE INDEX ZBOOK_ZAUTHOR_INDEX ON ZBOOK (ZAUTHOR);
        CREATE INDEX ZMEDIA_ZBOOK_INDEX ON ZMEDIA (ZBOOK);
        CREATE INDEX ZMEDIA_Z_ENT_INDEX ON ZMEDIA (Z_ENT);
        """)
        db.execute("BEGIN")
        for row in [(1, "Author", 0, 3), (2, "Book", 0, 4), (3, "Media", 0, 3), (4, "Audio", 3, 0), (5, "Video", 3, 0), (6, "Tag", 0, 3)]:
            db.execute("INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)", row)
        db.execute("INSERT INTO Z_METADATA VALUES (1, 'F00D', ?)", (plistlib.dumps({"NSStoreType": "SQLite"}, fmt=plistlib.FMT_BINARY),))
        settings = plistlib.dumps({"theme": "dark"}, fmt=plistlib.FMT_BINARY)
        ada = uuid.UUID("1B9FD00D-CB92-46CD-8711-5297025B7822").bytes
        db.execute("INSERT INTO ZAUTHOR VALUES (1, 1, 1, 1, -7, 70000, 1099511627776, NULL, 100.5, 4.25, 1.5, 12.5, 'Ada',"
                   " 'https://example.com/ada', X'0001FF', ?, ?)", (settings, ada))
        db.execute("INSERT INTO ZAUTHOR VALUES (2, 1, 1, 0, NULL, NULL, NULL, 1, -31622400.25, NULL, NULL, 3, 'Brian', NULL, NULL, NULL, NULL)")
        db.execute("INSERT INTO ZAUTHOR VALUES (3, 1, 1, NULL, NULL, NULL, NULL, 1, NULL, NULL, NULL, NULL, 'Cléo ☕', NULL, NULL, NULL, NULL)")
        for row in [(1, 2, 1, 1, 2, "Notes"), (2, 2, 1, 1, 1, "Engines"), (3, 2, 1, 2, 1, "Poems"), (4, 2, 1, None, None, "Loose")]:
            db.execute("INSERT INTO ZBOOK VALUES (?, ?, ?, ?, ?, ?)", row)
        for row in [(1, 6, 1, 2, "math"), (2, 6, 1, 3, "poetry"), (3, 6, 1, None, "history")]:
            db.execute("INSERT INTO ZTAG VALUES (?, ?, ?, ?, ?)", row)
        for row in [(1, 1, 2), (1, 3, 1), (3, 2, 1), (2, 1, 1)]:
            db.execute("INSERT INTO Z_2TAGS VALUES (?, ?, ?)", row)
        db.execute("INSERT INTO ZMEDIA VALUES (1, 4, 1, 300, NULL, 1, 'Talk', 'mp3', NULL)")
        db.execute("INSERT INTO ZMEDIA VALUES (2, 5, 1, NULL, 1920, NULL, 'Film', NULL, 'mp4')")
        db.execute("INSERT INTO ZMEDIA VALUES (3, 3, 1, NULL, NULL, 4, 'Plain', NULL, NULL)")
        db.execute("COMMIT")
        if mode.startswith("damage="):
            db.executescript(mode[len("damage="):])
        if mode == "wal":
            os.makedirs(sys.argv[3], exist_ok=True)
            for suffix in ["", "-wal", "-shm"]:
                shutil.copyfile(path + suffix, os.path.join(sys.argv[3], "library.store" + suffix))
        """#

    /// Writes the store at `path` with python3; `mode` as the script's argv[2].
    static func write(_ path: String, _ arguments: [String] = []) throws {
        let r = try ExternalTool.python(script, [path] + arguments)
        guard r.status == 0 else { throw TripError.data("the fixture script failed: \(r.stderr)") }
    }

    /// Every item of a reader.
    static func drain(_ reader: CoreDataObjectReader) throws -> [ObjectReadItem] {
        var out: [ObjectReadItem] = []
        while let item = try reader.next() { out.append(item) }
        return out
    }

    /// The objects of a reader (failing on a record set aside).
    static func objects(_ reader: CoreDataObjectReader) throws -> [ObjectRecord] {
        try drain(reader).map { item in
            switch item {
            case .object(let o): return o
            case .rejected(let r): throw TripError.data("set aside: \(r.reason)")
            }
        }
    }

    /// SHA-256 of each file in a directory (by name), through python3's hashlib.
    static func checksums(_ directory: String) throws -> String {
        let r = try ExternalTool.python(
            "import hashlib, os, sys\nd = sys.argv[1]\nfor f in sorted(os.listdir(d)): print(f, hashlib.sha256(open(os.path.join(d, f), 'rb').read()).hexdigest())",
            [directory])
        return r.out
    }
}

extension ObjectRecord {
    /// The references of the relationship named `name` of the entity's relationships in `model`.
    func references(_ name: String, in model: ObjectModel) -> [ObjectReference] {
        relationships[model.allRelationships(of: entity).firstIndex { $0.name == name }!].array
    }

    /// The value of the attribute named `name`.
    func value(_ name: String, in model: ObjectModel) -> ObjectValue {
        attributes[model.allAttributes(of: entity).firstIndex { $0.name == name }!]
    }
}
