// Copies of the input that a parse thread hands to a reader along with its events, so that a
// rejected trip's text can be given although the parser's own buffer has moved on (YAML, XML).

// MARK: - Bytes

/// Bytes of the input, as read. Filled by the parse thread only until it seals them into a
/// segment; after that nobody writes them, and both threads read them without copying.
final class InputBytes: @unchecked Sendable {
    private(set) var pointer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        pointer = .allocate(capacity: capacity)
    }

    deinit { pointer.deallocate() }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (pointer + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Room left before the next growth.
    var freeCapacity: Int { capacity - count }

    /// Makes room for at least `extra` more bytes.
    func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        capacity = max(capacity * 2, count + extra)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        grown.update(from: pointer, count: count)
        pointer.deallocate()
        pointer = grown
    }

    /// Lets `body` write into the free room; keeps the bytes it says it wrote.
    func fill(_ body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> Int {
        let n = try body(UnsafeMutableRawBufferPointer(start: pointer + count, count: capacity - count))
        count += n
        return n
    }

    /// Forgets the bytes from `newCount` on (before anyone else reads them).
    func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        count = newCount
    }
}

/// A run of the input's bytes and its offset in the input.
struct InputSegment {
    let start: Int
    let bytes: InputBytes
    var end: Int { start + bytes.count }
}

// MARK: - The reader's side

/// The reader's side: the input's bytes from the start of the open trip on (or from where the
/// parse thread's cursor was), as the batches brought them. Segments are in order and do not
/// overlap; they may leave gaps where no trip's text lies.
struct SourceWindow {
    private var segments: [InputSegment] = []
    private var keepFrom = -1
    private var lowMark = 0
    let maxTextBytes: Int

    init(maxTextBytes: Int) { self.maxTextBytes = maxTextBytes }

    /// Takes a batch's bytes; no offset in it or after it is below `lowMark`.
    mutating func add(_ new: [InputSegment], lowMark: Int) {
        segments.append(contentsOf: new)
        self.lowMark = lowMark
        trim()
    }

    /// Keeps the bytes from `offset` on (a trip's start), until `release`.
    mutating func keep(from offset: Int) {
        keepFrom = offset
    }

    mutating func release() {
        keepFrom = -1
        trim()
    }

    /// The text of the bytes from `start` to `end`, if they are all here and not too many.
    func text(from start: Int, to end: Int) -> String? {
        guard start >= 0, end >= start, end - start <= maxTextBytes, let first = segments.first,
              start >= first.start, end <= segments[segments.count - 1].end else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end - start)
        for s in segments where s.end > start && s.start < end {
            // Segments may leave out input no trip needed; a gap inside the text means it was not kept.
            guard s.start <= start + bytes.count else { return nil }
            let from = max(start + bytes.count, s.start), to = min(end, s.end)
            if to > from {
                bytes.append(contentsOf: UnsafeBufferPointer(start: s.bytes.pointer + (from - s.start), count: to - from))
            }
        }
        guard bytes.count == end - start else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Lets go of the segments before the open trip, or before `lowMark`; a trip already longer
    /// than the limit keeps nothing.
    private mutating func trim() {
        var floor = lowMark
        if keepFrom >= 0 {
            if lowMark - keepFrom > maxTextBytes { keepFrom = -1 } else { floor = min(floor, keepFrom) }
        }
        var drop = 0
        while drop < segments.count, segments[drop].end <= floor { drop += 1 }
        if drop > 0 { segments.removeFirst(drop) }
    }
}
