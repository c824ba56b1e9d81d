import TripThreads
/// Trips held in memory, compactly: the `TripHolding` of every run today.
///
/// Each trip is encoded once into an `ObjectArena` (about 0.35 KiB a trip instead of about 1.3 KiB
/// as objects) and decoded one at a time where it is needed: to merge, to map, to write. Finding a
/// name's trip hashes the name's encoded bytes in place (`KeyIndex`: no `String` per trip).
/// Everything is held until the writer has it: memory grows with the input (issue 15 bounds it).
package final class InMemoryTrips: TripHolding {
    var arena = ObjectArena()
    var setAside: [SetAsideRecord] = []

    package init() {}

    package var count: Int { arena.count }

    /// About how many bytes the trips take here (constant time).
    package var heldBytes: Int { arena.heldBytes }

    /// Puts a trip already encoded (`TripBytes.append`), without decoding it.
    package func putEncoded(_ bytes: UnsafeBufferPointer<UInt8>, origin: RecordOrigin) {
        arena.appendEncoded(bytes, origin: origin)
    }

    /// Calls `body` with each trip's encoding and origin, in output order, without decoding them.
    package func forEachEncoded(_ body: (UnsafeBufferPointer<UInt8>, RecordOrigin) throws -> Void) rethrows {
        let arena = self.arena
        for e in arena.entries { try arena.withEncoding(e) { try body($0, arena.unpack(e.origin)) } }
    }

    package func put(_ trip: ModelObject, origin: RecordOrigin) {
        arena.append(trip, origin: origin)
    }

    package func absorb(_ other: any TripHolding) throws {
        if let other = other as? InMemoryTrips {
            arena.absorb(&other.arena)
            setAside.append(contentsOf: other.setAside)
            other.setAside = []
        } else {
            try other.forEach { trip, origin in put(trip, origin: origin) }
            try other.forEachSetAside { setAside.append($0) }
        }
    }

    package var setAsideCount: Int { setAside.count }
    package func appendSetAside(_ records: [SetAsideRecord]) { setAside.append(contentsOf: records) }
    package func forEachSetAside(_ body: (SetAsideRecord) throws -> Void) rethrows { try setAside.forEach(body) }

    package func origin(at index: Int) -> RecordOrigin { arena.origin(at: index) }
    package func origins(at positions: Set<Int>) -> [Int: RecordOrigin] {
        var found: [Int: RecordOrigin] = [:]
        for i in positions where i >= 0 && i < arena.count { found[i] = arena.origin(at: i) }
        return found
    }

    package func forEach(_ body: (ModelObject, RecordOrigin) throws -> Void) rethrows {
        try arena.forEach(body)
    }

    package func transform(_ transform: (ModelObject) throws -> ModelObject) rethrows {
        try arena.transform(transform)
    }

    package func deduplicate(attribute key: Int,
                             resolve: (DuplicateTrip, (DuplicateTrip.Side) -> ModelObject) throws -> (DuplicateResolution, SetAsideRecord?),
                             check: () throws -> Void) throws {
        let (_, entries) = try deduplicateKeepingPositions(attribute: key, resolve: resolve, check: check)
        setAside.append(contentsOf: entries.map(\.record))
    }

    /// `deduplicate`, which leaves the accounting to its caller: returns the position (before) of
    /// each trip kept, in order, and each record to set aside with the position of the duplicate it
    /// is for. `positions[i]`, when given, is what `DuplicateTrip.position` says for the trip at `i`
    /// (a holding that spills passes the trips' positions in the whole run).
    package func deduplicateKeepingPositions(
        attribute key: Int, positions: [Int]? = nil,
        resolve: (DuplicateTrip, (DuplicateTrip.Side) -> ModelObject) throws -> (DuplicateResolution, SetAsideRecord?),
        check: () throws -> Void
    ) throws -> (kept: [Int], setAside: [(position: Int, record: SetAsideRecord)]) {
        // Work on the arena as a local value (moved out, so appending merged trips copies no chunk):
        // a class's stored struct is otherwise re-read, retained and released at every access.
        var arena = self.arena
        let before = arena.entries
        self.arena = ObjectArena()
        defer { self.arena = arena }
        var index = KeyIndex(capacity: arena.count)
        // Per kept trip: its current entry (origin: the first occurrence), the entry whose bytes
        // hold its key, its position, whether a duplicate has joined it, and (once a duplicate's
        // record has taken a kept trip's place) the origin of the record each kept trip holds.
        var kept: [ObjectArena.Entry] = []
        var keyEntries: [ObjectArena.Entry] = []
        var keptPositions: [Int] = []
        var joined: [Bool] = []
        var standing: [ObjectArena.PackedOrigin] = []
        var entries: [(position: Int, record: SetAsideRecord)] = []
        kept.reserveCapacity(arena.count)
        for (i, e) in arena.entries.enumerated() {
            let found: Int? = arena.withValueBytes(e, attribute: key) { bytes in
                let hash = KeyIndex.hash(bytes)
                var slot = index.start(hash)
                while let k = index.occupant(slot) {
                    if index.hashes[k] == UInt32(truncatingIfNeeded: hash),
                       arena.withValueBytes(keyEntries[k], attribute: key, { $0.elementsEqual(bytes) }) {
                        return k
                    }
                    slot = index.next(slot)
                }
                index.insert(kept.count, at: slot, hash: hash)
                return nil
            }
            guard let at = found else {
                kept.append(e); keyEntries.append(e); keptPositions.append(i); joined.append(false)
                if !standing.isEmpty { standing.append(e.origin) }
                continue
            }
            let keptEntry = kept[at]
            let keptOrigin = arena.unpack(keptEntry.origin)
            let duplicate = DuplicateTrip(key: arena.value(e, attribute: key), origin: arena.unpack(e.origin),
                                          position: positions?[i] ?? i, isFirstDuplicate: !joined[at],
                                          keptOrigin: keptOrigin,
                                          standingOrigin: standing.isEmpty ? keptOrigin : arena.unpack(standing[at]))
            joined[at] = true
            let (resolution, setAside) = try resolve(duplicate, { $0 == .kept ? arena.object(keptEntry) : arena.object(e) })
            if let setAside { entries.append((i, setAside)) }
            switch resolution {
            case .keepKept:
                break
            case .takeDuplicate:
                if standing.isEmpty { standing = kept.map(\.origin) }
                standing[at] = e.origin
                kept[at] = ObjectArena.Entry(chunk: e.chunk, offset: e.offset, origin: keptEntry.origin)
            case .replaceKept(let object):
                kept[at] = arena.store(object, origin: keptEntry.origin)
            }
        }
        do {
            try check()
        } catch {
            // Nothing changed: the trips stored since (merges) are unreachable, freed with the arena.
            arena.entries = before
            throw error
        }
        arena.entries = kept
        return (keptPositions, entries)
    }

    package func repeatedValues(attribute key: Int) -> Int {
        var counts: [[UInt8]: Int] = [:]
        for e in arena.entries { counts[arena.withValueBytes(e, attribute: key) { Array($0) }, default: 0] += 1 }
        return counts.values.filter { $0 > 1 }.count
    }

    package func longestRelationships() -> [Int] {
        var longest: [Int] = []
        let arena = self.arena
        for e in arena.entries {
            let counts = arena.relationshipCounts(e)
            if longest.count < counts.count { longest += [Int](repeating: 0, count: counts.count - longest.count) }
            for (i, n) in counts.enumerated() where n > longest[i] { longest[i] = n }
        }
        return longest
    }

    package func write(into writer: any RecordWriter, speed: WritingSpeed) throws -> any RecordWriter {
        var writer = writer
        if var encoding = writer as? any RecordEncoding, speed.encodingThreads > 1, encoding.encodesApart {
            // Trips formatted on worker threads, written here in order.
            let encode = encoding.makeEncoder()
            let arena = self.arena
            try OrderedEncoding.run(count: arena.count, threads: speed.encodingThreads, encode: { range, bytes in
                encode({ arena.object(at: $0) }, range, &bytes)
            }, write: { bytes, trips in try encoding.writeEncoded(bytes, trips: trips) })
            return encoding
        }
        if speed.decodesAhead, let decoded = InMemoryTrips.decodeAhead(arena) {
            // The arena is only read, here and on the decoding thread.
            var i = 0
            try decoded.forEach { object in
                try writer.write(object, origin: arena.origin(at: i))
                i += 1
            }
        } else {
            try arena.forEach { object, origin in try writer.write(object, origin: origin) }
        }
        return writer
    }

    static let handoffBatch = 256

    /// The arena's objects, decoded in order on a thread of their own; nil when none could be started.
    static func decodeAhead(_ arena: ObjectArena) -> Handoff<[ModelObject]>? {
        Handoff<[ModelObject]>.start { handoff in
            var at = 0
            while at < arena.count {
                let end = min(arena.count, at + handoffBatch)
                var batch: [ModelObject] = []
                batch.reserveCapacity(end - at)
                for i in at..<end { batch.append(arena.object(at: i)) }
                // The batches given back are dropped here, freed by the thread that made them.
                guard handoff.put(batch) != nil else { return }
                at = end
            }
        }
    }
}

/// An open-addressing index from a key's hash to the position of the object kept for it; the
/// caller compares keys (their bytes live in the arena), so the index holds no strings.
struct KeyIndex {
    private var slots: [Int32]
    private(set) var hashes: [UInt32] = []
    private let mask: Int

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
        hashes.reserveCapacity(capacity)
    }

    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = Hasher()
        h.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt64(bitPattern: Int64(h.finalize()))
    }

    func start(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 7) & mask }
    func next(_ slot: Int) -> Int { (slot + 1) & mask }
    func occupant(_ slot: Int) -> Int? { slots[slot] < 0 ? nil : Int(slots[slot]) }

    mutating func insert(_ position: Int, at slot: Int, hash: UInt64) {
        slots[slot] = Int32(position)
        hashes.append(UInt32(truncatingIfNeeded: hash))
    }
}
