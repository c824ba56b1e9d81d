import TripKit

/// Which version of an app's plan an input's objects were written at (issue 27): a probe per kind of
/// input gathers `ModelVersionEvidence` from its beginning only, and `ModelVersionDetection` (TripKit)
/// weighs it. A Core Data or SwiftData store: `Z_METADATA`'s `NSStoreModelVersionIdentifiers`, its
/// `NSStoreModelVersionHashes` (compared with an `.xcdatamodeld`'s versions' own), else
/// its model's entities and attributes (from its model cache with their kinds, else its tables' `ZNAME`
/// columns, in lower case); tripconv's SQLite or PostgreSQL store of objects: the model it carries
/// (its version identifiers, else its names and kinds). JSON, JSON Lines and YAML exports: the members
/// of the first `objectsPerEntity` objects of each entity, with the kinds their values can be read as;
/// XML: the child elements of the first objects; a CSV or TSV tables directory: each file's header.
/// No more than `objectsAtMost` objects are parsed (a JSON document's later entities may go unseen).
///
/// ```swift
/// let (version, evidence) = try ObjectVersionDetection.detect(input: "trips.json", format: nil, plan: plan, options: RunOptions())
/// ```
public enum ObjectVersionDetection {
    /// The objects of each entity whose members are looked at.
    public static let objectsPerEntity = 100
    /// The objects parsed at most, whatever their entity.
    public static let objectsAtMost = 100_000

    /// The version of `plan` the objects of `input` are at, with the sentences that told it; `format`
    /// nil is told from the input (a store by its bytes, an export by its extension, a directory of
    /// tables by its files). A name no version declares, or a marker naming no version, is exit 65.
    public static func detect(input: String, format: Format?, plan: ModelPlan, options: RunOptions) throws -> (version: String, evidence: [String]) {
        let verdict = try self.verdict(input: input, format: format, plan: plan, options: options)
        return (verdict.version, verdict.evidence)
    }

    /// The whole verdict: the version, what decided it, the sentences, the versions it cannot be told from.
    public static func verdict(input: String, format: Format?, plan: ModelPlan, options: RunOptions) throws -> ModelVersionVerdict {
        let seen = try evidence(input: input, format: format, plan: plan, options: options)
        return try ModelVersionDetection.detect(seen, plan: plan, input: Format.isPostgreSQLAddress(input) ? Format.redactedPostgreSQLAddress(input) : input)
    }

    /// What `input` shows of its version: the probe of its kind.
    public static func evidence(input: String, format: Format?, plan: ModelPlan, options: RunOptions) throws -> ModelVersionEvidence {
        if Format.isPostgreSQLAddress(input) {
            return of(model: try PGObjectReader(address: input, schema: options.reading.pgSchema).model, place: "tripconv_model versionIdentifiers")
        }
        if ObjectConversion.isObjectStore(input) {
            return of(model: try SQLiteObjectReader.model(storeAt: input), place: "tripconv_model versionIdentifiers")
        }
        if StoreModel.isStoreFile(input) {
            let store = try StoreModel.read(storeAt: input)
            // Core Data keeps a column, and its model cache a relationship, for the inverse of a relationship
            // the app declared without one: the relationships of a store's model are no evidence.
            var seen = of(model: store.model, place: "Z_METADATA NSStoreModelVersionIdentifiers", kinds: store.source != .tables, relationships: false)
            seen.markers = store.versionIdentifiers.filter { !$0.isEmpty }
            seen.ignoresCase = store.source == .tables
            if !store.versionHashes.isEmpty { seen.versionHashes = store.versionHashes; seen.versionHashesPlace = "Z_METADATA NSStoreModelVersionHashes" }
            return seen
        }
        if FileSystem.kind(input) == .directory {
            let f = format ?? (((try? FileSystem.entries(of: input)) ?? []).contains { $0.hasSuffix(".tsv") } ? .tsv : .csv)
            guard f == .csv || f == .tsv else { throw TripError.usage("\(input): a directory of objects is a CSV or TSV tables directory; pass --from csv or tsv") }
            return try tables(input, format: f, options: options.reading)
        }
        guard let f = format ?? Format(streamPath: input), [.json, .jsonl, .yaml, .xml, .csv, .tsv].contains(f) else {
            throw TripError.usage("\(input): objects of a model are read from JSON, JSON Lines, YAML, XML, or a CSV or TSV tables directory; pass --from")
        }
        switch f {
        case .xml: return try xml(input, options: options.reading)
        case .csv, .tsv: throw TripError.usage("\(input): the objects of a model in \(f.rawValue) are a directory of tables, one file per entity; name the directory")
        default: return try graph(input, format: f, plan: plan, options: options.reading)
        }
    }

    /// A model a store carries: its version identifiers as the marker, else its names (and kinds).
    static func of(model: ObjectModel, place: String, kinds: Bool = true, relationships: Bool = true) -> ModelVersionEvidence {
        var seen = ModelVersionEvidence()
        seen.markers = model.versionIdentifiers.filter { !$0.isEmpty }
        seen.markerPlace = place
        seen.looked = "the store's model"
        for (i, e) in model.entities.enumerated() where !e.isAbstract {
            seen.noteEntity(e.name)
            for a in model.allAttributes(of: i) where !a.isTransient {
                seen.note(e.name, a.name, kinds: kinds ? [a.kind] : nil, seen: kinds ? "a \(a.kind) column" : nil)
            }
            if relationships { for r in model.allRelationships(of: i) { seen.note(e.name, r.name, shape: r.isToMany ? .list : .scalar) } }
        }
        // A model read from tables guesses no uniqueness the store does not declare; one from a model cache or tripconv's store says it.
        if kinds { seen.uniqueness = Dictionary(model.entities.filter { !$0.isAbstract }.map { ($0.name, $0.uniquenessConstraints) }) { a, _ in a } }
        return seen
    }

