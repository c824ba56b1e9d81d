import TripKit

// Parsing one row inside the window: quoted and unquoted cells, the limits, and the few cells
// decoded into `scratch` (doubled quotes, TSV escapes).

extension CSVRowReader {
    /// Parses the row at `rowStart` if the window holds all of it.
    func parseRow() throws -> Outcome {
        let b = window.pointer, e = window.count
        var p = rowStart
        if p >= e { return atEOF ? .end : .needMore }
        if b[p] == CSVRowReader.lf { return .blank(p + 1) }
        if b[p] == CSVRowReader.cr {
            if p + 1 < e { return .blank(b[p + 1] == CSVRowReader.lf ? p + 2 : p + 1) }
            return atEOF ? .blank(p + 1) : .needMore
        }
        cellCount = 0
        scratch.removeAll()
        rowLine = nextLine
        var breaks = 0   // line breaks inside quoted cells
        let separator = dialect.separator
        let stops = self.stops
        while true {
            let cellStart = p
            var cell: Cell
            if !dialect.usesEscapes, p < e, b[p] == CSVRowReader.quote {
                // A quoted cell: up to a quote not followed by another.
                var q = p + 1
                var doubled = false
                while true {
                    while q < e {
                        let c = b[q]
                        if c == CSVRowReader.quote { break }
                        if c == CSVRowReader.lf {
                            breaks += 1
                        } else if c == CSVRowReader.cr {
                            // CR LF counts once, at the LF.
                            if q + 1 < e {
                                if b[q + 1] != CSVRowReader.lf { breaks += 1 }
                            } else if !atEOF {
                                return try needMore(cellStart)
                            } else {
                                breaks += 1
                            }
                        }
                        q += 1
                    }
                    if q >= e {
                        if !atEOF { return try needMore(cellStart) }
                        let opened = position(of: cellStart)
                        let at = position(of: e)
                        throw TripError.data("\(name):\(at.line):\(at.column): unterminated quoted field (opened at \(opened.line):\(opened.column))")
                    }
                    // b[q] is a quote.
                    if q + 1 >= e && !atEOF { return try needMore(cellStart) }
                    if q + 1 < e && b[q + 1] == CSVRowReader.quote { doubled = true; q += 2; continue }
                    break
                }
                let contentStart = p + 1, contentEnd = q
                p = q + 1
                if p < e {
                    let c = b[p]
                    if c != separator && c != CSVRowReader.lf && c != CSVRowReader.cr {
                        let at = position(of: p)
                        throw TripError.data("\(name):\(at.line):\(at.column): expected '\(Character(Unicode.Scalar(separator)))' or a line end after a closing quote, found \(describe(p))")
                    }
                }
                if contentEnd - contentStart > limits.maxFieldBytes { try fieldTooLong(cellStart) }
                if doubled {
                    scratch.reserve(contentEnd - contentStart)
                    let s = scratch.count
                    var out = scratch.pointer + s
                    var i = contentStart
                    while i < contentEnd {
                        let c = b[i]
                        out.pointee = c
                        out += 1
                        i += (c == CSVRowReader.quote) ? 2 : 1
                    }
                    scratch.count = out - scratch.pointer
                    cell = Cell(start: s, end: scratch.count, isQuoted: true, isDecoded: true, rawStart: cellStart)
                } else {
                    cell = Cell(start: contentStart, end: contentEnd, isQuoted: true, isDecoded: false, rawStart: cellStart)
                }
            } else {
                // An unquoted cell: up to a separator or a line break.
                var escaped = false
                while p < e {
                    let s = stops[Int(b[p])]
                    if s != 0 {
                        if s == 1 { break }
                        escaped = true
                    }
                    p += 1
                }
                if p >= e && !atEOF { return try needMore(cellStart) }
                if p - cellStart > limits.maxFieldBytes { try fieldTooLong(cellStart) }
                if escaped {
                    let s = scratch.count
                    unescape(from: cellStart, to: p)
                    cell = Cell(start: s, end: scratch.count, isQuoted: false, isDecoded: true, rawStart: cellStart)
                } else {
                    cell = Cell(start: cellStart, end: p, isQuoted: false, isDecoded: false, rawStart: cellStart)
                }
            }
            if cellCount == cellCapacity { try growCells(at: cellStart) }
            cells[cellCount] = cell
            cellCount += 1
            // p is at a separator, a line break, or the end of input.
            if p >= e {
                rowEnd = p; nextRowStart = p
                break
            }
            let c = b[p]
            if c == separator { p += 1; continue }
            rowEnd = p
            if c == CSVRowReader.lf {
                nextRowStart = p + 1
            } else {
                if p + 1 >= e && !atEOF { return try needMore(rowStart) }
                nextRowStart = (p + 1 < e && b[p + 1] == CSVRowReader.lf) ? p + 2 : p + 1
            }
            breaks += 1
            break
        }
        nextLine += breaks
        return .row
    }

    /// Asks for more input, unless the row or cell is already past the limits.
    func needMore(_ cellStart: Int) throws -> Outcome {
        if window.count - cellStart > limits.maxFieldBytes { try fieldTooLong(cellStart) }
        if window.count - rowStart > limits.maxRowBytes {
            throw TripError.data("\(name):\(nextLine): a row longer than \(limits.maxRowBytes >> 20) MiB")
        }
        return .needMore
    }

    private func fieldTooLong(_ cellStart: Int) throws -> Never {
        let at = position(of: cellStart)
        throw TripError.data("\(name):\(at.line):\(at.column): a field longer than \(limits.maxFieldBytes >> 20) MiB")
    }

    private func growCells(at cellStart: Int) throws {
        if cellCount >= limits.maxColumns {
            let at = position(of: cellStart)
            throw TripError.data("\(name):\(at.line):\(at.column): more than \(limits.maxColumns) columns in a row")
        }
        let bigger = min(cellCapacity * 2, limits.maxColumns)
        let new = UnsafeMutablePointer<Cell>.allocate(capacity: bigger)
        new.moveInitialize(from: cells, count: cellCount)
        cells.deallocate()
        cells = new
        cellCapacity = bigger
    }

    /// Decodes a TSV cell's escapes into `scratch`; an unknown escape is kept as it is.
    private func unescape(from start: Int, to end: Int) {
        scratch.reserve(end - start)
        let buffer = window.pointer
        var out = scratch.pointer + scratch.count
        func put(_ c: UInt8) { out.pointee = c; out += 1 }
        defer { scratch.count = out - scratch.pointer }
        var i = start
        while i < end {
            let c = buffer[i]
            if c == CSVRowReader.backslash, i + 1 < end {
                switch buffer[i + 1] {
                case UInt8(ascii: "t"): put(9); i += 2; continue
                case UInt8(ascii: "n"): put(10); i += 2; continue
                case UInt8(ascii: "r"): put(13); i += 2; continue
                case UInt8(ascii: "\\"): put(92); i += 2; continue
                default: break
                }
            }
            put(c)
            i += 1
        }
    }
}
