import SwiftSyntax
import TripKit

/// An app's model and migration plan, read from its Swift source with swift-syntax: every
/// `VersionedSchema` (its `versionIdentifier` and `models`), every `@Model` class they list, and the
/// `SchemaMigrationPlan` (`schemas` and `stages`, declared inline or as static properties).
///
/// ```swift
/// let plan = try SwiftModelSource.read(["App/Sources/Model"])
/// for stage in plan.stages { print(ModelStageSteps(stage, of: plan).steps) }
/// ```
///
/// Source that is not a model (views, app code) is let be. Without a plan, the versions are the
/// schemas in version order with no stage; without a `VersionedSchema`, one unversioned model of
/// every `@Model` class.
public enum SwiftModelSource {
    /// Reads the `.swift` files at `paths` (files, or folders searched to any depth).
    public static func read(_ paths: [String], readFile: (String) throws -> String,
                            listFolder: (String) -> [String]?) throws -> ModelPlan {
        let declarations = try SwiftDeclarations(paths: paths, readFile: readFile, listFolder: listFolder)
        guard !declarations.models.isEmpty else {
            throw SwiftModelError(place: paths.joined(separator: ", "), message: "expected a @Model class, found none in "
                                  + "\(declarations.files.count) Swift file\(declarations.files.count == 1 ? "" : "s")")
        }
        var notes: [String] = []
        var places: [String: String] = [:]
        // Each schema: its identifier, its models and the notes its models gave.
        var versions: [(type: String, identifier: String, model: ObjectModel, notes: [(place: String, text: String)])] = []
        // The models a schema's `models` leaves out and a relationship reaches, and the schema.
        var reached: [(models: String, schema: String)] = []
        for (name, schema) in declarations.schemas.sorted(by: { $0.key < $1.key }) {
            let identifier = try SwiftModelSource.identifier(of: name, schema, declarations)
            let listed = try SwiftModelSource.models(of: name, schema, declarations)
            // As SwiftData's Schema, the models a listed one leads to by a relationship are in the version too.
            let models = reachable(from: listed, declarations)
            let added = models.dropFirst(listed.count).map { String($0.split(separator: ".").last!) }.joined(separator: ", ")
            if !added.isEmpty { reached.append((added, name)) }
            var reader = SwiftEntityReader(declarations: declarations, versionModels: Set(models))
            var entities: [EntityDescription] = []
            for q in models { entities.append(try reader.entity(declarations.models[q]!)) }
            for (k, v) in reader.places { places["\(identifier)/\(k)"] = v }
            if let other = versions.first(where: { $0.identifier == identifier }) {
                throw SwiftModelError(place: schema.place, message: "expected each schema to have its own version, found \(identifier) "
                                      + "declared by \(other.type) and \(name)")
            }
            versions.append((name, identifier, ObjectModel(entities: SwiftModelSource.inferInverses(entities), versionIdentifiers: [identifier]),
                             reader.notes))
        }
        for models in Set(reached.map(\.models)).sorted() {
            let schemas = reached.filter { $0.models == models }.map(\.schema)
            notes.append("\(models): not in the models of \(schemas.joined(separator: ", ")) but reached by a relationship: "
                         + "in \(schemas.count == 1 ? "that version" : "those versions"), as SwiftData's Schema takes it")
        }
        if versions.isEmpty {
            var reader = SwiftEntityReader(declarations: declarations, versionModels: [])
            var entities: [EntityDescription] = []
            for (_, m) in declarations.models.sorted(by: { $0.key < $1.key }) { entities.append(try reader.entity(m)) }
            notes += merged(reader.notes) + ["no VersionedSchema: one unversioned model of every @Model class"]
            for (k, v) in reader.places { places["/\(k)"] = v }
            return ModelPlan(versions: [ObjectModel(entities: inferInverses(entities))], stages: [], notes: notes, places: places)
        }
        guard let (planName, plan) = try onePlan(declarations, versions: versions.map { ($0.type, $0.identifier) }, notes: &notes) else {
            let ordered = versions.sorted { SchemaVersion($0.identifier)! < SchemaVersion($1.identifier)! }
            notes += merged(ordered.flatMap(\.notes))
            notes.append("no SchemaMigrationPlan: the schemas in version order, with no stage")
            let stages = inferredStages(ordered.map(\.identifier), declared: [], notes: &notes)
            return ModelPlan(versions: ordered.map(\.model), stages: stages, notes: notes, places: places)
        }
        let scope = plan.scope + [String(planName.split(separator: ".").last!)]
        func identifier(_ written: String, at node: some SyntaxProtocol) throws -> String {
            guard let q = declarations.resolve(written, from: scope, in: { declarations.schemas[$0] != nil }),
                  let v = versions.first(where: { $0.type == q }) else {
                throw SwiftModelError(place: plan.place(node), message: "expected a VersionedSchema declared in the source, found \(written)")
            }
            return v.identifier
        }
        let schemaList = try staticArray("schemas", of: planName, plan, declarations)
        var ordered: [ObjectModel] = []
        for element in schemaList {
            guard let written = SwiftExpressions.typeReference(element) else {
                throw SwiftModelError(place: plan.place(element), message: "expected Schema.self, found \(element.trimmedDescription)")
            }
            let id = try identifier(written, at: element)
            ordered.append(versions.first { $0.identifier == id }!.model)
        }
        // The notes of the versions the plan lists, and which declared versions it leaves out.
        let listed = Set(ordered.compactMap(\.versionIdentifiers.first))
        notes += merged(ordered.flatMap { o in versions.first { $0.identifier == o.versionIdentifiers.first }!.notes })
        let left = versions.filter { !listed.contains($0.identifier) }
            .sorted { SchemaVersion($0.identifier)! < SchemaVersion($1.identifier)! }.map { "\($0.type) (\($0.identifier))" }
        if !left.isEmpty {
            notes.append("\(left.joined(separator: ", ")): declared, but not in \(planName).schemas: left out")
        }
        var stages: [ModelPlan.Stage] = []
        for element in try staticArray("stages", of: planName, plan, declarations) {
            stages.append(try stage(element, planScope: scope, plan: plan, declarations: declarations, identifier: identifier))
        }
        stages += inferredStages(ordered.compactMap(\.versionIdentifiers.first), declared: stages, notes: &notes)
        return ModelPlan(versions: ordered, stages: stages, notes: notes, places: places)
    }

