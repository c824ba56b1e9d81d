internal import CLibXML2
import TripKit

/// Limits that keep any input bounded in time and memory.
enum XMLLimits {
    /// Elements nested deeper than this end the read (a trip needs five levels).
    static let maxDepth = 256
    /// A field's text longer than this (in UTF-8 bytes) rejects its record.
    static let maxTextBytes = 1 << 20
    /// How much input libxml2 is given at a time.
    static let chunkSize = 1 << 16
}

/// The XML reader's engine: it owns a libxml2 push-parser context, feeds it the input a chunk at a
/// time, and turns its SAX2 events (in `XMLTripParser+Events.swift`) into builder calls. Trips that a
/// chunk completes wait in `ready` until `next()` hands them out.
final class XMLTripParser {
    let name: String
    let input: ByteInput
    let options: ReadOptions
    var builder: RecordBuilder
    var ctxt: xmlParserCtxtPtr?

    // What the pull side sees.
    var ready: [ReadItem] = []
    var readyHead = 0
    /// The first error; once set, every event is ignored and `next()` throws it.
    var failure: TripError?
    private var endOfInput = false

    // The event state (see XMLTripParser+Events.swift).
    var frames: [XMLFrame] = []
    var depth = 0
    var skipDepth = 0
    var text: [UInt8] = []
    var textFailed = false
    var recordCount = 0
    var recordFailed = false
    var unknownCount = 0
    var rootClosed = false
    var names: XMLNameResolver
    /// Where the DOCTYPE's `>` was, when it had no internal subset (see `checkDoctypeEnd`).
    var doctypeClose: Int?
    private var terminating = false

    private let chunk: UnsafeMutableRawBufferPointer

