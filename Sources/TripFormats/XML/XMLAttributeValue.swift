#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibXML2

/// Attribute values as libxml2 hands them over, made into the values the document means.
///
/// libxml2's SAX2 parser, when it does not substitute entities (we never let it: substitution is
/// the door to entity expansion bombs and external entities), hands an attribute value over with
/// every `&` the document meant re-escaped as `&#38;`, whether it was written `&amp;`, `&#38;` or
/// `&#x26;` (libxml2 2.9.14: `xmlParseAttValueComplex`; its own tree builder decodes it again, in
/// `xmlSAX2AttributeNs`). Every other reference (`&lt;`, `&#60;`, `&#x1F600;`…) arrives decoded,
/// and attribute-value normalization (a literal tab or line end is a space, `&#10;` a line feed)
/// is done. So with such a libxml2, every `&` in a handed-over value starts a reference that must
/// be decoded; with one that hands `&` over as itself, nothing must be.
///
/// Which of the two this libxml2 does is not assumed from its version: it is asked once per
/// process (`ampersands`), by parsing `<a b="&amp;"/>` with the reader's own settings. Decoding
/// costs nothing for a value without `&` (one `memchr`), and is done on the parse thread, where
/// the value is copied into the batch, so that every later use (fields, the version marker,
/// messages) sees the value the document meant.
enum XMLAttributeValue {
    /// How this libxml2 hands over an `&` that an attribute value means.
    enum Ampersands: Equatable {
        /// As `&`: values are what the document means.
        case verbatim
        /// As a reference (`&#38;`): every `&` starts one, to be decoded.
        case escaped
    }

    /// What this process's libxml2 does, found once, when first needed.
    static let ampersands: Ampersands = probe(Array("<a b=\"&amp;\"/>".utf8)).map { $0 == [0x26] ? .verbatim : .escaped } ?? .escaped

    /// The value of the first attribute of the root of `document`, as libxml2 hands it to a SAX2
    /// handler with the reader's settings (no entity substitution, no DTD, no network); nil when
    /// the document gives none.
    static func probe(_ document: [UInt8]) -> [UInt8]? {
        // Asked only once a parser has opened libxml2 (`XMLTripParser`); nil if it cannot be.
        guard let xml = try? LibXML2.load() else { return nil }
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { ctx, _, _, _, _, _, count, _, attributes in
            guard let ctx, count > 0, let attributes, let start = attributes[3], let end = attributes[4] else { return }
            let slot = ctx.assumingMemoryBound(to: [UInt8]?.self)
            if slot.pointee == nil { slot.pointee = Array(UnsafeBufferPointer(start: start, count: end - start)) }
        }
        sax.serror = { _, _ in }
        var value: [UInt8]? = nil
        withUnsafeMutablePointer(to: &value) { slot in
            guard let ctxt = xml.xmlCreatePushParserCtxt(&sax, slot, nil, 0, nil) else { return }
            _ = xml.xmlCtxtUseOptions(ctxt, Int32(XML_PARSE_NONET.rawValue))
            ctxt.pointee.replaceEntities = 0
            ctxt.pointee.loadsubset = 0
            ctxt.pointee.validate = 0
            document.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    _ = xml.xmlParseChunk(ctxt, $0.baseAddress, Int32($0.count), 1)
                }
            }
            xml.xmlFreeParserCtxt(ctxt)
        }
        return value
    }

    /// Decodes, in place, the references in a value libxml2 handed over escaped; returns its new
    /// length (never longer: a reference is longer than its UTF-8). Only a value holding `&` is
    /// touched. Every `&` starts a reference: `&#38;` is what libxml2 writes, the other forms are
    /// decoded too in case another version writes them; an `&` that starts none (which this
    /// libxml2 never hands over) is kept as it is.
    @inline(__always)
    static func decode(_ bytes: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        guard count > 0, let first = memchr(bytes, 0x26, count) else { return count }
        return decodeReferences(bytes, count: count, from: bytes.distance(to: first.assumingMemoryBound(to: UInt8.self)))
    }

    @inline(never)
    private static func decodeReferences(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, from first: Int) -> Int {
        var read = first, write = first
        while read < count {
            let b = bytes[read]
            if b == 0x26, let (scalar, length) = reference(bytes + read, count - read) {
                write += encode(scalar, into: bytes + write)
                read += length
            } else {
                bytes[write] = b
                write += 1
                read += 1
            }
        }
        return write
    }

    /// The scalar a reference at `p` (an `&`) stands for, and the reference's length in bytes.
    private static func reference(_ p: UnsafeMutablePointer<UInt8>, _ available: Int) -> (UInt32, Int)? {
        var i = 1
        if i < available, p[i] == 0x23 {  // &#
            i += 1
            var radix: UInt32 = 10
            if i < available, p[i] == 0x78 { radix = 16; i += 1 }  // &#x
            var value: UInt32 = 0, digits = 0
            while i < available, p[i] != 0x3B {
                let c = p[i]
                let digit: UInt32
                switch c {
                case 0x30...0x39: digit = UInt32(c - 0x30)
                case 0x61...0x66 where radix == 16: digit = UInt32(c - 0x61 + 10)
                case 0x41...0x46 where radix == 16: digit = UInt32(c - 0x41 + 10)
                default: return nil
                }
                value = value * radix + digit
                digits += 1
                if value > 0x10FFFF { return nil }
                i += 1
            }
            guard i < available, digits > 0, Unicode.Scalar(value) != nil else { return nil }
            return (value, i + 1)
        }
        for (name, scalar) in predefined where available >= name.count + 2 && p[name.count + 1] == 0x3B {
            if (0..<name.count).allSatisfy({ p[1 + $0] == name[$0] }) { return (scalar, name.count + 2) }
        }
        return nil
    }

    private static let predefined: [([UInt8], UInt32)] = [
        (Array("amp".utf8), 0x26), (Array("lt".utf8), 0x3C), (Array("gt".utf8), 0x3E),
        (Array("quot".utf8), 0x22), (Array("apos".utf8), 0x27),
    ]

    /// Writes a scalar's UTF-8; returns its length.
    private static func encode(_ value: UInt32, into p: UnsafeMutablePointer<UInt8>) -> Int {
        switch value {
        case ..<0x80:
            p[0] = UInt8(value)
            return 1
        case ..<0x800:
            p[0] = UInt8(0xC0 | value >> 6); p[1] = UInt8(0x80 | value & 0x3F)
            return 2
        case ..<0x10000:
            p[0] = UInt8(0xE0 | value >> 12); p[1] = UInt8(0x80 | value >> 6 & 0x3F); p[2] = UInt8(0x80 | value & 0x3F)
            return 3
        default:
            p[0] = UInt8(0xF0 | value >> 18); p[1] = UInt8(0x80 | value >> 12 & 0x3F)
            p[2] = UInt8(0x80 | value >> 6 & 0x3F); p[3] = UInt8(0x80 | value & 0x3F)
            return 4
        }
    }
}
