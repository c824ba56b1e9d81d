import Foundation
import Testing
import TripKit
import TripTestSupport

/// Core Data layouts beyond a join table of plain names (issue 26): join-table columns with clash
/// numbers (AddressBook's `Z_22PARENTGROUPS(Z_22CONTACTS, Z_19PARENTGROUPS1)`), a many-to-many into a
/// family of sub-entities, a to-many without an inverse (a hidden `Z<n><NAME>` on the destination's
/// root table) and a many-to-many that is its own inverse (`REFLEXIVE`). The stores are written by
/// the independent Python writer, filled with Python's sqlite3, and the JSON Lines read with json;
/// every format out reads back to the same objects.
@Suite("another app's store: clash-numbered, hidden and reflexive relationship layouts", .needsPython3)
struct ObjectStoreLayoutCLITests {
    /// AddressBook's groups (Z_PRIMARYKEY: ABCDRecord 17, ABCDAbstractGroup 18, ABCDGroup 19,
    /// ABCDSmartGroup 21, ABCDContact 22) in small: here AbstractGroup 1, Contact 2, Group 3, Record 4,
    /// SmartGroup 5, so the writer makes `Z_1PARENTGROUPS(Z_1CHILDGROUPS, Z_3PARENTGROUPS)` and
    /// `Z_2PARENTGROUPS(Z_2CONTACTS, Z_3PARENTGROUPS1, Z_FOK_3PARENTGROUPS)`.
    static let groups = ObjectModel(entities: [
        EntityDescription("Record", isAbstract: true, attributes: [AttributeDescription("name", .string)]),
        EntityDescription("AbstractGroup", superentity: "Record", isAbstract: true, relationships: [
            RelationshipDescription("parentGroups", to: "Group", inverse: "childGroups", toMany: true),
        ]),
        EntityDescription("Group", superentity: "AbstractGroup", relationships: [
            RelationshipDescription("childGroups", to: "AbstractGroup", inverse: "parentGroups", toMany: true),
            RelationshipDescription("contacts", to: "Contact", inverse: "parentGroups", toMany: true),
        ]),
        EntityDescription("SmartGroup", superentity: "AbstractGroup"),
        EntityDescription("Contact", superentity: "Record", relationships: [
            RelationshipDescription("parentGroups", to: "Group", inverse: "contacts", toMany: true, ordered: true),
        ]),
    ])

    /// Folder 1, Item 2, Note 3 (an Item), Person 4: `ZITEM` keeps `Z1ITEMS`, `Z_FOK_1ITEMS` and
    /// `Z1PINNED` for the folders' to-manys without an inverse; `Z_4FRIENDS(Z_4FRIENDS, REFLEXIVE)`.
    static let hidden = ObjectModel(entities: [
        EntityDescription("Folder", attributes: [AttributeDescription("name", .string)], relationships: [
            RelationshipDescription("items", to: "Item", toMany: true, ordered: true),
            RelationshipDescription("pinned", to: "Item", toMany: true),
        ]),
        EntityDescription("Item", attributes: [AttributeDescription("title", .string)]),
        EntityDescription("Note", superentity: "Item"),
        EntityDescription("Person", attributes: [AttributeDescription("name", .string)], relationships: [
            RelationshipDescription("friends", to: "Person", inverse: "friends", toMany: true),
        ]),
    ])

    /// A scratch folder with the store of `model` written and filled by `fill` (Python, the store's path in argv[1]).
    static func store(_ model: ObjectModel, rows: Int, fill: String) throws -> (dir: String, store: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-layout-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let store = dir + "/app.store"
        let written = try ModelStoreWriter.write(model, to: store, rows: rows)
        #expect(written.status == 0, "\(written.stderr)")
        let filled = try ExternalTool.python("import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n" + fill + "\nc.commit()\nprint('ok')", [store])
        #expect(filled.out == "ok\n", "\(filled.stderr)")
        return (dir, store)
    }

