#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names a reader looks for as mapping keys, matched on the scalar's bytes before any `String`
/// is made, so a key costs no hashing.
final class YAMLKeyTable {
    let names: [String]
    /// All names' bytes, one after another.
    private let bytes: UnsafeMutablePointer<UInt8>
    /// Entries grouped by byte length: `first[n]..<first[n + 1]` are the names of n bytes.
    private let first: UnsafeMutablePointer<Int32>
    private let offsets: UnsafeMutablePointer<Int32>
    private let codes: UnsafeMutablePointer<Int16>
    private let maxLength: Int

    init(_ names: [String]) {
        self.names = names
        maxLength = names.map(\.utf8.count).max() ?? 0
        let sorted = names.enumerated().sorted { $0.element.utf8.count < $1.element.utf8.count }
        bytes = .allocate(capacity: max(1, names.reduce(0) { $0 + $1.utf8.count }))
        first = .allocate(capacity: maxLength + 2)
        offsets = .allocate(capacity: max(1, names.count))
        codes = .allocate(capacity: max(1, names.count))
        var offset = 0, entry = 0
        for length in 0...(maxLength + 1) {
            first[length] = Int32(entry)
            while entry < sorted.count, sorted[entry].element.utf8.count == length {
                offsets[entry] = Int32(offset)
                codes[entry] = Int16(sorted[entry].offset)
                for b in sorted[entry].element.utf8 { bytes[offset] = b; offset += 1 }
                entry += 1
            }
        }
    }

    deinit {
        bytes.deallocate(); first.deallocate(); offsets.deallocate(); codes.deallocate()
    }

    /// The code of the name spelled by `count` bytes at `p`, or -1.
    @inline(__always)
    func code(_ p: UnsafePointer<UInt8>, _ count: Int) -> Int16 {
        guard count <= maxLength else { return -1 }
        var entry = Int(first[count])
        let end = Int(first[count + 1])
        while entry < end {
            if memcmp(bytes + Int(offsets[entry]), p, count) == 0 { return codes[entry] }
            entry += 1
        }
        return -1
    }
}
