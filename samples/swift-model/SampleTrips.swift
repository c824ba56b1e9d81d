// SampleTrips' model and migration plan as the app declares them in Swift (WWDC23, "Model your schema
// with SwiftData"), for `tripconv schema --model samples/swift-model`: tripconv reads this source to
// the same three versions and plan it has built in. Not compiled by this package.
import Foundation
import SwiftData

enum SampleTripsSchemaV1: VersionedSchema {
    static var versionIdentifier = Schema.Version(1, 0, 0)

    static var models: [any PersistentModel.Type] {
        [Trip.self, BucketListItem.self, LivingAccommodation.self]
    }

    @Model
    final class Trip {
        var name: String
        var destination: String
        var start_date: Date
        var end_date: Date
        var bucketList: [BucketListItem] = [BucketListItem]()
        var livingAccommodation: LivingAccommodation?

        init(name: String, destination: String, start_date: Date, end_date: Date) {
            self.name = name
            self.destination = destination
            self.start_date = start_date
            self.end_date = end_date
        }
    }

    @Model
    final class BucketListItem {
        var title: String
        var details: String = ""
        var hasReservation: Bool = false
        var isInPlan: Bool = false

        init(title: String) { self.title = title }
    }

    @Model
    final class LivingAccommodation {
        var address: String = ""
        var placeName: String = ""

        init(address: String, placeName: String) {
            self.address = address
            self.placeName = placeName
        }
    }
}

enum SampleTripsSchemaV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }

    static var models: [any PersistentModel.Type] {
        [Trip.self, BucketListItem.self, LivingAccommodation.self]
    }

    // The items and accommodations have not changed since 1.0.0.
    typealias BucketListItem = SampleTripsSchemaV1.BucketListItem
    typealias LivingAccommodation = SampleTripsSchemaV1.LivingAccommodation

    @Model
    final class Trip {
        @Attribute(.unique) var name: String
        var destination: String
        var start_date: Date
        var end_date: Date
        var bucketList: [BucketListItem] = [BucketListItem]()
        var livingAccommodation: LivingAccommodation?

        init(name: String, destination: String, start_date: Date, end_date: Date) {
            self.name = name
            self.destination = destination
            self.start_date = start_date
            self.end_date = end_date
        }
    }
}

enum SampleTripsSchemaV3: VersionedSchema {
    static var versionIdentifier = Schema.Version(3, 0, 0)

    static var models: [any PersistentModel.Type] {
        [Trip.self, SampleTripsSchemaV1.BucketListItem.self, SampleTripsSchemaV1.LivingAccommodation.self]
    }

    @Model
    final class Trip {
        @Attribute(.unique) var name: String
        var destination: String
        @Attribute(originalName: "start_date") var startDate: Date
        @Attribute(originalName: "end_date") var endDate: Date
        @Transient var tripViews: Int = 0

        @Relationship(deleteRule: .cascade)
        var bucketList: [SampleTripsSchemaV1.BucketListItem] = []

        @Relationship(deleteRule: .cascade)
        var livingAccommodation: SampleTripsSchemaV1.LivingAccommodation?

        var displayName: String { "\(name), \(destination)" }

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }
}

enum SampleTripsMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] {
        [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self, SampleTripsSchemaV3.self]
    }

    static var stages: [MigrationStage] {
        [migrateV1toV2, migrateV2toV3]
    }

    static let migrateV1toV2 = MigrationStage.custom(
        fromVersion: SampleTripsSchemaV1.self,
        toVersion: SampleTripsSchemaV2.self,
        willMigrate: { context in
            let trips = try context.fetch(FetchDescriptor<SampleTripsSchemaV1.Trip>())
            // De-duplicate Trip instances here...
            try context.save()
        },
        didMigrate: nil
    )

    static let migrateV2toV3 = MigrationStage.lightweight(
        fromVersion: SampleTripsSchemaV2.self,
        toVersion: SampleTripsSchemaV3.self
    )
}

typealias Trip = SampleTripsSchemaV3.Trip
