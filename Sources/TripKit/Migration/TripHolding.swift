/// Where a conversion's trips are held between reading and writing: one component with one small
/// interface. Put a trip; find the trips that share a name (`deduplicate`, which asks the caller
/// what each duplicate becomes); go through the trips in output order; account for the trips set
/// aside on the way.
///
/// The spine (`Pipeline`) and the migration context see only this interface. Today's
/// implementation holds the trips in memory, compactly (`InMemoryTrips`, in Machinery/); one that
/// spills to disk when a memory budget is reached goes behind the same interface.
///
/// Output order is the order in which names first appear: a duplicate never moves the trip it
/// joins. What a duplicate becomes (dropped, replacing, merged) is the caller's decision, so the
/// policies' semantics live in `MigrationContext`, not here.
package protocol TripHolding: AnyObject {
    /// How many trips are held.
    var count: Int { get }
    /// Records merged into others or dropped, with where they came from: the accounting of the
    /// trips that were put and will not be written as they were put.
    var setAside: [SetAsideRecord] { get set }

    /// Puts a trip after the others.
    func put(_ trip: ModelObject, origin: RecordOrigin)
    /// Moves another holding's trips (in the same schema) after this one's, and its accounting.
    func absorb(_ other: any TripHolding)

    /// Where the trip at a position (in output order) came from: its first occurrence.
    func origin(at index: Int) -> RecordOrigin
    /// Calls `body` with each trip and its origin, in output order.
    func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) rethrows
    /// Replaces each trip by `transform(trip)`, keeping order and origins.
    func transform(_ transform: (ModelObject) throws -> ModelObject) rethrows

    /// Finds the trips whose root attribute `attribute` equals an earlier trip's (byte for byte:
    /// a string's UTF-8) and asks `resolve` what each becomes; leaves one trip per value.
    /// `resolve`'s second argument decodes the kept trip or the duplicate, for a merge. `check` runs
    /// once every duplicate is resolved; when it or `resolve` throws, the trips are unchanged.
    func deduplicate(attribute: Int,
                     resolve: (DuplicateTrip, (DuplicateTrip.Side) -> ModelObject) throws -> DuplicateResolution,
                     check: () throws -> Void) throws
    /// How many values of a root attribute occur more than once (for `detect`).
    func repeatedValues(attribute: Int) -> Int
    /// The longest list of each root relationship over all trips (0 or 1 for a to-one), for
    /// writers whose layout depends on it.
    func longestRelationships() -> [Int]

    /// Hands every trip to `writer`, in output order, and returns the writer. `speed` says how
    /// (formatting on several threads, decoding ahead); the bytes written are the same.
    func write(into writer: any RecordWriter, speed: WritingSpeed) throws -> any RecordWriter
}

/// A trip that has the same name as a trip already kept, as `TripHolding.deduplicate` shows it.
package struct DuplicateTrip {
    /// The shared value (the name).
    package var key: Value
    /// Where this trip came from.
    package var origin: RecordOrigin
    /// The position, among the trips kept, of the one with this name.
    package var keptIndex: Int
    /// Where the kept trip first occurred.
    package var keptOrigin: RecordOrigin

    /// Which of the two trips to decode.
    package enum Side { case kept, duplicate }
}

/// What a duplicate becomes.
package enum DuplicateResolution {
    /// The kept trip stays as it is; the duplicate goes.
    case keepKept
    /// The duplicate's record takes the kept trip's place (its position and first origin stay).
    case takeDuplicate
    /// This object takes the kept trip's place.
    case replaceKept(ModelObject)
}

/// How trips are handed to a writer: the same bytes either way, at different speeds.
package struct WritingSpeed: Sendable {
    /// Threads that format trips for writers that take formatted bytes; 1 formats on the calling thread.
    package var encodingThreads = 1
    /// Whether trips are decoded ahead on a thread of their own for writers that take objects.
    package var decodesAhead = false
    package init(encodingThreads: Int = 1, decodesAhead: Bool = false) {
        self.encodingThreads = encodingThreads; self.decodesAhead = decodesAhead
    }
}
