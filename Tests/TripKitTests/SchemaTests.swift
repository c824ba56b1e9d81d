import Testing
import TripKit

@Suite("Schema declarations")
struct SchemaTests {
    /// A released version is frozen: this pins each declaration, so any edit fails here.
    static func fingerprint(_ schema: any VersionedSchema.Type) -> String {
        schema.entities.map { e in
            let attributes = e.attributes.map { a in
                "\(a.name):\(a.type.rawValue)\(a.isUnique ? "!u" : "")\(a.isTransient ? "!t" : "")\(a.originalName.map { "<\($0)" } ?? "")\(a.defaultValue.map { "=\($0.literal)" } ?? "")"
            }
            let relationships = e.relationships.map { "\($0.name)->\($0.isToMany ? "*" : "?")\($0.destination)/\($0.deleteRule.rawValue)" }
            let legacy = e.legacySpellings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "\(e.name)(" + (attributes + relationships + legacy).joined(separator: ",") + ")"
        }.joined(separator: " ")
    }

    @Test("1.0.0 is frozen as released")
    func version1IsFrozen() {
        #expect(Self.fingerprint(TripSchemaV1.self) == "Trip(name:string,destination:string,start_date:date,end_date:date,bucketList->*BucketListItem/nullify,livingAccommodation->?LivingAccommodation/nullify,bucketListItem=bucketList,livingAccommodations=livingAccommodation) BucketListItem(title:string,details:string=\"\",hasReservation:bool=false,isInPlan:bool=false) LivingAccommodation(address:string=\"\",placeName:string=\"\")")
    }

    @Test("2.0.0 is frozen as released")
    func version2IsFrozen() {
        #expect(Self.fingerprint(TripSchemaV2.self) == "Trip(name:string!u,destination:string,start_date:date,end_date:date,bucketList->*BucketListItem/nullify,livingAccommodation->?LivingAccommodation/nullify) BucketListItem(title:string,details:string=\"\",hasReservation:bool=false,isInPlan:bool=false) LivingAccommodation(address:string=\"\",placeName:string=\"\")")
    }

    @Test("3.0.0 declares camel-case dates renamed from the snake-case ones, cascades and a transient view count")
    func version3() {
        #expect(Self.fingerprint(TripSchemaV3.self) == "Trip(name:string!u,destination:string,startDate:date<start_date,endDate:date<end_date,tripViews:int!t=0,bucketList->*BucketListItem/cascade,livingAccommodation->?LivingAccommodation/cascade) BucketListItem(title:string,details:string=\"\",hasReservation:bool=false,isInPlan:bool=false) LivingAccommodation(address:string=\"\",placeName:string=\"\")")
    }

    @Test("the plan orders the three versions and has a custom then a lightweight stage")
    func plan() {
        #expect(TripMigrationPlan.versions.map(\.description) == ["1.0.0", "2.0.0", "3.0.0"])
        #expect(TripMigrationPlan.stages.map(\.kind) == [.custom, .lightweight])
        #expect(TripMigrationPlan.stages.map { "\($0.kind)" } == ["custom", "lightweight"])
        #expect(TripMigrationPlan.stages.map { "\($0.fromVersion.versionIdentifier)>\($0.toVersion.versionIdentifier)" } == ["1.0.0>2.0.0", "2.0.0>3.0.0"])
    }

    @Test("versions parse from one, two or three numbers and compare numerically")
    func versions() {
        #expect(SchemaVersion("3") == SchemaVersion(3, 0, 0))
        #expect(SchemaVersion("2.0") == SchemaVersion(2, 0, 0))
        #expect(SchemaVersion("1.0.0")! < SchemaVersion("1.0.10")!)
        #expect(SchemaVersion("1.x") == nil)
        #expect(SchemaVersion("") == nil)
    }
}

@Suite("Derived lightweight mapping")
struct LightweightMappingTests {
    @Test("2.0.0 to 3.0.0 is derived as renames, a transient addition and delete-rule changes")
    func forward() throws {
        let m = try LightweightMapping(from: TripSchemaV2.self, to: TripSchemaV3.self)
        #expect(m.changes.map(\.description) == [
            "rename Trip.start_date to startDate",
            "rename Trip.end_date to endDate",
            "add Trip.tripViews (transient) = 0",
            "delete rule of Trip.bucketList: nullify to cascade",
            "delete rule of Trip.livingAccommodation: nullify to cascade",
        ])
        #expect(m.entities[0].attributes == [.copy(0), .copy(1), .copy(2), .copy(3), .value(.int(0))])
        #expect(!m.isIdentity)
    }

    @Test("1.0.0 to 2.0.0 changes only uniqueness and maps slots one to one")
    func uniqueness() throws {
        let m = try LightweightMapping(from: TripSchemaV1.self, to: TripSchemaV2.self)
        #expect(m.changes.map(\.description) == ["make Trip.name unique"])
        #expect(m.isIdentity)
    }

    @Test("3.0.0 to 2.0.0 reverses the renames through originalName and drops the transient attribute")
    func backward() throws {
        let m = try LightweightMapping(from: TripSchemaV3.self, to: TripSchemaV2.self)
        #expect(m.changes.map(\.description).contains("rename Trip.startDate to start_date"))
        #expect(m.entities[0].attributes == [.copy(0), .copy(1), .copy(2), .copy(3)])
        let v3 = object(TestTrip(name: "Paris", items: [("Louvre", "", true, false)], accommodation: ("1 Rue", "Hotel")))
        let v2 = m.apply(v3)
        #expect(v2.attributes.count == 4)
        #expect(v2.attributes[2] == .date(ts("2024-05-01T09:30:00Z")))
        #expect(v2.relationships == v3.relationships)
    }

    @Test("a required attribute added without a default has no lightweight mapping")
    func impossible() {
        enum A: VersionedSchema {
            static let versionIdentifier = SchemaVersion(1, 0, 0)
            static let entities = [Entity("T", attributes: [Attribute("a", .string)])]
        }
        enum B: VersionedSchema {
            static let versionIdentifier = SchemaVersion(2, 0, 0)
            static let entities = [Entity("T", attributes: [Attribute("a", .string), Attribute("b", .string)])]
        }
        #expect(throws: TripError.self) { try LightweightMapping(from: A.self, to: B.self) }
    }
}
