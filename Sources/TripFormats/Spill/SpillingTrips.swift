import Synchronization
import TripKit

/// Trips sent to temporary files by every holding of the process so far, and their bytes there,
/// counted as the summary counts them (`ConversionSummary.spilledTrips`, `spilledBytes`), so that the
/// progress bar shows the figure the summary line ends with; the partitions and merges that later
/// rewrite the same trips are not counted again.
public enum SpilledSoFar {
    /// Trips sent to temporary files so far.
    public static let trips = Atomic<Int>(0)
    /// Their bytes there.
    public static let bytes = Atomic<Int>(0)
}

/// Where a run's trips are held when they may not fit in memory: in memory (`InMemoryTrips`) while
/// the run's holdings together stay under the budget's `tripBytes`, then in a temporary file, in
/// output order (`SpillFile`). Output, accounting and messages are the same either way.
///
/// Deduplicating spilled trips partitions them by a hash of the name into temporary files, so every
/// trip of a name lands in one partition; each partition is deduplicated in memory by the same code
/// as the in-memory path (`InMemoryTrips.deduplicateKeepingPositions`, with each trip's position in
/// the whole run), and the partitions' kept trips and set-aside records are merged back by position:
/// first-seen order, and the accounting in the order of the duplicates. Memory then holds one
/// partition (at most about `partitionBytes` of trips, however large the input) and a buffer per file.
package final class SpillingTrips: TripHolding {
    package let budget: SpillBudget
    /// The trips while they are in memory; nil once they are in `file`.
    private var memory: InMemoryTrips?
    /// The bytes of `memory` counted in the budget.
    private var counted = 0
    private var file: SpillFile?
    /// After a deduplication, the kept trips: one file per partition, each in order of position,
    /// read by merging them rather than merged into one more file first (a write and a read of
    /// every trip saved); made into one file only when trips are added or transformed.
    var keptParts: [SpillFile]?
    private var spilledCount = 0
    private var sources = SourceTable()
    private var scratch: [UInt8] = []
    private var head: [UInt8] = []
    private let log: SetAsideLog
    /// Trips this holding sent to a temporary file (when it spilled, and put after), and their
    /// bytes there: told to the budget when the holding goes.
    private var spilledTrips = 0
    private var spilledTripBytes = 0

    package init(budget: SpillBudget) {
        self.budget = budget
        memory = InMemoryTrips()
        log = SetAsideLog(directory: budget.directory, memoryLimit: budget.setAsideInMemory)
    }

    deinit {
        _ = budget.hold(-counted)
        if spilledTrips > 0 { budget.noteSpill(trips: spilledTrips, bytes: spilledTripBytes) }
    }

    /// Whether the trips are a deduplication's partitions, read merged (`keptParts`).
    package var isPartitioned: Bool { keptParts != nil }
    /// Whether the trips are in a temporary file.
    package var isSpilled: Bool { memory == nil }
    /// The trips, while they are in memory.
    var inMemory: InMemoryTrips? { memory }
    /// The size of the temporary file of trips.
    var spilledBytes: Int { keptParts.map { $0.reduce(0) { $0 + $1.size } } ?? file?.size ?? 0 }

    package var count: Int { memory?.count ?? spilledCount }

    // MARK: - Putting trips

    package func put(_ trip: ModelObject, origin: RecordOrigin) throws {
        if let memory {
            memory.put(trip, origin: origin)
            try account(memory)
        } else {
            try mergeKeptParts()
            scratch.removeAll(keepingCapacity: true)
            TripBytes.append(trip, to: &scratch)
            try scratch.withUnsafeBufferPointer { try writeTrip($0, origin: origin, sequence: spilledCount) }
            countSpilled(trips: 1, bytes: SpillRecords.tripHead + scratch.count)
        }
    }

    /// Counts the memory's growth; spills when the run is over budget.
    func accountForMemory() throws {
        if let memory { try account(memory) }
    }

    private func account(_ memory: InMemoryTrips) throws {
        let now = memory.heldBytes
        guard now != counted else { return }
        let over = budget.hold(now - counted)
        counted = now
        if over { try spill() }
    }

    /// Moves the trips in memory to a temporary file.
    private func spill() throws {
        guard let memory else { return }
        budget.startingToSpill()
        let file = try SpillFile(directory: budget.directory)
        self.file = file
        spilledCount = 0
        try memory.forEachEncoded { bytes, origin in try writeTrip(bytes, origin: origin, sequence: spilledCount) }
        countSpilled(trips: memory.count, bytes: file.size)
        self.memory = nil
        _ = budget.hold(-counted)
        counted = 0
    }

    private func countSpilled(trips: Int, bytes: Int) {
        spilledTrips += trips
        spilledTripBytes += bytes
        SpilledSoFar.trips.add(trips, ordering: .relaxed)
        SpilledSoFar.bytes.add(bytes, ordering: .relaxed)
    }

    private func writeTrip(_ bytes: UnsafeBufferPointer<UInt8>, origin: RecordOrigin, sequence: Int) throws {
        try SpillRecords.writeTrip(bytes, origin: origin, sequence: sequence, sources: &sources, to: file!, scratch: &head)
        spilledCount += 1
    }

    /// Writes a trip record to another file than the holding's (a partition).
    func writeRecord(_ bytes: UnsafeBufferPointer<UInt8>, origin: RecordOrigin, sequence: Int, to other: SpillFile) throws {
        try SpillRecords.writeTrip(bytes, origin: origin, sequence: sequence, sources: &sources, to: other, scratch: &head)
    }

    func writeSetAsideRecord(_ record: SetAsideRecord, sequence: Int, to other: SpillFile) throws {
        try SpillRecords.writeSetAside(record, sequence: sequence, sources: &sources, to: other, scratch: &head)
    }

    func readTrip(_ reader: inout SpillReader) throws -> SpilledTrip? {
        try SpillRecords.readTrip(&reader, sources: sources)
    }

    func readSetAsideRecord(_ reader: inout SpillReader) throws -> (SetAsideRecord, sequence: Int)? {
        try SpillRecords.readSetAside(&reader, sources: sources)
    }

    /// Calls `body` with each trip record of a file the holding wrote (a partition), in order.
    func forEach(in other: SpillFile, _ body: (SpilledTrip) throws -> Void) throws {
        try other.flush()
        var reader = other.reader()
        while let trip = try readTrip(&reader) { try body(trip) }
    }

    /// Replaces the spilled trips by those `fill` writes, in order.
    /// After a deduplication: the trips are the kept trips of `parts`, `count` of them.
    func keepParts(_ parts: [SpillFile], count: Int) throws {
        file = nil
        keptParts = parts
        spilledCount = count
    }

    func replaceTrips(_ fill: ((SpilledTrip) throws -> Void) throws -> Void) throws {
        file = try SpillFile(directory: budget.directory)
        spilledCount = 0
        try fill { trip in
            try writeTrip(trip.bytes, origin: trip.origin, sequence: spilledCount)
        }
    }

    package func absorb(_ other: any TripHolding) throws {
        if let other = other as? SpillingTrips, let theirs = other.memory, let memory {
            try memory.absorb(theirs)
            _ = budget.hold(-other.counted)
            other.counted = 0
            other.memory = InMemoryTrips()
            try account(memory)
        } else if let other = other as? SpillingTrips, other.memory == nil, let memory, memory.count == 0, file == nil,
                  keptParts == nil {
            // Nothing here yet (a run's first input): the other's file becomes this holding's, as
            // it is, rather than copied trip by trip.
            _ = budget.hold(-counted)
            counted = 0
            self.memory = nil
            file = other.file
            keptParts = other.keptParts
            spilledCount = other.spilledCount
            sources = other.sources
            other.file = nil
            other.keptParts = nil
            other.spilledCount = 0
            other.sources = SourceTable()
            other.memory = InMemoryTrips()
        } else {
            try mergeKeptParts()
            if memory != nil, other.count > 0 { try spill() }
            if let other = other as? SpillingTrips, other.memory == nil {
                try other.forEachSpilledTrip { trip in
                    try writeTrip(trip.bytes, origin: trip.origin, sequence: spilledCount)
                }
            } else {
                try other.forEach { trip, origin in try put(trip, origin: origin) }
            }
        }
        try other.forEachSetAside { try log.append($0) }
    }

    // MARK: - The accounting

    package var setAsideCount: Int { log.count }
    package func appendSetAside(_ records: [SetAsideRecord]) throws { for r in records { try log.append(r) } }
    package func forEachSetAside(_ body: (SetAsideRecord) throws -> Void) throws { try log.forEach(body) }

    // MARK: - Going through the trips

    /// Calls `body` with each spilled trip, in order.
    func forEachSpilledTrip(_ body: (SpilledTrip) throws -> Void) throws {
        if let keptParts { return try mergeTrips(keptParts, body) }
        guard let file else { return }
        try forEach(in: file, body)
    }

    package func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) throws {
        if let memory { return try memory.forEach(body) }
        try forEachSpilledTrip { trip in try body(TripBytes.decode(trip.bytes), trip.origin) }
    }

    package func origin(at index: Int) throws -> RecordOrigin {
        if let memory { return memory.origin(at: index) }
        guard let origin = try origins(at: [index])[index] else {
            throw TripError(.io, "no trip at position \(index) of \(spilledCount)")
        }
        return origin
    }

    package func origins(at positions: Set<Int>) throws -> [Int: RecordOrigin] {
        if let memory { return memory.origins(at: positions) }
        var found: [Int: RecordOrigin] = [:]
        var i = 0
        try forEachSpilledTrip { trip in
            if positions.contains(i) { found[i] = trip.origin }
            i += 1
        }
        return found
    }

    package func transform(_ transform: (ModelObject) throws -> ModelObject) throws {
        if let memory {
            try memory.transform(transform)
            return try account(memory)
        }
        try mergeKeptParts()
        guard let old = file else { return }
        try replaceTrips { write in
            try forEach(in: old) { trip in
                let object = try transform(TripBytes.decode(trip.bytes))
                var bytes: [UInt8] = []
                TripBytes.append(object, to: &bytes)
                try bytes.withUnsafeBufferPointer { try write(SpilledTrip(origin: trip.origin, sequence: trip.sequence, bytes: $0)) }
            }
        }
    }

    package func longestRelationships() throws -> [Int] {
        if let memory { return memory.longestRelationships() }
        var longest: [Int] = []
        try forEachSpilledTrip { trip in
            let counts = TripBytes.relationshipCounts(trip.bytes)
            if longest.count < counts.count { longest += [Int](repeating: 0, count: counts.count - longest.count) }
            for (i, n) in counts.enumerated() where n > longest[i] { longest[i] = n }
        }
        return longest
    }

    package func write(into writer: any RecordWriter, speed: WritingSpeed) throws -> any RecordWriter {
        if let memory { return try memory.write(into: writer, speed: speed) }
        var writer = writer
        guard speed.encodingThreads > 1 || speed.decodesAhead else {
            try forEachSpilledTrip { trip in try writer.write(TripBytes.decode(trip.bytes), origin: trip.origin) }
            return writer
        }
        // Threads that format or decode need trips they can reach by position: the file is read in
        // slices of at most `slice` bytes into an arena, each written as the in-memory path
        // writes (the trips held in memory are none by now, so the slice is within the budget).
        let slice = min(max(budget.tripBytes / 4, 1 << 16), 32 << 20)
        var chunk = InMemoryTrips(), held = 0
        try forEachSpilledTrip { trip in
            chunk.putEncoded(trip.bytes, origin: trip.origin)
            held += trip.bytes.count
            if held >= slice {
                writer = try chunk.write(into: writer, speed: speed)
                chunk = InMemoryTrips()
                held = 0
            }
        }
        if chunk.count > 0 { writer = try chunk.write(into: writer, speed: speed) }
        return writer
    }
}
