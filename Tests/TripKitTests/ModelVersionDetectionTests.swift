import Testing
import TripKit

/// `ModelVersionDetection`: a marker first, else the names and kinds seen; renames, versions the data
/// cannot tell apart, and names no version declares.
@Suite struct ModelVersionDetectionTests {
    /// A shop's plan: 1.0.0 keeps `count` as text; 2.0.0 makes it Int64 (a custom stage); 3.0.0 renames
    /// `name` to `title` (`originalName`) and adds the entity `Note`.
    static let shop = ModelPlan(versions: [
        ObjectModel(entities: [item(name: "name", count: .string)], versionIdentifiers: ["1.0.0"]),
        ObjectModel(entities: [item(name: "name", count: .int64)], versionIdentifiers: ["2.0.0"]),
        ObjectModel(entities: [item(name: "title", count: .int64, originalName: "name"),
                               EntityDescription("Note", attributes: [AttributeDescription("text", .string, isOptional: false)])],
                    versionIdentifiers: ["3.0.0"]),
    ], stages: [ModelPlan.Stage(.custom, from: "1.0.0", to: "2.0.0"), ModelPlan.Stage(.lightweight, from: "2.0.0", to: "3.0.0")])

    static func item(name: String, count: AttributeKind, originalName: String? = nil) -> EntityDescription {
        EntityDescription("Item", attributes: [
            AttributeDescription(name, .string, isOptional: false, renamingIdentifier: originalName),
            AttributeDescription("count", count, isOptional: false),
            AttributeDescription("colour", .string),
        ], relationships: [RelationshipDescription("tags", to: "Item", toMany: true)])
    }

    static let numbers: Set<AttributeKind> = [.int16, .int32, .int64, .double, .float, .decimal, .date]
    static let strings: Set<AttributeKind> = [.string, .uri, .binary, .transformable]

    /// Evidence of Items with `name`/`title` as given, `count` of the kinds given, and `colour`.
    static func items(_ nameField: String, count kinds: Set<AttributeKind>?, colour: Bool = true) -> ModelVersionEvidence {
        var seen = ModelVersionEvidence()
        seen.noteEntity("Item", object: true)
        seen.note("Item", nameField, kinds: strings, seen: "strings")
        seen.note("Item", "count", kinds: kinds, seen: kinds == numbers ? "numbers" : "strings")
        if colour { seen.note("Item", "colour", kinds: strings, seen: "strings") }
        return seen
    }

    @Test("A marker decides, whatever the names say; a marker naming no version of the plan is exit 65")
    func marker() throws {
        var seen = Self.items("name", count: Self.strings)
        seen.markers = ["2.0.0"]
        seen.markerPlace = "Z_METADATA NSStoreModelVersionIdentifiers"
        let verdict = try ModelVersionDetection.detect(seen, plan: Self.shop, input: "shop.store")
        #expect(verdict.version == "2.0.0")
        #expect(verdict.basis == .marker)
        #expect(verdict.evidence == ["marker Z_METADATA NSStoreModelVersionIdentifiers 2.0.0"])
        seen.markers = ["9.0.0"]
        let error = #expect(throws: TripError.self) { try ModelVersionDetection.detect(seen, plan: Self.shop, input: "shop.store") }
        #expect(error?.kind == .data)
        #expect(error?.message == "shop.store: Z_METADATA NSStoreModelVersionIdentifiers names version 9.0.0, which the plan does not declare")
    }

    @Test("The kinds of the values tell apart versions declaring the same names: count as text is 1.0.0, as numbers 2.0.0")
    func kinds() throws {
        let text = try ModelVersionDetection.detect(Self.items("name", count: Self.strings), plan: Self.shop, input: "a.json")
        #expect(text.version == "1.0.0")
        #expect(text.basis == .exactNames)
        #expect(text.alike.isEmpty)
        let numbers = try ModelVersionDetection.detect(Self.items("name", count: Self.numbers), plan: Self.shop, input: "b.json")
        #expect(numbers.version == "2.0.0")
        #expect(numbers.evidence.contains("Item.count holds numbers: 1.0.0 declares String, which does not take them, 2.0.0 declares Int64, 3.0.0 declares Int64"))
        #expect(numbers.evidence.contains("Item has name, which only 1.0.0 and 2.0.0 declare (3.0.0 renames name to title through originalName)"))
    }

    @Test("A renamed attribute tells the later version; the old name the earlier ones, whose names an older export keeps")
    func renames() throws {
        let later = try ModelVersionDetection.detect(Self.items("title", count: Self.numbers), plan: Self.shop, input: "c.json")
        #expect(later.version == "3.0.0")
        #expect(later.evidence.first == "Item has title, which only 3.0.0 declares")
        var withNote = Self.items("title", count: nil)
        withNote.note("Note", "text", kinds: Self.strings, seen: "strings")
        let entity = try ModelVersionDetection.detect(withNote, plan: Self.shop, input: "d.json")
        #expect(entity.version == "3.0.0")
        #expect(entity.evidence.contains("entity Note, which only 3.0.0 has"))
    }

