// How a parse thread hands events over: their texts still bytes, in a batch (`YAMLRawEvent`,
// `YAMLEventBatch`), made `YAMLEvent`s on the reader's side.

/// An event as the parse thread hands it over: its text is still bytes, in its batch.
struct YAMLRawEvent {
    var kind: YAMLEvent.Kind
    var style: YAMLEvent.Style = .none
    var line: Int32 = 0
    var column: Int32 = 0
    var textCount: Int32 = 0
    /// Where a scalar's or an alias's text starts in `bytes`. A mapping's start or end has no
    /// text: for a start, the byte offset in the input where the mapping starts; for an end, where
    /// its text ends (see `YAMLSourceMap`); -1 when not known. The events the reader sees do not
    /// carry these (a larger event costs every event); it asks the pipe (`mappingOffset(of:)`).
    var textStart = 0
    var properties: YAMLNodeProperties? = nil

    init(kind: YAMLEvent.Kind) { self.kind = kind }
}

/// Events parsed together, their texts one after another in `bytes`. (The input read meanwhile
/// travels beside it, in a `YAMLBatchInput`: one more array here would cost a retain per event.)
struct YAMLEventBatch {
    var events: [YAMLRawEvent] = []
    /// The texts. Copies of a batch share them: a batch has one owner at a time (the parse thread
    /// until it hands the batch over, then the reader).
    let bytes: ByteStorage

    init(byteCapacity: Int = 256) {
        bytes = ByteStorage(capacity: byteCapacity)
    }

    /// The byte offset of a mapping's start, or where a mapping's text ends, if the event at
    /// `index` is `event` (and not an event replayed for an alias); else -1.
    func mappingOffset(at index: Int, of event: YAMLEvent) -> Int {
        let raw = events[index]
        guard raw.kind == event.kind, raw.line == event.line, raw.column == event.column,
              raw.kind == .mappingStart || raw.kind == .mappingEnd else { return -1 }
        return raw.textStart
    }

    /// A batch with room for a pipe's batch of events and their texts.
    static func empty() -> YAMLEventBatch {
        var batch = YAMLEventBatch(byteCapacity: YAMLEventPipe.batchSize * 16)
        batch.events.reserveCapacity(YAMLEventPipe.batchSize)
        return batch
    }

    /// The event at `index`, its text made a string; a name of the key table gets its code and
    /// reuses the table's string (no decoding, no allocation).
    @inline(__always)
    func event(at index: Int, keyTable: YAMLKeyTable?) -> YAMLEvent {
        var out = YAMLEvent(kind: events[index].kind)
        out.style = events[index].style
        out.line = events[index].line
        out.column = events[index].column
        if events[index].properties != nil { out.properties = events[index].properties }
        let count = Int(events[index].textCount)
        if count > 0 {
            let p = UnsafePointer(bytes.pointer) + events[index].textStart
            if out.kind == .scalar, let keyTable {
                let code = keyTable.code(p, count)
                if code >= 0 {
                    out.keyCode = code
                    out.value = keyTable.names[Int(code)]
                    return out
                }
            }
            out.value = String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
        }
        return out
    }
}

/// A node's anchor and tag.
final class YAMLNodeProperties {
    let anchor: String?
    let tag: String?
    init(anchor: String?, tag: String?) { self.anchor = anchor; self.tag = tag }

    static func make(anchor: String?, tag: String?) -> YAMLNodeProperties? {
        anchor == nil && tag == nil ? nil : YAMLNodeProperties(anchor: anchor, tag: tag)
    }
}
