/// A source of the objects of one model, one at a time: a store of any app, or an export tripconv
/// wrote of one. Objects come entity by entity (the model's order), each entity's in key order.
public protocol ObjectRecordReader {
    /// The model the objects are of.
    var model: ObjectModel { get }
    /// The next object, nil at the end; a record that cannot be read is an item to set aside.
    mutating func next() throws -> ObjectReadItem?
    /// Per entity of `model`, at most how many objects of it this reader gives, where it knows before
    /// the first (a graph's text after its index's pass); nil when it does not. A hint for sizing
    /// tables (`ObjectDeduplicator.expect`), never a limit.
    var expectedObjects: [Int]? { get }
}

extension ObjectRecordReader {
    /// Most readers do not know.
    public var expectedObjects: [Int]? { nil }
}

/// What an object reader gives: an object, or a record set aside with its reason and origin.
public enum ObjectReadItem: Sendable {
    case object(ObjectRecord)
    case rejected(SetAsideRecord)
}

/// A sink of the objects of one model, as an `ObjectRecordReader` gives them: a format's writer of
/// graphs. `finish` completes the output; `abort` leaves none.
public protocol ObjectRecordWriter {
    /// Called once before the first object, with the model the objects are of.
    mutating func begin(_ model: ObjectModel) throws
    mutating func write(_ object: ObjectRecord) throws
    mutating func finish() throws
    mutating func abort()
}

extension ObjectRecordWriter {
    /// Writers with nothing to undo do nothing.
    public mutating func abort() {}
}
