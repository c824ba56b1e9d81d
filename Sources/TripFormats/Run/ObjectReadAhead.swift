import TripKit
import TripThreads

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
    /// The reader's, as it said before its thread started.
    let expectedObjects: [Int]?
    private let handoff: Handoff<[ObjectReadItem]>
    /// The batch being taken, and how many of its items were taken. A store's items are copied out,
    /// and the batch goes back whole for the reading thread to make the next objects in their arrays.
    /// Any other reader's items are moved out (a placeholder left in their place): the taker then
    /// owns each object's arrays alone, so a stage or a resolution changes them where they are rather
    /// than copying them, and drops them when written
    /// (docs/DESIGN-NOTES.md, "Objects moved out of the read-ahead"). The spent batch is given back
    /// with no reference kept here, so that the reading thread fills its buffer again.
    @exclusivity(unchecked) private var batch: [ObjectReadItem] = []
    @exclusivity(unchecked) private var taken = 0
    private var ended = false
    private let moves: Bool

    private final class Source {
        var reader: (any ObjectRecordReader)?
        init(_ reader: any ObjectRecordReader) { self.reader = reader }
    }

    private init(model: ObjectModel, expectedObjects: [Int]?, handoff: Handoff<[ObjectReadItem]>, moves: Bool) {
        self.model = model; self.expectedObjects = expectedObjects; self.handoff = handoff; self.moves = moves
    }

    /// `reader` read ahead on a thread of its own; `reader` itself where no thread can be started.
    static func reading(_ reader: any ObjectRecordReader, batchSize: Int = 256, window: Int = 4) -> any ObjectRecordReader {
        let model = reader.model, expected = reader.expectedObjects
        // A store's items are copied out, for its reader to make the next objects in their arrays; others' moved.
        let moves = !(reader is CoreDataObjectReader)
        let source = Source(reader)
        let started = Handoff<[ObjectReadItem]>.start(window: window) { handoff in
            defer { source.reader = nil }
            var spare: [[ObjectReadItem]] = []
            let store = moves ? nil : source.reader as? CoreDataObjectReader
            while var r = source.reader {
                // A spent batch's objects, made again in their own arrays (a store); else its placeholders
                // dropped and its buffer filled again, so that no batch is allocated (and freed on the
                // other thread) per `batchSize` objects.
                var spent = spare.popLast() ?? []
                var items: [ObjectReadItem] = []
                if store == nil {
                    spent.removeAll(keepingCapacity: true)
                    swap(&items, &spent)
                }
                items.reserveCapacity(batchSize)
                // The items before an error are handed over before it.
                var failure: (any Error)?
                do {
                    if let store {
                        var old = spent.popLast()
                        while items.count < batchSize, let item = try store.next(reusing: &old) {
                            items.append(item)
                            old = spent.popLast()
                        }
                    } else {
                        while items.count < batchSize, let item = try r.next() { items.append(item) }
                    }
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
        return ObjectReadAhead(model: model, expectedObjects: expected, handoff: started, moves: moves)
    }

    func next() throws -> ObjectReadItem? {
        if taken < batch.count {
            taken += 1
            guard moves else { return batch[taken - 1] }
            let i = taken - 1
            return batch.withUnsafeMutableBufferPointer { items in
                // What a moved item leaves in its place: empty arrays, nothing to release.
                let slot = items.baseAddress! + i
                let item = slot.move()
                slot.initialize(to: .object(ObjectRecord(entity: -1, key: 0, attributes: [], relationships: ObjectRelationships(),
                                                         origin: RecordOrigin(source: "", record: 0))))
                return item
            }
        }
        guard !ended else { return nil }
        var spent: [ObjectReadItem] = []
        swap(&spent, &batch)
        taken = 0
        if spent.capacity > 0 { handoff.giveBack(consume spent) }
        do {
            guard let next = try handoff.take() else { ended = true; return nil }
            batch = next
        } catch {
            ended = true
            handoff.cancel()
            throw error
        }
        return try next()
    }

    deinit {
        guard !ended else { return }
        // Stopped early: the thread stops at its next batch; waiting for its end lets its reader go first.
        handoff.cancel()
        _ = try? handoff.take()
    }
}
