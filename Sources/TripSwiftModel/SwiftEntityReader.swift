import SwiftSyntax
import TripKit

/// One `@Model` class read into an `EntityDescription`: its stored properties (computed ones and
/// `static` ones are not stored), `@Attribute`, `@Relationship`, `@Transient` and `#Unique`.
struct SwiftEntityReader {
    let declarations: SwiftDeclarations
    /// The qualified names of the version's models, which a property's type may name.
    let versionModels: Set<String>
    /// What was kept out or ignored, each at its place (`file:line:column`).
    var notes: [(place: String, text: String)] = []
    var places: [String: String] = [:]

    static let kinds: [String: AttributeKind] = [
        "String": .string, "Substring": .string, "Int": .int64, "Int64": .int64, "UInt": .int64, "UInt64": .int64,
        "Int32": .int32, "UInt32": .int64, "Int16": .int16, "UInt16": .int32, "Int8": .int16, "UInt8": .int16,
        "Double": .double, "CGFloat": .double, "Float": .float, "Float32": .float, "Float64": .double, "Decimal": .decimal,
        "Bool": .bool, "Date": .date, "Data": .binary, "UUID": .uuid, "URL": .uri,
    ]

    /// What a property's type makes it.
    enum PropertyType {
        case attribute(AttributeKind, valueClass: String?)
        case toOne(String)
        case toMany(String)
    }

    mutating func entity(_ model: SwiftDeclarations.Located<ClassDeclSyntax>) throws -> EntityDescription {
        let c = model.node
        let name = c.name.text
        let scope = model.scope + [name]
        var entity = EntityDescription(name)
        places[name] = model.place
        if let first = c.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription,
           let parent = declarations.resolve(first, from: model.scope, in: { declarations.models[$0] != nil }) {
            entity.superentity = String(parent.split(separator: ".").last!)
        }
        // Its stored properties and macros, those under `#if` as `SwiftConditions` reads it.
        for decl in SwiftDeclarations.members(c.memberBlock.members) {
            if let v = decl.as(VariableDeclSyntax.self) {
                try property(v, scope: scope, file: model.file, into: &entity)
            } else if let m = decl.as(MacroExpansionDeclSyntax.self) {
                try macro(m, file: model.file, into: &entity)
            }
        }
        return entity
    }

    private mutating func macro(_ m: MacroExpansionDeclSyntax, file: SwiftDeclarations.SourceFile, into entity: inout EntityDescription) throws {
        switch m.macroName.text {
        case "Unique":
            for argument in m.arguments {
                guard let array = argument.expression.as(ArrayExprSyntax.self) else {
                    throw SwiftModelError(place: file.place(argument), message: "expected an array of key paths in #Unique, found "
                                          + argument.expression.trimmedDescription)
                }
                let names = try array.elements.map { try SwiftExpressions.keyPathName($0.expression, file: file) }
                // `#Unique<T>([\.id], [])`: an empty list makes nothing unique.
                if !names.isEmpty { entity.uniquenessConstraints.append(names) }
            }
        case "Index":
            notes.append((file.place(m), "#Index on \(entity.name) kept out: an index changes no data"))
        default:
            break
        }
    }

    private mutating func property(_ v: VariableDeclSyntax, scope: [String], file: SwiftDeclarations.SourceFile,
                                   into entity: inout EntityDescription) throws {
        if v.modifiers.contains(where: { ["static", "class"].contains($0.name.text) }) { return }
        let attributes = SwiftDeclarations.attributes(v.attributes)
        func attribute(_ named: String) -> AttributeSyntax? { attributes.first { $0.attributeName.trimmedDescription == named } }
        for binding in v.bindings {
            guard let id = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else {
                throw SwiftModelError(place: file.place(binding.pattern), message: "expected a property name, found "
                                      + binding.pattern.trimmedDescription)
            }
            if let accessors = binding.accessorBlock, SwiftEntityReader.isComputed(accessors) { continue }
            places["\(entity.name).\(id)"] = file.place(binding)
            let written: TypeSyntax
            if let t = binding.typeAnnotation?.type {
                written = t
            } else if let inferred = binding.initializer.flatMap({ SwiftExpressions.initialValueType($0.value) }) {
                written = TypeSyntax(IdentifierTypeSyntax(name: .identifier(inferred)))
            } else {
                throw SwiftModelError(place: file.place(binding), message: "expected a type annotation on \(entity.name).\(id), found "
                                      + "none and no literal to tell it by")
            }
            let (type, optional) = try propertyType(written, scope: scope, file: file)
            if let relationship = attribute("Relationship"), case .attribute = type {
                throw SwiftModelError(place: file.place(relationship), message: "expected @Relationship on a property of a model type, "
                                      + "found \(entity.name).\(id) of type \(written.trimmedDescription)")
            }
            switch type {
            case .attribute(let kind, let valueClass):
                var a = AttributeDescription(id, kind, isOptional: optional, valueClassName: valueClass)
                if attribute("Transient") != nil { a.isTransient = true }
                if let initial = binding.initializer?.value {
                    switch SwiftExpressions.defaultValue(initial, kind: kind, declarations: declarations, scope: scope, typeName: written) {
                    case .value(let value): a.defaultValue = value.isNull ? nil : value
                    case .dynamic(let text): notes.append((file.place(initial), "the default of \(entity.name).\(id) (\(text)) is "
                                                           + "computed when an object is made: no fixed default kept"))
                    }
                }
                if let at = attribute("Attribute") { try attributeOptions(at, file: file, attribute: &a, entity: &entity) }
                entity.attributes.append(a)
            case .toOne(let destination), .toMany(let destination):
                var toMany = false
                if case .toMany = type { toMany = true }
                var r = RelationshipDescription(id, to: destination, toMany: toMany, isOptional: optional || toMany)
                if let rel = attribute("Relationship") { try relationshipOptions(rel, file: file, relationship: &r) }
                if attribute("Transient") != nil {
                    notes.append((file.place(binding), "\(entity.name).\(id) is @Transient: not stored, not a relationship"))
                    continue
                }
                entity.relationships.append(r)
            }
        }
    }

