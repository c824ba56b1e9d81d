import TripKit

/// JSON and JSON Lines: `JSONRecordReader` and `JSONRecordWriter` for the factory.
enum JSONFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        let bytes = try ByteInput(input, options: options)
        if let empty = try FormatFactory.emptyReader(bytes, format: format, options: options) { return empty }
        return try JSONRecordReader(bytes, format: format, options: options)
    }

    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        try JSONRecordWriter(output, format: format, options: options)
    }
}
