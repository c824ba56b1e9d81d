import TripKit

/// XML: `<trips schemaVersion="3.0.0"><trip><name>…</name>…</trip></trips>`.
///
/// Read with libxml2's SAX2 push parser, one chunk at a time, never as a document tree: no DTD is
/// loaded, no entity but the five predefined ones and character references is expanded, nothing is
/// fetched. Written by hand, one trip at a time, with an XML declaration and two-space indentation.
enum XMLFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        let bytes = try ByteInput(input, options: options)
        if let empty = try FormatFactory.emptyReader(bytes, format: format, options: options) { return empty }
        return try XMLRecordReader(bytes, options: options, threaded: options.parsesAhead)
    }

    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        try XMLRecordWriter(output, options: options)
    }
}