    /// A property with a getter (or `get`/`set`) is computed; one with only `willSet`/`didSet` is stored.
    static func isComputed(_ block: AccessorBlockSyntax) -> Bool {
        switch block.accessors {
        case .getter: return true
        case .accessors(let list): return !list.allSatisfy { ["willSet", "didSet"].contains($0.accessorSpecifier.text) }
        }
    }

    private func propertyType(_ type: TypeSyntax, scope: [String], file: SwiftDeclarations.SourceFile) throws -> (PropertyType, Bool) {
        if let o = type.as(OptionalTypeSyntax.self) { return (try propertyType(o.wrappedType, scope: scope, file: file).0, true) }
        if let o = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return (try propertyType(o.wrappedType, scope: scope, file: file).0, true)
        }
        if let i = type.as(IdentifierTypeSyntax.self), i.name.text == "Optional", let inner = i.genericArgumentClause?.arguments.first {
            if case .type(let t) = inner.argument { return (try propertyType(t, scope: scope, file: file).0, true) }
        }
        if let a = type.as(ArrayTypeSyntax.self) {
            if let model = model(a.element.trimmedDescription, scope: scope) { return (.toMany(model), false) }
            return (.attribute(.transformable, valueClass: type.trimmedDescription), false)
        }
        let written = type.trimmedDescription
        if let model = model(written, scope: scope) { return (.toOne(model), false) }
        let last = String(written.split(separator: ".").last ?? "")
        if let kind = SwiftEntityReader.kinds[last], written == last || written.hasPrefix("Foundation.") || written.hasPrefix("Swift.") {
            return (.attribute(kind, valueClass: nil), false)
        }
        if let e = declarations.resolve(written, from: scope, in: { declarations.rawEnums[$0] != nil }),
           let raw = declarations.rawEnums[e], let kind = SwiftEntityReader.kinds[raw.raw] {
            return (.attribute(kind, valueClass: e), false)
        }
        if type.is(DictionaryTypeSyntax.self) || declarations.resolve(written, from: scope, in: { declarations.valueTypes[$0] != nil }) != nil
            || ["Set", "Array", "Dictionary"].contains(type.as(IdentifierTypeSyntax.self)?.name.text ?? "") {
            return (.attribute(.transformable, valueClass: written), false)
        }
        throw SwiftModelError(place: file.place(type), message: "expected a type SwiftData stores (String, Int, Double, Bool, Date, "
                              + "Data, UUID, URL, Decimal, a @Model class, an enum or Codable type declared in the source), found \(written)")
    }

    /// The qualified name of the model `written` names, when it names one of the version's models.
    private func model(_ written: String, scope: [String]) -> String? {
        guard let q = declarations.resolve(written, from: scope, in: { declarations.models[$0] != nil }) else { return nil }
        return versionModels.isEmpty || versionModels.contains(q) ? String(q.split(separator: ".").last!) : nil
    }

    private mutating func attributeOptions(_ at: AttributeSyntax, file: SwiftDeclarations.SourceFile, attribute a: inout AttributeDescription,
                                           entity: inout EntityDescription) throws {
        guard case .argumentList(let list)? = at.arguments else { return }
        for argument in list {
            switch argument.label?.text {
            case "originalName"?:
                a.renamingIdentifier = try SwiftExpressions.stringLiteral(argument.expression, file: file)
            case nil:
                let option = SwiftExpressions.optionName(argument.expression)
                switch option {
                case "unique": entity.uniquenessConstraints.append([a.name])
                case "externalStorage": a.allowsExternalStorage = true
                case "ephemeral": a.isTransient = true
                    notes.append((file.place(argument), "\(entity.name).\(a.name) is .ephemeral: not stored, kept as transient"))
                case "transformable":
                    a.kind = .transformable
                    a.valueTransformerName = SwiftExpressions.transformerName(argument.expression)
                case "preserveValueOnDeletion", "spotlight", "allowsCloudEncryption", "encrypt":
                    notes.append((file.place(argument), ".\(option) on \(entity.name).\(a.name) ignored: it changes no stored value"))
                default:
                    throw SwiftModelError(place: file.place(argument), message: "expected an @Attribute option (.unique, .externalStorage, "
                                          + ".transformable(by:), .ephemeral, …), found \(argument.expression.trimmedDescription)")
                }
            default:
                notes.append((file.place(argument), "\(argument.label!.text): on \(entity.name).\(a.name) ignored"))
            }
        }
    }

    private func relationshipOptions(_ at: AttributeSyntax, file: SwiftDeclarations.SourceFile, relationship r: inout RelationshipDescription) throws {
        guard case .argumentList(let list)? = at.arguments else { return }
        for argument in list {
            switch argument.label?.text {
            case "deleteRule"?:
                let rule = SwiftExpressions.optionName(argument.expression)
                guard let d = DeleteRule(rawValue: rule) else {
                    throw SwiftModelError(place: file.place(argument.expression), message: "expected a delete rule (.nullify, .cascade, "
                                          + ".deny, .noAction), found \(argument.expression.trimmedDescription)")
                }
                r.deleteRule = d
            case "inverse"?:
                r.inverse = try SwiftExpressions.keyPathName(argument.expression, file: file)
            case "originalName"?:
                r.renamingIdentifier = try SwiftExpressions.stringLiteral(argument.expression, file: file)
            default:
                break
            }
        }
    }
}
