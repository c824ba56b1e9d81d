import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The two stores apps wrote (../shared/real-stores, its README describes them), read from copies.
@Suite("The model of stores apps wrote", .needsRealStores)
struct RealStoreModelTests {
    @Test("the SwiftData store's model cache: three entities, as its README describes, read with its -wal")
    func swiftData() throws {
        let dir = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        let walBefore = try Data(contentsOf: URL(fileURLWithPath: dir + "/default.store-wal"))
        let store = try StoreModel.read(storeAt: dir + "/default.store")
        #expect(store.source == .modelCache)
        #expect(store.model.entities.map(\.name) == ["Component", "CraftingRecipe", "Item"])
        #expect(store.versionIdentifiers == ["1.0.0"] && store.model.versionIdentifiers == ["1.0.0"])
        #expect(store.frameworkVersion == 1345)
        #expect(store.entityNumbers == ["Component": 1, "CraftingRecipe": 2, "Item": 3])
        #expect(store.objectCounts == ["Component": 1, "CraftingRecipe": 2, "Item": 4])
        #expect(store.hasPendingWAL)
        let item = try #require(store.model.entity("Item"))
        #expect(item.attribute("name") == AttributeDescription("name", .string, isOptional: false, valueClassName: "NSString"))
        #expect(item.uniquenessConstraints == [["name"]])
        let component = try #require(store.model.entity("Component"))
        #expect(component.attribute("id")?.kind == .uuid)
        #expect(component.attribute("count")?.kind == .int64 && component.attribute("count")?.defaultValue == .int(1))
        #expect(component.relationship("item") == RelationshipDescription("item", to: "Item", isOptional: true))
        #expect(component.relationship("craftingRecipe")?.inverse == "requiredComponents")
        let recipe = try #require(store.model.entity("CraftingRecipe"))
        #expect(recipe.attribute("producedItemCount")?.defaultValue == .string("1"))
        #expect(recipe.relationship("requiredComponents") == RelationshipDescription(
            "requiredComponents", to: "Component", inverse: "craftingRecipe", toMany: true, isOptional: false))
        // One-to-one: both sides to-one, each the other's inverse.
        #expect(recipe.relationship("producedItem")?.inverse == "craftingRecipe" && recipe.relationship("producedItem")?.isToMany == false)
        #expect(item.relationship("craftingRecipe")?.inverse == "producedItem" && item.relationship("craftingRecipe")?.isToMany == false)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/default.store-wal")) == walBefore)
    }

    @Test("the SwiftData store copied without its -wal: the same model, no objects, no pending -wal")
    func swiftDataWithoutWAL() throws {
        let dir = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        try FileManager.default.removeItem(atPath: dir + "/default.store-wal")
        try FileManager.default.removeItem(atPath: dir + "/default.store-shm")
        let store = try StoreModel.read(storeAt: dir + "/default.store")
        #expect(store.model.entities.map(\.name) == ["Component", "CraftingRecipe", "Item"])
        #expect(store.objectCounts == ["Component": 0, "CraftingRecipe": 0, "Item": 0])
        #expect(!store.hasPendingWAL)
        #expect(!FileManager.default.fileExists(atPath: dir + "/default.store-wal"))
    }

    @Test("the Core Data store without a model cache: its Xcode model, or its tables with their guesses")
    func coreData() throws {
        let dir = try TestPaths.copyRealStore("coredata-feedback")
        let model = try StoreModel.read(storeAt: dir + "/Model.sqlite", modelPath: dir + "/Model.xcdatamodeld")
        #expect(model.source == .xcodeModel)
        #expect(model.modelFile == dir + "/Model.xcdatamodeld/Model.xcdatamodel/contents")
        #expect(model.objectCounts == ["FeedbackCategory": 19, "FeedbackSubCategory": 79])
        #expect(model.frameworkVersion == 479)
        #expect(model.model == ObjectModel(entities: [
            EntityDescription("FeedbackCategory", attributes: [AttributeDescription("name", .string, isOptional: true)], relationships: [
                RelationshipDescription("subcategory", to: "FeedbackSubCategory", inverse: "category", toMany: true, isOptional: true),
            ]),
            EntityDescription("FeedbackSubCategory", attributes: [AttributeDescription("name", .string, isOptional: true)], relationships: [
                RelationshipDescription("category", to: "FeedbackCategory", inverse: "subcategory", isOptional: true),
            ]),
        ]))
        let tables = try StoreModel.read(storeAt: dir + "/Model.sqlite")
        #expect(tables.source == .tables)
        #expect(tables.model.entity("FeedbackSubCategory")?.relationship("category")?.destination == "FeedbackCategory")
        #expect(tables.model.entity("FeedbackCategory")?.attribute("name")?.kind == .string)
        #expect(tables.model.inferences.contains { $0.contains("whether FeedbackCategory has a to-many back cannot be told") })
    }

    @Test("a model that is not the store's is bad data naming Z_PRIMARYKEY")
    func disagreeing() throws {
        let swiftData = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        let coreData = try TestPaths.copyRealStore("coredata-feedback")
        let model = try StoreModel.read(storeAt: swiftData + "/default.store").model
        try JSONText.Node.object(ObjectModelJSON.node(model)).render().write(toFile: swiftData + "/model.json", atomically: true, encoding: .utf8)
        let error = try #require(throws: TripError.self) {
            try StoreModel.read(storeAt: coreData + "/Model.sqlite", modelPath: swiftData + "/model.json")
        }
        #expect(error.kind == .data)
        #expect(error.message == "\(coreData)/Model.sqlite: Z_PRIMARYKEY: the model's entity Component is not among the store's entities")
    }
}
