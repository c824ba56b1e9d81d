import TripKit

/// Builds trips for tests through the same RecordBuilder the readers use.
struct TestTrip {
    var name: String
    var destination = "Somewhere"
    var start = "2024-05-01T09:30:00Z"
    var end = "2024-05-08T18:00:00Z"
    var items: [(title: String, details: String, hasReservation: Bool, isInPlan: Bool)] = []
    var accommodation: (address: String, placeName: String)? = nil
}

func ts(_ iso: String) -> Timestamp { Timestamp(iso8601: iso)! }

/// A ModelObject of the given version's Trip entity.
func object(_ t: TestTrip, version: SchemaVersion = SchemaVersion(3, 0, 0)) -> ModelObject {
    let schema = TripMigrationPlan.schema(for: version)!
    let trip = schema.rootEntity
    var attributes: [Value] = trip.attributes.map { $0.defaultValue ?? .null }
    attributes[0] = .string(t.name)
    attributes[1] = .string(t.destination)
    attributes[2] = .date(ts(t.start))
    attributes[3] = .date(ts(t.end))
    let items = t.items.map {
        ModelObject(attributes: [.string($0.title), .string($0.details), .bool($0.hasReservation), .bool($0.isInPlan)])
    }
    let acc = t.accommodation.map { ModelObject(attributes: [.string($0.address), .string($0.placeName)]) }
    return ModelObject(attributes: attributes, relationships: [.toMany(items), .toOne(acc)])
}

/// A writer that keeps what it is given.
final class CollectingWriter: RecordWriter {
    var objects: [ModelObject] = []
    var finished = false
    var aborted = false
    /// Throws `Failure` when given the trip at this position (0-based).
    var failAt: Int?
    struct Failure: Error {}
    func write(_ object: ModelObject) throws {
        if let failAt, objects.count >= failAt { throw Failure() }
        objects.append(object)
    }
    func finish() throws { finished = true }
    func abort() { aborted = true }
}

/// Builds a record with the builder from (name, token) pairs and optional item field lists.
func build(_ builder: inout RecordBuilder, record: Int = 1, line: Int? = nil,
           _ fields: [(String, ScalarToken)], items: [[(String, ScalarToken)]] = [], itemsKey: String = "bucketList",
           accommodation: [(String, ScalarToken)]? = nil, accommodationKey: String = "livingAccommodation") -> ReadItem {
    builder.beginRecord(origin: RecordOrigin(source: "test", record: record, line: line))
    for (k, v) in fields { builder.set(k, v) }
    if let f = builder.field(itemsKey) {
        if items.isEmpty { builder.markPresent(f) }
        for item in items {
            builder.beginObject(f)
            for (k, v) in item { builder.set(k, v) }
            builder.endObject()
        }
    }
    if let accommodation, let f = builder.field(accommodationKey) {
        builder.beginObject(f)
        for (k, v) in accommodation { builder.set(k, v) }
        builder.endObject()
    }
    return builder.endRecord()
}

extension ReadItem {
    var trip: TripRecord? { if case .trip(let t) = self { return t }; return nil }
    var rejection: SetAsideRecord? { if case .rejected(let r) = self { return r }; return nil }
}
