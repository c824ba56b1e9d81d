import Foundation
import Testing
import TripKit
import TripTestSupport

/// A to-one relationship the model requires (`var guide: Guide`, no `?`) is enforced on the objects
/// written: an object whose required to-one names no object (given as null, absent, or naming an
/// object there is not) is rejected with its origin and a reason naming the relationship, an object
/// whose required to-one names such a rejected object is rejected too, and every other reference to
/// a rejected object is removed from the object that makes it. Was: every such object was written
/// with the relationship empty (a SwiftData app would fail to save it).
@Suite("a required to-one relationship that names no object rejects its object")
struct RequiredRelationshipCLITests {
    /// The model's entities are in their names' order (no `VersionedSchema` lists them): Booking
    /// before Tour, so a booking is given before the tour that makes it rejected.
    static let source = """
        import SwiftData

        @Model final class Booking {
            var customer: String
            var tour: Tour
            init(customer: String, tour: Tour) { self.customer = customer; self.tour = tour }
        }

        \(guideAndTour(guide: "Guide", more: "@Relationship(deleteRule: .cascade, inverse: \\Booking.tour) var bookings: [Booking] = []"))

        @Model final class Review {
            var text: String
            var tour: Tour?
            init(text: String) { self.text = text }
        }

        """

    /// The export as Python's json writes it: Tour 2's guide null, Tour 3's absent, Tour 4's naming no
    /// Guide; Bookings 2 and 3 name Tours 2 and 4; Review 2 names Tour 3 (optional); Guide 1 lists all four.
    static let jsonWriter = """
        import json, sys
        rows = [
            {"@entity": "Booking", "@key": 1, "customer": "Bo", "tour": 1},
            {"@entity": "Booking", "@key": 2, "customer": "Cy", "tour": 2},
            {"@entity": "Booking", "@key": 3, "customer": "Di", "tour": 4},
            {"@entity": "Guide", "@key": 1, "name": "Ann", "tours": [1, 2, 3, 4]},
            {"@entity": "Tour", "@key": 1, "title": "Alps", "guide": 1, "bookings": [1]},
            {"@entity": "Tour", "@key": 2, "title": "Lakes", "guide": None, "bookings": [2]},
            {"@entity": "Tour", "@key": 3, "title": "Caves"},
            {"@entity": "Tour", "@key": 4, "title": "Dunes", "guide": 9, "bookings": [3]},
            {"@entity": "Review", "@key": 1, "text": "great", "tour": 1},
            {"@entity": "Review", "@key": 2, "text": "wet", "tour": 3},
        ]
        with open(sys.argv[1], "w") as f:
            for r in rows: f.write(json.dumps(r) + "\\n")
        """

    /// The same objects as XML written by ElementTree: a null guide is an empty element.
    static let xmlWriter = RemovedReferenceCLITests.elementTree + """
        add('Booking', 1, {'customer': 'Bo'}, {'tour': [1]})
        add('Booking', 2, {'customer': 'Cy'}, {'tour': [2]})
        add('Booking', 3, {'customer': 'Di'}, {'tour': [4]})
        add('Guide', 1, {'name': 'Ann'}, {'tours': [1, 2, 3, 4]})
        add('Tour', 1, {'title': 'Alps'}, {'guide': [1], 'bookings': [1]})
        add('Tour', 2, {'title': 'Lakes'}, {'guide': [], 'bookings': [2]})
        add('Tour', 3, {'title': 'Caves'}, {})
        add('Tour', 4, {'title': 'Dunes'}, {'guide': [9], 'bookings': [3]})
        add('Review', 1, {'text': 'great'}, {'tour': [1]})
        add('Review', 2, {'text': 'wet'}, {'tour': [3]})
        ET.ElementTree(root).write(sys.argv[1], encoding='utf-8', xml_declaration=True)
        """

    /// The objects of a JSON Lines output, each reference checked to name an object the output holds.
    static let check = """
        import json, sys
        rows = [json.loads(line) for line in open(sys.argv[1])]
        keys = {(r['@entity'], r['@key']) for r in rows}
        dest = {'tour': 'Tour', 'tours': 'Tour', 'guide': 'Guide', 'bookings': 'Booking'}
        for r in rows:
            for member, entity in dest.items():
                if r.get(member) is None: continue
                for ref in (r[member] if isinstance(r[member], list) else [r[member]]):
                    assert (entity, ref) in keys, (r, member, ref)
            print(r['@entity'], r.get('customer') or r.get('name') or r.get('title') or r.get('text'), {m: r[m] for m in dest if m in r})
        """

    /// What the rejects file lists, one `kind source:line:column | reason` a line, in its order.
    static let rejectsList = """
        import json, sys
        for line in open(sys.argv[1]):
            r = json.loads(line)
            print(r['kind'], '%s:%s:%s' % (r['source'], r['line'], r['column']), '|', r['reason'])
        """

