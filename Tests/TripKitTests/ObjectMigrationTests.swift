import Testing
@testable import TripKit

/// An app's plan run on its objects: each derived step on an object, the refusals, and the duplicates'
/// resolution under each policy with references pointed at the survivors, every record accounted for.
@Suite struct ObjectMigrationTests {
    /// 1.0.0: Shelf, Author, Book (in that order). 2.0.0 (custom): Shelf removed, Author renamed Writer,
    /// Book's title unique, pages String -> Int64, isbn renamed code, blurb removed, rating and edition
    /// made required (rating with a default), lang added with a default, sequels renamed followUps,
    /// prequel added, shelf removed.
    static let v1 = ObjectModel(entities: [
        EntityDescription("Shelf", attributes: [AttributeDescription("label", .string, isOptional: false)]),
        EntityDescription("Author", attributes: [AttributeDescription("name", .string, isOptional: false)]),
        EntityDescription("Book", attributes: [
            AttributeDescription("title", .string, isOptional: false), AttributeDescription("pages", .string),
            AttributeDescription("isbn", .string), AttributeDescription("blurb", .string),
            AttributeDescription("rating", .int64), AttributeDescription("edition", .int64),
        ], relationships: [
            RelationshipDescription("author", to: "Author"), RelationshipDescription("sequels", to: "Book", toMany: true),
            RelationshipDescription("shelf", to: "Shelf"),
        ]),
    ], versionIdentifiers: ["1.0.0"])

    static let v2 = ObjectModel(entities: [
        EntityDescription("Writer", attributes: [AttributeDescription("name", .string, isOptional: false)], renamingIdentifier: "Author"),
        EntityDescription("Book", attributes: [
            AttributeDescription("title", .string, isOptional: false), AttributeDescription("pages", .int64),
            AttributeDescription("code", .string, renamingIdentifier: "isbn"),
            AttributeDescription("rating", .int64, isOptional: false, defaultValue: .int(0)),
            AttributeDescription("edition", .int64, isOptional: false),
            AttributeDescription("lang", .string, isOptional: false, defaultValue: .string("en")),
            AttributeDescription("subtitle", .string),
        ], relationships: [
            RelationshipDescription("writer", to: "Writer", renamingIdentifier: "author"),
            RelationshipDescription("followUps", to: "Book", toMany: true, renamingIdentifier: "sequels"),
            RelationshipDescription("prequel", to: "Book"),
        ], uniquenessConstraints: [["title"]]),
    ], versionIdentifiers: ["2.0.0"])

    static let plan = ModelPlan(versions: [v1, v2], stages: [ModelPlan.Stage(.custom, from: "1.0.0", to: "2.0.0", hooks: ["willMigrate"])])

    static func origin(_ n: Int) -> RecordOrigin { RecordOrigin(source: "books.json", record: n, line: n, column: 1) }

    /// A v1 Book: title, pages, rating, edition; sequels and shelf references.
    static func book(_ key: Int64, _ title: String, pages: String? = "10", rating: Int64? = 3, edition: Int64? = 1, author: Int64? = 1,
                     sequels: [Int64] = [], shelf: Int64? = nil, isbn: String? = nil) -> ObjectRecord {
        ObjectRecord(entity: 2, key: key,
                     attributes: [.string(title), pages.map(ObjectValue.string) ?? .null, isbn.map(ObjectValue.string) ?? .null,
                                  .string("a blurb"), rating.map(ObjectValue.int) ?? .null, edition.map(ObjectValue.int) ?? .null],
                     relationships: ObjectRelationships([author.map { [ObjectReference(entity: 1, key: $0)] } ?? [],
                                                         sequels.map { ObjectReference(entity: 2, key: $0) },
                                                         shelf.map { [ObjectReference(entity: 0, key: $0)] } ?? []]),
                     origin: origin(Int(key) + 10))
    }

