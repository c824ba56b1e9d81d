import TripKit

/// What each column of a trip CSV's header means, resolved once per file so that a row is read by
/// position, with no lookup by name.
///
/// Names follow Miller's flatten convention: `name`, `startDate`, `livingAccommodation.address`,
/// `bucketList.2.title` (lists count from 1). Every spelling any version has is read (`start_date`,
/// `bucketListItem.1.title`, `livingAccommodations.placeName`), the transient `tripViews` is handed to
/// the builder (which ignores it), and a bare relationship column (`bucketList`, holding Miller's `[]`
/// for an empty list) is read as "no objects".
struct CSVColumnPlan {
    /// A column holding a scalar of the object it belongs to.
    struct Scalar {
        var column: Int
        /// The field in the builder's vocabulary, of the entity of the object.
        var field: Int
        /// An empty cell is no value, not the empty string: the attribute is not text, or it is a
        /// trip's required text (a trip's name and destination must not be empty).
        var emptyIsNull: Bool
        /// A Boolean attribute: `true` and `false` are compared as bytes, without making a String.
        var isBool = false
    }

    /// The columns of one related object: `livingAccommodation.*` or `bucketList.N.*`.
    struct Group {
        /// The relationship field of the trip.
        var relationship: Int
        /// 1 for a to-one relationship; the list position for a to-many one.
        var position: Int
        var scalars: [Scalar]
    }

    /// The trip's own scalars (and transient columns).
    var root: [Scalar] = []
    /// Bare relationship columns, by column and field.
    var whole: [(column: Int, field: Int)] = []
    /// Related objects, grouped, in the order the builder gets them.
    var groups: [Group] = []
    /// The names of columns no version declares.
    var unknown: [(column: Int, name: String)] = []
    /// Columns with an empty name (a spreadsheet's padding): a value there is an unknown field.
    var padding: [Int] = []
    /// An unnamed first column before named ones: the row labels R's `write.csv` and pandas'
    /// `to_csv` write by default (1, 2, … or 0, 1, …), not read.
    var rowLabels: Int?
    /// The number of cells a row must have.
    var width = 0

    /// Resolves a header.
    ///
    /// Throws a data error naming the place for a repeated column, the required trip columns that are
    /// missing, and (unless `ignoreUnknown`) the columns that no version declares.
    /// `skipping` names a column that is read apart (the tables layout's key).
    init(header names: [String], vocabulary: SchemaVocabulary, options: ReadOptions, skipping: Int? = nil,
         place: (Int) -> String) throws {
        width = names.count
        let rootEntity = vocabulary.rootEntity
        let rootIndex = CSVColumnPlan.index(of: vocabulary.entities[rootEntity])
        var entityIndexes: [Int: [String: Int]] = [:]
        var seen: [String: Int] = [:]
        var groupIndex: [Int: [Int: Int]] = [:]   // relationship -> position -> index in groups
        var rootNames: Set<String> = []

        var repeated: (column: Int, earlier: Int)?
        for (column, name) in names.enumerated() where column != skipping {
            // R and pandas write row labels under an unnamed first column.
            if name.isEmpty, column == 0, names.dropFirst().contains(where: { !$0.isEmpty }) { rowLabels = column; continue }
            // Spreadsheets pad rows with unnamed columns: they must stay empty.
            if name.isEmpty { padding.append(column); continue }
            if let earlier = seen[name] {
                if repeated == nil { repeated = (column, earlier) }
                continue
            }
            seen[name] = column
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard let first = parts.first.map(String.init), let field = rootIndex[first] else {
                unknown.append((column, name)); continue
            }
            let kind = vocabulary.entities[rootEntity].fields[field].kind
            switch (kind, parts.count) {
            case (.attribute(let type), 1):
                let required = vocabulary.schemas.contains { $0.rootEntity.attributes.contains { $0.name == first && $0.isRequired } }
                root.append(Scalar(column: column, field: field, emptyIsNull: type != .string || required, isBool: type == .bool))
                rootNames.insert(first)
            case (.transient, 1):
                root.append(Scalar(column: column, field: field, emptyIsNull: true))
            case (.toMany, 1), (.toOne, 1):
                whole.append((column, field))
            case (.toOne(let destination), 2), (.toMany(let destination), 3):
                var position = 1
                if parts.count == 3 {
                    guard let n = CSVColumnPlan.position(parts[1]) else { unknown.append((column, name)); continue }
                    position = n
                }
                if entityIndexes[destination] == nil {
                    entityIndexes[destination] = CSVColumnPlan.index(of: vocabulary.entities[destination])
                }
                let attributeName = String(parts[parts.count - 1])
                guard let attribute = entityIndexes[destination]![attributeName] else {
                    unknown.append((column, name)); continue
                }
                let attributeKind = vocabulary.entities[destination].fields[attribute].kind
                var type: AttributeType?
                switch attributeKind {
                case .attribute(let t): type = t
                case .transient: type = nil
                default: unknown.append((column, name)); continue
                }
                let scalar = Scalar(column: column, field: attribute, emptyIsNull: type != .string, isBool: type == .bool)
                if let g = groupIndex[field]?[position] {
                    groups[g].scalars.append(scalar)
                } else {
                    groupIndex[field, default: [:]][position] = groups.count
                    groups.append(Group(relationship: field, position: position, scalars: [scalar]))
                }
            default:
                unknown.append((column, name))
            }
        }
        // To-one objects first, then each list in position order: the builder appends in this order.
        groups.sort { a, b in
            if a.relationship != b.relationship {
                let aOne = CSVColumnPlan.isToOne(vocabulary, a.relationship), bOne = CSVColumnPlan.isToOne(vocabulary, b.relationship)
                if aOne != bOne { return aOne }
                return a.relationship < b.relationship
            }
            return a.position < b.position
        }

        try CSVColumnPlan.checkRequired(rootNames, names: names, vocabulary: vocabulary, options: options, place: place)
        if let repeated {
            throw TripError.data("\(place(repeated.column)): column \(names[repeated.column].quotedForMessage) appears twice (first as column \(repeated.earlier + 1))")
        }
        if !unknown.isEmpty && !options.ignoreUnknown {
            let list = unknown.prefix(8).map { $0.name.quotedForMessage }.joined(separator: ", ")
                + (unknown.count > 8 ? " and \(unknown.count - 8) more" : "")
            throw TripError.data("\(place(unknown[0].column)): unknown column\(unknown.count > 1 ? "s" : "") \(list) match\(unknown.count > 1 ? "" : "es") no schema version",
                                 notes: ["columns are trip fields (name, startDate, ...), livingAccommodation.FIELD and bucketList.N.FIELD",
                                         "to read the file without them, ignore unknown fields (--ignore-unknown)"])
        }
    }

