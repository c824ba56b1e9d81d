/// The objects a `RecordBuilder` is building, one frame per depth (the trip, then a related object
/// inside it), in flat buffers allocated once: a frame's values, its related objects and its facts
/// are reached by pointer arithmetic, with no uniqueness or exclusivity check per scalar.
///
/// The buffers grow only when objects nest deeper than ever before. A free frame's values are all
/// null and its related lists empty; `RecordBuilder` restores that when it pops a frame.
final class RecordFrames {
    /// What a frame is, besides its values and related objects.
    struct Head {
        var entity = 0
        /// The field of the parent frame this object belongs to, or -1 for the root.
        var field = -1
        /// Where the entity's facts start in the builder's flat facts.
        var factsStart = 0
        /// Bit per field index: the fields given so far.
        var present: UInt64 = 0
        /// Some related list of the frame holds objects.
        var hasRelated = false
        /// The frame holds related objects whose version was not known when they ended.
        var hasPending = false
        /// Where the object starts, as the reader's mark (`RecordBuilder.mark`) when it began.
        var mark = Int.min
    }

    /// Values per frame: the most fields any entity of the vocabulary has.
    let valueStride: Int
    /// Related lists per frame: the most relationships any entity has in any version.
    let relatedStride: Int
    private(set) var capacity = 0
    private(set) var heads: UnsafeMutablePointer<Head>
    private(set) var values: UnsafeMutablePointer<Value>
    private(set) var related: UnsafeMutablePointer<[ModelObject]>

    init(valueStride: Int, relatedStride: Int) {
        self.valueStride = max(1, valueStride)
        self.relatedStride = max(1, relatedStride)
        heads = .allocate(capacity: 0)
        values = .allocate(capacity: 0)
        related = .allocate(capacity: 0)
        grow()
    }

    /// Makes room for more frames, keeping the ones in use (all of them: the caller is about to
    /// push one past the end).
    func grow() {
        let newCapacity = max(4, capacity * 2)
        let newHeads = UnsafeMutablePointer<Head>.allocate(capacity: newCapacity)
        newHeads.moveInitialize(from: heads, count: capacity)
        (newHeads + capacity).initialize(repeating: Head(), count: newCapacity - capacity)
        let newValues = UnsafeMutablePointer<Value>.allocate(capacity: newCapacity * valueStride)
        newValues.moveInitialize(from: values, count: capacity * valueStride)
        (newValues + capacity * valueStride).initialize(repeating: .null, count: (newCapacity - capacity) * valueStride)
        let newRelated = UnsafeMutablePointer<[ModelObject]>.allocate(capacity: newCapacity * relatedStride)
        newRelated.moveInitialize(from: related, count: capacity * relatedStride)
        (newRelated + capacity * relatedStride).initialize(repeating: [], count: (newCapacity - capacity) * relatedStride)
        heads.deallocate(); values.deallocate(); related.deallocate()
        heads = newHeads; values = newValues; related = newRelated
        capacity = newCapacity
    }

    deinit {
        heads.deinitialize(count: capacity).deallocate()
        values.deinitialize(count: capacity * valueStride).deallocate()
        related.deinitialize(count: capacity * relatedStride).deallocate()
    }
}
