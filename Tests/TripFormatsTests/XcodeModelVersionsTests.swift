import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Every version of an `.xcdatamodeld` read into a plan: versions in numeric order, identifiers,
/// renames through `elementID`, one inferred lightweight stage from each older version to the current.
@Suite("Xcode model versions as a plan")
struct XcodeModelVersionsTests {
    @Test("the versions in numeric order of their folder names, named by identifier else folder, stages straight to the current one")
    func versionsAndStages() throws {
        let scratch = ScratchDirectory()
        let bundle = try XcodeModelVersions.write(in: scratch.path)
        let plan = try XcodeModel.plan(bundle)
        #expect(plan.versions.map(\.versionIdentifiers) == [["Garden"], ["2.0"], ["Garden 10"]])
        #expect(plan.versions.map { $0.entities.map(\.name) } == [["Bed", "Plant", "Seed"], ["Bed", "Plant", "Seed"], ["Plant", "Plot"]])
        #expect(plan.stages == [ModelPlan.Stage(.lightweight, from: "Garden", to: "Garden 10"), ModelPlan.Stage(.lightweight, from: "2.0", to: "Garden 10")])
        // The current version is the one .xcdatamodel reads for convert --model.
        #expect(plan.current?.entities == (try XcodeModel.read(bundle).model.entities))
        let plant = try #require(plan.versions[2].entity("Plant"))
        #expect(plant.attribute("heading")?.renamingIdentifier == "name" && plant.relationship("plot")?.renamingIdentifier == "bed")
        #expect(plan.versions[2].entity("Plot")?.renamingIdentifier == "Bed")
        #expect(plan.place("Garden 10", "Plant.height") == "\(bundle)/Garden 10.xcdatamodel/contents:6")
        #expect(plan.notes.contains { $0.hasPrefix("Core Data keeps no migration plan") })
        #expect(plan.notes.contains("versions in the order of their folder names, numbers in them compared as numbers, the current one last: "
                                    + "Garden.xcdatamodel as 'Garden', Garden 2.xcdatamodel as '2.0', Garden 10.xcdatamodel as 'Garden 10'"))
    }

    @Test("each stage's steps: renames (one twice, by Core Data's renaming identifier rule), added with default, removed entity; a type change refused")
    func derivedSteps() throws {
        let scratch = ScratchDirectory()
        let bundle = try XcodeModelVersions.write(in: scratch.path)
        let plan = try XcodeModel.plan(bundle)
        let first = ModelStageSteps(plan.stages[0], of: plan), second = ModelStageSteps(plan.stages[1], of: plan)
        #expect(first.steps == [
            .addAttribute(entity: "Plant", name: "color", default: nil),
            .renameAttribute(entity: "Plant", from: "name", to: "heading"),
            .addAttribute(entity: "Plant", name: "watered", default: "false"),
            .renameRelationship(entity: "Plant", from: "bed", to: "plot"),
            .renameEntity(from: "Bed", to: "Plot"),
            .removeEntity("Seed"),
        ])
        // Garden 2's title carries elementID "name" as heading does: the same attribute, renamed again.
        #expect(second.steps == [
            .addAttribute(entity: "Plant", name: "color", default: nil),
            .renameAttribute(entity: "Plant", from: "title", to: "heading"),
            .renameRelationship(entity: "Plant", from: "bed", to: "plot"),
            .renameEntity(from: "Bed", to: "Plot"),
            .removeEntity("Seed"),
        ])
        let refusal = "\(bundle)/Garden 10.xcdatamodel/contents:6: lightweight stage 2.0 -> Garden 10: Plant.height changes type from Int32 "
            + "to String, which a lightweight stage cannot do (declare a custom stage)"
        #expect(second.refusals == [refusal])
        #expect(first.refusals == [refusal.replacingOccurrences(of: "stage 2.0 ->", with: "stage Garden ->")])
    }

    @Test("numbers in version names compare as numbers; a current version that does not sort last is put last, said in a note")
    func order() throws {
        let names = ["Model 10", "Model", "Model 2", "Model 2b", "Model 02", "Model 1", "Model v3"]
        #expect(names.sorted(by: XcodeModel.versionOrder) == ["Model", "Model 1", "Model 02", "Model 2", "Model 2b", "Model 10", "Model v3"])
        let scratch = ScratchDirectory()
        let plan = try XcodeModel.plan(try XcodeModelVersions.write(in: scratch.path, current: "Garden 2.xcdatamodel"))
        #expect(plan.versions.map(\.versionIdentifiers) == [["Garden"], ["Garden 10"], ["2.0"]])
        #expect(plan.stages.map(\.from) == ["Garden", "Garden 10"] && plan.stages.allSatisfy { $0.to == "2.0" })
        #expect(plan.notes.first == "Garden 2.xcdatamodel is the current version (.xccurrentversion) and is put last, after Garden 10 whose name sorts after it")
    }

    @Test("versions that declare the same identifier are all named by their folders")
    func sameIdentifier() throws {
        let scratch = ScratchDirectory()
        let bundle = try XcodeModelVersions.write(in: scratch.path)
        try XcodeModelVersions.version10.replacingOccurrences(of: "Identifier=\"\"", with: "Identifier=\"2.0\"")
            .write(toFile: bundle + "/Garden 10.xcdatamodel/contents", atomically: true, encoding: .utf8)
        let plan = try XcodeModel.plan(bundle)
        #expect(plan.versions.map(\.versionIdentifiers) == [["Garden"], ["Garden 2"], ["Garden 10"]])
        #expect(plan.notes.contains { $0.hasPrefix("two versions declare the same identifier") })
    }

    @Test("a damaged version is bad data naming its contents file and line, whichever version it is")
    func damaged() throws {
        let scratch = ScratchDirectory()
        let bundle = try XcodeModelVersions.write(in: scratch.path)
        let file = bundle + "/Garden 2.xcdatamodel/contents"
        try String(XcodeModelVersions.version2.prefix(400)).write(toFile: file, atomically: true, encoding: .utf8)
        let truncated = try #require(throws: TripError.self) { try XcodeModel.plan(bundle) }
        #expect(truncated.kind == .data && truncated.message.hasPrefix(file + ":"), "\(truncated.message)")
        try XcodeModelVersions.version2.replacingOccurrences(of: "\"Boolean\"", with: "\"Quaternion\"").write(toFile: file, atomically: true, encoding: .utf8)
        let unknown = try #require(throws: TripError.self) { try XcodeModel.plan(bundle) }
        #expect(unknown.message == "\(file):11: Plant.watered: unknown attributeType 'Quaternion'")
    }

    @Test("the real Core Data app's Xcode model reads as a plan of its one version", .needsRealStores)
    func realModel() throws {
        let dir = try TestPaths.copyRealStore("coredata-feedback")
        let plan = try XcodeModel.plan(dir + "/Model.xcdatamodeld/")
        #expect(plan.versions.map(\.versionIdentifiers) == [["Model"]] && plan.stages.isEmpty)
        #expect(plan.versions[0].entities.map(\.name) == ["FeedbackCategory", "FeedbackSubCategory"])
        #expect(plan.versions[0].entities.map(\.attributes) == (try XcodeModel.read(dir + "/Model.xcdatamodeld").model.entities.map(\.attributes)))
        #expect(plan.place("Model", "FeedbackSubCategory.category") == "\(dir)/Model.xcdatamodeld/Model.xcdatamodel/contents:9")
    }
}
