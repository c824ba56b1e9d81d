/// A trip as bytes, in the arena's encoding (see `ObjectArena`): for holdings that keep trips
/// outside an arena, such as a spill file. The bytes are self-describing; `decode` gives back the
/// object `append` was given.
package enum TripBytes {
    /// Appends the encoding of `object` to `bytes`.
    package static func append(_ object: ModelObject, to bytes: inout [UInt8]) {
        let size = ObjectArena.encodedSize(object)
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: size))
        bytes.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress! + start
            let end = ObjectArena.write(object, at: p)
            precondition(end - p == size, "TripBytes: an encoding's size was miscounted")
        }
    }

    /// The object encoded at the start of `bytes`.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> ModelObject {
        var at = 0
        return ObjectArena.decodeObject(bytes, &at)
    }

    /// The bytes of a root attribute's value within an encoding (its tag and payload): equal
    /// bytes, equal values. Empty when the object has no such attribute.
    package static func valueRange(_ bytes: UnsafeBufferPointer<UInt8>, attribute index: Int) -> Range<Int> {
        var at = 0
        let n = ObjectArena.readCount(bytes, &at)
        guard index < n else { return 0..<0 }
        for _ in 0..<index { ObjectArena.skipValue(bytes, &at) }
        let start = at
        ObjectArena.skipValue(bytes, &at)
        return start..<at
    }

    /// A hash of a value's bytes, the one `InMemoryTrips` finds names by.
    package static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 { KeyIndex.hash(bytes) }

    /// The number of objects in each of the encoded object's relationships (0 or 1 for a to-one).
    package static func relationshipCounts(_ bytes: UnsafeBufferPointer<UInt8>) -> [Int] {
        ObjectArena.relationshipCounts(bytes, from: 0)
    }
}
