/// A value `RepeatedValues` counts: compared as its type compares, and written to a temporary file
/// as bytes that give back an equal value.
package protocol CountedValue: Hashable {
    /// Calls `body` with the bytes the value is written as.
    func withCountedBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
    /// The value these bytes were written from.
    init(countedBytes: UnsafeBufferPointer<UInt8>)
    /// About how many bytes the value takes on the heap (its storage), beyond a dictionary's table.
    var heapBytes: Int { get }
}

/// A string counted as Swift compares strings, written as its UTF-8.
extension String: CountedValue {
    /// Calls `body` with the string's UTF-8.
    package func withCountedBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        var s = self
        return try s.withUTF8(body)
    }

    /// The string of this UTF-8.
    package init(countedBytes: UnsafeBufferPointer<UInt8>) { self.init(decoding: countedBytes, as: UTF8.self) }

    /// None up to 15 bytes of UTF-8 (held inline), else a heap block with its NUL.
    package var heapBytes: Int {
        let n = utf8.count
        return n <= 15 ? 0 : mallocBlock(n + 1)
    }
}

/// Bytes counted byte for byte, as the trips' names are compared (a value's encoding).
extension Array: CountedValue where Element == UInt8 {
    /// Calls `body` with the bytes.
    package func withCountedBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeBufferPointer(body)
    }

    /// These bytes.
    package init(countedBytes: UnsafeBufferPointer<UInt8>) { self.init(countedBytes) }

    /// A heap block, unless empty.
    package var heapBytes: Int { isEmpty ? 0 : mallocBlock(count) }
}

/// The heap block of a Swift string's or array's storage of `payload` bytes: a 32-byte header, and
/// malloc's 8 bytes and rounding to 16.
private func mallocBlock(_ payload: Int) -> Int { (payload + 32 + 8 + 15) & ~15 }

/// Counts how many distinct values occur more than once (repeated names, for `detect`), exactly,
/// in memory bounded by a `SpillBudget` however many values there are.
///
/// Values are counted in a dictionary while it stays under the budget's `tripBytes` (with any
/// trips the run holds). Past it, every value counted so far goes with its count to one of a few
/// partition files by a hash of the value, and counting starts again in memory: so a partition
/// holds every count of its values, and those of different partitions never meet. At the end
/// each partition is counted alone in memory the same way (one more level of partitions, by
/// another hash, if even one does not fit). The files are `SpillFile`s: anonymous, mode 0600,
/// gone with the process; a full disk is an I/O error naming the directory.
package final class RepeatedValues<Value: CountedValue> {
    /// The budget the dictionary's bytes are counted in.
    package let budget: SpillBudget
    /// 0 for the counter of all values; 1 for that of one of its partitions, and so on.
    private let level: Int
    private var counts: [Value: Int] = [:]
    /// The dictionary's bytes, estimated; `counted` of them told to the budget.
    private var held = 0
    private var counted = 0
    private let step: Int
    private var partitions: [SpillFile?] = []
    private var scratch: [UInt8] = []
    /// How many (value, count) records went to the partition files, and their bytes there (not
    /// counting the partitions of a partition that did not fit).
    package private(set) var spilledValues = 0
    package private(set) var spilledBytes = 0

    /// Past this level, a partition that does not fit is held whole all the same (its values
    /// are too large for the budget, or it is too unlucky to ever be split).
    static var maximumLevel: Int { 8 }
    /// A dictionary's bytes per value, beyond the value's heap storage: an entry of the table,
    /// which is at most three-quarters full, and twice that while it grows.
    static var entryBytes: Int { 2 * (MemoryLayout<Value>.stride + MemoryLayout<Int>.stride) * 4 / 3 }

    /// A counter of no values yet, under `budget`.
    package convenience init(budget: SpillBudget) { self.init(budget: budget, level: 0) }

    private init(budget: SpillBudget, level: Int) {
        self.budget = budget
        self.level = level
        step = max(1, min(64 << 10, budget.tripBytes / 16))
    }

    deinit { _ = budget.hold(-counted) }

    /// Whether values went to temporary files.
    package var isSpilled: Bool { !partitions.isEmpty }

    /// Counts one more occurrence of `value`.
    package func add(_ value: Value) throws { try add(value, times: 1) }

    private func add(_ value: Value, times: Int) throws {
        let before = counts.count
        counts[value, default: 0] += times
        guard counts.count != before else { return }
        held += Self.entryBytes + value.heapBytes
        if held - counted >= step { try account() }
    }

    private func account() throws {
        let over = budget.hold(held - counted)
        counted = held
        if over && counts.count > 1 && level < Self.maximumLevel { try spill() }
    }

    /// Moves the counts in memory to the partitions (made on the first call).
    private func spill() throws {
        if partitions.isEmpty {
            // Enough partitions that their buffers take at most a sixteenth of the budget.
            let n = min(SpillPartitions.maximum, max(2, budget.limit / 16 / SpillPartitions.buffer))
            partitions = try SpillPartitions.make(n, in: budget.directory)
        }
        for (value, count) in counts {
            var hasher = Hasher()
            hasher.combine(level)
            hasher.combine(value)
            let p = SpillPartitions.index(of: UInt64(UInt(bitPattern: hasher.finalize())), among: partitions.count)
            try value.withCountedBytes { try SpillRecords.writeCounted($0, count: count, to: partitions[p]!, scratch: &scratch) }
        }
        spilledValues += counts.count
        counts = [:]
        _ = budget.hold(-counted)
        (held, counted) = (0, 0)
    }

    /// How many distinct values were added more than once. The counter is spent: it holds
    /// nothing after, and counts nothing more.
    package func repeatedCount() throws -> Int {
        guard isSpilled else {
            let repeated = counts.values.count { $0 > 1 }
            counts = [:]
            _ = budget.hold(-counted)
            (held, counted) = (0, 0)
            return repeated
        }
        try spill()
        var repeated = 0
        for p in partitions.indices {
            let part = partitions[p]!
            partitions[p] = nil
            try part.flush()
            spilledBytes += part.size
            let inner = RepeatedValues(budget: budget, level: level + 1)
            var reader = part.reader(bufferSize: SpillPartitions.buffer)
            while let (bytes, count) = try SpillRecords.readCounted(&reader) {
                try inner.add(Value(countedBytes: bytes), times: count)
            }
            repeated += try inner.repeatedCount()
        }
        return repeated
    }
}

/// A name compared byte for byte (its UTF-8), as deduplication, a store's unique index and a dry
/// run compare names: "café" precomposed and decomposed are two names, as they are two trips.
package struct NameBytes: CountedValue {
    /// The name.
    package var text: String

    /// A name to count.
    package init(_ text: String) { self.text = text }

    package static func == (a: NameBytes, b: NameBytes) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    package func hash(into hasher: inout Hasher) {
        var s = text
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Calls `body` with the name's UTF-8.
    package func withCountedBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try text.withCountedBytes(body)
    }

    /// The name of this UTF-8.
    package init(countedBytes: UnsafeBufferPointer<UInt8>) { text = String(countedBytes: countedBytes) }

    /// As the string's.
    package var heapBytes: Int { text.heapBytes }
}

/// The counter `detect` uses, for names: its work compiled for names here, in the module, where
/// a caller in another module would run the generic code (a call per trip, about a tenth slower).
extension RepeatedValues where Value == NameBytes {
    /// Counts one more occurrence of a name.
    package func add(name: String) throws { try add(NameBytes(name)) }

    /// How many distinct names were added more than once (`repeatedCount`).
    package func repeatedNames() throws -> Int { try repeatedCount() }
}
