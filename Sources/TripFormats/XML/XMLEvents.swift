import TripKit
import TripThreads

/// One of libxml2's SAX events, as the parse thread hands it to the reader (through a `Handoff`).
///
/// Names point into libxml2's dictionary, which interns each name once and keeps it for the life of
/// the parser context; texts and attribute values are copied into the batch's bytes, as libxml2's
/// buffer moves on. An element's attributes follow its start as `.attribute` events.
struct XMLEvent {
    enum Kind: UInt8 {
        case start, attribute, end, text
    }
    var kind: Kind
    /// A start's attribute events, or a text's or attribute value's byte count.
    var count: Int32
    /// A start's or an attribute's local name.
    var name: UnsafePointer<UInt8>?
    /// Where a text or attribute value starts in the batch's bytes.
    var offset: Int
    /// For the root's and each trip's start, where its tag starts (line 0 when unknown).
    var line: Int32
    var column: Int32
    /// For a trip's start, the input offset of its `<`; for its end, the offset just past its end
    /// tag (or its `/>`): the bounds of its text. For the start of an element inside a trip, the
    /// offset where libxml2 reported it (its start tag's end), which places it when its trip is
    /// rejected for it. -1 when unknown.
    var source: Int

    static func start(_ name: UnsafePointer<UInt8>, attributes: Int) -> XMLEvent {
        XMLEvent(kind: .start, count: Int32(attributes), name: name, offset: 0, line: 0, column: 0, source: -1)
    }
}

/// The events of one chunk of input, the input they lie in (for the texts of rejected trips), and
/// whether the document ends after them, well or with an error. It owns its events and bytes;
/// once the reader is done with it, it goes back to the parse thread to be filled again
/// (`XMLEventBuffer.seal(reusing:)`), so that events and texts cost no allocation in steady
/// reading (the copy of the trips' input is one block per chunk).
final class XMLEventBatch: @unchecked Sendable {
    fileprivate var storage: XMLEventStorage
    /// The input the chunk's trips lie in: no offset in the batch's events, or in later ones, is
    /// below `lowMark`.
    var source: [InputSegment] = []
    var lowMark = 0
    /// The read's error, when the document is not one the reader takes.
    var failure: TripError?
    /// Whether no batch comes after this one.
    var isLast = false

    fileprivate init(_ storage: XMLEventStorage) {
        self.storage = storage
    }

    var events: UnsafeBufferPointer<XMLEvent> { UnsafeBufferPointer(start: storage.events, count: storage.eventCount) }
    /// Texts and attribute values.
    var bytes: UnsafePointer<UInt8> { UnsafePointer(storage.bytes.pointer) }

    deinit { storage.deallocate() }
}

/// Plain memory for events, and the bytes of their texts.
fileprivate struct XMLEventStorage {
    var events: UnsafeMutablePointer<XMLEvent>
    var eventCount = 0
    var eventCapacity: Int
    let bytes: ByteStorage

    init(events: Int, bytes: Int) {
        eventCapacity = max(events, 16)
        self.events = .allocate(capacity: eventCapacity)
        self.bytes = ByteStorage(capacity: max(bytes, 256))
    }

    func deallocate() {
        events.deallocate()
    }
}

/// The batch being filled on the parse thread: plain memory, so that an event costs a store and
/// no reference counting or uniqueness check.
struct XMLEventBuffer {
    private var storage: XMLEventStorage
    var eventCount: Int { storage.eventCount }

    init(events: Int, bytes: Int) {
        storage = XMLEventStorage(events: events, bytes: bytes)
    }

    /// Frees what was never sealed (the parse state is dropped).
    func deallocate() {
        storage.deallocate()
    }

    @inline(__always)
    mutating func append(_ event: XMLEvent) {
        if storage.eventCount == storage.eventCapacity { growEvents() }
        (storage.events + storage.eventCount).initialize(to: event)
        storage.eventCount += 1
    }

    /// Copies `count` bytes in; returns their offset.
    @inline(__always)
    mutating func append(_ source: UnsafePointer<UInt8>, count: Int) -> Int {
        let offset = storage.bytes.count
        storage.bytes.append(source, count: count)
        return offset
    }

    /// Copies `count` bytes in, then lets `rewrite` shorten them in place (it returns their new
    /// count); returns their offset and count.
    @inline(__always)
    mutating func append(_ source: UnsafePointer<UInt8>, count: Int,
                         rewrite: (UnsafeMutablePointer<UInt8>, Int) -> Int) -> (offset: Int, count: Int) {
        let offset = append(source, count: count)
        let kept = rewrite(storage.bytes.pointer + offset, count)
        storage.bytes.count = offset + kept
        return (offset, kept)
    }

    /// Sets the attribute count of the start event at `index`.
    mutating func setCount(_ count: Int32, at index: Int) {
        storage.events[index].count = count
    }

    /// Takes back the last event, a text, and its bytes.
    mutating func removeLastText() {
        storage.eventCount -= 1
        storage.bytes.count -= Int(storage.events[storage.eventCount].count)
    }

    /// Hands the events and bytes to a batch (one the reader is done with, if there is one) and
    /// goes on in that batch's memory.
    mutating func seal(reusing old: XMLEventBatch?) -> XMLEventBatch {
        let batch: XMLEventBatch
        if let old, old.storage.eventCapacity <= XMLEventBuffer.keptEvents, old.storage.bytes.capacity <= XMLEventBuffer.keptBytes {
            batch = old
            swap(&batch.storage, &storage)
            batch.source = []
            batch.lowMark = 0
            batch.failure = nil
            batch.isLast = false
        } else {
            batch = XMLEventBatch(storage)
            storage = XMLEventStorage(events: min(storage.eventCapacity, XMLEventBuffer.keptEvents),
                                      bytes: min(storage.bytes.capacity, XMLEventBuffer.keptBytes))
        }
        storage.eventCount = 0
        storage.bytes.removeAll()
        return batch
    }

    /// A batch that grew past these (one start tag of megabytes of attributes) is not reused:
    /// its memory goes back when it is dropped.
    static let keptEvents = 1 << 16
    static let keptBytes = 1 << 20

    @inline(never)
    private mutating func growEvents() {
        storage.eventCapacity *= 2
        let grown = UnsafeMutablePointer<XMLEvent>.allocate(capacity: storage.eventCapacity)
        grown.moveInitialize(from: storage.events, count: storage.eventCount)
        storage.events.deallocate()
        storage.events = grown
    }
}
