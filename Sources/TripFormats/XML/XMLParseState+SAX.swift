internal import CLibXML2
import TripKit

// libxml2's side of the reader: the SAX2 handler table and the C callbacks, each of which finds the parse thread's state through the context's user data.
//
// What is refused, and why it is enough: libxml2 only expands an entity it has been told about,
// and it is told about entities only through `entityDecl` (here a refusal) or a loaded DTD (the
// `externalSubset` callback that loads one is absent, so a DOCTYPE naming an external DTD is read
// and ignored). `getEntity` is absent, so `&name;` other than the five predefined entities is an
// undeclared entity, an error. Any markup declaration in an internal subset stops the read before
// the next token, which also keeps libxml2 from applying ATTLIST default attributes. Every external
// load goes through an entity loader that refuses everything (set with libxml2's opening, `LibXML2.setUp`).

extension XMLParseState {
    /// The SAX2 handlers; libxml2 copies the table into each context.
    static var saxHandler: xmlSAXHandler {
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { ctx, localname, _, uri, _, _, count, _, attributes in
            guard let ctx, let localname else { return }
            XMLParseState.from(ctx).pointee.startElement(localname, namespace: uri, attributeCount: Int(count), attributes)
        }
        sax.endElementNs = { ctx, _, _, _ in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.endElement()
        }
        // Text, whitespace and CDATA all arrive here: the handlers being the same function keeps
        // libxml2 from ever calling whitespace "ignorable".
        sax.characters = xmlParseStateCharacters
        sax.ignorableWhitespace = xmlParseStateCharacters
        sax.cdataBlock = xmlParseStateCharacters
        sax.entityDecl = { ctx, name, _, _, _, _ in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.refuseDeclaration("ENTITY", name)
        }
        sax.attributeDecl = { ctx, element, _, _, _, _, tree in
            // The handler owns the enumeration libxml2 passes (and libxml2 always passes the context).
            guard let ctx else { return }
            let state = XMLParseState.from(ctx)
            if let tree { state.pointee.xml.xmlFreeEnumeration(tree) }
            state.pointee.refuseDeclaration("ATTLIST", element)
        }
        sax.elementDecl = { ctx, name, _, _ in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.refuseDeclaration("ELEMENT", name)
        }
        sax.notationDecl = { ctx, name, _, _ in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.refuseDeclaration("NOTATION", name)
        }
        sax.unparsedEntityDecl = { ctx, name, _, _, _ in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.refuseDeclaration("ENTITY", name)
        }
        sax.reference = { ctx, name in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.refuseReference(name)
        }
        sax.internalSubset = { ctx, _, _, _ in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.checkDoctype()
        }
        // Called where libxml2's own handler would load the external DTD: here it loads nothing.
        sax.externalSubset = { ctx, _, _, _ in
            guard let ctx else { return }
            XMLParseState.from(ctx).pointee.checkDoctypeEnd()
        }
        sax.serror = xmlParseStateStructuredError
        return sax
    }

    @inline(__always)
    static func from(_ context: UnsafeMutableRawPointer) -> UnsafeMutablePointer<XMLParseState> {
        context.assumingMemoryBound(to: XMLParseState.self)
    }

    /// Checks what libxml2 2.9.14's push parser lets through in a DOCTYPE: `<!DOCTYPEdoc>` (no
    /// space) and `<!DOCTYPE doc>[…]>` (brackets after the `>`, taken as an internal subset).
    /// libxml2 calls this with its position after the external ID, at `[` or `>`.
    mutating func checkDoctype() {
        guard failure == nil, let ctxt, let input = ctxt.pointee.input, let base = input.pointee.base,
              let cur = input.pointee.cur else { return }
        let keyword = Array("<!DOCTYPE".utf8)
        var p = cur
        while p > base {
            p -= 1
            guard p.pointee == 0x3C, cur - p > keyword.count,
                  (0..<keyword.count).allSatisfy({ p[$0] == keyword[$0] }) else { continue }
            switch p[keyword.count] {
            case 0x20, 0x09, 0x0A, 0x0D: break
            default:
                stop("\(place(p + keyword.count)): expected a space after '<!DOCTYPE', found '\(Unicode.Scalar(p[keyword.count]))'")
                return
            }
            break
        }
        if cur < input.pointee.end, cur.pointee == 0x3E { doctypeClose = inputOffset() }
    }

    /// After a DOCTYPE without an internal subset, libxml2 must be just past its `>`.
    mutating func checkDoctypeEnd() {
        guard failure == nil, let close = doctypeClose else { return }
        if let offset = inputOffset(), offset != close + 1 {
            stop("\(place(nil)): expected the root element after the DOCTYPE, found an internal subset after its '>'")
        }
    }

    mutating func refuseDeclaration(_ keyword: String, _ name: UnsafePointer<UInt8>?) {
        let what = XMLParseState.shortened(name.map { String(cString: $0) } ?? "")
        stop("\(place(declarationStart(keyword))): DTD declarations are not allowed, found <!\(keyword) \(what)>",
             notes: ["tripconv reads no DTD: a DOCTYPE may name an external DTD (which is never fetched), but not declare anything"])
    }

    mutating func refuseReference(_ name: UnsafePointer<UInt8>?) {
        let what = XMLParseState.shortened(name.map { String(cString: $0) } ?? "")
        stop("\(place(nil)): entity references are not allowed, found '&\(what);'",
             notes: ["only &lt; &gt; &amp; &quot; &apos; and character references such as &#233; are read"])
    }
}

let xmlParseStateCharacters: charactersSAXFunc = { ctx, bytes, count in
    guard let ctx, let bytes, count > 0 else { return }
    XMLParseState.from(ctx).pointee.characters(bytes, Int(count))
}

let xmlParseStateStructuredError: xmlStructuredErrorFunc = { ctx, error in
    guard let ctx, let error else { return }
    XMLParseState.from(ctx).pointee.note(error)
}

/// Swallows what libxml2 reports outside any of our parses, so it never prints on its own.
let xmlSilentStructuredError: xmlStructuredErrorFunc = { _, _ in }
