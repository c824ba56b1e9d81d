import Testing
import TripKit
@testable import TripFormats

/// An object record's bytes in a spill file, read back; damaged bytes are an error, never a crash.
@Suite struct ObjectRecordCodingTests {
    static let record = ObjectRecord(
        entity: 1, key: 42, attributes: [],
        relationships: [[ObjectReference(entity: 0, key: 7)], [], [ObjectReference(entity: 2, key: 1), ObjectReference(entity: 2, key: 3)]],
        origin: RecordOrigin(source: "recipes.jsonl", record: 5, line: 5, column: 1))

    static func decode(_ bytes: [UInt8]) throws -> ObjectRecord {
        try bytes.withUnsafeBufferPointer { b in
            var decoder = ObjectRecordCoding.Decoder(bytes: b)
            return try decoder.record()
        }
    }

    @Test func relationshipsReadBackAsWritten() throws {
        var bytes: [UInt8] = []
        ObjectRecordCoding.encode(Self.record, to: &bytes)
        #expect(try Self.decode(bytes) == Self.record)
    }

    /// A list count past what the bytes left can hold (a damaged or cut temporary file) is the error a
    /// short file gives, not an allocation of that many lists.
    @Test func aDamagedListCountIsAnError() throws {
        var bytes: [UInt8] = []
        ObjectRecordCoding.encode(Self.record, to: &bytes)
        // Entity, key and the attributes' count (none) come first: the relationships' count is at 24.
        #expect(bytes[24] == 3 && bytes[25..<32].allSatisfy { $0 == 0 })
        for count: UInt64 in [1 << 40, UInt64(bytes.count), .max] {
            var damaged = bytes
            for k in 0..<8 { damaged[24 + k] = UInt8(truncatingIfNeeded: count >> (8 * k)) }
            #expect { try Self.decode(damaged) } throws: { error in
                (error as? TripError)?.message.contains("temporary data ended early") == true
            }
        }
    }
}
