import ArgumentParser
import TripKit
import TripFormats

/// `tripconv schema`: the declarations and the plan, printed from the values the engine runs on.
struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        // Named, not derived (Convert.swift says why).
        commandName: "schema",
        abstract: "Print the schema versions and the migration plan, or the model of a store or Xcode model (--model).")

    @Argument(help: ArgumentHelp("Print only this version.", valueName: "version"))
    var version: SchemaVersion?

    @Option(name: .customLong("model"), help: ArgumentHelp(
        "Print the model of a Core Data or SwiftData store (from its model cache, else its tables), an .xcdatamodel folder or its "
            + "contents file, model JSON, an app's Swift source (a .swift file or a folder) or an .xcdatamodeld (their versions and "
            + "migration plan, with each stage's derived steps; for an .xcdatamodeld, as Core Data migrates, one inferred lightweight "
            + "stage from each older version straight to the current one), or plan JSON, instead of SampleTrips' schemas. Notes say what "
            + "was kept out: options that change no stored value, defaults computed when an object is made (Date(), UUID(); an empty "
            + "initializer such as Data() is a fixed default), schemas the plan does not list.",
        valueName: "path"))
    var model: String?

    @OptionGroup var modelDefaults: ModelDefaultOptions

    @Flag(name: .customLong("json"), help: "Print JSON (with --model: a model JSON that --model reads back).")
    var json = false

    @Option(name: .customLong("pg-schema"), help: ArgumentHelp("With --model naming a PostgreSQL store: the schema its tables are in (default: the server's search path, usually public).", valueName: "name"))
    var pgSchema: String?

    func run() throws {
        try runReportingErrors {
            if let model {
                guard version == nil else { throw TripError(.usage, "give a version or --model, not both") }
                let swift = ModelPlanSource.isSwiftSource(model), xcode = ModelPlanSource.isXcodeVersions(model)
                if swift || xcode || ModelPlanSource.isPlanJSON(model) {
                    let plan = try (xcode ? ModelPlanSource.readXcodeVersions(model) : ModelPlanSource.read(model, isSwift: swift))
                        .givingDefaults(modelDefaults.assignments())
                    writeAll(1, json ? PlanDescription.node(plan, name: model).render(indent: 2) + "\n" : PlanDescription.text(plan, name: model))
                    return
                }
                if !modelDefaults.defaults.isEmpty {
                    throw TripError(.usage, "--default gives defaults to an app's plan: it goes with --model naming its Swift source, plan JSON or an .xcdatamodeld")
                }
                if pgSchema != nil && !Format.isPostgreSQLAddress(model) {
                    throw TripError(.usage, "--pg-schema goes with --model naming a PostgreSQL store")
                }
                let store = try ModelDescription.read(model, pgSchema: pgSchema)
                writeAll(1, json ? ModelDescription.node(store).render(indent: 2) + "\n" : ModelDescription.text(store, name: model))
                return
            }
            if !modelDefaults.defaults.isEmpty {
                throw TripError(.usage, "--default gives defaults to an app's plan: it goes with --model naming its Swift source, plan JSON or an .xcdatamodeld")
            }
            let schemas = TripMigrationPlan.schemas.filter { version == nil || $0.versionIdentifier == version }
            let stages = TripMigrationPlan.stages.filter {
                version == nil || $0.fromVersion.versionIdentifier == version || $0.toVersion.versionIdentifier == version
            }
            var text: String
            if json {
                text = JSONText.Node.object([
                    ("schemas", .array(schemas.map(SchemaDescription.node))),
                    ("stages", .array(try stages.map(SchemaDescription.node))),
                ]).render(indent: 2) + "\n"
            } else {
                text = schemas.map(SchemaDescription.text).joined(separator: "\n")
                text += "\nmigration plan\n"
                for s in stages { text += try SchemaDescription.text(s) }
            }
            writeAll(1, text)
        }
    }
}

