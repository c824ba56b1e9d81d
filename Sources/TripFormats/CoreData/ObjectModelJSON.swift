import TripKit

/// `ObjectModel` as JSON: what `tripconv schema --model STORE --json` prints and `--model
/// model.json` reads back to the same model.
///
/// ```json
/// {"versionIdentifiers": ["1.0.0"], "inferences": [],
///  "entities": [{"name": "Item", "superentity": null, "abstract": false, "renamingIdentifier": null,
///    "uniquenessConstraints": [["name"]],
///    "attributes": [{"name": "name", "type": "String", "optional": false, "transient": false, "default": null,
///                    "valueClassName": "NSString", "valueTransformerName": null, "renamingIdentifier": null}],
///    "relationships": [{"name": "craftingRecipe", "destination": "CraftingRecipe", "inverse": "producedItem",
///                       "toMany": false, "ordered": false, "optional": true, "deleteRule": "nullify",
///                       "renamingIdentifier": null}]}]}
/// ```
/// A default is the text of its value (`ObjectValueText`), read back by the attribute's type.
/// Members the reader does not know (`source`, `store`, which `schema --json` adds) are let be.
package enum ObjectModelJSON {
    package static func node(_ model: ObjectModel) -> [(String, JSONText.Node)] {
        func opt(_ s: String?) -> JSONText.Node { s.map(JSONText.Node.string) ?? .null }
        return [
            ("versionIdentifiers", .array(model.versionIdentifiers.map(JSONText.Node.string))),
            ("inferences", .array(model.inferences.map(JSONText.Node.string))),
            ("entities", .array(model.entities.map { e in
                .object([
                    ("name", .string(e.name)), ("superentity", opt(e.superentity)), ("abstract", .bool(e.isAbstract)),
                    ("renamingIdentifier", opt(e.renamingIdentifier)),
                    ("uniquenessConstraints", .array(e.uniquenessConstraints.map { .array($0.map(JSONText.Node.string)) })),
                    ("attributes", .array(e.attributes.map { a in
                        .object([
                            ("name", .string(a.name)), ("type", .string(a.kind.description)), ("optional", .bool(a.isOptional)),
                            ("transient", .bool(a.isTransient)), ("default", opt(a.defaultValue.flatMap(ObjectValueText.text))),
                            ("valueClassName", opt(a.valueClassName)), ("valueTransformerName", opt(a.valueTransformerName)),
                            ("renamingIdentifier", opt(a.renamingIdentifier)),
                        ] + (a.allowsExternalStorage ? [("externalStorage", .bool(true))] : []))
                    })),
                    ("relationships", .array(e.relationships.map { r in
                        .object([
                            ("name", .string(r.name)), ("destination", .string(r.destination)), ("inverse", opt(r.inverse)),
                            ("toMany", .bool(r.isToMany)), ("ordered", .bool(r.isOrdered)), ("optional", .bool(r.isOptional)),
                            ("deleteRule", .string(r.deleteRule.rawValue)), ("renamingIdentifier", opt(r.renamingIdentifier)),
                        ])
                    })),
                ])
            })),
        ]
    }

    /// A JSON value, as the model reader needs it.
    indirect enum Value {
        case null, bool(Bool), number(String), string(String), array([Value]), object([String: Value])
        subscript(_ key: String) -> Value? { if case .object(let o) = self { return o[key] } else { return nil } }
    }

    /// The model in a JSON file; a file that is not one is `.data` naming the place.
    package static func read(_ path: String) throws -> ObjectModel {
        let input = try ByteInput(InputLocation(path))
        return try model(try parse(path) { try input.read(into: $0) }, path: path)
    }

    /// The model in `text` (a tripconv SQLite store's `tripconv_model` row); `name` is the place
    /// messages give.
    package static func read(text: [UInt8], name: String) throws -> ObjectModel {
        try model(try parse(name, source: source(of: text)), path: name)
    }

    /// A plan (`{"versions": [model, …], "stages": […]}`), or one model as a plan of one version with
    /// no stage: what `--model plan.json` and `tripconv-swift-model` give.
    package static func readPlan(_ path: String) throws -> ModelPlan {
        let input = try ByteInput(InputLocation(path))
        return try plan(try parse(path) { try input.read(into: $0) }, path: path)
    }

    /// A plan from JSON bytes; `name` places its errors.
    package static func readPlan(bytes: [UInt8], name: String) throws -> ModelPlan {
        try plan(try parse(name, source: source(of: bytes)), path: name)
    }

    /// A scanner's source reading `bytes` from the start.
    private static func source(of bytes: [UInt8]) -> JSONScanner.Source {
        var offset = 0
        return { buffer in
            let n = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + n])) }
            offset += n
            return n
        }
    }

    private static func parse(_ path: String, source: @escaping JSONScanner.Source) throws -> Value {
        var scanner = JSONScanner(source: source)
        do {
            try scanner.skipByteOrderMark()
            let root = try value(&scanner, depth: 0)
            if try scanner.peek() != nil { throw scanner.unexpected("the end of input after the model") }
            return root
        } catch let e as JSONSyntaxError {
            throw TripError.data("\(path):\(e.line):\(e.column): \(e.message)")
        }
    }

    /// `plan` as JSON: its versions (each a model as `node(_:)` gives it), stages, notes and places.
    package static func node(_ plan: ModelPlan) -> [(String, JSONText.Node)] {
        [
            ("versions", .array(plan.versions.map { .object(node($0)) })),
            ("stages", .array(plan.stages.map { s in
                .object([("kind", .string(s.kind.rawValue)), ("from", .string(s.from)), ("to", .string(s.to)),
                         ("hooks", .array(s.hooks.map(JSONText.Node.string))), ("place", s.place.map(JSONText.Node.string) ?? .null)])
            })),
            ("notes", .array(plan.notes.map(JSONText.Node.string))),
            ("places", .object(plan.places.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
        ]
    }

    private static func plan(_ root: Value, path: String) throws -> ModelPlan {
        guard case .array(let versionValues)? = root["versions"] else {
            return ModelPlan(versions: [try model(root, path: path)], stages: [])
        }
        func text(_ v: Value?, _ what: String) throws -> String {
            guard case .string(let s)? = v else { throw TripError.data("\(path): \(what): expected a string") }
            return s
        }
        func texts(_ v: Value?, _ what: String) throws -> [String] {
            guard let v, case .array(let a) = v else { return [] }
            return try a.map { try text($0, what) }
        }
        let versions = try versionValues.enumerated().map { i, v in try model(v, path: "\(path): versions[\(i)]") }
        var stages: [ModelPlan.Stage] = []
        if case .array(let stageValues)? = root["stages"] {
            for (i, sv) in stageValues.enumerated() {
                let kindName = try text(sv["kind"], "stages[\(i)].kind")
                guard let kind = MigrationStage.Kind(rawValue: kindName) else {
                    throw TripError.data("\(path): stages[\(i)].kind: expected lightweight or custom, found \(kindName.quotedForMessage)")
                }
                var place: String?
                if case .string(let p)? = sv["place"] { place = p }
                stages.append(ModelPlan.Stage(kind, from: try text(sv["from"], "stages[\(i)].from"), to: try text(sv["to"], "stages[\(i)].to"),
                                              hooks: try texts(sv["hooks"], "stages[\(i)].hooks"), place: place))
            }
        }
        var places: [String: String] = [:]
        if case .object(let o)? = root["places"] { for (k, v) in o { places[k] = try text(v, "places.\(k)") } }
        let plan = ModelPlan(versions: versions, stages: stages, notes: try texts(root["notes"], "notes"), places: places)
        for stage in plan.stages where plan.version(stage.from) == nil || plan.version(stage.to) == nil {
            throw TripError.data("\(path): stage \(stage.from) -> \(stage.to) names a version the plan does not have")
        }
        return plan
    }

    private static func value(_ s: inout JSONScanner, depth: Int) throws -> Value {
        guard depth < 64 else { throw s.unexpected("nesting no deeper than 64") }
        guard let b = try s.peek() else { throw s.unexpected("a JSON value") }
        switch b {
        case 0x7B:
            s.pos += 1
            var members: [String: Value] = [:]
            if try s.peek() == 0x7D { s.pos += 1; return .object(members) }
            while true {
                guard try s.peek() == 0x22 else { throw s.unexpected("an object key (a string)") }
                let key = String(decoding: try s.readString(), as: UTF8.self)
                guard try s.peek() == 0x3A else { throw s.unexpected("':' after an object key") }
                s.pos += 1
                members[key] = try value(&s, depth: depth + 1)
                let c = try s.peek()
                if c == 0x2C { s.pos += 1; continue }
                if c == 0x7D { s.pos += 1; return .object(members) }
                throw s.unexpected("',' or '}' after an object member")
            }
        case 0x5B:
            s.pos += 1
            var items: [Value] = []
            if try s.peek() == 0x5D { s.pos += 1; return .array(items) }
            while true {
                items.append(try value(&s, depth: depth + 1))
                let c = try s.peek()
                if c == 0x2C { s.pos += 1; continue }
                if c == 0x5D { s.pos += 1; return .array(items) }
                throw s.unexpected("',' or ']' after an array element")
            }
        case 0x22: return .string(String(decoding: try s.readString(), as: UTF8.self))
        case 0x2D, 0x30...0x39: return .number(String(decoding: try s.readNumber(), as: UTF8.self))
        case 0x74, 0x66, 0x6E:
            switch try s.readLiteral() {
            case .true: return .bool(true)
            case .false: return .bool(false)
            case .null: return .null
            }
        default: throw s.unexpected("a JSON value")
        }
    }

    private static func model(_ root: Value, path: String) throws -> ObjectModel {
        func fail(_ what: String) -> TripError { TripError.data("\(path): \(what)") }
        func string(_ v: Value?, _ what: String) throws -> String? {
            switch v {
            case nil, .null?: return nil
            case .string(let s)?: return s
            default: throw fail("\(what): expected a string or null")
            }
        }
        func required(_ v: Value?, _ what: String) throws -> String {
            guard let s = try string(v, what) else { throw fail("\(what): expected a string, found none") }
            return s
        }
        func bool(_ v: Value?, _ what: String, _ absent: Bool) throws -> Bool {
            switch v {
            case nil, .null?: return absent
            case .bool(let b)?: return b
            default: throw fail("\(what): expected true or false")
            }
        }
        func array(_ v: Value?, _ what: String) throws -> [Value] {
            switch v {
            case nil, .null?: return []
            case .array(let a)?: return a
            default: throw fail("\(what): expected an array")
            }
        }
        guard case .array(let entityValues)? = root["entities"] else { throw fail("expected a model object with \"entities\", found none") }
        var entities: [EntityDescription] = []
        for (i, ev) in entityValues.enumerated() {
            let name = try required(ev["name"], "entities[\(i)].name")
            var e = EntityDescription(name, superentity: try string(ev["superentity"], "\(name).superentity"),
                                      isAbstract: try bool(ev["abstract"], "\(name).abstract", false),
                                      renamingIdentifier: try string(ev["renamingIdentifier"], "\(name).renamingIdentifier"))
            e.uniquenessConstraints = try array(ev["uniquenessConstraints"], "\(name).uniquenessConstraints").map { t in
                try array(t, "\(name).uniquenessConstraints").map { try required($0, "\(name).uniquenessConstraints") }
            }
            for av in try array(ev["attributes"], "\(name).attributes") {
                let an = try required(av["name"], "\(name).attributes[].name")
                let what = "\(name).\(an)"
                let typeName = try required(av["type"], "\(what).type")
                guard let kind = AttributeKind(name: typeName) else { throw fail("\(what).type: unknown type \(typeName.quotedForMessage)") }
                var defaultValue: ObjectValue?
                if let text = try string(av["default"], "\(what).default") {
                    guard let v = ObjectValueText.value(text, kind: kind) else { throw fail("\(what).default: \(text.quotedForMessage) is no \(kind)") }
                    defaultValue = v
                }
                e.attributes.append(AttributeDescription(
                    an, kind, isOptional: try bool(av["optional"], "\(what).optional", true),
                    isTransient: try bool(av["transient"], "\(what).transient", false), defaultValue: defaultValue,
                    valueClassName: try string(av["valueClassName"], "\(what).valueClassName"),
                    valueTransformerName: try string(av["valueTransformerName"], "\(what).valueTransformerName"),
                    renamingIdentifier: try string(av["renamingIdentifier"], "\(what).renamingIdentifier"),
                    allowsExternalStorage: try bool(av["externalStorage"], "\(what).externalStorage", false)))
            }
            for rv in try array(ev["relationships"], "\(name).relationships") {
                let rn = try required(rv["name"], "\(name).relationships[].name")
                let what = "\(name).\(rn)"
                let ruleName = try string(rv["deleteRule"], "\(what).deleteRule") ?? "nullify"
                guard let rule = DeleteRule(rawValue: ruleName) else { throw fail("\(what).deleteRule: unknown rule \(ruleName.quotedForMessage)") }
                e.relationships.append(RelationshipDescription(
                    rn, to: try required(rv["destination"], "\(what).destination"), inverse: try string(rv["inverse"], "\(what).inverse"),
                    toMany: try bool(rv["toMany"], "\(what).toMany", false), ordered: try bool(rv["ordered"], "\(what).ordered", false),
                    isOptional: try bool(rv["optional"], "\(what).optional", true), deleteRule: rule,
                    renamingIdentifier: try string(rv["renamingIdentifier"], "\(what).renamingIdentifier")))
            }
            entities.append(e)
        }
        let model = ObjectModel(entities: entities,
                                versionIdentifiers: try array(root["versionIdentifiers"], "versionIdentifiers").map { try required($0, "versionIdentifiers") },
                                inferences: try array(root["inferences"], "inferences").map { try required($0, "inferences") })
        do {
            try ModelCache.check(model)
        } catch let failure as BinaryPropertyList.Failure {
            throw fail(failure.description)
        }
        return model
    }
}