    @Test("Versions declaring the same names and kinds cannot be told apart: said, and read as the earliest")
    func ambiguous() throws {
        var unique = Self.shop.versions[1]
        unique.entities[0].uniquenessConstraints = [["name"]]
        unique.versionIdentifiers = ["2.1.0"]
        let plan = ModelPlan(versions: [Self.shop.versions[1], unique], stages: [ModelPlan.Stage(.custom, from: "2.0.0", to: "2.1.0")])
        let verdict = try ModelVersionDetection.detect(Self.items("name", count: Self.numbers), plan: plan, input: "e.json")
        #expect(verdict.version == "2.0.0")
        #expect(verdict.alike == ["2.1.0"])
        #expect(verdict.evidence == ["2.0.0 and 2.1.0 cannot be told apart by the data: they declare the same names and types; "
                                     + "reading as 2.0.0, the earliest, so that every stage after it runs"])
    }

    @Test("A store's model tells its uniqueness: versions of the same names are told apart by what they make unique")
    func uniqueness() throws {
        var unique = Self.shop.versions[1]
        unique.entities[0].uniquenessConstraints = [["name"]]
        unique.versionIdentifiers = ["2.1.0"]
        let plan = ModelPlan(versions: [Self.shop.versions[1], unique], stages: [])
        var seen = Self.items("name", count: Self.numbers)
        seen.uniqueness = ["Item": [["name"]]]
        let verdict = try ModelVersionDetection.detect(seen, plan: plan, input: "shop.store")
        #expect(verdict.version == "2.1.0")
        #expect(verdict.alike.isEmpty)
        #expect(verdict.evidence == ["the store's model makes Item unique on name, as 2.1.0 does (2.0.0 does not)"])
        seen.uniqueness = ["Item": []]
        let none = try ModelVersionDetection.detect(seen, plan: plan, input: "shop.store")
        #expect(none.version == "2.0.0")
        #expect(none.evidence == ["the store's model makes nothing of Item unique, as 2.0.0 does (2.1.0 does not)"])
    }

    @Test("A name no version declares is exit 65 naming it; an originalName whose version the plan lacks says so")
    func nothingFits() throws {
        var seen = Self.items("name", count: Self.strings)
        seen.note("Item", "weight", kinds: Self.numbers)
        seen.note("Shelf", "label")
        let error = #expect(throws: TripError.self) { try ModelVersionDetection.detect(seen, plan: Self.shop, input: "f.json") }
        #expect(error?.kind == .data)
        #expect(error?.message == "f.json: Item has weight; entity Shelf, which no version of the plan declares (1.0.0, 2.0.0, 3.0.0)")
        let latest = ModelPlan(versions: [Self.shop.versions[2]], stages: [])
        let renamed = #expect(throws: TripError.self) {
            try ModelVersionDetection.detect(Self.items("name", count: Self.numbers), plan: latest, input: "g.json")
        }
        #expect(renamed?.message == "g.json: Item has name, which no version of the plan declares (3.0.0)")
        #expect(renamed?.notes == ["name is the originalName of Item.title in 3.0.0, but no schema of the plan declares name itself: "
                                   + "add the version that does to the plan's schemas"])
    }

    @Test("An exact match (every stored attribute seen) is preferred over a version whose optional attributes went unseen")
    func exactBeforePlausible() throws {
        let slim = ObjectModel(entities: [EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false)])],
                               versionIdentifiers: ["4.0.0"])
        let plan = ModelPlan(versions: [Self.shop.versions[0], slim], stages: [])
        var seen = ModelVersionEvidence()
        seen.note("Item", "name", kinds: Self.strings)
        let verdict = try ModelVersionDetection.detect(seen, plan: plan, input: "h.csv")
        #expect(verdict.version == "4.0.0")
        #expect(verdict.basis == .exactNames)
        #expect(verdict.evidence == ["1.0.0 declares every name seen too, but it stores attributes not seen"])
    }

    @Test("Names that no one version declares together: the best match, said, with what it does not take")
    func bestMatch() throws {
        var seen = Self.items("name", count: Self.numbers)
        seen.note("Item", "title", kinds: Self.strings)
        let verdict = try ModelVersionDetection.detect(seen, plan: Self.shop, input: "i.json")
        #expect(verdict.version == "2.0.0")
        #expect(verdict.basis == .bestMatch)
        #expect(verdict.evidence.last == "no version declares every name as seen: best match 2.0.0, which takes 3 of the 4 names seen (not Item.title)")
    }

    @Test("No objects: the current version, said; names told in another case match whatever their case")
    func nothingSeenAndCase() throws {
        let empty = try ModelVersionDetection.detect(ModelVersionEvidence(), plan: Self.shop, input: "j.json")
        #expect(empty.version == "3.0.0")
        #expect(empty.basis == .nothingSeen)
        var columns = ModelVersionEvidence()
        columns.ignoresCase = true
        columns.note("item", "title")
        columns.note("item", "count")
        columns.note("note", "text")
        #expect(try ModelVersionDetection.detect(columns, plan: Self.shop, input: "k.store").version == "3.0.0")
    }

    @Test("SampleTrips' built-in versions: a 2.0.0 export's fields are 1.0.0's too, read as 1.0.0 as the trip path reads them")
    func sampleTrips() throws {
        let plan = ModelPlan(versions: [ObjectModel(schema: TripSchemaV1.self), ObjectModel(schema: TripSchemaV2.self),
                                        ObjectModel(schema: TripSchemaV3.self)], stages: [])
        var seen = ModelVersionEvidence()
        // A JSON string is read as a String, or as a Date where it is ISO 8601.
        for name in ["name", "destination", "start_date", "end_date"] { seen.note("Trip", name, kinds: Self.strings.union([.date])) }
        seen.note("Trip", "bucketList", shape: .list)
        let verdict = try ModelVersionDetection.detect(seen, plan: plan, input: "trips.jsonl")
        #expect(verdict.version == "1.0.0")
        #expect(verdict.alike == ["2.0.0"])
        #expect(verdict.evidence.first == "Trip has start_date, end_date, which only 1.0.0 and 2.0.0 declare (3.0.0 renames start_date to startDate, "
                + "3.0.0 renames end_date to endDate through originalName)")
    }
}
