import TripKit

/// Reads trips from XML, one `<trip>` at a time, through libxml2's streaming SAX2 push parser.
///
/// The root may have any name; its `schemaVersion` attribute is the version marker. Each child of
/// the root must be a `<trip>`, whose fields are child elements (or attributes), whose bucket list
/// holds `<item>` (or `<bucketListItem>`) elements, and whose accommodation is one element of fields.
/// Memory holds the trips of one 64 KB chunk at most, never the document.
///
/// ```swift
/// var reader = try XMLRecordReader(.file("trips.xml"))
/// while let item = try reader.next() {
///     if case .trip(let record) = item { print(record.object.attributes[0]) }
/// }
/// print(reader.detection.version ?? "no trips")
/// ```
public struct XMLRecordReader: RecordReader {
    private let parser: XMLTripParser

    /// Opens an input; a missing file is a `.noInput` error, and nothing is parsed until `next()`.
    public init(_ input: InputLocation, options: ReadOptions = ReadOptions()) throws {
        parser = XMLTripParser(input: try ByteInput(input), options: options)
    }

    /// The next trip or rejected record; nil at the end. A document that is not well-formed, or not
    /// a list of trips, or that declares entities, throws a `.data` error naming the place.
    public mutating func next() throws -> ReadItem? {
        try parser.next()
    }

    public var detection: Detection { parser.detection }
}
