import TripKit

/// An Xcode data model as `ObjectModel`: an `.xcdatamodeld` folder (the version its
/// `.xccurrentversion` names, or its only `.xcdatamodel`), an `.xcdatamodel` folder, or the
/// `contents` XML inside one. Parsed with the XML reader's libxml2 event parser (`XMLTripParser`,
/// for a document of any shape), never by calls of its own.
///
/// What `contents` holds: `<model userDefinedModelVersionIdentifier=…>` with one `<entity name=
/// parentEntity= isAbstract=>` per entity, holding `<attribute name= attributeType= optional=
/// transient= defaultValueString= valueTransformerName= customClassName=>`, `<relationship name=
/// destinationEntity= inverseName= toMany= ordered= optional= maxCount= deletionRule=>` and
/// `<uniquenessConstraints><uniquenessConstraint><constraint value=…>`. A missing `optional` is
/// "NO" (Xcode writes `optional="YES"`); a relationship without `toMany="YES"` is to-one.
enum XcodeModel {
    /// The model at `path`, and the `contents` file it was read from.
    static func read(_ path: String) throws -> (model: ObjectModel, file: String) {
        let file = try contentsFile(path)
        return (try model(contents: file), file)
    }

    /// The `contents` file a model path names.
    static func contentsFile(_ path: String) throws -> String {
        let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        guard try FileSystem.kind(of: trimmed, failing: .noInput) == .directory else { return trimmed }
        if trimmed.hasSuffix(".xcdatamodel") { return trimmed + "/contents" }
        return trimmed + "/" + (try currentVersion(of: trimmed, names: try FileSystem.entries(of: trimmed))) + "/contents"
    }

    /// The folder name of the current version of the `.xcdatamodeld` at `bundle` whose entries are
    /// `names`: the one its `.xccurrentversion` names, else its only `.xcdatamodel`.
    static func currentVersion(of bundle: String, names: [String]) throws -> String {
        if names.contains(".xccurrentversion") {
            let plist = try elements(bundle + "/.xccurrentversion")
            // <dict><key>_XCCurrentVersionName</key><string>Model 2.xcdatamodel</string></dict>
            let texts = plist.filter { $0.name == "key" || $0.name == "string" }
            if let i = texts.firstIndex(where: { $0.name == "key" && $0.text == "_XCCurrentVersionName" }), i + 1 < texts.count,
               texts[i + 1].name == "string" {
                let version = texts[i + 1].text
                guard !version.contains("/"), names.contains(version) else {
                    throw TripError.data("\(bundle)/.xccurrentversion: the current version \(version.quotedForMessage) is not in the folder")
                }
                return version
            }
            throw TripError.data("\(bundle)/.xccurrentversion: expected _XCCurrentVersionName, found none")
        }
        let versions = names.filter { $0.hasSuffix(".xcdatamodel") }.sorted()
        guard versions.count == 1 else {
            throw TripError.data("\(bundle): expected an .xcdatamodel folder or an .xcdatamodeld with .xccurrentversion, found "
                                 + (versions.isEmpty ? "neither" : "\(versions.count) versions and no .xccurrentversion"))
        }
        return versions[0]
    }

    /// One element of a document: its name, its depth (the root is 1), its attributes, and its text.
    struct Element {
        var name: String
        var depth: Int
        var attributes: [String: String] = [:]
        var text = ""
        var line = 0
    }

    /// The elements of an XML file, in document order (at most `limit` of them).
    static func elements(_ path: String, limit: Int = 1 << 20) throws -> [Element] {
        let input = try ByteInput(InputLocation(path))
        let parser = try XMLTripParser(input: input, options: ReadOptions(), encoding: .utf8, recordElement: nil)
        var out: [Element] = []
        var open: [Int] = []
        var unplaced: [(index: Int, offset: Int)] = []
        var batch: XMLEventBatch?
        repeat {
            let b = parser.parseChunk(reusing: batch)
            batch = b
            let events = b.events
            var i = 0
            while i < events.count {
                let e = events[i]
                switch e.kind {
                case .start:
                    guard out.count < limit else { throw TripError.data("\(path): more than \(limit) elements") }
                    var element = Element(name: e.name.map { String(cString: $0) } ?? "", depth: open.count + 1, line: Int(e.line))
                    // The parser places only the root and its children; the rest by their offset, counted below.
                    if e.line <= 0 && e.source >= 0 { unplaced.append((out.count, e.source)) }
                    for a in 0..<Int(e.count) where i + 1 + a < events.count {
                        let attr = events[i + 1 + a]
                        let value = String(decoding: UnsafeBufferPointer(start: b.bytes + attr.offset, count: Int(attr.count)), as: UTF8.self)
                        element.attributes[attr.name.map { String(cString: $0) } ?? ""] = value
                    }
                    i += Int(e.count)
                    open.append(out.count)
                    out.append(element)
                case .text:
                    if let top = open.last {
                        out[top].text += String(decoding: UnsafeBufferPointer(start: b.bytes + e.offset, count: Int(e.count)), as: UTF8.self)
                    }
                case .end:
                    _ = open.popLast()
                case .attribute:
                    break
                }
                i += 1
            }
            if let failure = b.failure { throw failure }
        } while batch?.isLast == false
        if !unplaced.isEmpty { try placeLines(path, &out, unplaced) }
        return out
    }

