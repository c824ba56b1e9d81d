import TripKit

/// Turns values into CSV or TSV cells: quoting (CSV) or escaping (TSV) only what must be.
struct CSVCellEncoder {
    let dialect: CSVDialect
    /// Prefix `'` to a string starting with `=`, `+`, `-`, `@` or `'` (`CSVDialect.isGuardedByQuote`).
    let safeFormulas: Bool
    /// Whether the separator is a byte dates or numbers are written with (`--csv-delimiter :`, `-`,
    /// `.`, a digit…), so that those cells are quoted where they hold it. Decided once: a lookup per
    /// date cell cost 1 % of JSON → CSV.
    private let separatorInValues: Bool

    init(dialect: CSVDialect, safeFormulas: Bool) {
        self.dialect = dialect; self.safeFormulas = safeFormulas
        separatorInValues = !dialect.usesEscapes && Array("0123456789-+:.TZ".utf8).contains(dialect.separator)
    }

    private static let quote = UInt8(ascii: "\"")

    /// Appends a value's cell. `marksEmpty`: an empty string is written `""` (CSV), so that it reads
    /// back as the empty string and not as a missing value.
    func append(_ value: Value, marksEmpty: Bool, to out: inout [UInt8]) {
        switch value {
        case .null: return
        case .string(var s): s.withUTF8 { appendText($0, marksEmpty: marksEmpty, to: &out) }
        case .date(let t):
            if separatorInValues { appendHoldingSeparator(value, to: &out) } else { t.appendISO8601(to: &out) }
        case .bool(let b): out.append(contentsOf: b ? CSVCellEncoder.trueBytes : CSVCellEncoder.falseBytes)
        case .int(let n):
            if separatorInValues { appendHoldingSeparator(value, to: &out) } else { out.append(contentsOf: String(n).utf8) }
        }
    }

    /// A date or number written as text, quoted where it holds the separator (kept out of `append`,
    /// so that its common path stays small enough to inline).
    @inline(never)
    private func appendHoldingSeparator(_ value: Value, to out: inout [UInt8]) {
        var bytes: [UInt8] = []
        switch value {
        case .date(let t): t.appendISO8601(to: &bytes)
        case .int(let n): bytes.append(contentsOf: String(n).utf8)
        default: return
        }
        bytes.withUnsafeBufferPointer { appendText($0, to: &out) }
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)

    /// Appends a text cell.
    func appendText(_ text: UnsafeBufferPointer<UInt8>, marksEmpty: Bool = false, to out: inout [UInt8]) {
        let formula = safeFormulas && !text.isEmpty && CSVDialect.isGuardedByQuote(text[0])
        if dialect.usesEscapes {
            if formula { out.append(UInt8(ascii: "'")) }
            for c in text {
                switch c {
                case 9: out.append(92); out.append(UInt8(ascii: "t"))
                case 10: out.append(92); out.append(UInt8(ascii: "n"))
                case 13: out.append(92); out.append(UInt8(ascii: "r"))
                case 92: out.append(92); out.append(92)
                default: out.append(c)
                }
            }
            return
        }
        if text.isEmpty {
            if marksEmpty { out.append(CSVCellEncoder.quote); out.append(CSVCellEncoder.quote) }
            return
        }
        var needsQuotes = false
        let separator = dialect.separator
        for c in text where c == separator || c == CSVCellEncoder.quote || c == 10 || c == 13 {
            needsQuotes = true; break
        }
        if !needsQuotes {
            if formula { out.append(UInt8(ascii: "'")) }
            out.append(contentsOf: text)
            return
        }
        out.append(CSVCellEncoder.quote)
        if formula { out.append(UInt8(ascii: "'")) }
        for c in text {
            out.append(c)
            if c == CSVCellEncoder.quote { out.append(c) }
        }
        out.append(CSVCellEncoder.quote)
    }
}

/// The columns of a schema's trips, in Miller's flatten convention: the trip's attributes in
/// declaration order (transient ones skipped), then each to-one relationship's attributes
/// (`livingAccommodation.address`), then each list's attributes for positions 1 to the longest list
/// (`bucketList.1.title`, ...).
struct CSVRowLayout: @unchecked Sendable {  // immutable once built
    struct Attributes {
        /// Slots of persisted attributes, and whether an empty string there must be marked.
        var slots: [(slot: Int, marksEmpty: Bool)]
        var names: [String]
    }
    var root: Attributes
    /// Relationship slot, attributes of its destination.
    var toOne: [(slot: Int, name: String, attributes: Attributes)] = []
    /// Relationship slot, attributes of its destination, and the longest list.
    var toMany: [(slot: Int, name: String, attributes: Attributes, count: Int)] = []

    init(schema: any VersionedSchema.Type, objects: [ModelObject]) {
        var longest = [Int](repeating: 0, count: schema.rootEntity.relationships.count)
        for o in objects {
            for (i, r) in o.relationships.enumerated() where i < longest.count {
                longest[i] = max(longest[i], r.objects.count)
            }
        }
        self.init(schema: schema, longest: longest)
    }

    /// `longest`: per root relationship, the most objects any trip has there.
    init(schema: any VersionedSchema.Type, longest: [Int]) {
        root = CSVRowLayout.attributes(of: schema.rootEntity)
        for (i, r) in schema.rootEntity.relationships.enumerated() {
            guard let destination = schema.entity(r.destination) else { continue }
            let attributes = CSVRowLayout.attributes(of: destination)
            if r.isToMany {
                toMany.append((i, r.name, attributes, i < longest.count ? longest[i] : 0))
            } else {
                toOne.append((i, r.name, attributes))
            }
        }
    }

