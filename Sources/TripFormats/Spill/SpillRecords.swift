import TripKit

/// How a holding that spills writes trips and set-aside records to its files, and reads them back.
///
/// A trip record is a 36-byte head (the encoding's length, the origin with its source as an index
/// into `SourceTable`, and a sequence number: the trip's position when a partition was made) and
/// the trip's encoding (`TripBytes`). A set-aside record is its kind, origin, sequence number,
/// reason and text. A counted value is its length, its count and its bytes. Little-endian, as the
/// machine writes it: the files never leave the process.
struct SpilledTrip {
    var origin: RecordOrigin
    var sequence: Int
    /// The trip's encoding: valid until the file it came from is read again.
    var bytes: UnsafeBufferPointer<UInt8>
}

/// Source names (input files) as small numbers, so a record need not repeat its file's name.
struct SourceTable {
    private var names: [String] = []
    private var index: [String: UInt32] = [:]

    mutating func number(_ name: String) -> UInt32 {
        if let last = names.last, last == name { return UInt32(names.count - 1) }
        if let known = index[name] { return known }
        names.append(name)
        index[name] = UInt32(names.count - 1)
        return UInt32(names.count - 1)
    }

    func name(_ number: UInt32) -> String { names[Int(number)] }
}

enum SpillRecords {
    static let tripHead = 36

    static func writeTrip(_ bytes: UnsafeBufferPointer<UInt8>, origin: RecordOrigin, sequence: Int,
                          sources: inout SourceTable, to file: SpillFile, scratch: inout [UInt8]) throws {
        scratch.removeAll(keepingCapacity: true)
        put(UInt32(bytes.count), &scratch)
        putOrigin(origin, &scratch, &sources)
        put(UInt64(bitPattern: Int64(sequence)), &scratch)
        try file.append(scratch)
        try file.append(bytes)
    }

    static func readTrip(_ reader: inout SpillReader, sources: SourceTable) throws -> SpilledTrip? {
        guard let head = try reader.read(tripHead) else { return nil }
        var at = 0
        let length = Int(take32(head, &at))
        let origin = takeOrigin(head, &at, sources)
        let sequence = Int(Int64(bitPattern: take64(head, &at)))
        guard let bytes = try reader.read(length) else { throw truncated() }
        return SpilledTrip(origin: origin, sequence: sequence, bytes: bytes)
    }

    static func writeSetAside(_ record: SetAsideRecord, sequence: Int, sources: inout SourceTable,
                              to file: SpillFile, scratch: inout [UInt8]) throws {
        scratch.removeAll(keepingCapacity: true)
        let kind: UInt8
        switch record.kind {
        case .rejected: kind = 0
        case .dropped: kind = 1
        case .merged: kind = 2
        }
        scratch.append(kind)
        scratch.append(record.text == nil ? 0 : 1)
        putOrigin(record.origin, &scratch, &sources)
        put(UInt64(bitPattern: Int64(sequence)), &scratch)
        putText(record.reason, &scratch)
        putText(record.text ?? "", &scratch)
        try file.append(scratch)
    }

    static func readSetAside(_ reader: inout SpillReader, sources: SourceTable) throws -> (SetAsideRecord, sequence: Int)? {
        guard let head = try reader.read(2 + 24 + 8) else { return nil }
        var at = 0
        let kindByte = head[at], hasText = head[at + 1] != 0
        at += 2
        let origin = takeOrigin(head, &at, sources)
        let sequence = Int(Int64(bitPattern: take64(head, &at)))
        let reason = try readText(&reader)
        let text = try readText(&reader)
        let kind: SetAsideRecord.Kind = kindByte == 2 ? .merged : kindByte == 1 ? .dropped : .rejected
        return (SetAsideRecord(kind: kind, origin: origin, reason: reason, text: hasText ? text : nil), sequence)
    }