    /// Gives each element of `unplaced` (in document order) the line of its input offset, counting
    /// the file's newlines in a second pass of 64 KiB reads.
    private static func placeLines(_ path: String, _ elements: inout [Element], _ unplaced: [(index: Int, offset: Int)]) throws {
        let input = try ByteInput(InputLocation(path))
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var line = 1, consumed = 0, k = 0
        while k < unplaced.count {
            let n = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
            if n == 0 { break }
            for i in 0..<n {
                while k < unplaced.count && unplaced[k].offset <= consumed + i { elements[unplaced[k].index].line = line; k += 1 }
                if buffer[i] == 0x0A { line += 1 }
            }
            consumed += n
        }
        while k < unplaced.count { elements[unplaced[k].index].line = line; k += 1 }
    }

    /// The model a `contents` file describes.
    static func model(contents path: String) throws -> ObjectModel {
        var places: [String: String] = [:]
        return try model(contents: path, places: &places)
    }

    /// The model a `contents` file describes, and where each entity and property is declared
    /// (`path:line`, keyed `Entity` and `Entity.property`).
    static func model(contents path: String, places: inout [String: String]) throws -> ObjectModel {
        try model(elements: try elements(path), path: path, places: &places)
    }

    /// The model the `elements` of the `contents` file at `path` describe.
    static func model(elements: [Element], path: String, places: inout [String: String]) throws -> ObjectModel {
        guard let root = elements.first, root.name == "model" else {
            throw TripError.data("\(path): expected a <model> element, found <\(elements.first?.name ?? "")>")
        }
        var entities: [EntityDescription] = []
        var tuple: [String] = []
        for el in elements {
            let a = el.attributes
            let place = "\(path):\(el.line)"
            func flag(_ key: String) -> Bool { a[key] == "YES" }
            switch (el.depth, el.name) {
            case (2, "entity"):
                guard let name = a["name"], !name.isEmpty else { throw TripError.data("\(place): an <entity> without a name") }
                places[name] = place
                entities.append(EntityDescription(name, superentity: a["parentEntity"], isAbstract: flag("isAbstract"),
                                                  renamingIdentifier: a["elementID"]))
            case (3, "attribute"):
                guard !entities.isEmpty, let name = a["name"] else { throw TripError.data("\(place): an <attribute> without a name") }
                let typeName = a["attributeType"] ?? "Undefined"
                guard let kind = AttributeKind(name: typeName) else {
                    throw TripError.data("\(place): \(entities[entities.count - 1].name).\(name): unknown attributeType \(typeName.quotedForMessage)")
                }
                places["\(entities[entities.count - 1].name).\(name)"] = place
                var defaultValue = a["defaultValueString"].flatMap { ObjectValueText.value($0, kind: kind) }
                if kind == .date, let t = a["defaultDateTimeInterval"].flatMap(Double.init) { defaultValue = .date(t) }
                entities[entities.count - 1].attributes.append(AttributeDescription(
                    name, kind, isOptional: flag("optional"), isTransient: flag("transient"), defaultValue: defaultValue,
                    valueClassName: a["customClassName"], valueTransformerName: a["valueTransformerName"], renamingIdentifier: a["elementID"],
                    allowsExternalStorage: a["allowsExternalBinaryDataStorage"] == "YES"))
            case (3, "relationship"):
                guard !entities.isEmpty, let name = a["name"], let destination = a["destinationEntity"] else {
                    throw TripError.data("\(place): a <relationship> without a name or destinationEntity")
                }
                places["\(entities[entities.count - 1].name).\(name)"] = place
                let rules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]
                let ruleName = a["deletionRule"] ?? "Nullify"
                guard let rule = rules[ruleName] else {
                    throw TripError.data("\(place): \(entities[entities.count - 1].name).\(name): unknown deletionRule \(ruleName.quotedForMessage)")
                }
                entities[entities.count - 1].relationships.append(RelationshipDescription(
                    name, to: destination, inverse: a["inverseName"], toMany: flag("toMany"), ordered: flag("ordered"),
                    isOptional: flag("optional"), deleteRule: rule, renamingIdentifier: a["elementID"]))
            case (4, "uniquenessConstraint"):
                if !tuple.isEmpty, !entities.isEmpty { entities[entities.count - 1].uniquenessConstraints.append(tuple) }
                tuple = []
            case (5, "constraint"):
                if let v = a["value"] { tuple.append(v) }
            default:
                break
            }
            if el.depth <= 3, !tuple.isEmpty, !entities.isEmpty {
                // The last tuple of the entity before ends with the next element at its level or above.
                let owner = el.depth == 2 && el.name == "entity" ? entities.count - 2 : entities.count - 1
                if owner >= 0 { entities[owner].uniquenessConstraints.append(tuple) }
                tuple = []
            }
        }
        if !tuple.isEmpty, !entities.isEmpty { entities[entities.count - 1].uniquenessConstraints.append(tuple) }
        let identifier = root.attributes["userDefinedModelVersionIdentifier"] ?? ""
        let model = ObjectModel(entities: entities, versionIdentifiers: identifier.isEmpty ? [] : [identifier])
        do {
            try ModelCache.check(model)
        } catch let failure as BinaryPropertyList.Failure {
            throw TripError.data("\(path): \(failure)")
        }
        return model
    }
}
