// The parts of `ObjectRelationships` and `ObjectReferenceList` that read or fill their buffer
// through pointers: here, inside the boundary for unsafe types (docs/DESIGN-NOTES.md).

extension ObjectRelationships {
    /// The relationships of `spans.count / 2` lists in one allocation, list i being
    /// `references[spans[2 i] ..< spans[2 i + 1]]`: for a reader that gathers an object's references
    /// in the order its members come.
    public init(references: UnsafeBufferPointer<ObjectReference>, spans: UnsafeBufferPointer<Int>) {
        let n = spans.count / 2
        guard n > 0 else { buffer = []; return }
        var total = n
        for i in 0..<n { total += spans[2 * i + 1] - spans[2 * i] }
        // Reserved and appended: `Array(unsafeUninitializedCapacity:)` makes its buffer through the
        // generic runtime, several hundred instructions more an object.
        buffer = []
        buffer.reserveCapacity(total)
        var end = n
        for i in 0..<n {
            end += spans[2 * i + 1] - spans[2 * i]
            buffer.append(ObjectReference(entity: n, key: Int64(end)))
        }
        // One by one: `append(contentsOf:)` of a buffer is a generic call of some hundred instructions.
        for i in 0..<n {
            for j in spans[2 * i]..<spans[2 * i + 1] { buffer.append(references[j]) }
        }
    }
}

extension ObjectRelationships {
    /// Calls `body` with the references of relationship `r`, without copying them.
    @inlinable
    public func withList<T>(_ r: Int, _ body: (UnsafeBufferPointer<ObjectReference>) throws -> T) rethrows -> T {
        let range = bounds(r)
        return try buffer.withUnsafeBufferPointer { all in try body(UnsafeBufferPointer(rebasing: all[range])) }
    }
}

extension ObjectReferenceList {
    /// Calls `body` with the references' storage.
    @inlinable
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<ObjectReference>) throws -> R) rethrows -> R {
        try buffer.withUnsafeBufferPointer { all in try body(UnsafeBufferPointer(rebasing: all[bounds])) }
    }
}