    /// The stages SwiftData infers: a store at a version no declared stage leaves is migrated as Core
    /// Data migrates one without a plan, by one lightweight mapping inferred from its version straight
    /// to the current one (an app whose plan lists its schemas with `stages: []` relies on it). One
    /// lightweight stage from each such version (`versions` in the plan's order, the last current)
    /// to the current, said in the notes; its steps are derived and refused as any lightweight stage's.
    static func inferredStages(_ versions: [String], declared: [ModelPlan.Stage], notes: inout [String]) -> [ModelPlan.Stage] {
        guard let current = versions.last else { return [] }
        let left = versions.dropLast().filter { v in !declared.contains { $0.from == v } }
        guard !left.isEmpty else { return [] }
        notes.append("no stage from \(left.joined(separator: ", ")): SwiftData migrates a store at \(left.count == 1 ? "that version" : "those versions") "
                     + "by a lightweight mapping it infers straight to \(current), as Core Data does: "
                     + (left.count == 1 ? "the lightweight stage " : "the lightweight stages ")
                     + "\(left.map { "\($0) -> \(current)" }.joined(separator: ", ")) derived")
        return left.map { ModelPlan.Stage(.lightweight, from: $0, to: current) }
    }

    /// Each note once: the same note at several places (a declaration copied into each version's
    /// schema) is said at its first place, with how many more say it.
    static func merged(_ notes: [(place: String, text: String)]) -> [String] {
        var order: [String] = [], places: [String: [String]] = [:]
        for n in notes {
            if places[n.text] == nil { order.append(n.text) }
            places[n.text, default: []].append(n.place)
        }
        return order.map { text in
            let at = places[text]!
            return "\(at[0]): \(text)" + (at.count > 1 ? " (and \(at.count - 1) more place\(at.count == 2 ? "" : "s"))" : "")
        }
    }

