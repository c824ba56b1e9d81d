internal import CLibXML2
import TripKit
import TripThreads

/// Limits that keep any input bounded in time and memory.
enum XMLLimits {
    /// Elements nested deeper than this end the read (a trip needs five levels).
    static let maxDepth = 256
    /// A field's text longer than this (in UTF-8 bytes) rejects its record.
    static let maxTextBytes = 1 << 20
    /// A rejected `<trip>` longer than this (in UTF-8 bytes, from `<trip` to `</trip>`) is
    /// reported without its text.
    static let maxRecordTextBytes = 1 << 20
    /// How much input libxml2 is given at a time.
    static let chunkSize = 1 << 16
}

/// The XML reader's parse side: it owns a libxml2 push-parser context and feeds it the input a
/// chunk at a time; the SAX2 events go to an `XMLParseState`, which checks what needs libxml2's
/// buffer and hands back each chunk's events as a batch. It runs on a thread of its own
/// (a `Handoff`), while the reader builds trips from the batches before.
final class XMLTripParser: @unchecked Sendable {
    let input: ByteInput
    let options: ReadOptions
    /// The encoding of a document that does not say its own (`--input-encoding`).
    let encoding: TextEncoding
    /// The parse state, at a fixed address that libxml2 hands back to every callback: reached
    /// through a pointer, an event costs no reference counting and no exclusivity check.
    let state: UnsafeMutablePointer<XMLParseState>
    private var endOfInput = false
    private let chunk: UnsafeMutableRawBufferPointer

    /// libxml2's functions (opened with the first parser of the run).
    let xml: LibXML2

    /// A parser of `input`; `recordElement` is the name every child of the root must have (nil: any).
    /// Opens libxml2 if this is the run's first parser: `.unavailable` (exit 69) when it is not installed.
    init(input: ByteInput, options: ReadOptions, encoding: TextEncoding, recordElement: [UInt8]? = tripElementName) throws {
        xml = try LibXML2.load()
        self.input = input
        self.options = options
        self.encoding = encoding
        state = .allocate(capacity: 1)
        state.initialize(to: XMLParseState(name: input.name, xml: xml))
        state.pointee.recordElementName = recordElement
        chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: XMLLimits.chunkSize, alignment: 16)
    }

    deinit {
        if let ctxt = state.pointee.ctxt { xml.xmlFreeParserCtxt(ctxt) }
        state.pointee.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
        chunk.deallocate()
    }

    /// Parses the next chunk and returns its events (in `old`'s memory, if given); the last batch
    /// says the input ended, or why the read ends. Not called again after the last.
    func parseChunk(reusing old: XMLEventBatch?) -> XMLEventBatch {
        do {
            return try feed(reusing: old)
        } catch let error as TripError {
            return state.pointee.sealBatch(failing: error)
        } catch {
            return state.pointee.sealBatch(failing: .data("\(input.name): \(error)"))
        }
    }

    /// Reads one chunk and gives it to libxml2; at the end of input, tells libxml2 so.
    private func feed(reusing old: XMLEventBatch?) throws -> XMLEventBatch {
        var count = try input.read(into: chunk)
        var start = 0
        let bytes = chunk.baseAddress!.assumingMemoryBound(to: CChar.self)
        if state.pointee.ctxt == nil {
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
        state.pointee.terminating = count == 0
        // Errors libxml2 raises without a parser context (encoding conversion) go to the thread's
        // structured handler: point it at this parser for the call, and at a silent one after.
        xml.xmlSetStructuredErrorFunc(state, xmlParseStateStructuredError)
        let status = xml.xmlParseChunk(state.pointee.ctxt, bytes + start, Int32(count - start), terminate)
        xml.xmlSetStructuredErrorFunc(nil, xmlSilentStructuredError)
        if count == 0 { endOfInput = true }
        return state.pointee.sealBatch(status: status, endOfInput: endOfInput, reusing: old)
    }

    private func createContext(_ bytes: UnsafePointer<CChar>, _ count: Int, sniffed: UnsafeRawBufferPointer) throws {
        var handler = XMLParseState.saxHandler
        let name = state.pointee.name
        xml.xmlSetStructuredErrorFunc(state, xmlParseStateStructuredError)
        defer { xml.xmlSetStructuredErrorFunc(nil, xmlSilentStructuredError) }
        // A document that does not say its encoding is UTF-8, unless `--input-encoding` says otherwise.
        let given = XMLTripParser.libxml2EncodingName(self.encoding)
        let encoding = given != nil && !XMLTripParser.declaresEncoding(sniffed) ? given : nil
        guard let context = xml.xmlCreatePushParserCtxt(&handler, state, encoding != nil ? nil : bytes, encoding != nil ? 0 : Int32(count), name) else {
            throw TripError.data("\(name): libxml2 could not start a parser")
        }
        state.pointee.ctxt = context
        if let encoding { _ = xml.xmlCtxtResetPush(context, bytes, Int32(count), name, encoding) }
        // No entity substitution, no DTD loading or defaulting, no validation, no network, no XInclude.
        _ = xml.xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
        context.pointee.replaceEntities = 0
        context.pointee.loadsubset = 0
        context.pointee.validate = 0
        if let failure = state.pointee.failure { throw failure }
    }

    /// The libxml2 name of the encoding `--input-encoding` gives, for documents that do not say
    /// their own; nil for UTF-8 (libxml2's default).
    static func libxml2EncodingName(_ encoding: TextEncoding) -> String? {
        switch encoding {
        case .latin1: return "ISO-8859-1"
        case .windows1252: return "windows-1252"
        case .utf16le: return "UTF-16LE"
        case .utf16be: return "UTF-16BE"
        case .utf16: return "UTF-16"
        case .utf8: return nil
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

}
