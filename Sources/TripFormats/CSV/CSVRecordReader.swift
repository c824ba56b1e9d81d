import TripKit

/// Reads trips from a CSV or TSV input: a header, then one row per trip.
///
/// The header is resolved once into a `CSVColumnPlan`; each row is then handed to the record builder
/// by position. A row whose cell count differs from the header's is a bad record, yielded as
/// `.rejected` with its text; syntax errors (an unterminated quote, bytes that are not UTF-8) are thrown.
///
/// Empty cells mean "no value": an empty accommodation group is no accommodation, an empty item group is
/// no item. In CSV a quoted empty cell (`""`) is the empty string; in TSV, which has no quoting, an
/// empty cell of a string field is the empty string.
struct CSVRecordReader: RecordReader {
    private let rows: CSVRowReader
    private var builder: RecordBuilder
    private var plan: CSVColumnPlan?
    private var record = 0
    private var finished = false
    private let emptyIsNull: Bool

    init(rows: CSVRowReader, format: Format, options: ReadOptions) {
        self.rows = rows
        builder = RecordBuilder(source: rows.name, format: format.rawValue, options: options)
        emptyIsNull = !rows.dialect.usesEscapes
    }

    var detection: Detection { builder.detection }

    mutating func next() throws -> ReadItem? {
        if finished { return nil }
        if plan == nil {
            guard try rows.nextRow() else { finished = true; return nil }
            if try isSeparatorLine() {
                guard try rows.nextRow() else { finished = true; return nil }
            }
            let rows = self.rows
            plan = try CSVColumnPlan(header: rows.strings, vocabulary: builder.vocabulary, options: builder.options) { column in
                let at = rows.position(ofCell: min(column, max(rows.cellCount - 1, 0)))
                return "\(rows.name):\(at.line):\(at.column)"
            }
        }
        while true {
            guard try rows.nextRow() else { finished = true; return nil }
            var allEmpty = true
            for i in 0..<rows.cellCount where !rows.isEmpty(i) || rows.isQuoted(i) { allEmpty = false; break }
            // A row of empty cells (a spreadsheet's trailing `,,,`) holds no trip.
            if allEmpty { continue }
            record += 1
            return read(plan!)
        }
    }

    /// Excel's `sep=,` first line: skipped when it names this format's separator, an error otherwise.
    private func isSeparatorLine() throws -> Bool {
        let first = rows.bytes(0)
        guard first.count >= 4, first.count <= 5, first.starts(with: Array("sep=".utf8)) else { return false }
        let separator: UInt8
        if first.count == 5, rows.cellCount == 1 { separator = first[4] }
        else if first.count == 4, rows.cellCount == 2, rows.isEmpty(1) { separator = rows.dialect.separator }
        else { return false }
        guard separator == rows.dialect.separator else {
            throw TripError.data("\(rows.name):\(rows.rowLine):5: the file declares the separator \(String(UnicodeScalar(separator)).quotedForMessage), but \(rows.dialect.usesEscapes ? "TSV" : "CSV") is read with \(String(UnicodeScalar(rows.dialect.separator)).quotedForMessage)")
        }
        return true
    }

    private mutating func read(_ plan: CSVColumnPlan) -> ReadItem {
        let origin = RecordOrigin(source: rows.name, record: record, line: rows.rowLine)
        guard rows.cellCount == plan.width else {
            let reason = "expected \(plan.width) cells as the header has, found \(rows.cellCount)"
            return .rejected(Rejection(origin: origin, reason: reason, text: rows.rawText))
        }
        builder.beginRecord(origin: origin)
        for s in plan.root { builder.set(s.field, token(s)) }
        for (column, field) in plan.whole {
            // Miller flattens an empty list to `[]`, an empty map to `{}` and null to `null`.
            if rows.isEmpty(column) || rows.cellEquals(column, "[]") || rows.cellEquals(column, "{}")
                || rows.cellEquals(column, "null") {
                builder.markPresent(field)
            } else {
                builder.set(field, .text(rows.string(column)))
            }
        }
        for g in plan.groups {
            var empty = true
            for s in g.scalars where !rows.isEmpty(s.column) || rows.isQuoted(s.column) { empty = false; break }
            if empty { continue }
            builder.beginObject(g.relationship)
            for s in g.scalars { builder.set(s.field, token(s)) }
            builder.endObject()
        }
        for u in plan.unknown { builder.unknownField(u.name) }
        for column in plan.padding where !rows.isEmpty(column) || rows.isQuoted(column) {
            builder.unknownField("(column \(column + 1), unnamed)")
        }
        let item = builder.endRecord(text: nil)
        if case .rejected(var rejection) = item {
            rejection.text = rows.rawText
            return .rejected(rejection)
        }
        return item
    }

    @inline(__always)
    private func token(_ s: CSVColumnPlan.Scalar) -> ScalarToken {
        if rows.isEmpty(s.column) {
            if rows.isQuoted(s.column) || (!emptyIsNull && s.isString) { return .text("") }
            return .null
        }
        if s.isBool {
            // What the writer writes, told without a String; other spellings go to the builder as text.
            if rows.cellEquals(s.column, "true") { return .bool(true) }
            if rows.cellEquals(s.column, "false") { return .bool(false) }
        }
        return .text(rows.string(s.column))
    }
}