    /// A header must name every required trip attribute of some version.
    private static func checkRequired(_ present: Set<String>, names: [String], vocabulary: SchemaVocabulary,
                                      options: ReadOptions, place: (Int) -> String) throws {
        var candidates = vocabulary.schemas
        if let v = options.sourceVersion, let i = vocabulary.versionIndex(v) { candidates = [vocabulary.schemas[i]] }
        var best: (missing: [String], version: SchemaVersion)?
        for schema in candidates.reversed() {
            let missing = schema.rootEntity.attributes.filter { $0.isRequired && !present.contains($0.name) }.map(\.name)
            if missing.isEmpty { return }
            if best == nil || missing.count < best!.missing.count { best = (missing, schema.versionIdentifier) }
        }
        guard let best else { return }
        var notes = ["a trip CSV has one row per trip: " + describeColumns(vocabulary.schemas.last!)]
        if !names.isEmpty {
            notes.append("found column\(names.count > 1 ? "s" : "") " + names.prefix(8).map(\.quotedForMessage).joined(separator: ", ")
                         + (names.count > 8 ? " and \(names.count - 8) more" : ""))
        }
        let list = best.missing.map(\.quotedForMessage).joined(separator: ", ")
        throw TripError.data("\(place(0)): missing trip column\(best.missing.count > 1 ? "s" : "") \(list) (as \(best.version) names them)",
                             notes: notes)
    }

    private static func describeColumns(_ schema: any VersionedSchema.Type) -> String {
        var parts = schema.rootEntity.persistedAttributes.map(\.name)
        for r in schema.rootEntity.relationships {
            parts.append(r.isToMany ? "\(r.name).N.FIELD" : "\(r.name).FIELD")
        }
        return parts.joined(separator: ", ")
    }

    private static func index(of entity: SchemaVocabulary.EntityFields) -> [String: Int] {
        var index: [String: Int] = [:]
        for (i, f) in entity.fields.enumerated() { index[f.name] = i }
        return index
    }

    private static func isToOne(_ vocabulary: SchemaVocabulary, _ field: Int) -> Bool {
        if case .toOne = vocabulary.entities[vocabulary.rootEntity].fields[field].kind { return true }
        return false
    }

    /// A list position: 1 to 1,000,000, digits only.
    private static func position(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 7, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let n = Int(text), n >= 1, n <= 1_000_000 else { return nil }
        return n
    }
}
