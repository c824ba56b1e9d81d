// A second app's model and migration plan, for `tripconv --model samples/swift-model-recipes`: a recipe
// book at three versions. 1.0.0 -> 2.0.0 is a custom stage (its willMigrate code cannot run outside the
// app): titles become unique, an ingredient's quantity goes from Int to String, and a recipe's notes
// are renamed summary by originalName. 2.0.0 -> 3.0.0 is lightweight: a new required cuisine with a
// default, summary made required with a default, and the Chef entity removed. Not compiled by this
// package; `recipes-v1.json` and `recipes-v1-tables` beside it are 1.0.0 exports (make-recipes-v1.py).
import Foundation
import SwiftData

enum RecipesSchemaV1: VersionedSchema {
    static var versionIdentifier = Schema.Version(1, 0, 0)

    static var models: [any PersistentModel.Type] {
        [Chef.self, Recipe.self, Ingredient.self]
    }

    @Model
    final class Chef {
        var name: String
        var recipes: [Recipe] = []

        init(name: String) { self.name = name }
    }

    @Model
    final class Recipe {
        var title: String
        var servings: Int
        var notes: String?
        @Relationship(deleteRule: .cascade, inverse: \Ingredient.recipe)
        var ingredients: [Ingredient] = []
        @Relationship(inverse: \Chef.recipes)
        var chef: Chef?

        init(title: String, servings: Int) {
            self.title = title
            self.servings = servings
        }
    }

    @Model
    final class Ingredient {
        var name: String
        var quantity: Int
        var recipe: Recipe?

        init(name: String, quantity: Int) {
            self.name = name
            self.quantity = quantity
        }
    }
}

enum RecipesSchemaV2: VersionedSchema {
    static var versionIdentifier = Schema.Version(2, 0, 0)

    static var models: [any PersistentModel.Type] {
        [Chef.self, Recipe.self, Ingredient.self]
    }

    @Model
    final class Chef {
        var name: String
        var recipes: [Recipe] = []

        init(name: String) { self.name = name }
    }

    @Model
    final class Recipe {
        @Attribute(.unique) var title: String
        var servings: Int
        @Attribute(originalName: "notes") var summary: String?
        @Relationship(deleteRule: .cascade, inverse: \Ingredient.recipe)
        var ingredients: [Ingredient] = []
        @Relationship(inverse: \Chef.recipes)
        var chef: Chef?

        init(title: String, servings: Int) {
            self.title = title
            self.servings = servings
        }
    }

    @Model
    final class Ingredient {
        var name: String
        var quantity: String
        var recipe: Recipe?

        init(name: String, quantity: String) {
            self.name = name
            self.quantity = quantity
        }
    }
}

enum RecipesSchemaV3: VersionedSchema {
    static var versionIdentifier = Schema.Version(3, 0, 0)

    static var models: [any PersistentModel.Type] {
        [Recipe.self, Ingredient.self]
    }

    @Model
    final class Recipe {
        @Attribute(.unique) var title: String
        var servings: Int
        var summary: String = ""
        var cuisine: String = "unknown"
        @Relationship(deleteRule: .cascade, inverse: \Ingredient.recipe)
        var ingredients: [Ingredient] = []

        init(title: String, servings: Int) {
            self.title = title
            self.servings = servings
        }
    }

    @Model
    final class Ingredient {
        var name: String
        var quantity: String
        var recipe: Recipe?

        init(name: String, quantity: String) {
            self.name = name
            self.quantity = quantity
        }
    }
}

enum RecipesMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] {
        [RecipesSchemaV1.self, RecipesSchemaV2.self, RecipesSchemaV3.self]
    }

    static var stages: [MigrationStage] {
        [migrateV1toV2, migrateV2toV3]
    }

    static let migrateV1toV2 = MigrationStage.custom(
        fromVersion: RecipesSchemaV1.self,
        toVersion: RecipesSchemaV2.self,
        willMigrate: { context in
            // Merge recipes that share a title, and write quantities as text...
            try context.save()
        },
        didMigrate: nil
    )

    static let migrateV2toV3 = MigrationStage.lightweight(
        fromVersion: RecipesSchemaV2.self,
        toVersion: RecipesSchemaV3.self
    )
}
