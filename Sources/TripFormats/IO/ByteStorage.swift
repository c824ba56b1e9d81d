/// Owns a growable block of bytes: the JSON scanner's window and scratch buffer, the XML reader's
/// field text.
final class ByteStorage {
    private(set) var pointer: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        pointer = .allocate(capacity: self.capacity)
    }

    /// Grows to at least `minimum` bytes, keeping the first `count`.
    func grow(toAtLeast minimum: Int, keeping count: Int) {
        let newCapacity = max(minimum, capacity * 2)
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        fresh.update(from: pointer, count: count)
        pointer.deallocate()
        pointer = fresh
        capacity = newCapacity
    }

    /// Moves `count` bytes from `offset` to the front of a new block of `capacity` bytes.
    func replace(capacity newCapacity: Int, keeping offset: Int, count: Int) {
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        fresh.update(from: pointer + offset, count: count)
        pointer.deallocate()
        pointer = fresh
        capacity = newCapacity
    }

    deinit { pointer.deallocate() }
}
