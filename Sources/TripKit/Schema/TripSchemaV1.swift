// FROZEN: 1.0.0 is released. Never edit this declaration; add a new version instead.
// (TripKitTests pins it, so an edit fails the tests.)

/// SampleTrips 1.0.0: dates are `start_date` / `end_date`, names may repeat, relationships nullify.
public enum TripSchemaV1: VersionedSchema {
    public static let versionIdentifier = SchemaVersion(1, 0, 0)
    public static let entities: [Entity] = [
        Entity("Trip", attributes: [
            Attribute("name", .string),
            Attribute("destination", .string),
            Attribute("start_date", .date),
            Attribute("end_date", .date),
        ], relationships: [
            .toMany("bucketList", "BucketListItem", deleteRule: .nullify),
            .toOne("livingAccommodation", "LivingAccommodation", deleteRule: .nullify),
        ], legacySpellings: [
            // An older sample model spelled the relationships this way; 1.0.0 exports carry both.
            "bucketListItem": "bucketList",
            "livingAccommodations": "livingAccommodation",
        ]),
        TripSchemaShared.bucketListItem,
        TripSchemaShared.livingAccommodation,
    ]
}

/// The entities that no version has changed.
enum TripSchemaShared {
    static let bucketListItem = Entity("BucketListItem", attributes: [
        Attribute("title", .string),
        Attribute("details", .string, default: .string("")),
        Attribute("hasReservation", .bool, default: .bool(false)),
        Attribute("isInPlan", .bool, default: .bool(false)),
    ])
    static let livingAccommodation = Entity("LivingAccommodation", attributes: [
        Attribute("address", .string, default: .string("")),
        Attribute("placeName", .string, default: .string("")),
    ])
}