    static let shelf = ObjectRecord(entity: 0, key: 1, attributes: [.string("top")], relationships: [], origin: origin(1))
    static let author = ObjectRecord(entity: 1, key: 1, attributes: [.string("Ann")], relationships: [], origin: origin(2))

    @Test func eachStepKindMapsAnObject() throws {
        let migration = try ObjectMigration(plan: Self.plan, from: "1.0.0")
        #expect(migration.target.entities.map(\.name) == ["Writer", "Book"])
        var counts = ObjectMigration.Counts()
        guard case .object(let book) = migration.migrate(Self.book(5, "Dune", pages: "412", rating: nil, sequels: [6], shelf: 1, isbn: "978"),
                                                         counts: &counts) else { Issue.record("set aside"); return }
        #expect(book.entity == 1 && book.key == 5)
        #expect(book.attributes == [.string("Dune"), .int(412), .string("978"), .int(0), .int(1), .string("en"), .null])
        // writer (Author renamed Writer: entity 1 -> 0), followUps (sequels), prequel (new, empty); the shelf is gone.
        #expect(book.relationships == [[ObjectReference(entity: 0, key: 1)], [ObjectReference(entity: 1, key: 6)], []])
        #expect(counts.converted == 1 && counts.filled == 2 && counts.setAside == 0 && counts.referencesRemoved == 0)
        guard case .object(let writer) = migration.migrate(Self.author, counts: &counts) else { Issue.record("set aside"); return }
        #expect(writer.entity == 0 && writer.attributes == [.string("Ann")])
    }

    /// The first pass needs an object a stage deduplicates or may set aside; an object that keeps its
    /// model's kinds and required values through every stage otherwise is left out of it.
    @Test func theFirstPassNeedsOnlyWhatAStageDeduplicatesOrMaySetAside() throws {
        // Shelf is removed, Author renamed Writer (its name required in both), Book deduplicated on title.
        let migration = try ObjectMigration(plan: Self.plan, from: "1.0.0")
        #expect(migration.firstPassEntities == [false, false, true])
        var opened: [[Bool]?] = []
        _ = try ObjectMigrationReader(migration, policy: .merge) { only in
            opened.append(only)
            return ListReader(items: [])
        }
        #expect(opened == [[false, false, true], nil])
        func needs(_ from: AttributeDescription, _ to: AttributeDescription) throws -> Bool {
            let plan = ModelPlan(versions: [ObjectModel(entities: [EntityDescription("E", attributes: [from])], versionIdentifiers: ["1"]),
                                            ObjectModel(entities: [EntityDescription("E", attributes: [to])], versionIdentifiers: ["2"])],
                                 stages: [ModelPlan.Stage(.custom, from: "1", to: "2", hooks: ["willMigrate"])])
            return try ObjectMigration(plan: plan, from: "1").firstPassEntities[0]
        }
        let required = AttributeDescription("n", .int64, isOptional: false)
        #expect(try !needs(required, AttributeDescription("n", .string, isOptional: false)))
        #expect(try !needs(AttributeDescription("n", .int16), AttributeDescription("n", .int32)))
        #expect(try !needs(required, required))
        #expect(try needs(AttributeDescription("n", .string), AttributeDescription("n", .int64)))
        #expect(try needs(AttributeDescription("n", .int64), AttributeDescription("n", .int16)))
        #expect(try needs(AttributeDescription("n", .int64), AttributeDescription("n", .int64, isOptional: false)))
        #expect(try !needs(AttributeDescription("n", .int64), AttributeDescription("n", .int64, isOptional: false, defaultValue: .int(0))))
    }

    @Test func aRemovedEntitysObjectsAreDroppedAndReferencesToThemRemoved() throws {
        let migration = try ObjectMigration(plan: Self.plan, from: "1.0.0")
        var counts = ObjectMigration.Counts()
        guard case .setAside(let record) = migration.migrate(Self.shelf, counts: &counts) else { Issue.record("written"); return }
        #expect(record.kind == .dropped && record.origin == Self.origin(1))
        #expect(record.reason == "custom stage 1.0.0 -> 2.0.0 removes entity Shelf: the object is dropped by the plan")
        #expect(counts.removed == 1)
    }

