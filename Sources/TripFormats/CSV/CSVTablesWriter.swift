import TripKit

/// The names of the tables layout: one file per entity, `trips.csv`, `bucket_list_items.csv` and
/// `living_accommodations.csv`, the related ones joined to the trips by a `trip_id` column; list
/// items also carry their `position` (1-based).
enum CSVTableNames {
    /// `BucketListItem` → `bucket_list_items`.
    static func table(_ entity: String) -> String { snake(entity) + "s" }
    /// `Trip` → `trip_id`.
    static func key(_ rootEntity: String) -> String { snake(rootEntity) + "_id" }
    static let position = "position"

    static func snake(_ name: String) -> String {
        var out = ""
        for (i, c) in name.enumerated() {
            if c.isUppercase { if i > 0 { out.append("_") }; out += c.lowercased() } else { out.append(c) }
        }
        return out
    }

    static func fileExtension(_ format: Format) -> String { format == .tsv ? "tsv" : "csv" }
}

/// Writes trips as related tables in a directory.
///
/// The files are written into a temporary directory beside the target, renamed into place at
/// `finish()`: the directory is complete or absent. An existing target is replaced only when it is
/// empty or holds nothing but the layout's own files.
final class CSVTablesWriter: RecordWriter {
    private struct Table {
        var output: ByteOutput
        var relationship: Int
        var attributes: CSVRowLayout.Attributes
        var isToMany: Bool
    }

    private let target: String
    private let temporary: String
    private let encoder: CSVCellEncoder
    private let rootAttributes: CSVRowLayout.Attributes
    private let trips: ByteOutput
    private var tables: [Table]
    private var fileNames: [String]
    private var count = 0
    private var line: [UInt8] = []
    private var done = false

    init(directory: String, format: Format, options: WriteOptions) throws {
        target = directory
        temporary = try TemporaryPaths.makeDirectory(beside: directory)
        encoder = CSVCellEncoder(dialect: CSVDialect(format, delimiter: options.csvDelimiter), safeFormulas: options.csvSafeFormulas)
        let ext = CSVTableNames.fileExtension(format)
        let schema = options.schema
        let root = schema.rootEntity
        rootAttributes = CSVRowLayout.attributes(of: root)
        let key = CSVTableNames.key(root.name)
        var names: [String] = []
        var made: [Table] = []
        var tripsOutput: ByteOutput?
        do {
            let tripsName = "\(CSVTableNames.table(root.name)).\(ext)"
            let output = try ByteOutput(.file("\(temporary)/\(tripsName)"))
            tripsOutput = output
            names.append(tripsName)
            try CSVTablesWriter.writeHeader(output, [key] + rootAttributes.names, encoder: encoder)
            for (i, r) in root.relationships.enumerated() {
                guard let destination = schema.entity(r.destination) else { continue }
                let name = "\(CSVTableNames.table(destination.name)).\(ext)"
                let output = try ByteOutput(.file("\(temporary)/\(name)"))
                names.append(name)
                let attributes = CSVRowLayout.attributes(of: destination)
                try CSVTablesWriter.writeHeader(output, [key] + (r.isToMany ? [CSVTableNames.position] : []) + attributes.names,
                                                encoder: encoder)
                made.append(Table(output: output, relationship: i, attributes: attributes, isToMany: r.isToMany))
            }
        } catch {
            tripsOutput?.discard()
            for t in made { t.output.discard() }
            FileSystem.removeDirectory(temporary)
            throw error
        }
        trips = tripsOutput!
        tables = made
        fileNames = names
    }

    deinit { if !done { abort() } }

    /// Writes a header row of `names`.
    static func writeHeader(_ output: ByteOutput, _ names: [String], encoder: CSVCellEncoder) throws {
        var line: [UInt8] = []
        for (i, n) in names.enumerated() {
            if i > 0 { line.append(encoder.dialect.separator) }
            var name = n
            name.withUTF8 { encoder.appendText($0, to: &line) }
        }
        line.append(10)
        try output.write(line)
    }

    func write(_ object: ModelObject) throws {
        count += 1
        var key = String(count)
        let separator = encoder.dialect.separator
        line.removeAll(keepingCapacity: true)
        key.withUTF8 { line.append(contentsOf: $0) }
        for (slot, marksEmpty) in rootAttributes.slots {
            line.append(separator)
            if slot < object.attributes.count { encoder.append(object.attributes[slot], marksEmpty: marksEmpty, to: &line) }
        }
        line.append(10)
        try trips.write(line)
        for t in tables {
            let related = t.relationship < object.relationships.count ? object.relationships[t.relationship].objects : []
            for (n, o) in related.enumerated() {
                line.removeAll(keepingCapacity: true)
                key.withUTF8 { line.append(contentsOf: $0) }
                if t.isToMany { line.append(separator); line.append(contentsOf: String(n + 1).utf8) }
                for (slot, marksEmpty) in t.attributes.slots {
                    line.append(separator)
                    if slot < o.attributes.count { encoder.append(o.attributes[slot], marksEmpty: marksEmpty, to: &line) }
                }
                line.append(10)
                try t.output.write(line)
            }
        }
    }

    func finish() throws {
        do {
            try trips.commit()
            for t in tables { try t.output.commit() }
            try moveIntoPlace()
            done = true
        } catch {
            abort()
            throw error
        }
    }

    func abort() {
        guard !done else { return }
        done = true
        trips.discard()
        for t in tables { t.output.discard() }
        removeTemporary()
    }

    private func removeTemporary() { CSVTablesWriter.removeTemporary(temporary, files: fileNames) }

    /// Removes an unfinished directory `temporary` and the `files` written in it.
    static func removeTemporary(_ temporary: String, files: [String]) {
        for name in files { FileSystem.remove("\(temporary)/\(name)") }
        FileSystem.removeDirectory(temporary)
        TemporaryPaths.unregister(temporary)
    }

    /// Renames the finished directory over the target, setting an old one aside until then.
    private func moveIntoPlace() throws {
        let ours = Set(["csv", "tsv"].flatMap { ext in fileNames.map { n in n.split(separator: ".").first.map { "\($0).\(ext)" } ?? n } })
        try CSVTablesWriter.moveIntoPlace(temporary, target: target, ours: ours)
    }

    /// Renames the finished directory `temporary` over `target`, setting an old one aside until then;
    /// an existing target is replaced only when it holds nothing but files named in `ours`.
    static func moveIntoPlace(_ temporary: String, target: String, ours: Set<String>) throws {
        var setAside: String?
        if let kind = FileSystem.kind(target, followingLinks: false) {
            guard kind == .directory else {
                throw TripError(.cantCreate, "\(target): exists and is not a directory")
            }
            let existing = (try? FileSystem.entries(of: target)) ?? []
            guard existing.allSatisfy(ours.contains) else {
                throw TripError(.cantCreate, "\(target): exists and holds files other than a tables layout's",
                                notes: ["give a new or empty directory"])
            }
            let aside = temporary + ".old"
            try FileSystem.rename(target, to: aside, name: target, doing: "cannot replace")
            setAside = aside
        }
        do {
            try FileSystem.rename(temporary, to: target)
        } catch {
            if let setAside { try? FileSystem.rename(setAside, to: target) }
            throw error
        }
        TemporaryPaths.unregister(temporary)
        if let setAside { FileSystem.removeDirectoryAndFiles(setAside) }
    }
}
