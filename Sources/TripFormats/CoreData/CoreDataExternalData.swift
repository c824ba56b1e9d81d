import TripKit

extension CoreDataValues {
    /// Where Core Data keeps the files of a store's externally stored data: `.NAME_SUPPORT/_EXTERNAL_DATA`
    /// beside the store, NAME the store's file name without its extension (`default.store` ->
    /// `.default_SUPPORT`).
    static func supportDirectory(ofStoreAt path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        var name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        return folder + "." + name + "_SUPPORT/_EXTERNAL_DATA"
    }

    /// The bytes of an attribute that allows external storage. Core Data writes a marker byte first:
    /// 1, the bytes follow; 2, a UUID's text and a NUL follow, naming the file in `supportDirectory`
    /// that holds the bytes (`_PFExternalReferenceData`). Anything else, or a file that is missing, is
    /// a problem with the value, never bytes passed on with their marker.
    static func externalData(_ s: SQLiteStatement, _ c: Int32, supportDirectory: String) -> Result<ObjectValue, CoreDataValueProblem> {
        let storage = s.storage(c)
        if storage == .null { return .success(.null) }
        guard storage == .blob else {
            return .failure(CoreDataValueProblem(text: "holds \(storage == .text ? "TEXT" : "a number") where externally storable Data is a BLOB"))
        }
        let bytes = s.bytes(c)
        switch bytes.first {
        case 1:
            return .success(.data(Array(bytes.dropFirst())))
        case 2:
            let name = bytes.dropFirst().prefix { $0 != 0 }
            guard name.count == 36, UUIDBytes(string: String(decoding: name, as: UTF8.self)) != nil else {
                return .failure(CoreDataValueProblem(text: "holds an external data reference whose file name is no UUID"))
            }
            let file = supportDirectory + "/" + String(decoding: name, as: UTF8.self)
            // The file's bytes are the value: held with the object, as an inline BLOB's are.
            guard let size = FileSystem.size(file), let data = try? FileSystem.head(of: file, count: size, failing: .noInput),
                  data.count == size else {
                return .failure(CoreDataValueProblem(text: "refers to the external data file \(file), which cannot be read"))
            }
            return .success(.data(data))
        default:
            return .failure(CoreDataValueProblem(text: "holds a BLOB with no external-storage marker (1: the bytes follow, 2: a file's name)"))
        }
    }
}
