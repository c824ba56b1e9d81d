import TripKit

/// Core Data (SwiftData) SQLite stores: read, never written. A `.sqlite` or `.store` file whose
/// tables are Core Data's is read as this format without being told (`SQLiteFormat` sniffs it).
enum CoreDataFormat: FormatCodec {
    static func makeReader(_ input: InputLocation, format: Format, options: ReadOptions) throws -> any RecordReader {
        guard case .file(let path) = input else {
            throw TripError.usage("a coredata store cannot be read from standard input; name its file")
        }
        return try CoreDataRecordReader(path: path, options: options)
    }

    static func makeWriter(_ output: OutputLocation, format: Format, options: WriteOptions) throws -> any RecordWriter {
        throw TripError.usage("tripconv reads Core Data stores but never writes them; write a sqlite store instead",
                              notes: ["give -o FILE.sqlite, or --to sqlite"])
    }
}