    init(input: ByteInput, options: ReadOptions) {
        XMLTripParser.setUpLibXML2
        self.input = input
        self.name = input.name
        self.options = options
        self.builder = RecordBuilder(source: input.name, format: "xml", options: options)
        self.names = XMLNameResolver(builder.vocabulary)
        self.chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: XMLLimits.chunkSize, alignment: 16)
        frames.reserveCapacity(8)
        text.reserveCapacity(256)
    }

    deinit {
        if let ctxt { xmlFreeParserCtxt(ctxt) }
        chunk.deallocate()
    }

    // MARK: - Pulling

    func next() throws -> ReadItem? {
        while true {
            if readyHead < ready.count {
                let item = ready[readyHead]
                readyHead += 1
                if readyHead == ready.count { ready.removeAll(keepingCapacity: true); readyHead = 0 }
                return item
            }
            if let failure { throw failure }
            if endOfInput { return nil }
            try feed()
        }
    }

    /// Reads one chunk and gives it to libxml2; at the end of input, tells libxml2 so.
    private func feed() throws {
        var count = try input.read(into: chunk)
        var start = 0
        let bytes = chunk.baseAddress!.assumingMemoryBound(to: CChar.self)
        if ctxt == nil {
            // libxml2 detects the encoding from the first four bytes (a BOM, `<?xm` in some encoding).
            while count < 4 {
                let more = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: chunk[count...]))
                if more == 0 { break }
                count += more
            }
            let head = min(count, 4)
            try createContext(bytes, head, sniffed: UnsafeRawBufferPointer(rebasing: chunk[..<count]))
            start = head
        }
        let terminate: Int32 = count == 0 ? 1 : 0
        terminating = count == 0
        let me = Unmanaged.passUnretained(self).toOpaque()
        // Errors libxml2 raises without a parser context (encoding conversion) go to the thread's
        // structured handler: point it at this parser for the call, and at a silent one after.
        xmlSetStructuredErrorFunc(me, xmlTripParserStructuredError)
        let status = xmlParseChunk(ctxt, bytes + start, Int32(count - start), terminate)
        xmlSetStructuredErrorFunc(nil, xmlSilentStructuredError)
        if count == 0 {
            endOfInput = true
            // libxml2 2.9.14 drops a partial character at the end of a converted input (an odd
            // byte of UTF-16) without a word: what is left unconverted is a truncated character.
            if failure == nil, let buffer = ctxt?.pointee.input?.pointee.buf, let raw = buffer.pointee.raw, xmlBufUse(raw) > 0 {
                failure = .data("\(place(nil)): the input ends inside a character (\(xmlBufUse(raw)) bytes left over in its encoding)")
            }
        }
        if failure == nil, status != 0 {
            failure = .data("\(place(nil)): not well-formed XML (libxml2 error \(status))")
        }
        if failure == nil, endOfInput, !rootClosed {
            failure = .data("\(name): unexpected end of input inside the document")
        }
    }

    private func createContext(_ bytes: UnsafePointer<CChar>, _ count: Int, sniffed: UnsafeRawBufferPointer) throws {
        var handler = XMLTripParser.saxHandler
        let me = Unmanaged.passUnretained(self).toOpaque()
        xmlSetStructuredErrorFunc(me, xmlTripParserStructuredError)
        defer { xmlSetStructuredErrorFunc(nil, xmlSilentStructuredError) }
        // A document that does not say its encoding is UTF-8, unless `--input-encoding latin1` says otherwise.
        let latin1 = XMLTripParser.wantsLatin1(options.inputEncoding) && !XMLTripParser.declaresEncoding(sniffed)
        guard let context = xmlCreatePushParserCtxt(&handler, me, latin1 ? nil : bytes, latin1 ? 0 : Int32(count), name) else {
            throw TripError.data("\(name): libxml2 could not start a parser")
        }
        ctxt = context
        if latin1 { _ = xmlCtxtResetPush(context, bytes, Int32(count), name, "ISO-8859-1") }
        // No entity substitution, no DTD loading or defaulting, no validation, no network, no XInclude.
        _ = xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
        context.pointee.replaceEntities = 0
        context.pointee.loadsubset = 0
        context.pointee.validate = 0
        if let failure { throw failure }
    }

    /// Whether `--input-encoding` names Latin-1, for documents that do not say their own encoding.
    static func wantsLatin1(_ name: String) -> Bool {
        switch name.lowercased() {
        case "latin1", "latin-1", "iso-8859-1", "iso8859-1", "l1": return true
        default: return false
        }
    }

    /// Whether a document's first bytes carry its encoding: a BOM, UTF-16/32 or EBCDIC `<?`, or an
    /// XML declaration with `encoding=`.
    static func declaresEncoding(_ head: UnsafeRawBufferPointer) -> Bool {
        let b = Array(head.prefix(512))
        if b.starts(with: [0xEF, 0xBB, 0xBF]) || b.starts(with: [0xFE, 0xFF]) || b.starts(with: [0xFF, 0xFE])
            || b.starts(with: [0x00, 0x3C]) || b.starts(with: [0x3C, 0x00]) || b.starts(with: [0x00, 0x00])
            || b.starts(with: [0x4C, 0x6F, 0xA7, 0x94]) { return true }
        guard b.starts(with: Array("<?xml".utf8)) else { return false }
        let end = b.firstIndex(of: UInt8(ascii: ">")) ?? b.count
        let declaration = b[..<end]
        let key = Array("encoding".utf8)
        guard declaration.count >= key.count else { return false }
        for i in declaration.startIndex...(declaration.endIndex - key.count) where declaration[i..<(i + key.count)].elementsEqual(key) {
            return true
        }
        return false
    }

    // MARK: - Errors

    /// Takes libxml2's first error (warnings are ignored) as the read's failure, placed `FILE:LINE:COLUMN`.
    func note(_ error: UnsafePointer<xmlError>) {
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
        failure = .data("\(place): \(XMLTripParser.shortened(message))", notes: notes)
    }

    /// A message with every overlong word (a 10 KB name, a long value) cut to 40 characters.
    static func shortened(_ message: String) -> String {
        guard message.count > 120 else { return message }
        return message.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.count > 40 ? word.prefix(37) + "..." : word
        }.joined(separator: " ")
    }

    /// Ends the read with an error of our own and stops libxml2 at once.
    func stop(_ message: String, notes: [String] = []) {
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
