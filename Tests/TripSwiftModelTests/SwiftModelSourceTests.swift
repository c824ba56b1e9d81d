import Foundation
import Testing
import TripKit
import TripSwiftModel
import TripTestSupport

/// Reads Swift source given as text, as files of a folder would be.
func readSource(_ files: [String: String]) throws -> ModelPlan {
    try SwiftModelSource.read(["/src"], readFile: { path in
        guard let text = files[String(path.dropFirst("/src/".count))] else { throw TripError(.noInput, "\(path): cannot read") }
        return text
    }, listFolder: { $0 == "/src" ? Array(files.keys) : nil })
}

func readSource(_ text: String) throws -> ModelPlan { try readSource(["Model.swift": text]) }

/// Versions V1…V`count` of one model class `name`, each its own schema (1.0.0, 2.0.0…), the class's
/// members in version `n` being `members(n)`.
func schemas(_ count: Int, of name: String, members: (Int) -> String) -> String {
    (1...count).map { n in
        """
        enum V\(n): VersionedSchema {
            static var versionIdentifier = Schema.Version(\(n), 0, 0)
            static var models: [any PersistentModel.Type] { [\(name).self] }
            @Model final class \(name) { \(members(n)) }
        }
        """
    }.joined(separator: "\n")
}

/// The message a source that cannot be read gives.
func failure(_ text: String) -> String? {
    do {
        _ = try readSource(text)
        return nil
    } catch {
        return "\(error)"
    }
}