    /// The plan the app migrates forward with. Of several (an app may keep a rollback plan beside its
    /// own: `schemas: [V2.self, V1.self]`, a stage from V2 to V1), the one whose `schemas` list
    /// versions in increasing order, the others named in the notes; more than one such, or none, is
    /// an error naming them, as tripconv cannot tell which the app gives its `ModelContainer`.
    private static func onePlan(_ d: SwiftDeclarations, versions: [(type: String, identifier: String)],
                                notes: inout [String]) throws -> (String, SwiftDeclarations.Located<DeclSyntax>)? {
        let plans = d.plans.sorted { $0.key < $1.key }
        guard plans.count > 1 else { return plans.first.map { ($0.key, $0.value) } }
        let forward = plans.filter { name, plan in
            // The plan's schemas as versions, when each names a VersionedSchema of the source.
            guard let list = try? staticArray("schemas", of: name, plan, d) else { return false }
            let scope = plan.scope + [String(name.split(separator: ".").last!)]
            let order = list.compactMap { element -> SchemaVersion? in
                guard let written = SwiftExpressions.typeReference(element),
                      let q = d.resolve(written, from: scope, in: { d.schemas[$0] != nil }),
                      let v = versions.first(where: { $0.type == q }) else { return nil }
                return SchemaVersion(v.identifier)
            }
            return order.count == list.count && !order.isEmpty && zip(order, order.dropFirst()).allSatisfy { $0 < $1 }
        }
        guard forward.count == 1, let chosen = forward.first else {
            throw SwiftModelError(place: plans[1].value.place, message: "expected one SchemaMigrationPlan whose schemas go forward, found "
                                  + plans.map(\.key).joined(separator: " and ")
                                  + (forward.isEmpty ? " (none in increasing version order)" : " (\(forward.count) in increasing version order)"))
        }
        let others = plans.filter { $0.key != chosen.key }.map(\.key)
        notes.append("\(others.joined(separator: ", ")): \(others.count == 1 ? "a SchemaMigrationPlan" : "SchemaMigrationPlans") "
                     + "whose schemas do not go forward (a rollback): left out; \(chosen.key) is the plan")
        return (chosen.key, chosen.value)
    }

    private static func staticValue(_ property: String, of type: String, _ decl: SwiftDeclarations.Located<DeclSyntax>,
                                    _ d: SwiftDeclarations) throws -> (ExprSyntax, SwiftDeclarations.SourceFile) {
        guard let binding = d.staticProperties["\(type).\(property)"] else {
            throw SwiftModelError(place: decl.place, message: "expected static var \(property) in \(type), found none")
        }
        guard let value = SwiftExpressions.declaredValue(binding.node) else {
            throw SwiftModelError(place: binding.place, message: "expected \(type).\(property) to be one expression (an initial value or a "
                                  + "getter returning one), found \(binding.node.trimmedDescription)")
        }
        return (value, binding.file)
    }

    private static func staticArray(_ property: String, of type: String, _ decl: SwiftDeclarations.Located<DeclSyntax>,
                                    _ d: SwiftDeclarations) throws -> [ExprSyntax] {
        let (value, file) = try staticValue(property, of: type, decl, d)
        guard let array = value.as(ArrayExprSyntax.self) else {
            throw SwiftModelError(place: file.place(value), message: "expected an array literal for \(type).\(property), found "
                                  + value.trimmedDescription)
        }
        return array.elements.map(\.expression)
    }

    private static func identifier(of name: String, _ schema: SwiftDeclarations.Located<DeclSyntax>, _ d: SwiftDeclarations) throws -> String {
        let (value, file) = try staticValue("versionIdentifier", of: name, schema, d)
        return try SwiftExpressions.version(value, file: file)
    }

    /// `models` and every @Model class reached from them through their stored properties' types
    /// (`var details: Details?`, `var tags: [Tag]`), in the order found.
    static func reachable(from models: [String], _ d: SwiftDeclarations) -> [String] {
        var out = models, i = 0
        while i < out.count {
            defer { i += 1 }
            guard let located = d.models[out[i]] else { continue }
            let scope = located.scope + [located.node.name.text]
            for decl in SwiftDeclarations.members(located.node.memberBlock.members) {
                guard let v = decl.as(VariableDeclSyntax.self), !v.modifiers.contains(where: { $0.name.text == "static" }) else { continue }
                for binding in v.bindings {
                    guard let written = binding.typeAnnotation?.type.trimmedDescription else { continue }
                    let bare = written.filter { !"?![] ".contains($0) }
                    let name = bare.hasPrefix("Optional<") && bare.hasSuffix(">") ? String(bare.dropFirst(9).dropLast()) : bare
                    if let q = d.resolve(name, from: scope, in: { d.models[$0] != nil }), !out.contains(q) { out.append(q) }
                }
            }
        }
        return out
    }

