import TripKit

/// The PostgreSQL store: a reader of its trips and a writer that creates the store's tables or
/// writes into them. The location's "path" is a libpq address (`postgresql://…` or `key=value`).
enum PGFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        guard case .file(let address) = input else {
            throw TripError.usage("a PostgreSQL store cannot be read from standard input; give its address")
        }
        return try PGRecordReader(address: address, options: options)
    }

    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        guard case .file(let address) = output else {
            throw TripError.usage("a PostgreSQL store cannot be written to standard output; give -o ADDRESS")
        }
        return try PGRecordWriter(address: address, options: options)
    }
}
