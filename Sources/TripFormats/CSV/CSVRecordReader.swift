import TripKit

/// Reads trips from a CSV or TSV input: a header, then one row per trip.
///
/// The header is resolved once into a `CSVColumnPlan`; each row is then handed to the record builder
/// by position. A row whose cell count differs from the header's is a bad record, yielded as
/// `.rejected` with its text; syntax errors (an unterminated quote, bytes that are not UTF-8) are thrown.
///
/// An empty cell, quoted (`""`) or not, is the same: RFC 4180 tells no difference, nor do Python's csv
/// module, Miller or csvkit. A group of cells that are all empty is no object (no accommodation, no
/// item); in a present column, an empty cell of a text attribute is the empty string, except a trip's
/// required text (name, destination), where it is no value, so the record is bad. A required field
/// is missing only when its column is absent or, for those two, empty. Where the header is quoted
/// throughout, an unquoted `NA` is a missing value (R's `write.csv`), and an unnamed first column
/// holds row labels (R's and pandas' row names) and is not read.
struct CSVRecordReader: RecordReader {
    private let rows: CSVRowReader
    private var builder: RecordBuilder
    private var plan: CSVColumnPlan?
    private var record = 0
    private var finished = false
    private let safeFormulas: Bool

    init(rows: CSVRowReader, format: Format, options: ReadOptions, compression: Compression? = nil) {
        self.rows = rows
        builder = RecordBuilder(source: rows.name, format: format.rawValue, options: options)
        builder.compression = compression?.rawValue
        safeFormulas = options.csvSafeFormulas
    }

    var detection: Detection { builder.detection }

    /// The names a trip CSV's column can start with (before its first `.`), in any version: what
    /// tells the separator of a header that declares none.
    static func knownColumnRoots(_ vocabulary: SchemaVocabulary) -> Set<String> {
        Set(vocabulary.entities[vocabulary.rootEntity].fields.map(\.name))
    }

    mutating func next() throws -> ReadItem? {
        if finished { return nil }
        if plan == nil {
            guard try rows.nextRow() else { finished = true; return nil }
            let rows = self.rows
            rows.readsNAAsMissing = rows.allQuoted
            plan = try CSVColumnPlan(header: rows.strings, vocabulary: builder.vocabulary, options: builder.options) { column in
                let at = rows.position(ofCell: min(column, max(rows.cellCount - 1, 0)))
                return "\(rows.name):\(at.line):\(at.column)"
            }
        }
        while true {
            guard try rows.nextRow() else { finished = true; return nil }
            var allEmpty = true
            for i in 0..<rows.cellCount where !rows.isBlank(i) { allEmpty = false; break }
            // A row of empty cells (a spreadsheet's trailing `,,,`, or `"",""` from a writer that
            // quotes everything) holds no trip.
            if allEmpty { continue }
            record += 1
            return read(plan!)
        }
    }

    private mutating func read(_ plan: CSVColumnPlan) -> ReadItem {
        let origin = RecordOrigin(source: rows.name, record: record, line: rows.rowLine)
        guard rows.cellCount == plan.width else {
            let reason = "expected \(plan.width) cells as the header has, found \(rows.cellCount)"
            return .rejected(SetAsideRecord(origin: origin, reason: reason, text: rows.rawText))
        }
        builder.beginRecord(origin: origin)
        // The builder's mark is the cell's index: made a line and column only for a rejection.
        for s in plan.root {
            builder.mark = s.column
            builder.set(s.field, token(s))
        }
        for (column, field) in plan.whole {
            builder.mark = column
            // Miller flattens an empty list to `[]`, an empty map to `{}` and null to `null`.
            if rows.isBlank(column) || rows.cellEquals(column, "[]") || rows.cellEquals(column, "{}")
                || rows.cellEquals(column, "null") {
                builder.markPresent(field)
            } else {
                builder.set(field, .text(rows.string(column)))
            }
        }
        for g in plan.groups {
            var empty = true
            for s in g.scalars where !rows.isBlank(s.column) { empty = false; break }
            if empty { continue }
            builder.mark = g.scalars.first?.column ?? RecordBuilder.noMark
            builder.beginObject(g.relationship)
            for s in g.scalars {
                builder.mark = s.column
                builder.set(s.field, token(s))
            }
            builder.endObject()
        }
        for u in plan.unknown {
            builder.mark = u.column
            builder.unknownField(u.name)
        }
        for column in plan.padding where !rows.isBlank(column) {
            builder.mark = column
            builder.unknownField("(column \(column + 1), unnamed)")
        }
        let item = builder.endRecord(text: nil)
        if case .rejected(var rejection) = item {
            let cell = builder.rejectionMark
            if cell >= 0, cell < rows.cellCount { rejection.locate(at: rows.position(ofCell: cell)) }
            rejection.text = rows.rawText
            return .rejected(rejection)
        }
        return item
    }

    @inline(__always)
    private func token(_ s: CSVColumnPlan.Scalar) -> ScalarToken {
        rows.token(s.column, emptyIsNull: s.emptyIsNull, isBool: s.isBool, safeFormulas: safeFormulas)
    }
}