    static let written = "wrote 5 (Booking 1, Guide 1, Review 2, Tour 1); removed 5 references to objects not written; rejected 5;"

    static func app() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        try source.write(to: dir.appendingPathComponent("Model.swift"), atomically: true, encoding: .utf8)
        let json = try CLI.python(jsonWriter, [dir.path + "/tours.jsonl"])
        let xml = try CLI.python(xmlWriter, [dir.path + "/tours.xml"])
        #expect(json.status == 0 && xml.status == 0, "\(json.stderr)\(xml.stderr)")
        return dir
    }

    /// The objects a SQLite store holds, with their to-ones, and its foreign keys checked.
    static func stored(_ store: String) throws -> String {
        let sqlite3 = try #require(CLI.tool("sqlite3"))
        let rows = try CLI.run(sqlite3, [store, "PRAGMA foreign_key_check;",
                                         "SELECT 'Booking', customer, tour FROM Booking ORDER BY _pk;",
                                         "SELECT 'Guide', name FROM Guide ORDER BY _pk;",
                                         "SELECT 'Tour', title, guide FROM Tour ORDER BY _pk;",
                                         "SELECT 'Review', text, coalesce(tour, 'none') FROM Review ORDER BY _pk;"])
        #expect(rows.status == 0, "\(rows.stderr)")
        return rows.out
    }

    @Test("JSON Lines by Python's json: null, absent and dangling guides reject their tours and those tours' bookings; JSON Lines and SQLite agree",
          .needsPython3, .needsSQLite3)
    func jsonLines() throws {
        let dir = try Self.app()
        let input = dir.path + "/tours.jsonl", model = dir.path + "/Model.swift"
        let out = dir.path + "/out.jsonl", rejects = dir.path + "/rejects.jsonl"
        let r = try CLI.tripconv(input, "--model", model, "-o", out, "--rejects", rejects, "-v")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read 10 objects; \(Self.written)"), "\(r.stderr)")
        #expect(r.stderr.contains("tours.jsonl:10:1: 'tour': the Tour it names is rejected for a required relationship; the reference is removed"),
                "\(r.stderr)")
        let checked = try CLI.python(Self.check, [out])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(checked.out == """
            Booking Bo {'tour': 1}
            Guide Ann {'tours': [1]}
            Review great {'tour': 1}
            Review wet {'tour': None}
            Tour Alps {'guide': 1, 'bookings': [1]}

            """, "\(checked.stderr)")
        let listed = try CLI.python(Self.rejectsList, [rejects])
        #expect(listed.out == """
            rejected \(input):2:1 | Booking.tour: names a Tour that is rejected, and the model requires one
            rejected \(input):3:1 | Booking.tour: names a Tour that is rejected, and the model requires one
            rejected \(input):6:1 | Tour.guide: names no object, and the model requires one
            rejected \(input):7:1 | Tour.guide: names no object, and the model requires one
            rejected \(input):8:1 | Tour.guide: names no object, and the model requires one

            """, "\(listed.stderr)")

        let store = dir.path + "/out.sqlite", report = dir.path + "/report.json"
        let s = try CLI.tripconv(input, "--model", model, "-o", store, "--rejects", dir.path + "/store-rejects.jsonl", "--report", report)
        #expect(s.status == 0 && s.stderr.contains(Self.written), "\(s.stderr)")
        #expect(try Self.stored(store) == "Booking|Bo|1\nGuide|Ann\nTour|Alps|1\nReview|great|1\nReview|wet|none\n")
        #expect(try String(contentsOfFile: dir.path + "/store-rejects.jsonl", encoding: .utf8) == String(contentsOfFile: rejects, encoding: .utf8))
        let counts = try CLI.python("import json, sys; r = json.load(open(sys.argv[1])); print(r['read'], r['written'], r['rejected'], r['referencesRemoved'])",
                                    [report])
        #expect(counts.out == "10 5 5 5\n", "\(counts.stderr)")
    }

    @Test("XML by ElementTree: the same tours and bookings rejected, the same store", .needsPython3, .needsSQLite3)
    func xml() throws {
        let dir = try Self.app()
        let input = dir.path + "/tours.xml", store = dir.path + "/out.sqlite", rejects = dir.path + "/rejects.jsonl"
        let r = try CLI.tripconv(input, "--model", dir.path + "/Model.swift", "-o", store, "--rejects", rejects)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read 10 objects; \(Self.written)"), "\(r.stderr)")
        #expect(try Self.stored(store) == "Booking|Bo|1\nGuide|Ann\nTour|Alps|1\nReview|great|1\nReview|wet|none\n")
        let listed = try CLI.python(Self.rejectsList, [rejects])
        let reasons = listed.out.split(separator: "\n").map { $0.split(separator: "|").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        #expect(reasons == Array(repeating: "Booking.tour: names a Tour that is rejected, and the model requires one", count: 2)
                + Array(repeating: "Tour.guide: names no object, and the model requires one", count: 3), "\(listed.out)")
    }

    /// Version 1.0.0 of the app lets a tour have no guide; 2.0.0 requires one (a lightweight stage).
    static let versioned = """
        import SwiftData

        \(version(1, guide: "Guide?"))
        \(version(2, guide: "Guide"))
        enum ToursPlan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [ToursV1.self, ToursV2.self] }
            static var stages: [MigrationStage] { [migrateV1toV2] }
            static let migrateV1toV2 = MigrationStage.lightweight(fromVersion: ToursV1.self, toVersion: ToursV2.self)
        }

        """

    /// The Guide and Tour models, the tour's guide of type `guide` (`Guide?` or `Guide`), `more` its
    /// last member.
    static func guideAndTour(guide: String, more: String) -> String {
        """
        @Model final class Guide {
            var name: String
            @Relationship(inverse: \\Tour.guide) var tours: [Tour] = []
            init(name: String) { self.name = name }
        }

        @Model final class Tour {
            var title: String
            var guide: \(guide)
            \(more)
            init(title: String, guide: \(guide)) { self.title = title; self.guide = guide }
        }
        """
    }

    /// Version `n`.0.0 of the app, its tour's guide of type `guide`.
    static func version(_ n: Int, guide: String) -> String {
        """
        enum ToursV\(n): VersionedSchema {
            static var versionIdentifier = Schema.Version(\(n), 0, 0)
            static var models: [any PersistentModel.Type] { [Guide.self, Tour.self] }
            \(guideAndTour(guide: guide, more: ""))
        }

        """
    }

    @Test("through a plan: a guide optional at 1.0.0 and required at 2.0.0 rejects the tours without one at 2.0.0, not at 1.0.0",
          .needsPython3, .needsSQLite3)
    func throughAPlan() throws {
        let dir = try CLI.temporaryDirectory()
        let model = dir.path + "/Tours.swift", input = dir.path + "/v1.jsonl"
        try Self.versioned.write(toFile: model, atomically: true, encoding: .utf8)
        let made = try CLI.python("""
            import json, sys
            with open(sys.argv[1], 'w') as f:
                for o in [{'@entity': 'Guide', '@key': 1, 'name': 'Ann', 'tours': [1]},
                          {'@entity': 'Tour', '@key': 1, 'title': 'Alps', 'guide': 1},
                          {'@entity': 'Tour', '@key': 2, 'title': 'Lakes', 'guide': None}]:
                    f.write(json.dumps(o) + '\\n')
            """, [input])
        #expect(made.status == 0, "\(made.stderr)")
        // At 1.0.0 the guide may be empty: both tours written.
        let kept = try CLI.tripconv(input, "--model", model, "--source-version", "1.0.0", "--target-version", "1.0.0",
                                    "-o", dir.path + "/v1.sqlite", "--rejects", dir.path + "/v1-rejects.jsonl")
        #expect(kept.status == 0 && kept.stderr.contains("wrote 3 (Guide 1, Tour 2)") && kept.stderr.contains("rejected 0;"), "\(kept.stderr)")
        // At 2.0.0 it may not: Lakes rejected, through the store writer as through the file's.
        for out in ["v2.sqlite", "v2.jsonl"] {
            let rejects = dir.path + "/" + out + ".rejects"
            let r = try CLI.tripconv(input, "--model", model, "--source-version", "1.0.0", "-o", dir.path + "/" + out, "--rejects", rejects)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("wrote 2 (Guide 1, Tour 1)") && r.stderr.contains("rejected 1;"), "\(r.stderr)")
            #expect(r.stderr.contains("lightweight stage 1.0.0 -> 2.0.0: make relationship Tour.guide required "
                                      + "(an object whose guide names no object is rejected)"), "\(r.stderr)")
            let listed = try CLI.python(Self.rejectsList, [rejects])
            #expect(listed.out == "rejected \(input):3:1 | Tour.guide: names no object, and the model requires one\n", "\(listed.out)")
        }
        let sqlite3 = try #require(CLI.tool("sqlite3"))
        let rows = try CLI.run(sqlite3, [dir.path + "/v2.sqlite", "PRAGMA foreign_key_check;", "SELECT title, guide FROM Tour;"])
        #expect(rows.out == "Alps|1\n", "\(rows.stderr)")

        // The 1.0.0 store migrated in place: Lakes rejected there too.
        let store = dir.path + "/v1.sqlite"
        let migrated = try CLI.tripconv("migrate", store, "--model", model, "--rejects", dir.path + "/migrate.rejects")
        #expect(migrated.status == 0 && migrated.stderr.contains("rejected 1; 2 objects at 2.0.0 (Guide 1, Tour 1)"), "\(migrated.stderr)")
        let listed = try CLI.python(Self.rejectsList, [dir.path + "/migrate.rejects"])
        #expect(listed.out == "rejected \(store):None:None | Tour.guide: names no object, and the model requires one\n", "\(listed.out)")
        // Objects at 2.0.0 appended to it: the one with no guide rejected, the others added.
        let more = dir.path + "/more.jsonl"
        try """
            {"@entity": "Guide", "@key": 1, "name": "Bo", "tours": [1]}
            {"@entity": "Tour", "@key": 1, "title": "Caves", "guide": 1}
            {"@entity": "Tour", "@key": 2, "title": "Dunes"}

            """.write(toFile: more, atomically: true, encoding: .utf8)
        let appended = try CLI.tripconv(more, "--model", model, "--source-version", "2.0.0", "-o", store, "--rejects", dir.path + "/append.rejects")
        #expect(appended.status == 0 && appended.stderr.contains("rejected 1;"), "\(appended.stderr)")
        let after = try CLI.run(sqlite3, [store, "PRAGMA foreign_key_check;", "SELECT t.title, g.name FROM Tour t JOIN Guide g ON t.guide = g._pk ORDER BY t.title;",
                                          "SELECT count(*) FROM Tour;"])
        #expect(after.out == "Alps|Ann\nCaves|Bo\n2\n", "\(after.stderr)")
    }

    /// A Core Data store (written by Python as Core Data lays one out, its model cache saying
    /// `Plant.bed` is not optional) whose row has no bed, read with its own model: to JSON (a store's
    /// rows, which were written straight, now go through the check) and to a SQLite store.
    @Test("a Core Data store's row with no object in a required to-one: rejected to JSON and to SQLite, the bed's list without it",
          .needsPython3, .needsSQLite3)
    func coreDataStore() throws {
        let dir = try CLI.temporaryDirectory().path
        let model = ObjectModel(entities: [
            EntityDescription("Bed", attributes: [AttributeDescription("label", .string)],
                              relationships: [RelationshipDescription("plants", to: "Plant", inverse: "bed", toMany: true)]),
            EntityDescription("Plant", attributes: [AttributeDescription("name", .string, isOptional: false)],
                              relationships: [RelationshipDescription("bed", to: "Bed", inverse: "plants", isOptional: false)]),
        ])
        let store = dir + "/Garden.sqlite"
        let written = try ModelStoreWriter.write(model, to: store, rows: 2)
        #expect(written.status == 0, "\(written.stderr)")
        // Beds are keys 1 and 2, plants 3 and 4; plant 4 has no bed.
        let filled = try CLI.python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("UPDATE ZBED SET ZLABEL = 'bed ' || Z_PK")
            db.execute("UPDATE ZPLANT SET ZNAME = 'plant ' || Z_PK, ZBED = CASE Z_PK WHEN 3 THEN 1 ELSE NULL END")
            db.commit()
            """, [store])
        #expect(filled.status == 0, "\(filled.stderr)")
        let json = try CLI.tripconv(store, "-o", dir + "/out.json", "--rejects", dir + "/json.rejects")
        #expect(json.status == 0 && json.stderr.contains("wrote 3 (Bed 2, Plant 1)") && json.stderr.contains("rejected 1;"), "\(json.stderr)")
        let checked = try CLI.python("""
            import json, sys
            doc = json.load(open(sys.argv[1]))
            print(sorted((b['label'], b['plants']) for b in doc['Bed']), [(p['name'], p['bed']) for p in doc['Plant']])
            """, [dir + "/out.json"])
        #expect(checked.out == "[('bed 1', [3]), ('bed 2', [])] [('plant 3', 1)]\n", "\(checked.stderr)")
        let listed = try CLI.python(Self.rejectsList, [dir + "/json.rejects"])
        #expect(listed.out.hasSuffix("| Plant.bed: names no object, and the model requires one\n") && listed.out.split(separator: "\n").count == 1,
                "\(listed.out)")
        let sqlite = try CLI.tripconv(store, "-o", dir + "/out.sqlite", "--rejects", dir + "/sqlite.rejects")
        #expect(sqlite.status == 0 && sqlite.stderr.contains("rejected 1;"), "\(sqlite.stderr)")
        let sqlite3 = try #require(CLI.tool("sqlite3"))
        let rows = try CLI.run(sqlite3, [dir + "/out.sqlite", "PRAGMA foreign_key_check;", "SELECT name, bed FROM Plant;"])
        #expect(rows.out == "plant 3|1\n", "\(rows.stderr)")
    }
}
