// A rejected trip's source text, for the rejects file: the input's bytes from the trip mapping's
// start (its first key, or its `{`) to the end of its last value (to the end of that value's line,
// so an empty value's `:` or a trailing comment stays; or to the `}` of a flow mapping).
//
// libyaml counts its marks in characters, and it parses on a thread of its own, ahead of the
// reader. So the parse thread keeps a copy of the input it hands libyaml (`YAMLSourceMap`), turns
// the marks of the events that start and end mappings into byte offsets, and sends the bytes along
// with its batches of events; the reader keeps them (`SourceWindow`) from the start of the open
// trip on, and makes a string of them only when the trip is rejected.

/// The input read while a batch of events was parsed.
struct YAMLBatchInput {
    var segments: [InputSegment] = []
    /// No offset in the batch's events, or in later ones, is below this.
    var lowMark: Int

    init(lowMark: Int) { self.lowMark = lowMark }
}

/// Where libyaml's scanner is: its character (its mark's index), the byte of that character, and
/// whether the input is UTF-8.
struct YAMLScanPosition {
    var character: Int
    var byte: Int
    var isUTF8: Bool
}

// MARK: - The parse thread's side

/// The parse thread's side: a copy of the input from a cursor on, and byte offsets for marks.
///
/// The cursor is a character and its byte; it only moves forward, to marks that no later event can
/// lie before. While no character of more than one byte lies between the cursor and the scanner, a
/// mark's byte is its character plus the cursor's difference; otherwise the characters between the
/// mark and the scanner (a few tokens of look-ahead) are counted back from the scanner's byte.
struct YAMLSourceMap {
    private static let captureCapacity = 1 << 16
    /// The bytes read since the last `seal`.
    private var capture = ByteStorage(capacity: YAMLSourceMap.captureCapacity)
    private var captureStart = 0
    /// Sealed segments still needed: from the one holding the cursor on.
    private var retained: [InputSegment] = []
    private var cursorCharacter = 0
    private var cursorByte = 0
    private var isStarted = false
    /// False once the input turns out not to be UTF-8 (libyaml also reads UTF-16): no offsets then.
    private var isEnabled = true
    /// The end (a character) of the last event that covered any characters: no later event lies
    /// before it, so the cursor can always move there.
    private var contentEnd = 0
    /// Whether `contentEnd` is at the start of a line (a block scalar ends after its line breaks).
    private var contentEndStartsLine = false
    /// The line of `contentEnd`.
    private var contentEndLine = 0

    /// How far behind the scanner the cursor may stay: as long as the longest text kept.
    private let maxKeptBytes: Int

    init(maxKeptBytes: Int) { self.maxKeptBytes = maxKeptBytes }

    /// The cursor's byte: no offset given after this is lower.
    var lowMark: Int { cursorByte }

    /// How many bytes were read since the last seal.
    var unsealedCount: Int { capture.count }

