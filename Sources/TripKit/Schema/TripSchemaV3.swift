// FROZEN once 3.0.0 ships. Until then, it is the current schema.

/// SampleTrips 3.0.0 (current): camel-case dates, cascading relationships, a transient view count.
public enum TripSchemaV3: VersionedSchema {
    public static let versionIdentifier = SchemaVersion(3, 0, 0)
    public static let entities: [Entity] = [
        Entity("Trip", attributes: [
            Attribute("name", .string, options: [.unique]),
            Attribute("destination", .string),
            Attribute("startDate", .date, originalName: "start_date"),
            Attribute("endDate", .date, originalName: "end_date"),
            Attribute("tripViews", .int, options: [.transient], default: .int(0)),
        ], relationships: [
            .toMany("bucketList", "BucketListItem", deleteRule: .cascade),
            .toOne("livingAccommodation", "LivingAccommodation", deleteRule: .cascade),
        ]),
        TripSchemaShared.bucketListItem,
        TripSchemaShared.livingAccommodation,
    ]
}
