/// The SampleTrips migration plan: 1.0.0 → 2.0.0 deduplicates trips by name, 2.0.0 → 3.0.0 is lightweight.
public enum TripMigrationPlan: SchemaMigrationPlan {
    public static let schemas: [any VersionedSchema.Type] = [
        TripSchemaV1.self, TripSchemaV2.self, TripSchemaV3.self,
    ]

    public static let stages: [MigrationStage] = [
        .custom(fromVersion: TripSchemaV1.self, toVersion: TripSchemaV2.self,
                willMigrate: { context in try context.deduplicate("Trip", by: "name") },
                didMigrate: nil),
        .lightweight(fromVersion: TripSchemaV2.self, toVersion: TripSchemaV3.self),
    ]
}
