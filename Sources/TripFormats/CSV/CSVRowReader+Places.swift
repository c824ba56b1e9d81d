import TripKit

// Where a byte of the current row is (line and column, for messages), and the check that the row
// is UTF-8.

extension CSVRowReader {
    // MARK: - Places and encoding

    /// The line and column (1-based, in characters) of a window offset inside the current row.
    func position(of offset: Int) -> (line: Int, column: Int) {
        let buffer = window.pointer, filled = window.count
        var line = rowLine, lineStart = rowStart
        var p = rowStart
        while p < offset && p < filled {
            let c = buffer[p]
            if c == CSVRowReader.lf || (c == CSVRowReader.cr && !(p + 1 < filled && buffer[p + 1] == CSVRowReader.lf)) {
                line += 1; lineStart = p + 1
            }
            p += 1
        }
        var column = 1
        p = lineStart
        while p < offset && p < filled {
            if buffer[p] & 0xC0 != 0x80 { column += 1 }
            p += 1
        }
        return (line, column)
    }

    func describe(_ offset: Int) -> String {
        let c = window.pointer[offset]
        if c < 0x80 { return String(UnicodeScalar(c)).quotedForMessage }
        return "byte 0x" + String(c, radix: 16, uppercase: true)
    }

    /// Checks the current row is UTF-8: eight bytes at a time while they are ASCII.
    func validateUTF8() throws {
        var p = rowStart
        let end = nextRowStart
        let buffer = window.pointer
        let raw = UnsafeRawPointer(buffer)
        while p + 8 <= end {
            if raw.loadUnaligned(fromByteOffset: p, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            p += 8
        }
        while p < end {
            let c = buffer[p]
            if c < 0x80 { p += 1; continue }
            let length: Int, minimum: UInt32
            var scalar: UInt32
            switch c {
            case 0xC2...0xDF: length = 2; scalar = UInt32(c & 0x1F); minimum = 0x80
            case 0xE0...0xEF: length = 3; scalar = UInt32(c & 0x0F); minimum = 0x800
            case 0xF0...0xF4: length = 4; scalar = UInt32(c & 0x07); minimum = 0x10000
            default: try invalidUTF8(at: p)
            }
            guard p + length <= end else { try invalidUTF8(at: p) }
            for k in 1..<length {
                let d = buffer[p + k]
                guard d & 0xC0 == 0x80 else { try invalidUTF8(at: p) }
                scalar = scalar << 6 | UInt32(d & 0x3F)
            }
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { try invalidUTF8(at: p) }
            p += length
        }
    }

    private func invalidUTF8(at offset: Int) throws -> Never {
        let at = position(of: offset)
        let buffer = window.pointer, filled = window.count
        var shown: [String] = []
        var p = offset
        while p < filled && shown.count < 4 && (p == offset || buffer[p] & 0xC0 == 0x80) {
            shown.append(String(buffer[p], radix: 16, uppercase: true)); p += 1
        }
        throw TripError.data("\(name):\(at.line):\(at.column): invalid UTF-8 bytes " + shown.map { "0x" + $0 }.joined(separator: " "),
                             notes: ["if the input is in another encoding, name it: --input-encoding latin1, windows-1252, utf-16le or utf-16be"])
    }
}
