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
///
/// Every operation but `count` may throw: a holding that keeps trips in files fails as files do
/// (a full disk, an I/O error), and the run then fails with nothing written.
package protocol TripHolding: AnyObject {
    /// How many trips are held.
    var count: Int { get }

    /// The accounting: records merged into others or dropped, with where they came from, in the
    /// order they were set aside. A holding may keep them out of memory; `forEachSetAside` gives
    /// them back in order.
    var setAsideCount: Int { get }
    func appendSetAside(_ records: [SetAsideRecord]) throws
    func forEachSetAside(_ body: (SetAsideRecord) throws -> Void) throws

    /// Puts a trip after the others.
    func put(_ trip: ModelObject, origin: RecordOrigin) throws
    /// Moves another holding's trips (in the same schema) after this one's, and its accounting;
    /// `other` is not used afterwards.
    func absorb(_ other: any TripHolding) throws

    /// Where the trip at a position (in output order) came from: its first occurrence.
    func origin(at index: Int) throws -> RecordOrigin
    /// Where the trips at several positions came from (one pass for a holding without random access).
    func origins(at positions: Set<Int>) throws -> [Int: RecordOrigin]
    /// Calls `body` with each trip and its origin, in output order.
    func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) throws
    /// Replaces each trip by `transform(trip)`, keeping order and origins.
    func transform(_ transform: (ModelObject) throws -> ModelObject) throws

    /// Finds the trips whose root attribute `attribute` equals an earlier trip's (byte for byte:
    /// a string's UTF-8) and asks `resolve` what each becomes and what to set aside for it; leaves
    /// one trip per value. `resolve`'s second argument decodes the kept trip or the duplicate, for
    /// a merge. The records set aside are added to the accounting in the order of the duplicates'
    /// positions, whatever the order `resolve` saw them in. `check` runs once every duplicate is resolved; when it or `resolve` throws,
    /// the trips and the accounting are unchanged.
    func deduplicate(attribute: Int,
                     resolve: (DuplicateTrip, (DuplicateTrip.Side) -> ModelObject) throws -> (DuplicateResolution, SetAsideRecord?),
                     check: () throws -> Void) throws
    /// How many values of a root attribute occur more than once (for `detect`).
    func repeatedValues(attribute: Int) throws -> Int
    /// The longest list of each root relationship over all trips (0 or 1 for a to-one), for
    /// writers whose layout depends on it.
    func longestRelationships() throws -> [Int]

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
    /// This trip's position among the trips before deduplication (in the whole run): duplicates
    /// are resolved in this order for each name, though not always across names.
    package var position: Int
    /// Whether this is the first duplicate of the kept trip (the name's second occurrence).
    package var isFirstDuplicate: Bool
    /// Where the kept trip first occurred.
    package var keptOrigin: RecordOrigin
    /// Where the record the kept trip now holds came from: `keptOrigin`, until a duplicate's
    /// record took its place (`.takeDuplicate`).
    package var standingOrigin: RecordOrigin

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
