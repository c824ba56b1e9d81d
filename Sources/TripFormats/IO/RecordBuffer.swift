/// The bytes of the record a writer is encoding: a block written through a pointer, with room made
/// by `reserve` ahead of `put`s (an array checks its capacity and uniqueness at every append, and
/// appending another collection to it costs a call of ~100 instructions).
struct RecordBuffer {
    private let storage = ByteStorage(capacity: 4096)
    var count = 0

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage.pointer, count: count) }

    mutating func removeAll() { count = 0 }

    /// Makes room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if count + n > storage.capacity { storage.grow(toAtLeast: count + n, keeping: count) }
    }

    /// The room after the bytes, `n` bytes of it reserved; the caller adds what it writes to `count`.
    func spare(_ n: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: storage.pointer + count, count: n)
    }

    /// Appends a byte into reserved room.
    @inline(__always)
    mutating func put(_ byte: UInt8) {
        storage.pointer[count] = byte
        count += 1
    }

    /// Appends bytes into reserved room.
    @inline(__always)
    mutating func put(_ bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress { (storage.pointer + count).update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        count += bytes.count
    }

    mutating func append(_ byte: UInt8) { reserve(1); put(byte) }
    mutating func append(_ a: UInt8, _ b: UInt8) { reserve(2); put(a); put(b) }
    mutating func append(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount)
        put(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
    mutating func append(_ bytes: [UInt8]) {
        reserve(bytes.count)
        bytes.withUnsafeBytes { put($0) }
    }
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        put(bytes)
    }
}
