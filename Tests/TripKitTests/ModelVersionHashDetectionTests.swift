import Testing
import TripKit

/// `ModelVersionDetection` with a store's entity version hashes (`NSStoreModelVersionHashes`) and a plan
/// that has its versions' (an `.xcdatamodeld`'s): the hashes tell versions the names cannot.
@Suite struct ModelVersionHashDetectionTests {
    /// Two versions of the same names, `Item.name` optional in "Model" and required in "Model 2", and a
    /// third, "Model 3", whose hashes are the same as "Model 2"'s.
    static var plan: ModelPlan {
        func version(_ id: String, optional: Bool) -> ObjectModel {
            ObjectModel(entities: [EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: optional)])],
                        versionIdentifiers: [id])
        }
        let versions = [version("Model", optional: true), version("Model 2", optional: false), version("Model 3", optional: false)]
        var plan = ModelPlan(versions: versions, stages: [ModelPlan.Stage(.lightweight, from: "Model", to: "Model 3"),
                                                          ModelPlan.Stage(.lightweight, from: "Model 2", to: "Model 3")])
        plan.entityVersionHashes = ["Model": ["Item": hash(1)], "Model 2": ["Item": hash(2)], "Model 3": ["Item": hash(2)]]
        return plan
    }

    static func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    /// A store's evidence: `Item.name` seen, the hashes given, the identifiers given.
    static func store(_ hashes: [String: [UInt8]]?, markers: [String] = []) -> ModelVersionEvidence {
        var seen = ModelVersionEvidence()
        seen.noteEntity("Item")
        seen.note("Item", "name", kinds: [.string], seen: "a String column")
        seen.markers = markers
        seen.markerPlace = "Z_METADATA NSStoreModelVersionIdentifiers"
        seen.versionHashes = hashes
        seen.versionHashesPlace = "Z_METADATA NSStoreModelVersionHashes"
        return seen
    }

    @Test("hashes equal to one version's tell it where the names cannot; without them the names read the earliest")
    func hashesTell() throws {
        let byNames = try ModelVersionDetection.detect(Self.store(nil), plan: Self.plan, input: "s")
        #expect(byNames.version == "Model" && byNames.basis == .exactNames)
        let told = try ModelVersionDetection.detect(Self.store(["Item": Self.hash(1)]), plan: Self.plan, input: "s")
        #expect(told.version == "Model" && told.basis == .versionHashes && told.alike.isEmpty)
        #expect(told.evidence == ["Z_METADATA NSStoreModelVersionHashes match version Model"])
        let two = try ModelVersionDetection.detect(Self.store(["Item": Self.hash(2)]), plan: Self.plan, input: "s")
        #expect(two.version == "Model 2" && two.basis == .versionHashes && two.alike == ["Model 3"])
        #expect(two.evidence == ["Z_METADATA NSStoreModelVersionHashes match versions Model 2 and Model 3, whose entity version hashes are the same: "
                                 + "reading as Model 2, the earliest, so that every stage after it runs"])
    }

    @Test("hashes matching no version say so and what differs, and the names decide")
    func noMatch() throws {
        let verdict = try ModelVersionDetection.detect(Self.store(["Item": Self.hash(9), "Tag": Self.hash(3)]), plan: Self.plan, input: "s")
        #expect(verdict.version == "Model" && verdict.basis == .exactNames)
        #expect(verdict.evidence.first == "Z_METADATA NSStoreModelVersionHashes match no version of the plan (Model: Item differs, the store's Tag not in it; "
                + "Model 2: Item differs, the store's Tag not in it; Model 3: Item differs, the store's Tag not in it)")
        #expect(verdict.evidence.count > 1)
        var partial = Self.plan
        partial.entityVersionHashes["Model"] = nil
        let some = try ModelVersionDetection.detect(Self.store(["Item": Self.hash(1)]), plan: partial, input: "s")
        #expect(some.basis == .exactNames)
        #expect(some.evidence.first?.hasSuffix("; Model not compared: no hashes known") == true, "\(some.evidence)")
    }

    @Test("an identifier naming a version decides (the hashes' disagreement said); one naming none gives way to matching hashes")
    func identifiers() throws {
        let marked = try ModelVersionDetection.detect(Self.store(["Item": Self.hash(1)], markers: ["Model 2"]), plan: Self.plan, input: "s")
        #expect(marked.version == "Model 2" && marked.basis == .marker)
        #expect(marked.evidence == ["marker Z_METADATA NSStoreModelVersionIdentifiers Model 2", "but Z_METADATA NSStoreModelVersionHashes match Model, not Model 2"])
        let unknown = try ModelVersionDetection.detect(Self.store(["Item": Self.hash(1)], markers: ["1.0"]), plan: Self.plan, input: "s")
        #expect(unknown.version == "Model" && unknown.basis == .versionHashes)
        #expect(unknown.evidence == ["Z_METADATA NSStoreModelVersionIdentifiers names version 1.0, which the plan does not declare",
                                     "Z_METADATA NSStoreModelVersionHashes match version Model"])
        #expect(throws: TripError.self) { try ModelVersionDetection.detect(Self.store(["Item": Self.hash(7)], markers: ["1.0"]), plan: Self.plan, input: "s") }
    }
}
