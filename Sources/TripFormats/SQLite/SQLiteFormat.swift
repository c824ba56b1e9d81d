import TripKit

/// The SQLite store: a reader of its trips and a writer that creates a store or writes into one.
/// A file whose tables are Core Data's is handed to the Core Data reader.
enum SQLiteFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        guard case .file(let path) = input else {
            throw TripError.usage("a sqlite store cannot be read from standard input; name its file")
        }
        // SwiftData's default.store and other Core Data stores are SQLite files too: told by their tables.
        if CoreDataStoreLayout.isCoreDataFile(path) {
            return try CoreDataRecordReader(path: path, options: options)
        }
        return try SQLiteRecordReader(path: path, options: options)
    }

    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        guard case .file(let path) = output else {
            throw TripError.usage("a sqlite store cannot be written to standard output; give -o FILE")
        }
        return try SQLiteRecordWriter(path: path, options: options)
    }
}
