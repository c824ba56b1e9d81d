import TripKit

/// Everything a reader gave, read to the end.
public struct ReadItems {
    public var trips: [TripRecord] = []
    public var rejections: [SetAsideRecord] = []
    public var detection: Detection
    /// Whether the reader said nil again when asked once more after the end, as readers must.
    public var endsAgain = true

    public var objects: [ModelObject] { trips.map(\.object) }

    /// Reads to the end, then asks once more.
    public init(reading reader: inout some RecordReader) throws {
        detection = reader.detection
        while let item = try reader.next() {
            switch item {
            case .trip(let t): trips.append(t)
            case .rejected(let r): rejections.append(r)
            }
        }
        endsAgain = try reader.next() == nil
        detection = reader.detection
    }
}

/// A reader over prepared items, with a given detection: for tests of the pipeline and of what
/// holds trips, without a format.
public struct ArrayReader: RecordReader {
    public var items: [ReadItem]
    public var detection: Detection
    public var position = 0

    /// A reader that gives `items`, in order, then nil.
    public init(items: [ReadItem], detection: Detection) {
        self.items = items; self.detection = detection
    }

    public mutating func next() throws -> ReadItem? {
        guard position < items.count else { return nil }
        defer { position += 1 }
        return items[position]
    }
}
