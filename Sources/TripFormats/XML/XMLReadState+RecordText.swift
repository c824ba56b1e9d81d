internal import CLibXML2
import TripKit

/// The source text of the open `<trip>`, for the rejects file: its bytes from `<trip` to `</trip>`
/// as libxml2 holds them (UTF-8, whatever the document's encoding).
///
/// libxml2's push parser keeps in its buffer everything from its position on; only at the start of
/// the next `xmlParseChunk` does it drop what lies behind. So a trip's bytes stay where libxml2 has
/// them until the parse of the chunk it is in ends; the one trip open across a chunk boundary has
/// its bytes so far copied out then (`keepRecordText`). A trip read within one chunk costs two
/// offsets; the text is made a string only when the trip is rejected.
struct XMLRecordText {
    /// The offset in libxml2's input of the open trip's `<`, or -1.
    var start = -1
    /// The trip's bytes from `start` on, copied out at the ends of chunks.
    var kept: [UInt8] = []
    /// Whether the text is gone: longer than `XMLLimits.maxRecordTextBytes`, or out of reach.
    var isLost = false
}

extension XMLReadState {
    /// A trip starts at its tag's `<`.
    mutating func beginRecordText(at tagStart: UnsafePointer<UInt8>?) {
        if !recordText.kept.isEmpty { recordText.kept.removeAll(keepingCapacity: recordText.kept.capacity <= 1 << 16) }
        recordText.start = tagStart.flatMap(inputOffset(of:)) ?? -1
        recordText.isLost = recordText.start < 0
    }

    /// Ends the builder's record; a rejection gets the trip's text, if it was kept.
    mutating func endRecord() -> ReadItem {
        let item = builder.endRecord()
        defer { recordText.start = -1 }
        guard case .rejected(var rejection) = item else { return item }
        rejection.text = takeRecordText()
        return .rejected(rejection)
    }

    /// After each chunk: copies what the open trip has in libxml2's buffer, which the next chunk
    /// may drop, or gives the text up when the trip has grown past the limit.
    mutating func keepRecordText() {
        guard recordText.start >= 0, !recordText.isLost else { return }
        guard let (bytes, first) = bufferedInput(), let end = inputOffset() else { return loseRecordText() }
        let from = recordText.start + recordText.kept.count
        guard end - recordText.start <= XMLLimits.maxRecordTextBytes, from >= first else { return loseRecordText() }
        if end > from { recordText.kept.append(contentsOf: bytes[(from - first)..<(end - first)]) }
    }

    /// The trip's text up to the parser's position (just past `</trip>` or `/>`), or nil.
    private mutating func takeRecordText() -> String? {
        guard recordText.start >= 0, !recordText.isLost, let (bytes, first) = bufferedInput(),
              let end = inputOffset(), end - recordText.start <= XMLLimits.maxRecordTextBytes else { return nil }
        let from = recordText.start + recordText.kept.count
        guard from >= first, end >= from else { return nil }
        var text = recordText.kept
        text.append(contentsOf: bytes[(from - first)..<(end - first)])
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func loseRecordText() {
        recordText.isLost = true
        recordText.kept = []
    }

    /// libxml2's buffered input, from its start to its end, and the offset in the input of its first byte.
    private func bufferedInput() -> (UnsafeBufferPointer<UInt8>, Int)? {
        guard let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base,
              let end = input.pointee.end, end >= base else { return nil }
        return (UnsafeBufferPointer(start: base, count: end - base), Int(input.pointee.consumed))
    }

    /// The offset in the whole input (after conversion to UTF-8) of a byte in libxml2's buffer.
    private func inputOffset(of pointer: UnsafePointer<UInt8>) -> Int? {
        guard let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base, pointer >= base else { return nil }
        return Int(input.pointee.consumed) + (pointer - base)
    }
}