    /// A counted value (`RepeatedValues`): its length, how many times it was seen, its bytes.
    static func writeCounted(_ bytes: UnsafeBufferPointer<UInt8>, count: Int, to file: SpillFile, scratch: inout [UInt8]) throws {
        scratch.removeAll(keepingCapacity: true)
        put(UInt32(bytes.count), &scratch)
        put(UInt64(count), &scratch)
        try file.append(scratch)
        try file.append(bytes)
    }

    /// The next counted value, its bytes valid until the next read; nil at the end.
    static func readCounted(_ reader: inout SpillReader) throws -> (bytes: UnsafeBufferPointer<UInt8>, count: Int)? {
        guard let head = try reader.read(12) else { return nil }
        var at = 0
        let length = Int(take32(head, &at)), count = Int(take64(head, &at))
        guard let bytes = try reader.read(length) else { throw truncated() }
        return (bytes, count)
    }

    // MARK: - Fields

    private static func putOrigin(_ origin: RecordOrigin, _ out: inout [UInt8], _ sources: inout SourceTable) {
        put(sources.number(origin.source), &out)
        put(UInt32(clamping: (origin.column ?? -1) + 1), &out)
        put(UInt64(bitPattern: Int64(origin.record)), &out)
        put(UInt64(bitPattern: Int64((origin.line ?? -1) + 1)), &out)
    }

    private static func takeOrigin(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int, _ sources: SourceTable) -> RecordOrigin {
        let source = sources.name(take32(b, &at))
        let column = Int(take32(b, &at))
        let record = Int(Int64(bitPattern: take64(b, &at)))
        let line = Int(Int64(bitPattern: take64(b, &at)))
        return RecordOrigin(source: source, record: record, line: line == 0 ? nil : line - 1,
                            column: column == 0 ? nil : column - 1)
    }

    private static func putText(_ text: String, _ out: inout [UInt8]) {
        put(UInt32(text.utf8.count), &out)
        out.append(contentsOf: text.utf8)
    }

    private static func readText(_ reader: inout SpillReader) throws -> String {
        guard let head = try reader.read(4) else { throw truncated() }
        var at = 0
        let n = Int(take32(head, &at))
        guard let bytes = try reader.read(n) else { throw truncated() }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func put(_ v: UInt32, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func put(_ v: UInt64, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func take32(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) -> UInt32 {
        var v: UInt32 = 0
        for k in 0..<4 { v |= UInt32(b[at + k]) << (8 * k) }
        at += 4
        return v
    }

    private static func take64(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(b[at + k]) << (8 * k) }
        at += 8
        return v
    }

    private static func truncated() -> TripError {
        TripError(.io, "temporary data ended early: the spill file was changed or cut short")
    }
}

/// The accounting of a holding that spills: records set aside, in order, in memory up to
/// `memoryLimit` of them, the rest in a spill file made when needed.
final class SetAsideLog {
    private let memoryLimit: Int
    private var file: SpillFile?
    private var onFile = 0
    private var recent: [SetAsideRecord] = []
    private var sources = SourceTable()
    private var scratch: [UInt8] = []
    private let directory: String

    init(directory: String, memoryLimit: Int) { self.directory = directory; self.memoryLimit = memoryLimit }

    var count: Int { onFile + recent.count }

    func append(_ record: SetAsideRecord) throws {
        recent.append(record)
        if recent.count >= memoryLimit { try moveToFile() }
    }

    private func moveToFile() throws {
        if file == nil { file = try SpillFile(directory: directory) }
        for r in recent { try SpillRecords.writeSetAside(r, sequence: 0, sources: &sources, to: file!, scratch: &scratch) }
        onFile += recent.count
        recent.removeAll(keepingCapacity: true)
    }

    func forEach(_ body: (SetAsideRecord) throws -> Void) throws {
        if let file {
            try file.flush()
            var reader = file.reader()
            while let (record, _) = try SpillRecords.readSetAside(&reader, sources: sources) { try body(record) }
        }
        try recent.forEach(body)
    }
}
