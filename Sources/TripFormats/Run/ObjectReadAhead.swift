import TripKit

/// Another reader's objects, read on a thread of its own while the calling thread writes the ones
/// before (`Handoff`): batches of `batchSize` items, at most `window` of them waiting, in the order
/// the reader gives them, its error after every item before it. The reader is used on that thread
/// only, and let go there when it ends (a store's snapshot ends with it); a taker that stops early
/// cancels the thread and waits for it to end, so nothing (a store's private copy) outlives the run.
///
/// ```swift
/// var reader = ObjectReadAhead.reading(try CoreDataObjectReader(path: "default.store", model: model))
/// while let item = try reader.next() { … }
/// ```
final class ObjectReadAhead: ObjectRecordReader {
    let model: ObjectModel
    private let handoff: Handoff<[ObjectReadItem]>
    /// The batch being taken, its items in reverse order.
    @exclusivity(unchecked) private var batch: [ObjectReadItem] = []
    private var ended = false

    private final class Source {
        var reader: (any ObjectRecordReader)?
        init(_ reader: any ObjectRecordReader) { self.reader = reader }
    }

    private init(model: ObjectModel, handoff: Handoff<[ObjectReadItem]>) {
        self.model = model; self.handoff = handoff
    }

    /// `reader` read ahead on a thread of its own; `reader` itself where no thread can be started.
    static func reading(_ reader: any ObjectRecordReader, batchSize: Int = 256, window: Int = 4) -> any ObjectRecordReader {
        let model = reader.model
        let source = Source(reader)
        let started = Handoff<[ObjectReadItem]>.start(window: window) { handoff in
            defer { source.reader = nil }
            var spare: [[ObjectReadItem]] = []
            while var r = source.reader {
                var items = spare.popLast() ?? []
                items.removeAll(keepingCapacity: true)
                items.reserveCapacity(batchSize)
                // The items before an error are handed over before it.
                var failure: (any Error)?
                do {
                    while items.count < batchSize, let item = try r.next() { items.append(item) }
                } catch {
                    failure = error
                }
                let isLast = failure != nil || items.count < batchSize
                if !items.isEmpty {
                    guard let back = handoff.put(items) else { return }
                    spare += back
                }
                if let failure { throw failure }
                if isLast { return }
                source.reader = r
            }
        }
        guard let started else { return source.reader! }
        return ObjectReadAhead(model: model, handoff: started)
    }

    func next() throws -> ObjectReadItem? {
        // A batch is taken reversed, so each item is moved out of it, not copied (`removeLast`: `popLast`'s
        // optional was copied out and destroyed, a retain and release per reference the item holds).
        if !batch.isEmpty { return batch.removeLast() }
        guard !ended else { return nil }
        var spent: [ObjectReadItem] = []
        swap(&spent, &batch)
        if spent.capacity > 0 { handoff.giveBack(spent) }
        do {
            guard var next = try handoff.take() else { ended = true; return nil }
            next.reverse()
            batch = next
        } catch {
            ended = true
            handoff.cancel()
            throw error
        }
        return batch.popLast()
    }

    deinit {
        guard !ended else { return }
        // Stopped early: the thread stops at its next batch; waiting for its end lets its reader go first.
        handoff.cancel()
        _ = try? handoff.take()
    }
}