    /// JSON, JSON Lines or YAML: the members of the first objects of each entity. The parsers are given
    /// every entity name of every version, so that an older export's entities are known.
    static func graph(_ input: String, format: Format, plan: ModelPlan, options: ReadOptions) throws -> ModelVersionEvidence {
        var names: [String] = []
        for v in plan.versions { for e in v.entities where !names.contains(e.name) { names.append(e.name) } }
        let model = ObjectModel(entities: names.map { EntityDescription($0) })
        let bytes = try ByteInput(InputLocation(input), options: options)
        var parser: any GraphParsing = format == .yaml ? YAMLGraphParser(bytes, model: model) : JSONGraphParser(bytes, isLines: format == .jsonl, model: model)
        var seen = ModelVersionEvidence()
        seen.looked = "the first \(objectsPerEntity) objects of each entity"
        var parsed = 0
        while parsed < objectsAtMost, let item = try parser.next() {
            switch item {
            case .rejected(let r):
                if r.reason.hasPrefix("\"@entity\" is not an entity") {
                    throw TripError.data("\(r.place): \(r.reason), in no version of the plan (\(plan.versions.map { $0.versionIdentifiers.first ?? "" }.joined(separator: ", ")))")
                }
            case .object(let entity, let fields, _):
                parsed += 1
                let name = names[entity]
                if let e = seen.entities.first(where: { $0.name == name }), e.objects >= objectsPerEntity { continue }
                seen.noteEntity(name, object: true)
                for field in fields where !field.name.hasPrefix("@") {
                    switch field.value {
                    case .scalar(.null): seen.note(name, field.name)
                    case .scalar(let s): seen.note(name, field.name, kinds: kinds(of: s), seen: words(s))
                    case .list: seen.note(name, field.name, seen: "arrays", shape: .list)
                    case .other(let what): seen.note(name, field.name, seen: what, shape: .nested)
                    }
                }
            }
        }
        return seen
    }

    /// The kinds a scalar of a JSON or YAML export can be read as, as its object reader reads it.
    static func kinds(of s: GraphScalar) -> Set<AttributeKind> {
        Set(AttributeKind.allCases.filter { ObjectGraphDecoder.value(s, $0) != nil })
    }

    private static func words(_ s: GraphScalar) -> String {
        switch s {
        case .null: return "null"
        case .bool: return "booleans"
        case .number, .int: return "numbers"
        case .string: return "strings"
        }
    }

    /// The kinds a text (an XML element's, a CSV cell's) can be read as.
    static func kinds(ofText text: String) -> Set<AttributeKind> {
        Set(AttributeKind.allCases.filter { ObjectValueText.value(text, kind: $0) != nil })
    }

    /// XML: the child elements of the first objects of each entity; a child holding `<ref>`s is a relationship's.
    static func xml(_ input: String, options: ReadOptions) throws -> ModelVersionEvidence {
        var elements = try XMLObjectElements(path: input, options: options)
        var seen = ModelVersionEvidence()
        seen.looked = "the first \(objectsPerEntity) objects of each entity"
        var parsed = 0
        while parsed < objectsAtMost, let element = try elements.next() {
            parsed += 1
            if let e = seen.entities.first(where: { $0.name == element.entity }), e.objects >= objectsPerEntity { continue }
            seen.noteEntity(element.entity, object: true)
            for child in element.children {
                if child.refs != nil {
                    seen.note(element.entity, child.name, shape: .list)
                } else if let text = child.text {
                    seen.note(element.entity, child.name, kinds: kinds(ofText: text))
                } else {
                    seen.note(element.entity, child.name)
                }
            }
        }
        return seen
    }

    /// A CSV or TSV tables directory: `Entity.csv`'s header names the entity's attributes and to-ones;
    /// `Entity.relationship.csv` names a to-many of `Entity`.
    static func tables(_ directory: String, format: Format, options: ReadOptions) throws -> ModelVersionEvidence {
        let ext = "." + CSVTableNames.fileExtension(format)
        var seen = ModelVersionEvidence()
        seen.looked = "the header of each table"
        let dialect = CSVDialect(format, delimiter: options.csvDelimiter)
        let encoding = try TextEncoding.of(options)
        for file in try FileSystem.entries(of: directory).sorted() where file.hasSuffix(ext) && !file.hasPrefix(".") {
            let parts = file.dropLast(ext.count).split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2 { seen.note(parts[0], parts[1], shape: .list); continue }
            let separator: CSVRowReader.SeparatorChoice = options.csvDelimiter == nil ? .declaredOrDialect : .fixed
            let rows = CSVRowReader(try ByteInput(.file(directory + "/" + file), options: options), dialect: dialect, encoding: encoding, separator: separator)
            seen.noteEntity(parts[0])
            guard try rows.nextRow() else { continue }
            for name in rows.strings where !name.hasPrefix("@") { seen.note(parts[0], name) }
        }
        return seen
    }
}
