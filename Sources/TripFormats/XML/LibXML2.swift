internal import CLibXML2

/// libxml2's functions, opened with the first XML document a run reads (`SharedLibrary`): a run
/// that reads no XML never maps libxml2 nor what it brings (ICU's libicuuc and libicudata, liblzma,
/// the C++ runtime). The types, structs and constants (`xmlSAXHandler`, `XML_PARSE_NONET`) are
/// still the headers' (the `CLibXML2` target). Every call of libxml2 goes through this table:
/// `LibXML2.load()` once, then `xml.xmlParseChunk(…)`. A function is one line here.
struct LibXML2: SharedLibraryTable {
    /// The table, loaded once for the run and set up (`setUp`); a failure to load fails each run
    /// that asks, the same way.
    static func load() throws -> LibXML2 { try loaded.get() }
    private static let loaded = Result { try resolve().setUp() }
    static let library = Result {
        try SharedLibrary(["libxml2.so.2", "libxml2.2.dylib"], package: "libxml2", for: "reading XML")
    }

    let xmlBufUse: @convention(c) (xmlBufPtr?) -> Int = Self.function("xmlBufUse")
    let xmlCreatePushParserCtxt: @convention(c) (xmlSAXHandlerPtr?, UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?)
        -> xmlParserCtxtPtr? = Self.function("xmlCreatePushParserCtxt")
    let xmlCtxtResetPush: @convention(c) (xmlParserCtxtPtr?, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
        = Self.function("xmlCtxtResetPush")
    let xmlCtxtUseOptions: @convention(c) (xmlParserCtxtPtr?, Int32) -> Int32 = Self.function("xmlCtxtUseOptions")
    let xmlFreeEnumeration: @convention(c) (xmlEnumerationPtr?) -> Void = Self.function("xmlFreeEnumeration")
    let xmlFreeParserCtxt: @convention(c) (xmlParserCtxtPtr?) -> Void = Self.function("xmlFreeParserCtxt")
    let xmlInitParser: @convention(c) () -> Void = Self.function("xmlInitParser")
    let xmlParseChunk: @convention(c) (xmlParserCtxtPtr?, UnsafePointer<CChar>?, Int32, Int32) -> Int32 = Self.function("xmlParseChunk")
    let xmlSetExternalEntityLoader: @convention(c) (xmlExternalEntityLoader?) -> Void = Self.function("xmlSetExternalEntityLoader")
    let xmlSetStructuredErrorFunc: @convention(c) (UnsafeMutableRawPointer?, xmlStructuredErrorFunc?) -> Void = Self.function("xmlSetStructuredErrorFunc")
    let xmlStopParser: @convention(c) (xmlParserCtxtPtr?) -> Void = Self.function("xmlStopParser")
    let xmlStrEqual: @convention(c) (UnsafePointer<xmlChar>?, UnsafePointer<xmlChar>?) -> Int32 = Self.function("xmlStrEqual")

    /// Once per process, before any parse: initialize libxml2 and refuse every external entity,
    /// DTD or XInclude load (see `XMLParseState+SAX.swift`).
    private func setUp() -> LibXML2 {
        xmlInitParser()
        xmlSetExternalEntityLoader { _, _, _ in nil }
        return self
    }
}