    /// Keeps bytes handed to libyaml.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if isEnabled { capture.append(bytes) }
    }

    /// Notes an event's marks: the extent of what the input has given so far.
    @inline(__always)
    mutating func noteEvent(start: Int, end: Int, endLine: Int, endColumn: Int) {
        if end > start {
            contentEnd = end
            contentEndLine = endLine
            contentEndStartsLine = endColumn == 0
        }
    }

    /// The byte offset of a mapping's start mark; -1 when unknown. (Out of line, as `mappingEnd`:
    /// the parser's loop over every event stays lean.)
    @inline(never)
    mutating func mappingStart(_ character: Int, _ scan: YAMLScanPosition) -> Int {
        offset(of: character, scan, moving: true)
    }

    /// The byte offset where a mapping's text ends; -1 when unknown. A flow mapping ends after its
    /// `}`; a block mapping's end mark is where the next token starts, so it ends instead at the end
    /// of the line of its last value, trailing blanks left out (unless that value, a block scalar,
    /// ended with its line).
    @inline(never)
    mutating func mappingEnd(start: Int, end: Int, endLine: Int, _ scan: YAMLScanPosition) -> Int {
        if end > start { return offset(of: end, scan, moving: true) }
        let content = offset(of: contentEnd, scan, moving: true)
        guard content >= 0, !contentEndStartsLine else { return content }
        // Most often the value ends its line.
        if content >= captureStart, content < captureStart + capture.count {
            let b = capture.pointer[content - captureStart]
            if b == 0x0A || b == 0x0D { return content }
        }
        // The next token bounds the line only when it is on it (`[a: 1, b: 2]`).
        let bound = endLine == contentEndLine ? offset(of: end, scan, moving: false) : Int.max
        guard bound > content, var run = run(containing: content) else { return content }
        var last = content, p = content
        while p < bound {
            if p == run.end {
                guard let next = self.run(containing: p) else { break }
                run = next
            }
            let b = run.pointer[p - run.start]
            if b == 0x0A || b == 0x0D { break }
            p += 1
            if b != 0x20 && b != 0x09 { last = p }
        }
        return last
    }

    /// Hands over the bytes read since the last seal, moves the cursor as far as it may go, and
    /// lets go of what lies before it.
    mutating func seal(_ scan: YAMLScanPosition) -> InputSegment? {
        guard isEnabled else { return nil }
        var segment: InputSegment? = nil
        if capture.count > 0 {
            let s = InputSegment(start: captureStart, bytes: capture)
            captureStart = s.end
            // Room for as much as the last batch read, so the next rarely grows (a copy).
            capture = ByteStorage(capacity: max(YAMLSourceMap.captureCapacity, s.bytes.count + s.bytes.count / 4))
            retained.append(s)
            segment = s
        }
        if contentEnd > cursorCharacter { _ = offset(of: contentEnd, scan, moving: true) }
        // Events that cover nothing (`- ` a million times) leave `contentEnd` behind: past the
        // length of a text worth keeping, jump to the scanner, losing at most the texts of the
        // few marks it has read ahead of, so memory stays bounded.
        if isStarted, scan.isUTF8, scan.byte - cursorByte > maxKeptBytes, scan.character >= cursorCharacter {
            cursorCharacter = scan.character
            cursorByte = scan.byte
            dropRetained()
        }
        return segment
    }

    // MARK: - Offsets

    /// The byte offset of a character at or after the cursor (and not after the scanner); -1 when
    /// unknown. `moving` moves the cursor there.
    private mutating func offset(of character: Int, _ scan: YAMLScanPosition, moving: Bool) -> Int {
        guard isEnabled, isStarted || start(scan), character >= cursorCharacter, character <= scan.character else { return -1 }
        let byte: Int
        if scan.byte - scan.character == cursorByte - cursorCharacter {
            byte = character + cursorByte - cursorCharacter
        } else {
            byte = countBack(from: scan.byte, characters: scan.character - character)
            if byte < cursorByte { return -1 }
        }
        if moving && character > cursorCharacter {
            cursorCharacter = character
            cursorByte = byte
            dropRetained()
        }
        return byte
    }

    /// Lets go of the sealed segments wholly before the cursor.
    private mutating func dropRetained() {
        var drop = 0
        while drop < retained.count, retained[drop].end <= cursorByte { drop += 1 }
        if drop > 0 { retained.removeFirst(drop) }
    }

    /// Sets the cursor at the input's first character, after a byte order mark; false when the
    /// input is not UTF-8 (nothing is kept then).
    private mutating func start(_ scan: YAMLScanPosition) -> Bool {
        guard scan.isUTF8 else {
            isEnabled = false
            capture = ByteStorage(capacity: 1)
            retained = []
            return false
        }
        isStarted = true
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        if (0..<3).allSatisfy({ byte(at: $0) == bom[$0] }) { cursorByte = 3 }
        return true
    }

    /// The offset of the character `characters` before the one starting at `end`, counting the
    /// bytes that start a character (a byte 10xxxxxx continues one); -1 when the bytes are not kept.
    private func countBack(from end: Int, characters: Int) -> Int {
        var remaining = characters, p = end
        var index = retained.count
        var runStart = captureStart, base = UnsafePointer(capture.pointer)
        while remaining > 0 {
            p -= 1
            while p < runStart {
                index -= 1
                guard index >= 0 else { return -1 }
                runStart = retained[index].start
                base = UnsafePointer(retained[index].bytes.pointer)
            }
            if base[p - runStart] & 0xC0 != 0x80 { remaining -= 1 }
        }
        return p
    }

    /// The kept bytes around an offset: the run that holds it.
    private func run(containing offset: Int) -> (start: Int, end: Int, pointer: UnsafePointer<UInt8>)? {
        if offset >= captureStart {
            guard offset < captureStart + capture.count else { return nil }
            return (captureStart, captureStart + capture.count, UnsafePointer(capture.pointer))
        }
        for s in retained.reversed() where s.start <= offset {
            return offset < s.end ? (s.start, s.end, UnsafePointer(s.bytes.pointer)) : nil
        }
        return nil
    }

    private func byte(at offset: Int) -> UInt8? {
        run(containing: offset).map { $0.pointer[offset - $0.start] }
    }
}