enum SchemaDescription {
    static func typeName(_ t: AttributeType) -> String {
        switch t {
        case .string: return "String"
        case .date: return "Date"
        case .bool: return "Bool"
        case .int: return "Int"
        }
    }

    static func attributeText(_ a: Attribute) -> String {
        var s = "    \(a.name): \(typeName(a.type))"
        if let d = a.defaultValue { s += " = \(d.literal)" }
        var notes: [String] = []
        if a.isUnique { notes.append("unique") }
        if a.isTransient { notes.append("transient") }
        if let o = a.originalName { notes.append("originalName \(o)") }
        if !notes.isEmpty { s += "  (" + notes.joined(separator: ", ") + ")" }
        return s + "\n"
    }

    static func text(_ schema: any VersionedSchema.Type) -> String {
        var s = "schema \(schema.versionIdentifier)\n"
        for e in schema.entities {
            s += "  \(e.name)\n"
            for a in e.attributes { s += attributeText(a) }
            for r in e.relationships {
                let type = r.isToMany ? "[\(r.destination)]" : "\(r.destination)?"
                s += "    \(r.name): \(type)  (\(r.isToMany ? "to-many" : "to-one"), delete rule \(r.deleteRule.rawValue))\n"
            }
            for (spelling, real) in e.legacySpellings.sorted(by: { $0.key < $1.key }) {
                s += "    read \(spelling) as \(real)\n"
            }
        }
        return s
    }

    static func text(_ stage: MigrationStage) throws -> String {
        let from = stage.fromVersion, to = stage.toVersion
        var s = "  \(from.versionIdentifier) -> \(to.versionIdentifier): \(stage.kind)"
        if case .custom(_, _, let will, let did) = stage {
            var hooks: [String] = []
            if will != nil { hooks.append("willMigrate") }
            if did != nil { hooks.append("didMigrate") }
            s += " (" + hooks.joined(separator: ", ") + ")"
        }
        s += "\n"
        let mapping = try LightweightMapping(from: from, to: to)
        for c in mapping.changes { s += "    \(c)\n" }
        if mapping.changes.isEmpty { s += "    no structural change\n" }
        return s
    }

    static func node(_ schema: any VersionedSchema.Type) -> JSONText.Node {
        .object([
            ("version", .string(schema.versionIdentifier.description)),
            ("entities", .array(schema.entities.map { e in
                .object([
                    ("name", .string(e.name)),
                    ("attributes", .array(e.attributes.map { a in
                        .object([
                            ("name", .string(a.name)),
                            ("type", .string(a.type.rawValue)),
                            ("unique", .bool(a.isUnique)),
                            ("transient", .bool(a.isTransient)),
                            ("originalName", a.originalName.map { .string($0) } ?? .null),
                            ("default", a.defaultValue.map { .string($0.literal) } ?? .null),
                        ])
                    })),
                    ("relationships", .array(e.relationships.map { r in
                        .object([
                            ("name", .string(r.name)),
                            ("destination", .string(r.destination)),
                            ("toMany", .bool(r.isToMany)),
                            ("deleteRule", .string(r.deleteRule.rawValue)),
                        ])
                    })),
                    ("legacySpellings", .object(e.legacySpellings.sorted(by: { $0.key < $1.key }).map { ($0.key, .string($0.value)) })),
                ])
            })),
        ])
    }

    static func node(_ stage: MigrationStage) throws -> JSONText.Node {
        let mapping = try LightweightMapping(from: stage.fromVersion, to: stage.toVersion)
        var hooks: [JSONText.Node] = []
        if case .custom(_, _, let will, let did) = stage {
            if will != nil { hooks.append(.string("willMigrate")) }
            if did != nil { hooks.append(.string("didMigrate")) }
        }
        return .object([
            ("from", .string(stage.fromVersion.versionIdentifier.description)),
            ("to", .string(stage.toVersion.versionIdentifier.description)),
            ("kind", .string(stage.kind.rawValue)),
            ("hooks", .array(hooks)),
            ("changes", .array(mapping.changes.map { .string($0.description) })),
        ])
    }
}
