import TripKit

// PLACEHOLDER: replaced by the XML reader and writer.
enum XMLFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        throw TripError.usage("format \(format.rawValue) is not implemented yet")
    }
    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        throw TripError.usage("format \(format.rawValue) is not implemented yet")
    }
}
