import TripKit

/// YAML: read with libyaml's event parser, streaming; written by our own emitter for exact quoting.
///
/// ```swift
/// var reader = try YAMLFormat.makeReader(.file("trips.yaml"), format: .yaml, options: ReadOptions())
/// var writer = try YAMLFormat.makeWriter(.file("out.yaml"), format: .yaml, options: WriteOptions())
/// ```
///
/// YAML brings its own encoding (UTF-8 or UTF-16, told by a byte order mark), so `inputEncoding`
/// does not apply.
enum YAMLFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        let bytes = try ByteInput(input, options: options)
        if let empty = try FormatFactory.emptyReader(bytes, format: format, options: options) { return empty }
        var reader = YAMLRecordReader(parser: YAMLEventParser(input: bytes), options: options, threaded: options.parsesAhead)
        reader.builder.compression = bytes.compression?.rawValue
        return reader
    }

    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        try YAMLRecordWriter(output: ByteOutput(output, compression: options.compression), schema: options.schema)
    }
}
