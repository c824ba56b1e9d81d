// Copies of the input that a parse thread hands to a reader along with its events, so that a
// rejected trip's text can be given although the parser's own buffer has moved on (YAML, XML).

/// A run of the input's bytes and its offset in the input. Its bytes are filled by the parse
/// thread only until it seals them into a segment; after that nobody writes them, and both threads
/// read them without copying.
struct InputSegment {
    let start: Int
    let bytes: ByteStorage
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