    @Test func aValueThatDoesNotConvertOrARequiredNilWithoutDefaultSetsTheObjectAside() throws {
        let migration = try ObjectMigration(plan: Self.plan, from: "1.0.0")
        var counts = ObjectMigration.Counts()
        guard case .setAside(let pages) = migration.migrate(Self.book(1, "A", pages: "12a"), counts: &counts) else { Issue.record("written"); return }
        #expect(pages.kind == .rejected && pages.origin == Self.origin(11))
        #expect(pages.reason == "custom stage 1.0.0 -> 2.0.0: Book.pages value \"12a\" does not convert losslessly to Int64")
        guard case .setAside(let edition) = migration.migrate(Self.book(2, "B", edition: nil), counts: &counts) else { Issue.record("written"); return }
        #expect(edition.reason == "custom stage 1.0.0 -> 2.0.0: Book.edition has no value, which 2.0.0 requires, and no default to fill it with")
        #expect(counts.setAside == 2)
    }

    @Test func conversionsAreLosslessOnly() {
        #expect(ObjectValueConversion.convert(.string("42"), to: .int64) == .int(42))
        #expect(ObjectValueConversion.convert(.string("042"), to: .int64) == nil)
        #expect(ObjectValueConversion.convert(.int(42), to: .string) == .string("42"))
        #expect(ObjectValueConversion.convert(.int(70000), to: .int16) == nil)
        #expect(ObjectValueConversion.convert(.double(2.5), to: .int64) == nil)
        #expect(ObjectValueConversion.convert(.double(2), to: .int32) == .int(2))
        #expect(ObjectValueConversion.convert(.int(1), to: .bool) == .bool(true))
        #expect(ObjectValueConversion.convert(.int(2), to: .bool) == nil)
        #expect(ObjectValueConversion.convert(.date(0.5), to: .double) == .double(0.5))
        #expect(ObjectValueConversion.convert(.string("2001-01-01T00:00:01Z"), to: .date) == .date(1))
        #expect(ObjectValueConversion.convert(.null, to: .int64) == .null)
    }

    @Test("String to Date keeps every fraction digit the text has, in any zone, or is refused")
    func stringToDateDigits() {
        // 2024-01-01T00:00:00Z is 725,760,000 s after 2001; a Double there is spaced about 1.2e-7 s apart.
        #expect(ObjectValueConversion.convert(.string("2024-01-01T02:00:00.5+02:00"), to: .date) == .date(725_760_000.5))
        #expect(ObjectValueConversion.convert(.string("2024-01-01T00:00:00.250000Z"), to: .date) == .date(725_760_000.25))
        #expect(ObjectValueConversion.convert(.string("2024-01-01T00:00:00.123456Z"), to: .date) != nil)
        #expect(ObjectValueConversion.convert(.string("2024-01-01T00:00:00.123456789Z"), to: .date) == nil)
        #expect(ObjectValueConversion.convert(.string("2024-01-01T00:00:00.000000001Z"), to: .date) == nil)
        #expect(ObjectValueConversion.convert(.string("2001-01-01T00:00:00.000000001Z"), to: .date) == .date(1e-9))
        #expect(ObjectValueConversion.convert(.string("2024-01-01T01:00:00+01:00"), to: .date) == .date(725_760_000))
    }