    private static func models(of name: String, _ schema: SwiftDeclarations.Located<DeclSyntax>, _ d: SwiftDeclarations) throws -> [String] {
        let scope = schema.scope + [String(name.split(separator: ".").last!)]
        return try staticArray("models", of: name, schema, d).map { element in
            guard let written = SwiftExpressions.typeReference(element),
                  let q = d.resolve(written, from: scope, in: { d.models[$0] != nil }) else {
                throw SwiftModelError(place: schema.file.place(element), message: "expected a @Model class's .self in \(name).models, found "
                                      + element.trimmedDescription)
            }
            return q
        }
    }

    private static func stage(_ element: ExprSyntax, planScope: [String], plan: SwiftDeclarations.Located<DeclSyntax>,
                              declarations d: SwiftDeclarations,
                              identifier: (String, ExprSyntax) throws -> String) throws -> ModelPlan.Stage {
        var expression = element
        var file = plan.file
        if let name = element.as(DeclReferenceExprSyntax.self)?.baseName.text
            ?? element.as(MemberAccessExprSyntax.self).flatMap({ m in
                m.base.map { ["Self", planScope.last!].contains($0.trimmedDescription) } == true ? m.declName.baseName.text : nil }) {
            guard let q = d.resolve(name, from: planScope, in: { d.staticProperties[$0] != nil }), let binding = d.staticProperties[q],
                  let value = SwiftExpressions.declaredValue(binding.node) else {
                throw SwiftModelError(place: plan.place(element), message: "expected a MigrationStage, found \(element.trimmedDescription)")
            }
            expression = value; file = binding.file
        }
        guard let call = expression.as(FunctionCallExprSyntax.self),
              case let kindName = SwiftExpressions.optionName(call.calledExpression),
              let kind = MigrationStage.Kind(rawValue: kindName) else {
            throw SwiftModelError(place: file.place(expression), message: "expected MigrationStage.lightweight(…) or .custom(…), found "
                                  + String(expression.trimmedDescription.prefix(60)))
        }
        func argument(_ label: String) -> ExprSyntax? { call.arguments.first { $0.label?.text == label }?.expression }
        guard let from = argument("fromVersion"), let to = argument("toVersion"),
              let fromName = SwiftExpressions.typeReference(from), let toName = SwiftExpressions.typeReference(to) else {
            throw SwiftModelError(place: file.place(call), message: "expected fromVersion: and toVersion: naming schemas (V1.self), found "
                                  + String(call.arguments.trimmedDescription.prefix(60)))
        }
        var hooks: [String] = []
        for hook in ["willMigrate", "didMigrate"] {
            if let e = argument(hook), !e.is(NilLiteralExprSyntax.self) { hooks.append(hook) }
        }
        if call.trailingClosure != nil { hooks.append(argument("willMigrate") == nil ? "willMigrate" : "didMigrate") }
        return ModelPlan.Stage(kind, from: try identifier(fromName, from), to: try identifier(toName, to), hooks: hooks,
                               place: file.place(call))
    }

    /// SwiftData pairs two relationships as inverses when neither names one and each is the only
    /// relationship of its entity pointing at the other; an explicit `inverse:` is mirrored on its partner.
    static func inferInverses(_ entities: [EntityDescription]) -> [EntityDescription] {
        var result = entities
        for (i, e) in result.enumerated() {
            for (j, r) in e.relationships.enumerated() {
                if let inverse = r.inverse {
                    if let d = result.firstIndex(where: { $0.name == r.destination }),
                       let k = result[d].relationships.firstIndex(where: { $0.name == inverse }), result[d].relationships[k].inverse == nil {
                        result[d].relationships[k].inverse = r.name
                    }
                    continue
                }
                guard let d = result.firstIndex(where: { $0.name == r.destination }) else { continue }
                let back = result[d].relationships.filter { $0.destination == e.name && (d != i || $0.name != r.name) }
                let forth = e.relationships.filter { $0.destination == r.destination }
                if back.count == 1, forth.count == 1, back[0].inverse == nil || back[0].inverse == r.name {
                    result[i].relationships[j].inverse = back[0].name
                }
            }
        }
        return result
    }
}
