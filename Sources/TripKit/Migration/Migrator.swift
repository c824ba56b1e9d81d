/// Runs a migration plan's stages over a context, from its version to a target, either way.
public struct Migrator<Plan: SchemaMigrationPlan> {
    /// A migrator running `plan`'s stages.
    public init(_ plan: Plan.Type) {}

    /// One step of a path, for running and for saying what ran.
    public struct Step: CustomStringConvertible {
        public let from: any VersionedSchema.Type
        public let to: any VersionedSchema.Type
        public let stage: MigrationStage
        public let isReversed: Bool

        public var description: String {
            "\(from.versionIdentifier) -> \(to.versionIdentifier) (\(stage.kind)\(isReversed ? ", reversed" : ""))"
        }
    }

    /// The steps from one version to another: the plan's stages forwards, or their structural steps
    /// backwards (custom code does not run backwards; a downgrade only reverses renames and rules).
    public func path(from: SchemaVersion, to: SchemaVersion) throws -> [Step] {
        let versions = Plan.versions
        guard let a = versions.firstIndex(of: from) else { throw TripError.usage("unknown schema version \(from)") }
        guard let b = versions.firstIndex(of: to) else { throw TripError.usage("unknown schema version \(to)") }
        var steps: [Step] = []
        if a < b {
            for i in a..<b {
                guard let stage = Plan.stages.first(where: {
                    $0.fromVersion.versionIdentifier == versions[i] && $0.toVersion.versionIdentifier == versions[i + 1]
                }) else {
                    throw TripError.data("the plan has no stage from \(versions[i]) to \(versions[i + 1])")
                }
                steps.append(Step(from: stage.fromVersion, to: stage.toVersion, stage: stage, isReversed: false))
            }
        } else if a > b {
            for i in stride(from: a, to: b, by: -1) {
                guard let stage = Plan.stages.first(where: {
                    $0.fromVersion.versionIdentifier == versions[i - 1] && $0.toVersion.versionIdentifier == versions[i]
                }) else {
                    throw TripError.data("the plan has no stage from \(versions[i - 1]) to \(versions[i])")
                }
                steps.append(Step(from: stage.toVersion, to: stage.fromVersion, stage: stage, isReversed: true))
            }
        }
        return steps
    }

    /// Migrates the context to the target version; returns the steps run.
    @discardableResult
    public func migrate(_ context: MigrationContext, to target: SchemaVersion) throws -> [Step] {
        let steps = try path(from: context.schema.versionIdentifier, to: target)
        for step in steps {
            if !step.isReversed, case .custom(_, _, let willMigrate?, _) = step.stage {
                try willMigrate(context)
            }
            let mapping = try LightweightMapping(from: step.from, to: step.to)
            if !mapping.isIdentity {
                try context.transform(mapping.apply)
            }
            context.schema = step.to
            if !step.isReversed, case .custom(_, _, _, let didMigrate?) = step.stage {
                try didMigrate(context)
            }
        }
        return steps
    }
}