    @Test func aStageWithRefusalsOrNoChainIsRefusedBeforeAnyWork() {
        let lightweight = ModelPlan(versions: [Self.v1, Self.v2], stages: [ModelPlan.Stage(.lightweight, from: "1.0.0", to: "2.0.0")])
        #expect { try ObjectMigration(plan: lightweight, from: "1.0.0") } throws: { error in
            let e = error as? TripError
            return e?.kind == .data && e?.message.contains("Book.pages changes type from String to Int64, which a lightweight stage cannot do") == true
        }
        let noStages = ModelPlan(versions: [Self.v1, Self.v2], stages: [])
        #expect { try ObjectMigration(plan: noStages, from: "1.0.0") } throws: { error in
            (error as? TripError)?.message == "the plan has no stage from 1.0.0 on the way from 1.0.0 to 2.0.0"
        }
        #expect { try ObjectMigration(plan: Self.plan, from: "2.0.0", to: "1.0.0") } throws: { error in
            (error as? TripError)?.kind == .usage
        }
    }

    struct ListReader: ObjectRecordReader {
        var model: ObjectModel { ObjectMigrationTests.v1 }
        var items: [ObjectRecord]
        mutating func next() throws -> ObjectReadItem? { items.isEmpty ? nil : .object(items.removeFirst()) }
    }

    struct ListWriter: ObjectRecordWriter {
        var written: [ObjectRecord] = []
        mutating func begin(_ model: ObjectModel) throws {}
        mutating func write(_ object: ObjectRecord) throws { written.append(object) }
        mutating func finish() throws {}
    }

    /// A reader's count of objects per source entity (`ObjectRecordReader.expectedObjects`), carried
    /// to the model before each stage, where a deduplication sizes its tables: a renamed entity keeps
    /// its count, a removed one's go nowhere.
    @Test func objectCountsCarriedThroughTheStages() throws {
        let migration = try ObjectMigration(plan: Self.plan, from: "1.0.0")
        #expect(migration.objectCounts(before: 0, from: [3, 5, 7]) == [3, 5, 7])
        // Shelf removed, Author become Writer (first), Book second.
        #expect(migration.objectCounts(before: 1, from: [3, 5, 7]) == [5, 7])
    }

    /// The first pass takes an object through the steps that may note it, no further
    /// (`firstPassSteps`): a Book through stage 0's map (deduplicated before it, its pages may not
    /// convert there), and through a second stage's map too where that may set it aside. Taken so
    /// (`keepsKinds`) or through every stage, the objects written, the records and the counts are the same.
    @Test func theFirstPassStopsAfterTheLastStepThatMayNoteAnObject() throws {
        #expect(try ObjectMigration(plan: Self.plan, from: "1.0.0").firstPassSteps(cascading: false) == [0, 0, 2])
        // 3.0.0 makes code (text) a whole number: a book whose code is not one is set aside by the second stage.
        var v3 = Self.v2
        v3.versionIdentifiers = ["3.0.0"]
        v3.entities[1].attributes[2] = AttributeDescription("code", .int64)
        let plan = ModelPlan(versions: [Self.v1, Self.v2, v3],
                             stages: [Self.plan.stages[0], ModelPlan.Stage(.custom, from: "2.0.0", to: "3.0.0", hooks: ["willMigrate"])])
        let migration = try ObjectMigration(plan: plan, from: "1.0.0")
        #expect(migration.firstPassSteps(cascading: false) == [0, 0, 4])
        // Dune twice (merged), Zed's code "z" (set aside by the second stage), Hero naming Zed and the second Dune.
        let objects = [Self.shelf, Self.author, Self.book(1, "Dune", isbn: "111"), Self.book(3, "Dune", pages: "20"),
                       Self.book(6, "Zed", isbn: "z"), Self.book(5, "Hero", sequels: [6, 3])]
        func run(keepsKinds: Bool) throws -> String {
            var reader = try ObjectMigrationReader(migration, policy: .merge, keepsKinds: keepsKinds) { _ in ListReader(items: objects) }
            var writer = ListWriter(), summary = ObjectConversionSummary(), setAside: [SetAsideRecord] = []
            try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { setAside.append($0) }
            summary.note(reader)
            return "\(writer.written)\n\(setAside)\n\(summary.line(elapsedSeconds: 0))"
        }
        let full = try run(keepsKinds: false)
        #expect(try run(keepsKinds: true) == full)
        #expect(full.contains("merged 1;") && full.contains("set aside 1, removed 1 references"), "\(full)")
    }

    /// Shelf 1, Ann, then books: 1 "Dune" (10 pages, sequel 3), 2 "Emma" (sequel 1), 3 "Dune" (20 pages, rating nil,
    /// sequel 2), 4 "Odd" (pages "x": set aside), 5 "Hero" (sequels 4 and 3).
    static let objects = [shelf, author, book(1, "Dune", sequels: [3], shelf: 1, isbn: "111"), book(2, "Emma", sequels: [1]),
                          book(3, "Dune", pages: "20", rating: nil, sequels: [2]), book(4, "Odd", pages: "x"), book(5, "Hero", sequels: [4, 3])]

    func run(_ policy: DeduplicationPolicy) throws -> ([ObjectRecord], [SetAsideRecord], ObjectConversionSummary) {
        let migration = try ObjectMigration(plan: Self.plan, from: "1.0.0")
        var opened = 0
        var reader = try ObjectMigrationReader(migration, policy: policy) { opened += 1; return ListReader(items: Self.objects) }
        #expect(opened == 2 && reader.tally.twoPasses)
        var writer = ListWriter(), summary = ObjectConversionSummary(), setAside: [SetAsideRecord] = []
        try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { setAside.append($0) }
        summary.note(reader)
        #expect(summary.read == 7 && summary.read == summary.written + summary.merged + summary.dropped + summary.rejected)
        return (writer.written, setAside, summary)
    }

    static func refs(_ keys: Int64...) -> [ObjectReference] { keys.map { ObjectReference(entity: 1, key: $0) } }

    @Test func mergeKeepsTheFirstKeyLaterValuesUnitedToManysAndPointsReferencesAtIt() throws {
        let (written, setAside, summary) = try run(.merge)
        #expect(written.map(\.key) == [1, 1, 2, 5])
        let dune = written[1]
        // Later non-nil values win (pages 20); a nil brings nothing (rating stays 3); isbn from the first.
        #expect(dune.attributes[0...3] == [.string("Dune"), .int(20), .string("111"), .int(3)])
        // To-many united: the first's [3] (itself, pointed at 1) and the duplicate's [2].
        #expect(dune.relationships[1] == Self.refs(1, 2))
        #expect(written[2].relationships[1] == Self.refs(1))
        // Hero's sequels: 4 was set aside (reference removed), 3 is Dune 1.
        #expect(written[3].relationships[1] == Self.refs(1))
        #expect(summary.merged == 1 && summary.dropped == 1 && summary.rejected == 1 && summary.written == 4)
        let merged = setAside.first { $0.kind == .merged }
        #expect(merged?.origin == Self.origin(13))
        #expect(merged?.reason == "another Book with title \"Dune\" (unique from 2.0.0): merged into the one at books.json:11:1")
        #expect(summary.migration?.2.referencesRemoved == 1)
    }

    @Test func firstAndLastKeepOneWholeAndPointReferencesAtIt() throws {
        let (first, firstAside, _) = try run(.first)
        #expect(first.map(\.key) == [1, 1, 2, 5])
        #expect(first[1].attributes[1] == .int(10) && first[1].relationships[1] == Self.refs(1))
        #expect(first[2].relationships[1] == Self.refs(1) && first[3].relationships[1] == Self.refs(1))
        #expect(firstAside.first { $0.kind == .dropped && $0.origin == Self.origin(13) }?.reason
                == "another Book with title \"Dune\" (unique from 2.0.0): dropped under --dedupe first, which keeps the one at books.json:11:1")
        let (last, _, summary) = try run(.last)
        #expect(last.map(\.key) == [1, 2, 3, 5])
        #expect(last[2].attributes[1] == .int(20) && last[2].attributes[3] == .int(0))
        #expect(last[1].relationships[1] == Self.refs(3) && last[3].relationships[1] == Self.refs(3))
        #expect(summary.dropped == 2 && summary.merged == 0)
    }

    /// Album (title unique) owns its tracks, a track its notes (cascade, inverses declared); no stage.
    static let albums = ObjectModel(entities: [
        EntityDescription("Album", attributes: [AttributeDescription("title", .string, isOptional: false)],
                          relationships: [RelationshipDescription("tracks", to: "Track", inverse: "album", toMany: true, deleteRule: .cascade)],
                          uniquenessConstraints: [["title"]]),
        EntityDescription("Track", attributes: [AttributeDescription("name", .string, isOptional: false)],
                          relationships: [RelationshipDescription("album", to: "Album", inverse: "tracks"),
                                          RelationshipDescription("notes", to: "Note", inverse: "track", toMany: true, deleteRule: .cascade)]),
        EntityDescription("Note", attributes: [AttributeDescription("text", .string, isOptional: false)],
                          relationships: [RelationshipDescription("track", to: "Track", inverse: "notes")]),
    ])

    /// The notes first, then the tracks, then two albums titled "A" (keys 1 and 2), each owning track
    /// and note of its key: an owner is met after what it owns.
    static let albumObjects = [
        albumObject(2, 1, "n1", (1, 1), at: 1), albumObject(2, 2, "n2", (1, 2), at: 2),
        albumObject(1, 1, "t1", (0, 1), (2, 1), at: 3), albumObject(1, 2, "t2", (0, 2), (2, 2), at: 4),
        albumObject(0, 1, "A", (1, 1), at: 5), albumObject(0, 2, "A", (1, 2), at: 6),
    ]

    /// An object of `albums`: its entity, key and one attribute, each relationship's one reference
    /// (entity, key), at line `n`.
    static func albumObject(_ entity: Int, _ key: Int64, _ text: String, _ references: (Int, Int64)..., at n: Int) -> ObjectRecord {
        ObjectRecord(entity: entity, key: key, attributes: [.string(text)],
                     relationships: ObjectRelationships(references.map { [ObjectReference(entity: $0.0, key: $0.1)] }), origin: origin(n))
    }

    struct AlbumReader: ObjectRecordReader {
        var model: ObjectModel { ObjectMigrationTests.albums }
        var items = ObjectMigrationTests.albumObjects
        mutating func next() throws -> ObjectReadItem? { items.isEmpty ? nil : .object(items.removeFirst()) }
    }

    @Test("first and last drop what a dropped duplicate owns through cascade, at any depth, met before it; merge keeps it with the one kept")
    func droppedDuplicatesTakeWhatTheyOwn() throws {
        let migration = try #require(ObjectMigration(deduplicating: Self.albums))
        for (policy, kept) in [(DeduplicationPolicy.first, Int64(1)), (.last, 2), (.merge, 1)] {
            var reader = try ObjectMigrationReader(migration, policy: policy) { AlbumReader() }
            var writer = ListWriter(), summary = ObjectConversionSummary(), setAside: [SetAsideRecord] = []
            try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { setAside.append($0) }
            let written = writer.written.map { "\($0.entity):\($0.key)" }
            if policy == .merge {
                #expect(written == ["2:1", "2:2", "1:1", "1:2", "0:1"])
                // Both tracks now name album 1, which lists both.
                #expect(writer.written[2].relationships[0] == [ObjectReference(entity: 0, key: 1)]
                        && writer.written[3].relationships[0] == [ObjectReference(entity: 0, key: 1)])
                #expect(writer.written[4].relationships[0] == [ObjectReference(entity: 1, key: 1), ObjectReference(entity: 1, key: 2)])
                continue
            }
            #expect(written == ["2:\(kept)", "1:\(kept)", "0:\(kept)"], "\(policy)")
            #expect(setAside.count == 3 && setAside.allSatisfy { $0.kind == .dropped }, "\(policy)")
            #expect(setAside.first?.reason == "owned (a relationship whose delete rule is cascade) by another Album with title \"A\" (unique from "
                    + "the model), dropped under --dedupe \(policy.rawValue), which keeps the one at books.json:\(kept + 4):1: dropped with it",
                    "\(setAside.first?.reason ?? "")")
            #expect(summary.read == 6 && summary.written == 3 && summary.dropped == 3, "\(policy)")
        }
    }

    @Test func failNamesBothOriginsBeforeAnyObjectIsGiven() throws {
        let migration = try ObjectMigration(plan: Self.plan, from: "1.0.0")
        #expect { try ObjectMigrationReader(migration, policy: .fail) { ListReader(items: Self.objects) } } throws: { error in
            (error as? TripError)?.message == "books.json:13:1: a second Book with title \"Dune\" (unique from 2.0.0); the first is at books.json:11:1 "
                + "(--dedupe fail: nothing is written)"
        }
    }

    @Test func theSummaryLineSaysWhatThePlanDid() throws {
        let (_, _, summary) = try run(.merge)
        #expect(summary.line(elapsedSeconds: 0.5) == "read 7 objects; wrote 4 (Writer 1, Book 3); merged 1; dropped 1 (0 by --dedupe, "
                + "1 of removed entities); migrated 1.0.0 -> 2.0.0: converted 3 values, filled 3, set aside 1, removed 1 references to objects "
                + "not written; rejected 1; 0.500 s")
    }

    /// A stage that keeps attributes and relationships where they are maps an object in its own arrays
    /// (`ObjectStageMap.apply`): converted and filled in place, removed ones cut from the end, new ones
    /// added after, references rewritten where they are. Each outcome is the one a new array gives, a
    /// copy of the object made before is left as it was, and a refusal names the value.
    @Test func aStageThatKeepsPlacesMapsAnObjectWhereItIs() throws {
        // 1.0.0: Tag, Note, List. 2.0.0: Tag removed (Note moves to 0, List to 1); Note's text Int64 -> String, its
        // stars made required with a default, its draft (last) removed, its tag (last) removed; List gains a
        // required kind with a default and an owner relationship.
        let v1 = ObjectModel(entities: [
            EntityDescription("Tag", attributes: [AttributeDescription("label", .string)]),
            EntityDescription("Note", attributes: [
                AttributeDescription("text", .int64, isOptional: false), AttributeDescription("stars", .int64),
                AttributeDescription("draft", .string),
            ], relationships: [RelationshipDescription("links", to: "Note", toMany: true), RelationshipDescription("tag", to: "Tag")]),
            EntityDescription("List", attributes: [AttributeDescription("name", .string, isOptional: false)],
                              relationships: [RelationshipDescription("notes", to: "Note", toMany: true)]),
        ], versionIdentifiers: ["1.0.0"])
        let v2 = ObjectModel(entities: [
            EntityDescription("Note", attributes: [
                AttributeDescription("text", .string, isOptional: false),
                AttributeDescription("stars", .int64, isOptional: false, defaultValue: .int(3)),
            ], relationships: [RelationshipDescription("links", to: "Note", toMany: true)]),
            EntityDescription("List", attributes: [
                AttributeDescription("name", .string, isOptional: false),
                AttributeDescription("kind", .string, isOptional: false, defaultValue: .string("plain")),
            ], relationships: [RelationshipDescription("notes", to: "Note", toMany: true), RelationshipDescription("owner", to: "List")]),
        ], versionIdentifiers: ["2.0.0"])
        let plan = ModelPlan(versions: [v1, v2], stages: [ModelPlan.Stage(.custom, from: "1.0.0", to: "2.0.0", hooks: ["willMigrate"])])
        let migration = try ObjectMigration(plan: plan, from: "1.0.0")
        // Both entities are mapped where they are (the shapes this test is about).
        #expect(migration.maps[0].entities[1]!.mapsAttributesInPlace && migration.maps[0].entities[1]!.mapsRelationshipsInPlace)
        #expect(migration.maps[0].entities[2]!.mapsAttributesInPlace && migration.maps[0].entities[2]!.mapsRelationshipsInPlace)
        var counts = ObjectMigration.Counts()

        let note = ObjectRecord(entity: 1, key: 4, attributes: [.int(12), .null, .string("wip")],
                                relationships: [[ObjectReference(entity: 1, key: 5), ObjectReference(entity: 0, key: 1), ObjectReference(entity: 1, key: 6)],
                                                [ObjectReference(entity: 0, key: 1)]],
                                origin: Self.origin(4))
        var moved = note
        moved.attributes.append(.null)
        moved.attributes.removeLast()  // its own arrays, as a reader gives them, and `note` a copy of it made before
        #expect(migration.migrate(&moved, counts: &counts, before: { _, _, _ in nil }) == nil)
        #expect(moved.entity == 0 && moved.key == 4)
        #expect(moved.attributes == [.string("12"), .int(3)])
        // The reference to the removed Tag goes; the others follow Note to its new place.
        #expect(moved.relationships == [[ObjectReference(entity: 0, key: 5), ObjectReference(entity: 0, key: 6)]])
        #expect(note.attributes == [.int(12), .null, .string("wip")] && note.relationships[0].count == 3 && note.entity == 1)
        #expect(counts.converted == 1 && counts.filled == 1 && counts.referencesRemoved == 1)

        guard case .object(let list) = migration.migrate(
            ObjectRecord(entity: 2, key: 9, attributes: [.string("todo")], relationships: [[ObjectReference(entity: 1, key: 4)]], origin: Self.origin(9)),
            counts: &counts) else { Issue.record("set aside"); return }
        #expect(list.entity == 1 && list.attributes == [.string("todo"), .string("plain")])
        #expect(list.relationships == [[ObjectReference(entity: 0, key: 4)], []])
        #expect(counts.filled == 2)

        var empty = ObjectRecord(entity: 1, key: 7, attributes: [.int(1), .int(5), .null], relationships: [[], []], origin: Self.origin(7))
        #expect(migration.migrate(&empty, counts: &counts, before: { _, _, _ in nil }) == nil)
        #expect(empty.attributes == [.string("1"), .int(5)] && empty.relationships == [[]])
    }

    /// A refusal met while an object is mapped where it is names the stage, the attribute and the value.
    @Test func aRefusalInPlaceNamesTheValue() throws {
        let v1 = ObjectModel(entities: [EntityDescription("E", attributes: [AttributeDescription("n", .string), AttributeDescription("m", .string)])],
                             versionIdentifiers: ["1"])
        let v2 = ObjectModel(entities: [EntityDescription("E", attributes: [AttributeDescription("n", .int16),
                                                                             AttributeDescription("m", .string, isOptional: false)])],
                             versionIdentifiers: ["2"])
        let migration = try ObjectMigration(plan: ModelPlan(versions: [v1, v2], stages: [ModelPlan.Stage(.custom, from: "1", to: "2")]), from: "1")
        var counts = ObjectMigration.Counts()
        guard case .setAside(let big) = migration.migrate(ObjectRecord(entity: 0, key: 1, attributes: [.string("70000"), .string("x")], relationships: [],
                                                                       origin: Self.origin(1)), counts: &counts) else { Issue.record("written"); return }
        #expect(big.reason == "custom stage 1 -> 2: E.n value \"70000\" does not convert losslessly to Int16" && big.origin == Self.origin(1))
        guard case .setAside(let missing) = migration.migrate(ObjectRecord(entity: 0, key: 2, attributes: [.string("7"), .null], relationships: [],
                                                                           origin: Self.origin(2)), counts: &counts) else { Issue.record("written"); return }
        #expect(missing.reason == "custom stage 1 -> 2: E.m has no value, which 2 requires, and no default to fill it with")
        #expect(counts.setAside == 2 && counts.converted == 1)
    }
}