@Suite("An app's model and plan read from its Swift source")
struct SwiftModelSourceTests {
    @Test("SampleTrips' source, as the WWDC23 session declares it, reads to the built-in versions and plan")
    func sampleTrips() throws {
        let folder = TestPaths.samples + "/swift-model"
        let plan = try SwiftModelSource.read([folder], readFile: { try String(contentsOfFile: $0, encoding: .utf8) }, listFolder: {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) && isFolder.boolValue
                ? try? FileManager.default.contentsOfDirectory(atPath: $0) : nil
        })
        #expect(plan.versions == TripMigrationPlan.schemas.map { ObjectModel(schema: $0) })
        #expect(plan.stages.map { "\($0.kind) \($0.from) \($0.to) \($0.hooks)" }
                == TripMigrationPlan.stages.map { s in
                    var hooks: [String] = []
                    if case .custom(_, _, let will, let did) = s {
                        if will != nil { hooks.append("willMigrate") }
                        if did != nil { hooks.append("didMigrate") }
                    }
                    return "\(s.kind) \(s.fromVersion.versionIdentifier) \(s.toVersion.versionIdentifier) \(hooks)"
                })
        #expect(plan.notes.isEmpty)
        #expect(plan.place("3.0.0", "Trip.startDate") == folder + "/SampleTrips.swift:93:52")
        let steps = plan.stages.map { ModelStageSteps($0, of: plan) }
        #expect(steps[0].steps == [.deduplicate(entity: "Trip", on: ["name"])] && steps[0].refusals.isEmpty)
        #expect(steps[1].steps == [
            .renameAttribute(entity: "Trip", from: "start_date", to: "startDate"),
            .renameAttribute(entity: "Trip", from: "end_date", to: "endDate"),
            .changeDeleteRule(entity: "Trip", relationship: "bucketList", from: .nullify, to: .cascade),
            .changeDeleteRule(entity: "Trip", relationship: "livingAccommodation", from: .nullify, to: .cascade),
        ])
    }

    @Test("Every kind of stored property; computed, static and @Transient ones are not stored; options kept or said ignored")
    func properties() throws {
        let plan = try readSource("""
            import SwiftData
            import SwiftUI

            enum Priority: Int, Codable { case low = 1, medium, high }
            enum Status: String, Codable { case open, done = "finished" }
            struct Coordinate: Codable { var lat: Double; var lon: Double }

            struct ContentView: View { var body: some View { Text("not a model") } }

            @Model
            final class Item {
                @Attribute(.unique) var id: UUID = UUID()
                var title = "untitled"
                var count: Int = -3
                var small: Int16 = 7
                var ratio: Double = 0.5
                var weight: Float?
                var price: Decimal?
                var done: Bool = false
                var created: Date = Date.now
                @Attribute(.externalStorage) var photo: Data?
                var link: URL?
                var priority: Priority = .medium
                var status: Status = Status.done
                var place: Coordinate?
                var tags: [String] = []
                @Attribute(originalName: "body", .spotlight) var text: String?
                @Transient var views: Int = 0
                var summary: String { title + "!" }
                static var shared = 1
                var observed: Int = 0 { didSet { } }
                #Unique<Item>([\\.title, \\.created])
                #Index<Item>([\\.title])
                init() {}
            }
            """)
        let item = try #require(plan.versions.first?.entity("Item"))
        #expect(plan.versions.first?.versionIdentifiers == [])
        func a(_ n: String) -> AttributeDescription? { item.attribute(n) }
        #expect(item.attributes.map(\.name) == ["id", "title", "count", "small", "ratio", "weight", "price", "done", "created", "photo",
                                                 "link", "priority", "status", "place", "tags", "text", "views", "observed"])
        #expect(a("id")?.kind == .uuid && a("id")?.isOptional == false && a("id")?.defaultValue == nil)
        #expect(a("title")?.kind == .string && a("title")?.defaultValue == .string("untitled"))
        #expect(a("count")?.kind == .int64 && a("count")?.defaultValue == .int(-3))
        #expect(a("small")?.kind == .int16 && a("ratio")?.defaultValue == .double(0.5))
        #expect(a("weight")?.kind == .float && a("weight")?.isOptional == true && a("price")?.kind == .decimal)
        #expect(a("done")?.defaultValue == .bool(false) && a("created")?.kind == .date && a("created")?.defaultValue == nil)
        #expect(a("photo")?.allowsExternalStorage == true && a("photo")?.kind == .binary && a("link")?.kind == .uri)
        #expect(a("priority")?.kind == .int64 && a("priority")?.defaultValue == .int(2) && a("priority")?.valueClassName == "Priority")
        #expect(a("status")?.kind == .string && a("status")?.defaultValue == .string("finished"))
        #expect(a("place")?.kind == .transformable && a("place")?.valueClassName == "Coordinate")
        #expect(a("tags")?.kind == .transformable && a("tags")?.valueClassName == "[String]")
        #expect(a("text")?.renamingIdentifier == "body" && a("views")?.isTransient == true)
        #expect(item.uniquenessConstraints == [["id"], ["title", "created"]])
        #expect(plan.notes.contains { $0.contains("#Index on Item kept out") })
        #expect(plan.notes.contains { $0.contains("the default of Item.id (UUID()) is computed") })
        #expect(plan.notes.contains { $0.contains(".spotlight on Item.text ignored") })
        #expect(plan.notes.contains { $0.hasPrefix("no VersionedSchema") })
    }

    @Test("Relationships: to-one, to-many, delete rules, explicit and inferred inverses, originalName, inheritance")
    func relationships() throws {
        let plan = try readSource(["A.swift": """
            @Model class Folder {
                var name: String
                @Relationship(deleteRule: .cascade, inverse: \\Note.folder) var notes: [Note] = []
                var parent: Folder?
                @Relationship(originalName: "kids") var children: [Folder] = []
            }
            """, "B.swift": """
            @Model class Note {
                var folder: Folder?
                var author: Person?
            }
            @Model class Person { var notes: [Note]? }
            @Model class Employee: Person { var badge: Int = 0 }
            """])
        let model = try #require(plan.versions.first)
        let folder = try #require(model.entity("Folder")), note = try #require(model.entity("Note"))
        #expect(folder.relationship("notes")?.inverse == "folder" && folder.relationship("notes")?.deleteRule == .cascade)
        #expect(folder.relationship("notes")?.isToMany == true && note.relationship("folder")?.inverse == "notes")
        #expect(note.relationship("author")?.inverse == "notes" && model.entity("Person")?.relationship("notes")?.inverse == "author")
        #expect(folder.relationship("children")?.renamingIdentifier == "kids")
        // Two relationships of Folder point at Folder: no inverse is inferred for them.
        #expect(folder.relationship("parent")?.inverse == nil && folder.relationship("children")?.inverse == nil)
        #expect(model.entity("Employee")?.superentity == "Person")
    }

    @Test("What cannot be read is an error naming the file, line and column")
    func errors() {
        #expect(failure("@Model class A { var x: Matrix }") == "/src/Model.swift:1:25: expected a type SwiftData stores (String, Int, "
                        + "Double, Bool, Date, Data, UUID, URL, Decimal, a @Model class, an enum or Codable type declared in the source), found Matrix")
        #expect(failure("""
            enum V1: VersionedSchema {
                static var versionIdentifier = makeVersion(1)
                static var models: [any PersistentModel.Type] { [A.self] }
                @Model class A { var x = 1 }
            }
            """) == "/src/Model.swift:2:36: expected Schema.Version(major, minor, patch) with integer literals, found makeVersion(1)")
        #expect(failure("struct View {}") == "/src: expected a @Model class, found none in 1 Swift file")
        #expect(failure("@Model class A { var x }") == "/src/Model.swift:1:22: expected a type annotation on A.x, found none and no literal to tell it by")
        #expect(failure("@Model class A { @Attribute(.sparkly) var x: Int }")?.hasPrefix("/src/Model.swift:1:29: expected an @Attribute option") == true)
        #expect(failure("""
            enum V1: VersionedSchema {
                static var versionIdentifier = Schema.Version(1, 0, 0)
                static var models: [any PersistentModel.Type] { [A.self] }
                @Model class A { var x = 1 }
            }
            enum Plan: SchemaMigrationPlan {
                static var schemas: [any VersionedSchema.Type] { [V1.self, V9.self] }
                static var stages: [MigrationStage] { [] }
            }
            """) == "/src/Model.swift:7:64: expected a VersionedSchema declared in the source, found V9")
    }
}

@Suite("A stage's steps, derived from its two versions")
struct ModelStageStepsTests {
    static let source = """
        enum V1: VersionedSchema {
            static let versionIdentifier = Schema.Version(1, 0, 0)
            static var models: [any PersistentModel.Type] { [Book.self, Shelf.self] }
            @Model class Book { var title: String; var pages: String; var isbn: String?; var note: String? }
            @Model class Shelf { var label: String }
        }
        enum V2: VersionedSchema {
            static let versionIdentifier = Schema.Version(2, 0, 0)
            static var models: [any PersistentModel.Type] { [Book.self, Author.self] }
            @Model class Book {
                @Attribute(.unique, originalName: "title") var name: String
                var pages: Int
                var isbn: String = "unknown"
                var rating: Int = 0
                var subtitle: String?
            }
            @Model class Author { var name: String }
        }
        enum Plan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self] }
            static var stages: [MigrationStage] { [.custom(fromVersion: V1.self, toVersion: V2.self, willMigrate: nil, didMigrate: { _ in })] }
        }
        """

    @Test("A custom stage: renames, conversions, new and removed attributes and entities, newly required values, uniqueness")
    func custom() throws {
        let plan = try readSource(ModelStageStepsTests.source)
        #expect(plan.stages.first?.hooks == ["didMigrate"])
        let derived = ModelStageSteps(try #require(plan.stages.first), of: plan)
        #expect(derived.refusals.isEmpty)
        #expect(derived.steps == [
            .renameAttribute(entity: "Book", from: "title", to: "name"),
            .convertType(entity: "Book", attribute: "pages", from: .string, to: .int64),
            .requireValue(entity: "Book", attribute: "isbn", default: "unknown"),
            .addAttribute(entity: "Book", name: "rating", default: "0"),
            .addAttribute(entity: "Book", name: "subtitle", default: nil),
            .removeAttribute(entity: "Book", name: "note"),
            .deduplicate(entity: "Book", on: ["name"]),
            .addEntity("Author"),
            .removeEntity("Shelf"),
        ])
    }

    @Test("Empty initializers are fixed defaults; a note the same in every version is said once; versions outside the plan are named")
    func notesAndEmptyDefaults() throws {
        func version(_ n: Int, _ extra: String) -> String {
            """
            enum V\(n): VersionedSchema {
                static var versionIdentifier = Schema.Version(\(n), 0, 0)
                static var models: [any PersistentModel.Type] { [Entry.self] }
                @Model final class Entry {
                    var made: Date = Date()
                    var blob: Data = Data()
                    var label: String = String()
                    var count: Int = .init()
                    \(extra)
                    init() {}
                }
            }
            """
        }
        let plan = try readSource([
            "V1.swift": version(1, ""), "V2.swift": version(2, "var seen: Bool = Bool()"), "V3.swift": version(3, "var seen: Bool = false"),
            "Plan.swift": """
                enum Plan: SchemaMigrationPlan {
                    static var schemas: [any VersionedSchema.Type] { [V2.self, V3.self] }
                    static var stages: [MigrationStage] { [.lightweight(fromVersion: V2.self, toVersion: V3.self)] }
                }
                """,
        ])
        let entry = try #require(plan.versions.first?.entity("Entry"))
        #expect(entry.attribute("blob")?.defaultValue == .data([]) && entry.attribute("label")?.defaultValue == .string(""))
        #expect(entry.attribute("count")?.defaultValue == .int(0) && entry.attribute("seen")?.defaultValue == .bool(false))
        #expect(entry.attribute("made")?.defaultValue == nil)
        #expect(plan.notes == [
            "/src/V2.swift:5:26: the default of Entry.made (Date()) is computed when an object is made: no fixed default kept (and 1 more place)",
            "V1 (1.0.0): declared, but not in Plan.schemas: left out",
        ])
        #expect(ModelStep.defaultText(.data([])) == "Data()")
    }

    @Test("Of a plan and a rollback plan (its schemas in decreasing order), the plan is read and the rollback named; two forward plans are an error")
    func rollbackPlan() throws {
        let versions = schemas(2, of: "Animal") { n in "var name: String?" + (n == 2 ? "; var extinct: Bool? = false" : "") }
        func plan(_ name: String, _ from: Int, _ to: Int) -> String {
            """
            enum \(name): SchemaMigrationPlan {
                static var schemas: [any VersionedSchema.Type] { [V\(from).self, V\(to).self] }
                static var stages: [MigrationStage] { [.custom(fromVersion: V\(from).self, toVersion: V\(to).self, willMigrate: nil, didMigrate: nil)] }
            }
            """
        }
        let read = try readSource(["Schemas.swift": versions, "Plans.swift": plan("RollbackPlan", 2, 1) + "\n" + plan("MigrationPlan", 1, 2)])
        #expect(read.versions.compactMap(\.versionIdentifiers.first) == ["1.0.0", "2.0.0"])
        #expect(read.stages.map { "\($0.from) -> \($0.to)" } == ["1.0.0 -> 2.0.0"])
        #expect(read.notes.contains("RollbackPlan: a SchemaMigrationPlan whose schemas do not go forward (a rollback): left out; MigrationPlan is the plan"),
                "\(read.notes)")
        let two = failure(versions + "\n" + plan("PlanA", 1, 2) + "\n" + plan("PlanB", 1, 2))
        #expect(two?.hasSuffix("expected one SchemaMigrationPlan whose schemas go forward, found PlanA and PlanB (2 in increasing version order)") == true,
                "\(two ?? "no failure")")
    }

    @Test("models listed as self.Alert.self or Self.Alert.self, behind #if canImport and @available, are the schema's own classes (were exit 65)")
    func selfQualifiedModels() throws {
        let plan = try readSource("""
            #if canImport(SwiftData)
            import SwiftData
            #endif
            @available(iOS 17.0, *)
            public enum SchemaV1: VersionedSchema {
                public static var versionIdentifier: Schema.Version { .init(1, 0, 0) }
                public static var models: [any PersistentModel.Type] { [self.Alert.self] }
                @Model public final class Alert { public var title: String }
            }
            public enum SchemaV2: VersionedSchema {
                public static var versionIdentifier: Schema.Version { .init(2, 0, 0) }
                public static var models: [any PersistentModel.Type] { [Self.Alert.self, self.Snippet.self] }
                @Model public final class Alert { public var title: String; public var level: Int = 0 }
                @Model public final class Snippet { @Attribute(.unique) public var id: UUID }
            }
            """)
        #expect(plan.versions.map { $0.entities.map(\.name) } == [["Alert"], ["Alert", "Snippet"]])
        #expect(plan.versions[1].entity("Alert")?.attribute("level")?.defaultValue == .int(0))
    }

    @Test("Models in an extension of a typealias of the schema (in another file), and a default of a UInt8 enum case's rawValue, are read (were 65, and a refused stage)")
    func extensionOfTypealias() throws {
        let plan = try readSource([
            "Schemas.swift": """
                enum Version1Schema: VersionedSchema {
                    static var models: [any PersistentModel.Type] = [Version1Schema.Recipe.self]
                    static var versionIdentifier = Schema.Version(0, 0, 1)
                }
                enum Version2Schema: VersionedSchema {
                    static var models: [any PersistentModel.Type] = [Version2Schema.Recipe.self]
                    static var versionIdentifier = Schema.Version(0, 0, 2)
                }
                typealias CurrentSchema = Version2Schema
                typealias Recipe = CurrentSchema.Recipe
                enum MigrationPlan: SchemaMigrationPlan {
                    static var schemas: [any VersionedSchema.Type] = [Version1Schema.self, Version2Schema.self]
                    static var stages: [MigrationStage] = [
                        .custom(fromVersion: Version1Schema.self, toVersion: Version2Schema.self, willMigrate: nil, didMigrate: nil),
                    ]
                }
                """,
            "Version1Models.swift": "extension Version1Schema {\n    @Model class Recipe { var name: String }\n}\n",
            "Recipe.swift": """
                extension CurrentSchema {
                    @Model class Recipe {
                        var name: String
                        enum Lifecycle: UInt8 { case planned = 1, pinned, library }
                        var lifecycleRaw: UInt8 = Lifecycle.library.rawValue
                    }
                }
                """,
        ])
        #expect(plan.versions.map { $0.entities.map(\.name) } == [["Recipe"], ["Recipe"]])
        #expect(plan.versions[1].entity("Recipe")?.attribute("lifecycleRaw")?.defaultValue == .int(3))
        #expect(ModelStageSteps(plan.stages[0], of: plan).steps.map(\.description) == ["add Recipe.lifecycleRaw = 3"])
    }

    @Test("A @Model class a listed model reaches by a relationship is in the version, as SwiftData's Schema takes it, said in the notes (was 65)")
    func reachedModels() throws {
        let plan = try readSource("""
            enum V1: VersionedSchema {
                static let versionIdentifier = Schema.Version(1, 0, 0)
                static var models: [any PersistentModel.Type] { [Item.self] }
                @Model final class Item {
                    @Attribute(.unique) var id: UUID
                    @Relationship(deleteRule: .cascade) var details: Details?
                    #if canImport(SwiftData)
                    var tags: [Tag] = []
                    #endif
                }
                @Model final class Details { var data: Data; var item: Item? }
                @Model final class Tag { var title: String }
            }
            """)
        #expect(plan.versions[0].entities.map(\.name) == ["Item", "Details", "Tag"])
        #expect(plan.versions[0].entity("Item")?.relationship("details")?.destination == "Details")
        #expect(plan.notes.first == "Details, Tag: not in the models of V1 but reached by a relationship: in that version, as SwiftData's Schema takes it",
                "\(plan.notes)")
    }

    @Test("#if read as an iOS release build compiles it; a type told by its initializer (Date()); #Unique with an empty list (were missed, 65, an empty constraint)")
    func conditionsAndInference() throws {
        let plan = try readSource("""
            #if canImport(SwiftData)
            import SwiftData
            #endif
            #if canImport(SwiftData)
            @Model
            #endif
            final class Metric {
                #if canImport(SwiftData)
                #Unique<Metric>([\\.stableID])
                #endif
                var stableID: UUID?
                #if os(macOS)
                var macOnly: String
                #elseif DEBUG
                var debugOnly: String
                #else
                var shipped: Int = 1
                #endif
                #if !canImport(UIKit) || os(watchOS)
                var never: String
                #endif
                var made = Date()
                var kind = Kind.daily
                var id = UUID()
                enum Kind: String, Codable { case daily, weekly }
            }
            @Model final class Movement {
                #Unique<Movement>([\\.id], [])
                var id: UUID
            }
            """)
        let metric = try #require(plan.current?.entity("Metric"))
        #expect(metric.attributes.map(\.name) == ["stableID", "shipped", "made", "kind", "id"])
        #expect(metric.attribute("made")?.kind == .date && metric.attribute("id")?.kind == .uuid && metric.attribute("kind")?.kind == .string)
        #expect(metric.attribute("kind")?.defaultValue == .string("daily") && metric.attribute("shipped")?.defaultValue == .int(1))
        #expect(metric.uniquenessConstraints == [["stableID"]])
        #expect(plan.current?.entity("Movement")?.uniquenessConstraints == [["id"]])
    }

    @Test("A version no declared stage leaves gets SwiftData's inferred lightweight stage straight to the current one, said in the notes")
    func inferredStages() throws {
        let versions = schemas(3, of: "Memory") { n in
            "var id: String" + (n >= 2 ? "; var notes: String = \"\"" : "") + (n == 3 ? "; var isPrivate: Bool = false" : "")
        }
        func plan(_ stages: String) -> String {
            "enum Plan: SchemaMigrationPlan {\n    static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self, V3.self] }\n"
                + "    static var stages: [MigrationStage] { [\(stages)] }\n}\n"
        }
        let none = try readSource(["V.swift": versions, "Plan.swift": plan("")])
        #expect(none.stages.map { "\($0.kind) \($0.from) -> \($0.to)" } == ["lightweight 1.0.0 -> 3.0.0", "lightweight 2.0.0 -> 3.0.0"])
        #expect(none.notes.last == "no stage from 1.0.0, 2.0.0: SwiftData migrates a store at those versions by a lightweight mapping it infers "
                + "straight to 3.0.0, as Core Data does: the lightweight stages 1.0.0 -> 3.0.0, 2.0.0 -> 3.0.0 derived")
        #expect(ModelStageSteps(none.stages[0], of: none).steps.map(\.description) == ["add Memory.notes = \"\"", "add Memory.isPrivate = false"])
        // A declared stage is kept; only the version it does not leave gets one.
        let some = try readSource(["V.swift": versions, "Plan.swift": plan(".custom(fromVersion: V1.self, toVersion: V2.self, willMigrate: nil, didMigrate: nil)")])
        #expect(some.stages.map { "\($0.kind) \($0.from) -> \($0.to)" } == ["custom 1.0.0 -> 2.0.0", "lightweight 2.0.0 -> 3.0.0"])
        // Schemas with no plan at all: the same.
        let noPlan = try readSource(["V.swift": versions])
        #expect(noPlan.stages.map { "\($0.from) -> \($0.to)" } == ["1.0.0 -> 3.0.0", "2.0.0 -> 3.0.0"])
    }

    @Test("A lightweight stage refuses a changed type; any stage refuses a new required attribute without a default, naming it")
    func refusals() throws {
        var text = ModelStageStepsTests.source.replacingOccurrences(of: ".custom(fromVersion: V1.self, toVersion: V2.self, willMigrate: nil, didMigrate: { _ in })",
                                                                     with: ".lightweight(fromVersion: V1.self, toVersion: V2.self)")
        text = text.replacingOccurrences(of: "var subtitle: String?", with: "var subtitle: String")
        let plan = try readSource(text)
        let derived = ModelStageSteps(try #require(plan.stages.first), of: plan)
        #expect(derived.refusals == [
            "/src/Model.swift:12:13: lightweight stage 1.0.0 -> 2.0.0: Book.pages changes type from String to Int64, which a lightweight "
                + "stage cannot do (declare a custom stage)",
            "/src/Model.swift:15:13: lightweight stage 1.0.0 -> 2.0.0: Book.subtitle is new and required, with no default to give the "
                + "objects that lack it",
        ])
    }

    /// A new required to-one: nothing can fill it in a lightweight stage (was: a step that rejected
    /// every existing object at run time); a custom stage's code might, so there it stays a step.
    @Test("A lightweight stage refuses a new required to-one relationship, naming it; a custom stage derives it")
    func newRequiredRelationship() throws {
        let text = ModelStageStepsTests.source.replacingOccurrences(of: "var subtitle: String?", with: "var subtitle: String?; var author: Author")
        let custom = try readSource(text)
        let steps = ModelStageSteps(try #require(custom.stages.first), of: custom)
        #expect(steps.refusals.isEmpty)
        #expect(steps.steps.contains(.addRequiredRelationship(entity: "Book", name: "author")))
        let light = try readSource(text.replacingOccurrences(of: ".custom(fromVersion: V1.self, toVersion: V2.self, willMigrate: nil, didMigrate: { _ in })",
                                                             with: ".lightweight(fromVersion: V1.self, toVersion: V2.self)"))
        let refused = ModelStageSteps(try #require(light.stages.first), of: light)
        #expect(!refused.steps.contains(.addRequiredRelationship(entity: "Book", name: "author")))
        #expect(refused.refusals.contains {
            $0.hasPrefix("/src/Model.swift:15:")
                && $0.hasSuffix("lightweight stage 1.0.0 -> 2.0.0: Book.author is a new required relationship, which a lightweight stage "
                                + "cannot fill for the objects that exist (make it optional, or declare a custom stage)")
        }, "\(refused.refusals)")
    }
}
