internal import CLibXML2
import TripKit

/// What the XML reader knows while libxml2 parses: the builder, the open elements, the text being
/// gathered, the trips ready to hand out, and the first error. The SAX2 callbacks
/// (`XMLReadState+SAX.swift`) call its event methods (`XMLReadState+Events.swift`).
struct XMLReadState {
    let name: String
    let options: ReadOptions
    var builder: RecordBuilder
    var ctxt: xmlParserCtxtPtr?

    // What the pull side sees.
    var ready: [ReadItem?] = []
    var readyHead = 0
    /// The first error; once set, every event is ignored and `next()` throws it.
    var failure: TripError?

    // The event state.
    var frames: [XMLFrame] = []
    var depth = 0
    var skipDepth = 0
    let text = XMLTextBuffer()
    var textFailed = false
    var recordCount = 0
    var recordFailed = false
    var unknownCount = 0
    var rootClosed = false
    var names: XMLNameResolver
    /// Where the DOCTYPE's `>` was, when it had no internal subset (see `checkDoctypeEnd`).
    var doctypeClose: Int?
    /// Whether libxml2 is being told the input has ended.
    var terminating = false
    /// The open trip's text, for the rejects file (`XMLReadState+RecordText.swift`).
    var recordText = XMLRecordText()

    init(name: String, options: ReadOptions) {
        self.name = name
        self.options = options
        builder = RecordBuilder(source: name, format: "xml", options: options)
        names = XMLNameResolver(builder.vocabulary)
        frames.reserveCapacity(8)
    }

    /// The next trip or rejection a chunk completed, if any.
    mutating func takeReady() -> ReadItem? {
        guard readyHead < ready.count else { return nil }
        // Moved out, not copied: no reference counting for the trip's arrays and strings.
        let item = ready[readyHead].take()
        readyHead += 1
        if readyHead == ready.count { ready.removeAll(keepingCapacity: true); readyHead = 0 }
        return item
    }

    /// What libxml2's return status and the end of input say, when no event said it first.
    mutating func checkAfterChunk(status: Int32, endOfInput: Bool) {
        guard failure == nil else { return }
        // libxml2 2.9.14 drops a partial character at the end of a converted input (an odd
        // byte of UTF-16) without a word: what is left unconverted is a truncated character.
        if endOfInput, let buffer = ctxt?.pointee.input?.pointee.buf, let raw = buffer.pointee.raw, xmlBufUse(raw) > 0 {
            failure = .data("\(place(nil)): the input ends inside a character (\(xmlBufUse(raw)) bytes left over in its encoding)")
        } else if status != 0 {
            failure = .data("\(place(nil)): not well-formed XML (libxml2 error \(status))")
        } else if endOfInput, !rootClosed {
            failure = .data("\(name): unexpected end of input inside the document")
        }
    }

    // MARK: - Errors

    /// Takes libxml2's first error (warnings are ignored) as the read's failure, placed `FILE:LINE:COLUMN`.
    mutating func note(_ error: UnsafePointer<xmlError>) {
        guard failure == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        var message = error.pointee.message.map { String(cString: $0) } ?? "error \(error.pointee.code)"
        while let last = message.last, last == "\n" || last == " " { message.removeLast() }
        var notes: [String] = []
        if message.hasPrefix("Input is not proper UTF-8") {
            // libxml2 adds the bytes on a second line.
            let bytes = message.split(separator: "\n").dropFirst().flatMap { $0.split(separator: " ") }
                .filter { $0.hasPrefix("0x") }.joined(separator: " ")
            message = "input is not valid UTF-8, found the bytes \(bytes)"
            notes = ["a document in another encoding must say so: <?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>"]
        }
        message = message.split(separator: "\n").joined(separator: "; ")
        if let first = message.first, first.isUppercase, message.dropFirst().first?.isLowercase ?? true {
            message = first.lowercased() + message.dropFirst()
        }
        let line = Int(error.pointee.line), column = Int(error.pointee.int2)
        let place = line > 0 ? "\(name):\(line):\(max(column, 1))" : name
        // At the end of input, libxml2's push parser says "extra content" for a document that is
        // empty or not closed: say what is missing instead.
        if terminating, error.pointee.code == Int32(XML_ERR_DOCUMENT_END.rawValue), !rootClosed {
            if let innermost = frames.last {
                message = "unexpected end of input inside <\(String(cString: innermost.name))>"
            } else if depth == 0 {
                message = "expected a root element, found the end of input"
            }
        }
        failure = .data("\(place): \(XMLReadState.shortened(message))", notes: notes)
    }

