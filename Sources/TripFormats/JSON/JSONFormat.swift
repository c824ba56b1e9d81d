import TripKit

/// JSON and JSON Lines: `JSONRecordReader` and `JSONRecordWriter` for the factory.
enum JSONFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        try JSONRecordReader(input, format: format, options: options)
    }

    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        try JSONRecordWriter(output, format: format, options: options)
    }
}