    @Test("join-table columns with clash numbers, an ordered one's Z_FOK_ numbered on its own, and a many-to-many into a family")
    func clashNumberedJoinColumns() throws {
        // Contacts 1, 2; groups 3, 4; smart groups 5, 6, all in ZRECORD. The writer's tables are
        // AddressBook's layout: checked first, so the test does not pass on a layout of its own.
        let (dir, store) = try Self.store(Self.groups, rows: 2, fill: """
            tables = {n: [r[1] for r in c.execute("PRAGMA table_info(%s)" % n)] for (n,) in c.execute("SELECT name FROM sqlite_master WHERE name LIKE 'Z!_%PARENTGROUPS' ESCAPE '!'")}
            assert tables == {"Z_1PARENTGROUPS": ["Z_1CHILDGROUPS", "Z_3PARENTGROUPS"],
                              "Z_2PARENTGROUPS": ["Z_2CONTACTS", "Z_3PARENTGROUPS1", "Z_FOK_3PARENTGROUPS"]}, tables
            for pk in range(1, 7): c.execute("UPDATE ZRECORD SET ZNAME = ? WHERE Z_PK = ?", ("r%d" % pk, pk))
            c.executemany("INSERT INTO Z_1PARENTGROUPS VALUES (?, ?)", [(4, 3), (5, 3), (6, 4)])
            c.executemany("INSERT INTO Z_2PARENTGROUPS VALUES (?, ?, ?)", [(1, 4, 1), (1, 3, 2), (2, 3, 1)])
            """)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLI.tripconv(store, "-q", "--to", "jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let check = try ExternalTool.python("""
            import json, sys
            objects = {o["@key"]: o for o in map(json.loads, sys.stdin.read().splitlines())}
            assert sorted((k, o["@entity"]) for k, o in objects.items()) == [(1, "Contact"), (2, "Contact"), (3, "Group"),
                (4, "Group"), (5, "SmartGroup"), (6, "SmartGroup")], objects
            assert objects[1]["parentGroups"] == [4, 3] and objects[2]["parentGroups"] == [3], objects
            assert sorted(objects[3]["childGroups"]) == [4, 5] and objects[4]["childGroups"] == [6], objects
            assert objects[3]["contacts"] == [1, 2] and objects[4]["contacts"] == [1], objects
            assert [objects[k]["parentGroups"] for k in (3, 4, 5, 6)] == [[], [3], [3], [4]], objects
            assert objects[6]["name"] == "r6"
            print("ok")
            """, [], stdin: Data(run.out.utf8))
        #expect(check.out == "ok\n", "\(check.stderr)\n\(run.out)")
        try ObjectStoreCLITests.roundTrips(store, in: dir)
    }

    @Test("a join-table column that fits no name Core Data gives it, two that fit alike, a key into a family naming no row: 65 with the place",
          arguments: [("ALTER TABLE Z_2PARENTGROUPS RENAME COLUMN Z_3PARENTGROUPS1 TO ZGROUPS",
                       "Z_2PARENTGROUPS has no column Z_3PARENTGROUPS for Contact.parentGroups"),
                      ("ALTER TABLE Z_2PARENTGROUPS ADD COLUMN Z_3PARENTGROUPS2 INTEGER",
                       "Z_2PARENTGROUPS has the columns Z_3PARENTGROUPS1, Z_3PARENTGROUPS2 for Contact.parentGroups"),
                      // Group 2's childGroups, read with a LEFT JOIN into the AbstractGroup family.
                      ("INSERT INTO Z_1PARENTGROUPS VALUES (99, 2)",
                       "Z_1PARENTGROUPS row of owner Z_PK 2: column Z_1CHILDGROUPS names Z_PK 99, which no row of the relationship's destination has")])
    func joinColumnRefused(damage: String, message: String) throws {
        let (dir, store) = try Self.store(Self.groups, rows: 1, fill: "c.execute('\(damage)')")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLI.tripconv(store, "-q", "-o", dir + "/out.jsonl")
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.jsonl"))
    }

    @Test("to-manys without an inverse read from the destination's root table, in Z_FOK_ order; a reflexive many-to-many both ways")
    func hiddenAndReflexive() throws {
        // Folders 1-3, items 4-6, notes 7-9 (in ZITEM), people 10-12.
        let (dir, store) = try Self.store(Self.hidden, rows: 3, fill: """
            columns = [r[1] for r in c.execute("PRAGMA table_info(ZITEM)")]
            assert {"Z1ITEMS", "Z_FOK_1ITEMS", "Z1PINNED"} <= set(columns), columns
            assert [r[1] for r in c.execute("PRAGMA table_info(Z_4FRIENDS)")] == ["Z_4FRIENDS", "REFLEXIVE"]
            assert c.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'Z!_%ITEMS' ESCAPE '!'").fetchone()[0] == 0
            for pk, folder, fok, pinned in [(4, 1, 2, None), (5, 2, 1, 1), (7, 1, 1, None), (8, None, None, 1), (9, 1, 3, None)]:
                c.execute("UPDATE ZITEM SET Z1ITEMS = ?, Z_FOK_1ITEMS = ?, Z1PINNED = ?, ZTITLE = ? WHERE Z_PK = ?", (folder, fok, pinned, "t%d" % pk, pk))
            c.executemany("INSERT INTO Z_4FRIENDS VALUES (?, ?)", [(10, 11), (11, 12), (12, 11)])
            """)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLI.tripconv(store, "-q", "--to", "jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let check = try ExternalTool.python("""
            import json, sys
            objects = {(o["@entity"], o["@key"]): o for o in map(json.loads, sys.stdin.read().splitlines())}
            assert len(objects) == 12, objects
            folders = [objects[("Folder", k)] for k in (1, 2, 3)]
            assert [f["items"] for f in folders] == [[7, 4, 9], [5], []], folders
            assert [sorted(f["pinned"]) for f in folders] == [[5, 8], [], []], folders
            assert [objects[("Person", k)]["friends"] for k in (10, 11, 12)] == [[11], [10, 12], [11]], objects
            assert objects[("Note", 9)]["title"] == "t9" and "items" not in objects[("Item", 4)], objects
            print("ok")
            """, [], stdin: Data(run.out.utf8))
        #expect(check.out == "ok\n", "\(check.stderr)\n\(run.out)")
        try ObjectStoreCLITests.roundTrips(store, in: dir)
    }

    @Test("a hidden to-many key naming no owner row is refused with table, row and column, nothing written")
    func hiddenDangling() throws {
        let (dir, store) = try Self.store(Self.hidden, rows: 1, fill: "c.execute('UPDATE ZITEM SET Z1PINNED = 99 WHERE Z_PK = 3')")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLI.tripconv(store, "-q", "-o", dir + "/out.jsonl")
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("ZITEM row Z_PK 3: column Z1PINNED names Z_PK 99, which no row of the relationship's owner has"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.jsonl"))
    }
}