    /// A message with every overlong word (a 10 KB name, a long value) cut to 40 characters.
    static func shortened(_ message: String) -> String {
        guard message.count > 120 else { return message }
        return message.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.count > 40 ? word.prefix(37) + "..." : word
        }.joined(separator: " ")
    }

    /// Ends the read with an error of our own and stops libxml2 at once.
    mutating func stop(_ message: String, notes: [String] = []) {
        guard failure == nil else { return }
        failure = .data(message, notes: notes)
        if let ctxt { xmlStopParser(ctxt) }
    }

    // MARK: - Places

    /// `FILE:LINE:COLUMN` of a point in libxml2's input buffer, or of the parser's position for nil.
    func place(_ pointer: UnsafePointer<UInt8>?) -> String {
        place(position(pointer))
    }

    func place(_ position: (line: Int, column: Int)) -> String {
        position.line > 0 ? "\(name):\(position.line):\(position.column)" : name
    }

    /// The line and column of a byte in libxml2's current input buffer, counted back from the
    /// parser's own position (libxml2 counts columns in characters, from 1).
    func position(_ pointer: UnsafePointer<UInt8>?) -> (line: Int, column: Int) {
        guard let ctxt, let input = ctxt.pointee.input else { return (0, 0) }
        let line = Int(input.pointee.line), column = Int(input.pointee.col)
        guard let target = pointer, let base = input.pointee.base, let cur = input.pointee.cur,
              target >= base, target <= cur else { return (line, column) }
        var characters = 0, newlines = 0
        var p = target
        while p < cur {
            if p.pointee == 0x0A { newlines += 1 }
            if p.pointee & 0xC0 != 0x80 { characters += 1 }
            p += 1
        }
        if newlines == 0 { return (line, max(1, column - characters)) }
        // The target is on an earlier line: count from that line's start, if it is still in the buffer.
        var q = target, before = 0
        while q > base, (q - 1).pointee != 0x0A {
            q -= 1
            if q.pointee & 0xC0 != 0x80 { before += 1 }
        }
        return (line - newlines, before + 1)
    }

    /// The line and column of `bytes[index]` in a run of text libxml2 just delivered. libxml2 has
    /// counted lines and columns to the end of the run when it delivers it (its buffer position
    /// may lag behind), so count back from there.
    func position(ofText bytes: UnsafePointer<UInt8>, count: Int, at index: Int) -> (line: Int, column: Int) {
        guard let ctxt, let input = ctxt.pointee.input else { return (0, 0) }
        let line = Int(input.pointee.line), column = Int(input.pointee.col)
        var characters = 0, newlines = 0
        for k in index..<count {
            if bytes[k] == 0x0A { newlines += 1 }
            if bytes[k] & 0xC0 != 0x80 { characters += 1 }
        }
        if newlines == 0 { return (line, max(1, column - characters)) }
        // The start of the target's line: earlier in the run, or before it in libxml2's buffer.
        var before = 0, k = index
        while k > 0, bytes[k - 1] != 0x0A {
            k -= 1
            if bytes[k] & 0xC0 != 0x80 { before += 1 }
        }
        if k == 0, let base = input.pointee.base, let end = input.pointee.end, bytes >= base, bytes < end {
            var p = bytes
            while p > base, (p - 1).pointee != 0x0A {
                p -= 1
                if p.pointee & 0xC0 != 0x80 { before += 1 }
            }
        }
        return (line - newlines, before + 1)
    }

    /// The start of the markup declaration being reported (`<!ENTITY`…), for its place.
    func declarationStart(_ keyword: String) -> UnsafePointer<UInt8>? {
        guard let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base,
              let cur = input.pointee.cur else { return nil }
        let pattern = Array("<!\(keyword)".utf8)
        var p = cur
        while p > base {
            p -= 1
            if p.pointee == 0x3C, cur - p >= pattern.count, (0..<pattern.count).allSatisfy({ p[$0] == pattern[$0] }) { return p }
        }
        return nil
    }

    /// The offset in the whole input (after conversion to UTF-8) of the parser's position.
    func inputOffset() -> Int? {
        guard let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base, let cur = input.pointee.cur else { return nil }
        return Int(input.pointee.consumed) + (cur - base)
    }

    /// Where the start tag being reported began: libxml2 reports a start tag with its position at
    /// the tag's closing `>`, and no `<` can occur inside a tag, so the tag starts at the last `<`.
    func tagStart() -> UnsafePointer<UInt8>? {
        guard let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base,
              var p = input.pointee.cur else { return nil }
        while p > base {
            p -= 1
            if p.pointee == 0x3C { return p }
        }
        return nil
    }
}

/// The text of the field element being read, gathered from libxml2's pieces: a plain block of bytes
/// (an array's append and keep-capacity removal cost several times the copy at a field's size).
final class XMLTextBuffer {
    private(set) var count = 0
    private let storage = ByteStorage(capacity: 256)

    /// The bytes gathered so far, valid until the next change.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage.pointer, count: count) }

    @inline(__always)
    func append(_ bytes: UnsafePointer<UInt8>, count n: Int) {
        if count + n > storage.capacity { storage.grow(toAtLeast: count + n, keeping: count) }
        (storage.pointer + count).update(from: bytes, count: n)
        count += n
    }

    func removeAll() { count = 0 }
}
