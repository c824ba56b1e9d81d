import TripKit
import TripFormats

/// `tripconv schema --model PATH` of an app's Swift source, an `.xcdatamodeld` or plan JSON: every version's entities, and
/// the plan with each stage's steps as tripconv derives them from the two versions.
enum PlanDescription {
    static func text(_ plan: ModelPlan, name: String) -> String {
        var s = "model of \(name)\n"
        for version in plan.versions {
            s += "schema \(version.versionIdentifiers.first ?? "(unversioned)")\n"
            for e in version.entities {
                var head = "  \(e.name)"
                let notes = [e.superentity.map { "inherits from \($0)" }, e.renamingIdentifier.map { "originalName \($0)" }].compactMap { $0 }
                if !notes.isEmpty { head += "  (" + notes.joined(separator: ", ") + ")" }
                s += head + "\n"
                for a in e.attributes { s += ModelDescription.attributeText(a) }
                for r in e.relationships { s += ModelDescription.relationshipText(r) }
                for u in e.uniquenessConstraints { s += "    unique: \(u.joined(separator: ", "))\n" }
            }
        }
        s += "migration plan\n"
        if plan.stages.isEmpty { s += "  no stages\n" }
        for stage in plan.stages {
            let derived = ModelStageSteps(stage, of: plan)
            s += "  \(stage.from) -> \(stage.to): \(stage.kind)"
            if !stage.hooks.isEmpty { s += " (\(stage.hooks.joined(separator: ", ")): not run, its steps derived from the two versions)" }
            s += "\n"
            for step in derived.steps { s += "    \(step)\n" }
            if derived.steps.isEmpty && derived.refusals.isEmpty { s += "    no structural change\n" }
            for r in derived.refusals { s += "    refused: \(r)\n" }
        }
        if !plan.notes.isEmpty {
            s += "notes\n"
            for n in plan.notes { s += "  \(n)\n" }
        }
        return s
    }

    /// The plan JSON (`--model` reads it back), each stage with its derived steps and refusals.
    static func node(_ plan: ModelPlan, name: String) -> JSONText.Node {
        let derived = plan.stages.map { ModelStageSteps($0, of: plan) }
        return .object([("source", .string(name))] + ObjectModelJSON.node(plan) + [
            ("derivedSteps", .array(derived.map { d in
                .object([("steps", .array(d.steps.map { .string($0.description) })),
                         ("refusals", .array(d.refusals.map(JSONText.Node.string)))])
            })),
        ])
    }
}
