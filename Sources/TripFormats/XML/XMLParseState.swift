internal import CLibXML2
import TripKit

/// What the parse thread knows while libxml2 parses: where libxml2 is, the open elements, and the
/// batch of events it fills for the reader (`XMLReadState`), which builds the trips on another
/// thread. The SAX2 callbacks (`XMLParseState+SAX.swift`) call its event methods.
///
/// Whatever needs libxml2's buffer at hand is done here, as the buffer moves on before the reader
/// sees the events: libxml2's own errors, the DTD rules, the depth limit, the places of the root
/// and of each trip, the shape of the document above the trips (one root, whose only children are
/// `<trip>` elements, with nothing but whitespace between them), and a copy of the input that the
/// trips lie in, for the texts of rejected ones. What a trip's elements mean is the reader's part.
struct XMLParseState {
    let name: String
    /// libxml2's functions.
    let xml: LibXML2
    var ctxt: xmlParserCtxtPtr?
    /// The events since the last chunk ended.
    var batch = XMLEventBuffer(events: 4096, bytes: XMLLimits.chunkSize)
    /// The first error; once set, every event is ignored.
    var failure: TripError?

    /// The open elements' local names, innermost last: `depth` of them.
    private let open = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: XMLLimits.maxDepth)
    private(set) var depth = 0
    /// Whether the last element event was an end: whitespace after it is in an element with
    /// children, where it means nothing.
    private var afterEnd = false
    /// How many whitespace-only texts end the batch: a start after them drops them.
    private var blankTail = 0
    /// The bytes of text since the last start or end: while they are within the reader's limit
    /// for a field's text, dropping some changes nothing; past it, the reader must see them all
    /// to say the text is too long.
    private var textRun = 0
    var rootClosed = false
    /// Where the DOCTYPE's `>` was, when it had no internal subset (see `checkDoctypeEnd`).
    var doctypeClose: Int?
    /// Whether libxml2 is being told the input has ended.
    var terminating = false
    /// The name every child of the root must have (`trip`); nil for a document of any shape (an
    /// Xcode model's `contents`), whose events a reader of its own walks.
    var recordElementName: [UInt8]? = tripElementName
    /// Whether this libxml2 hands attribute values over with `&` escaped (see `XMLAttributeValue`).
    private let decodesAttributeValues = XMLAttributeValue.ampersands == .escaped

    // The input the trips lie in (see `keepSource`).
    /// The input offset of the open trip's `<`, or -1 (also once the trip is too long to keep).
    private var tripStart = -1
    /// The lowest offset a trip that ended in the current chunk (and is short enough to keep)
    /// starts at, or Int.max.
    private var closedLow = Int.max
    /// How far the input has been copied.
    private var copiedTo = 0

    init(name: String, xml: LibXML2) {
        self.name = name
        self.xml = xml
    }

    /// Frees the memory the state holds (it is dropped with the parser).
    func deallocate() {
        batch.deallocate()
        open.deallocate()
    }

    // MARK: - Events

    /// An element starts. The root and the trips get their places; any other child of the root
    /// ends the read.
    mutating func startElement(_ localname: UnsafePointer<UInt8>, namespace: UnsafePointer<UInt8>?, attributeCount: Int,
                               _ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?) {
        guard failure == nil else { return }
        if depth >= XMLLimits.maxDepth {
            stop("\(place(tagStart())): elements nested deeper than \(XMLLimits.maxDepth) levels")
            return
        }
        open[depth] = localname
        depth += 1
        // Whitespace just before a child is in an element with children, where it means nothing
        // (a field whose text it would be fails for its child anyway, unless its text is too long).
        if textRun <= XMLLimits.maxTextBytes {
            while blankTail > 0 {
                batch.removeLastText()
                blankTail -= 1
            }
        }
        blankTail = 0
        textRun = 0
        afterEnd = false
        var event = XMLEvent.start(localname, attributes: 0)
        if depth <= 2 {
            let start = tagStart()
            if depth == 2 {
                guard recordElementName.map({ cStringEquals(localname, $0) }) ?? true else {
                    stop("\(place(start)): expected a <trip> element, found <\(XMLParseState.qualifiedName(localname, start))>")
                    return
                }
                let offset = start.flatMap(inputOffset(of:)) ?? -1
                event.source = offset
                tripStart = offset
            }
            let (line, column) = position(start)
            event.line = Int32(truncatingIfNeeded: line)
            event.column = Int32(truncatingIfNeeded: column)
        } else {
            // Its place is counted from its trip's only if the trip is rejected for it.
            event.source = inputOffset() ?? -1
        }
        let at = batch.eventCount
        batch.append(event)
        guard attributeCount > 0, let attributes else { return }
        var kept: Int32 = 0
        for i in 0..<attributeCount {
            let a = attributes + 5 * i
            guard let name = a[0], let start = a[3], let end = a[4] else { continue }
            // An attribute in another namespace than its element's (`xml:lang`, `xsi:type`,
            // `xsi:schemaLocation`, a vendor's) is about the document, not the trip. Namespace
            // declarations (`xmlns`, `xmlns:t`) are not attributes in SAX2: they never come here.
            if let uri = a[2], !sameNamespace(uri, namespace) { continue }
            if decodesAttributeValues {
                let (offset, count) = batch.append(start, count: end - start, rewrite: XMLAttributeValue.decode)
                batch.append(XMLEvent(kind: .attribute, count: Int32(count), name: name, offset: offset, line: 0, column: 0, source: -1))
            } else {
                append(.attribute, name: name, start, count: end - start)
            }
            kept += 1
        }
        batch.setCount(kept, at: at)
    }

    /// Whether an attribute's namespace is its element's (`<t:trip t:name="…">`, as a schema with
    /// `attributeFormDefault="qualified"` has it written).
    func sameNamespace(_ uri: UnsafePointer<UInt8>, _ element: UnsafePointer<UInt8>?) -> Bool {
        guard let element else { return false }
        return uri == element || xml.xmlStrEqual(uri, element) != 0
    }

    /// An element ends; libxml2 has checked that it is the one that started last.
    mutating func endElement() {
        guard failure == nil, depth > 0 else { return }
        depth -= 1
        afterEnd = true
        blankTail = 0
        textRun = 0
        var event = XMLEvent(kind: .end, count: 0, name: nil, offset: 0, line: 0, column: 0, source: -1)
        switch depth {
        case 1:
            // A trip ends: libxml2 is just past its end tag.
            if tripStart >= 0, let end = inputOffset(), end - tripStart <= XMLLimits.maxRecordTextBytes {
                event.source = end
                closedLow = min(closedLow, tripStart)
            }
            tripStart = -1
        case 0:
            rootClosed = true
        default:
            break
        }
        batch.append(event)
    }

    /// Text, whitespace or CDATA, in pieces. Between trips only whitespace is allowed, and it
    /// means nothing; between a trip's elements, whitespace means nothing either, and is left out.
    mutating func characters(_ bytes: UnsafePointer<UInt8>, _ count: Int) {
        guard failure == nil, depth > 0 else { return }
        let i = XMLText.blankPrefix(bytes, count)
        guard depth == 1 else {
            if i == count {
                // After a child's end it means nothing; before a child's start, `startElement` drops it.
                if afterEnd { return }
                blankTail += 1
            } else {
                blankTail = 0
            }
            textRun += count
            append(.text, name: nil, bytes, count: count)
            return
        }
        guard i < count else { return }
        stop("\(place(position(ofText: bytes, count: count, at: i))): expected a <trip> element, found the text \(XMLText.excerpt(bytes, count, from: i))")
    }

    @inline(__always)
    private mutating func append(_ kind: XMLEvent.Kind, name: UnsafePointer<UInt8>?, _ bytes: UnsafePointer<UInt8>, count: Int) {
        let offset = batch.append(bytes, count: count)
        batch.append(XMLEvent(kind: kind, count: Int32(count), name: name, offset: offset, line: 0, column: 0, source: -1))
    }

    // MARK: - Chunks

    /// Ends the batch of a chunk: what libxml2's status and the end of input say, and the input
    /// the chunk's trips lie in. Returns the batch and starts the next.
    mutating func sealBatch(status: Int32, endOfInput: Bool, reusing old: XMLEventBatch?) -> XMLEventBatch {
        checkAfterChunk(status: status, endOfInput: endOfInput)
        let done = batch.seal(reusing: old)
        blankTail = 0
        keepSource(into: done)
        done.failure = failure
        done.isLast = failure != nil || endOfInput
        return done
    }

    /// The batch ends with the error `error` (the input could not be read), and nothing after it.
    mutating func sealBatch(failing error: TripError) -> XMLEventBatch {
        if failure == nil { failure = error }
        let done = batch.seal(reusing: nil)
        done.failure = failure
        done.isLast = true
        return done
    }

    /// Copies out of libxml2's buffer, which the next chunk may drop, the input of the trips that
    /// ended in this chunk or are open at its end: from the first such trip's `<` (or from where
    /// the last copy ended) to libxml2's position. Input between trips is not copied, nor a trip
    /// longer than `XMLLimits.maxRecordTextBytes` (whose text is not given).
    private mutating func keepSource(into batch: XMLEventBatch) {
        guard let (buffer, first) = bufferedInput(), let end = inputOffset() else { return }
        if tripStart >= 0, end - tripStart > XMLLimits.maxRecordTextBytes { tripStart = -1 }
        let low = min(closedLow, tripStart >= 0 ? tripStart : Int.max)
        closedLow = Int.max
        let from = max(low, copiedTo, first)
        if from < end {
            let bytes = ByteStorage(capacity: end - from)
            bytes.append(UnsafeBufferPointer(rebasing: buffer[(from - first)..<(end - first)]))
            batch.source = [InputSegment(start: from, bytes: bytes)]
        }
        copiedTo = max(copiedTo, end)
        batch.lowMark = min(low, end)
    }

    /// What libxml2's return status and the end of input say, when no event said it first.
    mutating func checkAfterChunk(status: Int32, endOfInput: Bool) {
        guard failure == nil else { return }
        // libxml2 2.9.14 drops a partial character at the end of a converted input (an odd
        // byte of UTF-16) without a word: what is left unconverted is a truncated character.
        if endOfInput, let buffer = ctxt?.pointee.input?.pointee.buf, let raw = buffer.pointee.raw, xml.xmlBufUse(raw) > 0 {
            failure = .data("\(place(nil)): the input ends inside a character (\(xml.xmlBufUse(raw)) bytes left over in its encoding)")
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
            if depth > 0, let innermost = open[depth - 1] {
                message = "unexpected end of input inside <\(String(cString: innermost))>"
            } else {
                message = "expected a root element, found the end of input"
            }
        }
        failure = .data("\(place): \(XMLParseState.shortened(message))", notes: notes)
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
        if let ctxt { xml.xmlStopParser(ctxt) }
    }

    /// `prefix:local` for a start tag, read from the tag itself.
    static func qualifiedName(_ localname: UnsafePointer<UInt8>, _ start: UnsafePointer<UInt8>?) -> String {
        let local = String(cString: localname)
        guard let start else { return local }
        var p = start + 1, bytes: [UInt8] = []
        while bytes.count < 200 {
            let c = p.pointee
            if c == 0 || c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x3E || c == 0x2F { break }
            bytes.append(c); p += 1
        }
        let written = String(decoding: bytes, as: UTF8.self)
        return XMLParseState.shortened(written.hasSuffix(local) ? written : local)
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

    /// The offset in the whole input (after conversion to UTF-8) of a byte in libxml2's buffer.
    func inputOffset(of pointer: UnsafePointer<UInt8>) -> Int? {
        guard let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base, pointer >= base else { return nil }
        return Int(input.pointee.consumed) + (pointer - base)
    }

    /// libxml2's buffered input, from its start to its end, and the offset in the input of its first byte.
    ///
    /// libxml2's push parser keeps in its buffer everything from its position on; only at the
    /// start of the next `xmlParseChunk` does it drop what lies behind. So at the end of a chunk,
    /// the buffer still holds the whole of every trip that started in it.
    func bufferedInput() -> (UnsafeBufferPointer<UInt8>, Int)? {
        guard let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base,
              let end = input.pointee.end, end >= base else { return nil }
        return (UnsafeBufferPointer(start: base, count: end - base), Int(input.pointee.consumed))
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

let tripElementName = Array("trip".utf8)

/// Text as both sides of the reader look at it.
enum XMLText {
    /// How many of the bytes, from the first, are XML whitespace.
    @inline(__always)
    static func blankPrefix(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
        var i = 0
        while i < count {
            let b = bytes[i]
            guard b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D else { break }
            i += 1
        }
        return i
    }

    /// Up to 64 bytes of text from `start` (a non-blank byte), trailing whitespace left out,
    /// quoted for a message.
    static func excerpt(_ bytes: UnsafePointer<UInt8>, _ count: Int, from start: Int) -> String {
        var end = min(count, start + 64)
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: UnsafeBufferPointer(start: bytes + start, count: end - start), as: UTF8.self).quotedForMessage
    }
}

@inline(__always)
func cStringEquals(_ c: UnsafePointer<UInt8>, _ bytes: [UInt8]) -> Bool {
    for i in bytes.indices where c[i] != bytes[i] { return false }
    return c[bytes.count] == 0
}
