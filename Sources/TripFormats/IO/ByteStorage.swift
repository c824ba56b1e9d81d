#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one growable block of bytes the readers keep input and text in: the CSV row reader's window
/// and decoded cells, the JSON scanner's window and decoded strings, the transcoder's blocks, the
/// XML reader's field text and its parse thread's batch texts, the YAML scanner's chunks, the YAML
/// batches' texts, and the copies of the input kept for rejected trips' texts (`InputSegment`).
/// The writers' `RecordBuffer` is one too.
///
/// `count` bytes from `pointer` on are in use. An owner that keeps the end of its bytes in a
/// variable of its own for its hot loop (the JSON window, `RecordBuffer`) leaves `count` alone and grows the block
/// with `grow(toAtLeast:keeping:)` or `replace(capacity:keeping:count:)`. Growing moves the bytes:
/// a pointer taken before is stale after.
///
/// A class, so that a batch can take its bytes to another thread, and a segment be read by two,
/// without a copy. One thread writes it at a time (hence `@unchecked Sendable`), and bytes sealed
/// into a segment are not written again. No exclusivity checks: they would cost every access, and
/// the owner is one at a time by construction.
final class ByteStorage: @unchecked Sendable {
    @exclusivity(unchecked) private(set) var pointer: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var capacity: Int
    @exclusivity(unchecked) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        pointer = .allocate(capacity: self.capacity)
    }

    deinit { pointer.deallocate() }

    /// The bytes in use, valid until the next change.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: pointer, count: count) }

    /// Room left before the next growth.
    var freeCapacity: Int { capacity - count }

    // MARK: - Adding

    /// Makes room for at least `extra` more bytes after `count`.
    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toAtLeast: count + extra, keeping: count) }
    }

    @inline(__always)
    func append(_ source: UnsafePointer<UInt8>, count n: Int) {
        reserve(n)
        (pointer + count).update(from: source, count: n)
        count += n
    }

    @inline(__always)
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        append(source, count: bytes.count)
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        pointer[count] = byte
        count += 1
    }

    /// Appends a Unicode scalar value (at most 0x10FFFF, no surrogate) as UTF-8.
    @inline(__always)
    func appendUTF8(_ v: UInt32) {
        reserve(4)
        let p = pointer + count
        switch v {
        case 0..<0x80:
            p[0] = UInt8(v); count += 1
        case 0x80..<0x800:
            p[0] = UInt8(0xC0 | v >> 6); p[1] = UInt8(0x80 | v & 0x3F); count += 2
        case 0x800..<0x10000:
            p[0] = UInt8(0xE0 | v >> 12); p[1] = UInt8(0x80 | v >> 6 & 0x3F); p[2] = UInt8(0x80 | v & 0x3F); count += 3
        default:
            p[0] = UInt8(0xF0 | v >> 18); p[1] = UInt8(0x80 | v >> 12 & 0x3F)
            p[2] = UInt8(0x80 | v >> 6 & 0x3F); p[3] = UInt8(0x80 | v & 0x3F); count += 4
        }
    }

    /// Lets `body` write into the free room; keeps the bytes it says it wrote (0 or less: none).
    @inline(__always)
    func fill(_ body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> Int {
        let n = try body(UnsafeMutableRawBufferPointer(start: pointer + count, count: capacity - count))
        if n > 0 { count += n }
        return n
    }

    // MARK: - Taking away

    func removeAll() { count = 0 }

    /// Forgets the bytes from `newCount` on.
    func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        count = newCount
    }

    /// Drops the first `n` bytes, moving the rest to the front.
    func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count)
        if n < count { memmove(pointer, pointer + n, count - n) }
        count -= n
    }

    // MARK: - Growing

    /// Grows to at least `minimum` bytes (at least twice the capacity), keeping the first `kept`.
    @inline(never)
    func grow(toAtLeast minimum: Int, keeping kept: Int) {
        let newCapacity = max(minimum, capacity * 2)
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        fresh.update(from: pointer, count: kept)
        pointer.deallocate()
        pointer = fresh
        capacity = newCapacity
    }

    /// Moves `kept` bytes from `offset` to the front of a new block of `capacity` bytes.
    func replace(capacity newCapacity: Int, keeping offset: Int, count kept: Int) {
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        fresh.update(from: pointer + offset, count: kept)
        pointer.deallocate()
        pointer = fresh
        capacity = newCapacity
    }
}
