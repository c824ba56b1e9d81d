import Testing
import TripKit

@Suite("Deduplication policies")
struct DeduplicationTests {
    static let a1 = TestTrip(name: "Paris", destination: "France", start: "2024-05-01T00:00:00Z",
                             items: [("Louvre", "old", false, false), ("Eiffel", "", true, false)],
                             accommodation: ("1 Rue", "Hotel A"))
    static let b = TestTrip(name: "Rome", destination: "Italy", items: [("Colosseum", "", false, true)])
    static let a2 = TestTrip(name: "Paris", destination: "France!", start: "2024-06-01T00:00:00Z",
                             items: [("Louvre", "new", true, true), ("Orsay", "", false, false)], accommodation: nil)
    static let a3 = TestTrip(name: "Paris", destination: "FR", start: "2024-07-01T00:00:00Z", items: [],
                             accommodation: ("2 Rue", "Hotel B"))

    func context(_ policy: DeduplicationPolicy) throws -> MigrationContext {
        let c = MigrationContext(schema: TripSchemaV3.self, policy: policy)
        for (i, t) in [Self.a1, Self.b, Self.a2, Self.a3].enumerated() {
            try c.insert(object(t), origin: RecordOrigin(source: "in.json", record: i + 1, line: i + 2))
        }
        return c
    }

    @Test("merge: latest scalars, lists united by title in first-seen order, latest non-null accommodation")
    func merge() throws {
        let c = try context(.merge)
        try c.deduplicate("Trip", by: "name")
        #expect(try c.objects == [
            object(TestTrip(name: "Paris", destination: "FR", start: "2024-07-01T00:00:00Z",
                            items: [("Louvre", "new", true, true), ("Eiffel", "", true, false), ("Orsay", "", false, false)],
                            accommodation: ("2 Rue", "Hotel B"))),
            object(Self.b),
        ])
        #expect(try c.ledger.map(\.kind) == [.merged, .merged])
        #expect(try c.ledger.map(\.origin.record) == [3, 4])
        #expect(try c.origins.map(\.record) == [1, 2])
    }

    @Test("merge keeps an earlier accommodation when the later record has none")
    func mergeKeepsAccommodation() throws {
        let c = MigrationContext(schema: TripSchemaV3.self, policy: .merge)
        try c.insert(object(Self.a1), origin: RecordOrigin(source: "x", record: 1))
        try c.insert(object(Self.a2), origin: RecordOrigin(source: "x", record: 2))
        try c.deduplicate("Trip", by: "name")
        #expect(try c.objects[0].relationships[1] == .toOne(ModelObject(attributes: [.string("1 Rue"), .string("Hotel A")])))
    }

    @Test("last: the last occurrence's whole record, at the first occurrence's place")
    func last() throws {
        let c = try context(.last)
        try c.deduplicate("Trip", by: "name")
        #expect(try c.objects == [object(Self.a3), object(Self.b)])
        #expect(try c.ledger.map(\.kind) == [.dropped, .dropped])
        #expect(try c.ledger.map(\.origin.record) == [1, 3])
    }

    @Test("first: the first occurrence's whole record")
    func first() throws {
        let c = try context(.first)
        try c.deduplicate("Trip", by: "name")
        #expect(try c.objects == [object(Self.a1), object(Self.b)])
        #expect(try c.ledger.map(\.origin.record) == [3, 4])
    }

    @Test("fail: a data error naming the duplicate names, and nothing changed")
    func fail() throws {
        let c = try context(.fail)
        #expect {
            try c.deduplicate("Trip", by: "name")
        } throws: { error in
            let e = error as? TripError
            return e?.kind == .data && e?.message == "1 name occurs more than once ('Paris'); --dedupe fail writes nothing"
        }
        #expect(try c.objects.count == 4)
    }

    @Test("fail names the first five names and counts the rest")
    func failMany() throws {
        let c = MigrationContext(schema: TripSchemaV3.self, policy: .fail)
        for i in 0..<14 { try c.insert(object(TestTrip(name: "T\(i % 7)")), origin: RecordOrigin(source: "x", record: i + 1)) }
        #expect {
            try c.deduplicate("Trip", by: "name")
        } throws: { error in
            (error as? TripError)?.message == "7 names occur more than once ('T0', 'T1', 'T2', 'T3', 'T4' and 2 more); --dedupe fail writes nothing"
        }
    }
}

@Suite("Migration plan")
struct MigratorTests {
    let migrator = Migrator(TripMigrationPlan.self)

    @Test("1.0.0 to 3.0.0 runs the custom stage then the lightweight one")
    func path13() throws {
        #expect(try migrator.path(from: SchemaVersion(1, 0, 0), to: SchemaVersion(3, 0, 0)).map(\.description)
                == ["1.0.0 -> 2.0.0 (custom)", "2.0.0 -> 3.0.0 (lightweight)"])
    }

    @Test("3.0.0 to 1.0.0 reverses the structural steps only")
    func path31() throws {
        #expect(try migrator.path(from: SchemaVersion(3, 0, 0), to: SchemaVersion(1, 0, 0)).map(\.description)
                == ["3.0.0 -> 2.0.0 (lightweight, reversed)", "2.0.0 -> 1.0.0 (custom, reversed)"])
    }

    @Test("migrating 1.0.0 deduplicates in willMigrate and renames into 3.0.0")
    func migrate13() throws {
        let c = MigrationContext(schema: TripSchemaV1.self, policy: .merge)
        try c.insert(object(TestTrip(name: "A"), version: SchemaVersion(1, 0, 0)), origin: RecordOrigin(source: "x", record: 1))
        try c.insert(object(TestTrip(name: "A", destination: "Later"), version: SchemaVersion(1, 0, 0)), origin: RecordOrigin(source: "x", record: 2))
        try migrator.migrate(c, to: SchemaVersion(3, 0, 0))
        #expect(c.schema.versionIdentifier == SchemaVersion(3, 0, 0))
        #expect(try c.objects == [object(TestTrip(name: "A", destination: "Later"))])
        #expect(try c.ledger.count == 1)
    }

    @Test("a downgrade to 1.0.0 keeps duplicates and all values", arguments: ["1.0.0", "2.0.0"])
    func downgrade(target: String) throws {
        let c = MigrationContext(schema: TripSchemaV3.self)
        let t = TestTrip(name: "A", items: [("x", "y", true, false)], accommodation: ("a", "p"))
        try c.insert(object(t), origin: RecordOrigin(source: "x", record: 1))
        try c.insert(object(t), origin: RecordOrigin(source: "x", record: 2))
        try migrator.migrate(c, to: SchemaVersion(target)!)
        #expect(try c.objects == [object(t, version: SchemaVersion(target)!), object(t, version: SchemaVersion(target)!)])
    }

    @Test("the same version is no step at all")
    func same() throws {
        #expect(try migrator.path(from: SchemaVersion(2, 0, 0), to: SchemaVersion(2, 0, 0)).isEmpty)
    }
}
