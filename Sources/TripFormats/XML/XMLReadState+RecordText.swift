import TripKit

// The source text of a rejected `<trip>`, for the rejects file: its bytes from `<trip` to
// `</trip>` (or its `/>`) as libxml2 held them (UTF-8, whatever the document's encoding).
//
// libxml2 drops what lies behind its position at the start of each chunk, and it parses on a
// thread of its own, ahead of the reader. So the parse thread copies, at the end of each chunk,
// the input that the chunk's trips lie in, and sends it with the batch (`XMLParseState.sealBatch`);
// the reader keeps it (`SourceWindow`) from the open trip's start on, and makes a string of it
// only when the trip is rejected. A trip costs two offsets, carried by its start and end events.

extension XMLReadState {
    /// A trip starts at its tag's `<` (-1 when unknown: no text is kept).
    mutating func beginRecordText(at offset: Int) {
        recordStart = offset
        window.keep(from: offset)
    }

    /// Ends the builder's record; a rejection gets the trip's text, if it was kept. `end` is the
    /// offset just past the trip's end tag.
    mutating func endRecord(at end: Int) -> ReadItem {
        let item = builder.endRecord()
        let start = recordStart
        defer {
            recordStart = -1
            window.release()
        }
        guard case .rejected(var rejection) = item else { return item }
        let mark = builder.rejectionMark
        if mark != RecordBuilder.noMark, start >= 0, mark > start, let before = window.text(from: start, to: mark) {
            rejection.locate(at: XMLReadState.place(of: before, after: rejection.origin))
        }
        rejection.text = start >= 0 && end >= start ? window.text(from: start, to: end) : nil
        return .rejected(rejection)
    }

    /// The line and column of the start tag that ends `before`, the trip's text from its `<`
    /// (which is at `trip`'s line and column) to where libxml2 reported that tag. Columns count
    /// characters, as libxml2's do.
    static func place(of before: String, after trip: RecordOrigin) -> (line: Int, column: Int)? {
        guard let tripLine = trip.line, let tripColumn = trip.column else { return nil }
        let bytes = Array(before.utf8)
        let tag = bytes.lastIndex(of: 0x3C) ?? bytes.count
        let newlines = bytes[..<tag].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let lineStart = bytes[..<tag].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let characters = bytes[lineStart..<tag].reduce(0) { $0 + ($1 & 0xC0 != 0x80 ? 1 : 0) }
        return newlines == 0 ? (tripLine, tripColumn + characters) : (tripLine + newlines, characters + 1)
    }
}
