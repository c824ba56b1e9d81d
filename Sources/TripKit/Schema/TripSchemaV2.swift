// FROZEN: 2.0.0 is released. Never edit this declaration; add a new version instead.

/// SampleTrips 2.0.0: as 1.0.0, and a trip's `name` is unique.
public enum TripSchemaV2: VersionedSchema {
    public static let versionIdentifier = SchemaVersion(2, 0, 0)
    public static let entities: [Entity] = [
        Entity("Trip", attributes: [
            Attribute("name", .string, options: [.unique]),
            Attribute("destination", .string),
            Attribute("start_date", .date),
            Attribute("end_date", .date),
        ], relationships: [
            .toMany("bucketList", "BucketListItem", deleteRule: .nullify),
            .toOne("livingAccommodation", "LivingAccommodation", deleteRule: .nullify),
        ]),
        TripSchemaShared.bucketListItem,
        TripSchemaShared.livingAccommodation,
    ]
}