    static func attributes(of entity: Entity) -> Attributes {
        var slots: [(Int, Bool)] = [], names: [String] = []
        for (i, a) in entity.attributes.enumerated() where !a.isTransient {
            // A required string (no default) must tell "" from a missing value.
            slots.append((i, a.type == .string && a.defaultValue == nil))
            names.append(a.name)
        }
        return Attributes(slots: slots, names: names)
    }

    /// The header's names.
    var header: [String] {
        var names = root.names
        for r in toOne { names += r.attributes.names.map { "\(r.name).\($0)" } }
        for r in toMany where r.count > 0 {
            for n in 1...r.count { names += r.attributes.names.map { "\(r.name).\(n).\($0)" } }
        }
        return names
    }
}

/// Writes trips as CSV or TSV, one row per trip.
///
/// The header's width depends on the longest bucket list. Told it up front (`expect`, as the
/// pipeline does), the writer streams each row as it comes; otherwise it keeps the trips it is given
/// and writes them at `finish()`. Either way into a temporary file that is renamed over the target:
/// the output is complete or absent.
final class CSVRecordWriter: RecordWriter, RecordEncoding {
    private let output: ByteOutput
    private let options: WriteOptions
    private let encoder: CSVCellEncoder
    private var objects: [ModelObject] = []
    /// Set once the header is written: rows then stream.
    private var layout: CSVRowLayout?
    private var line: [UInt8] = []
    private var headerWritten = false

    init(_ location: OutputLocation, dialect: CSVDialect, options: WriteOptions) throws {
        output = try ByteOutput(location, compression: options.compression)
        self.options = options
        encoder = CSVCellEncoder(dialect: dialect, safeFormulas: options.csvSafeFormulas)
    }

    var needsShape: Bool { true }

    func expect(_ shape: OutputShape) {
        guard layout == nil, objects.isEmpty else { return }
        layout = CSVRowLayout(schema: options.schema, longest: shape.longestRelationships)
    }

    func write(_ object: ModelObject) throws {
        guard let layout else { objects.append(object); return }
        if !headerWritten { try writeHeader(layout) }
        line.removeAll(keepingCapacity: true)
        CSVRowWriting.appendRow(object, layout: layout, encoder: encoder, to: &line)
        line.append(10)
        try output.write(line)
    }

    /// Rows can be formatted apart once the shape is known (`expect`).
    var encodesApart: Bool { layout != nil }

    /// Each trip's row and line break.
    func makeEncoder() -> @Sendable (_ trip: (Int) -> ModelObject, _ range: Range<Int>, _ out: inout [UInt8]) -> Void {
        let encoder = self.encoder
        let layout = self.layout ?? CSVRowLayout(schema: options.schema, longest: [])
        return { trip, range, out in
            for i in range {
                CSVRowWriting.appendRow(trip(i), layout: layout, encoder: encoder, to: &out)
                out.append(10)
            }
        }
    }

    func writeEncoded(_ bytes: [UInt8], trips: Int) throws {
        guard let layout else { throw TripError.usage("the CSV writer takes formatted rows only once told the shape (expect)") }
        if !headerWritten { try writeHeader(layout) }
        try output.write(bytes)
    }

    private func writeHeader(_ layout: CSVRowLayout) throws {
        line.removeAll(keepingCapacity: true)
        line.reserveCapacity(1 << 12)
        let separator = encoder.dialect.separator
        for (i, name) in layout.header.enumerated() {
            if i > 0 { line.append(separator) }
            var n = name
            n.withUTF8 { encoder.appendText($0, to: &line) }
        }
        line.append(10)
        try output.write(line)
        headerWritten = true
    }

    func finish() throws {
        if let layout {
            if !headerWritten { try writeHeader(layout) }
        } else {
            let layout = CSVRowLayout(schema: options.schema, objects: objects)
            self.layout = layout
            try writeHeader(layout)
            for object in objects {
                try write(object)
            }
            objects = []
        }
        try output.commit()
    }

    func abort() {
        objects = []
        output.discard()
    }
}

enum CSVRowWriting {
    /// Appends one trip's cells, without the line break.
    static func appendRow(_ object: ModelObject, layout: CSVRowLayout, encoder: CSVCellEncoder, to line: inout [UInt8]) {
        let separator = encoder.dialect.separator
        var first = true
        func cells(_ o: ModelObject?, _ attributes: CSVRowLayout.Attributes) {
            for (slot, marksEmpty) in attributes.slots {
                if first { first = false } else { line.append(separator) }
                if let o, slot < o.attributes.count { encoder.append(o.attributes[slot], marksEmpty: marksEmpty, to: &line) }
            }
        }
        cells(object, layout.root)
        for r in layout.toOne {
            let related = r.slot < object.relationships.count ? object.relationships[r.slot].objects.first : nil
            cells(related, r.attributes)
        }
        for r in layout.toMany where r.count > 0 {
            let list = r.slot < object.relationships.count ? object.relationships[r.slot].objects : []
            for n in 0..<r.count { cells(n < list.count ? list[n] : nil, r.attributes) }
        }
    }
}
