/// The partition files spilled data is split into by a hash of a key, so that every record of one
/// key lands in one file and each file can then be worked on alone in memory: shared by the
/// deduplication of spilled trips (`SpillingTrips`) and the counting of repeated values
/// (`RepeatedValues`).
enum SpillPartitions {
    /// The buffer of each partition file: many are written at once.
    static let buffer = 64 << 10
    /// At most this many partitions: each is a file open at once and a buffer.
    static let maximum = 128

    /// `count` new partition files in `directory`, each written through `buffer` bytes.
    static func make(_ count: Int, in directory: String) throws -> [SpillFile] {
        try (0..<count).map { _ in try SpillFile(directory: directory, bufferSize: buffer) }
    }

    /// The partition, of `count`, of a key with this hash: by the hash's high half, as the index
    /// that later works on one partition in memory (`KeyIndex`, a dictionary) spreads keys by the
    /// low bits.
    static func index(of hash: UInt64, among count: Int) -> Int {
        Int((hash >> 32) % UInt64(count))
    }
}
