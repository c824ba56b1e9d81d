import SwiftParser
import SwiftSyntax
import TripKit

/// A declaration that says something is wrong with an app's source, placed first:
/// `Sources/Trips.swift:12:5: expected a Schema.Version literal, found versionFor(.v1)`.
public struct SwiftModelError: Error, Sendable, CustomStringConvertible {
    public let place: String
    public let message: String
    public var description: String { "\(place): \(message)" }
}

/// Every declaration of the files that a model and a plan are made of, indexed by qualified name
/// (`SampleTripsSchemaV1.Trip`). Nothing else of the source is kept: views and app code are let be.
struct SwiftDeclarations {
    /// A declaration, with what is needed to place messages about it.
    struct Located<Node: SyntaxProtocol> {
        let node: Node
        let file: SourceFile
        /// The enclosing types, outermost first.
        let scope: [String]
        func place(_ part: some SyntaxProtocol) -> String { file.place(part) }
        var place: String { file.place(node) }
    }

    /// A parsed file and the converter that gives its lines and columns.
    final class SourceFile {
        let path: String
        let tree: SourceFileSyntax
        let converter: SourceLocationConverter
        init(path: String, text: String) {
            self.path = path
            tree = Parser.parse(source: text)
            converter = SourceLocationConverter(fileName: path, tree: tree)
        }
        func place(_ node: some SyntaxProtocol) -> String {
            let l = converter.location(for: node.positionAfterSkippingLeadingTrivia)
            return "\(path):\(l.line):\(l.column)"
        }
    }

    var models: [String: Located<ClassDeclSyntax>] = [:]
    /// Types that conform to `VersionedSchema`, and to `SchemaMigrationPlan`.
    var schemas: [String: Located<DeclSyntax>] = [:]
    var plans: [String: Located<DeclSyntax>] = [:]
    var typealiases: [String: Located<TypeAliasDeclSyntax>] = [:]
    /// Enums with a raw type (`enum Kind: String, Codable`): stored by raw value.
    var rawEnums: [String: (raw: String, place: String)] = [:]
    /// Other types declared in the source (structs, enums): Codable values if a model holds one.
    var valueTypes: [String: String] = [:]
    var typeNodes: [String: DeclSyntax] = [:]
    /// `static let/var` properties of every type, by qualified name (`Plan.migrateV1toV2`).
    var staticProperties: [String: Located<PatternBindingSyntax>] = [:]
    var files: [SourceFile] = []
    /// The raw types of an enum stored by raw value.
    static let rawTypes: Set<String> = ["String", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
                                        "Double", "Float"]
    /// Extensions, indexed once every file is: the type one extends may be a typealias declared in
    /// another file (`extension CurrentSchema { @Model class Recipe }`, `typealias CurrentSchema = V4`).
    private var extensions: [(node: ExtensionDeclSyntax, file: SourceFile)] = []

    /// The declarations of the `.swift` files at `paths` (files, or folders searched to any depth,
    /// skipping hidden folders and `.build`).
    init(paths: [String], readFile: (String) throws -> String, listFolder: (String) -> [String]?) throws {
        var swiftFiles: [String] = []
        for path in paths {
            if let entries = listFolder(path) {
                swiftFiles += SwiftDeclarations.swiftFiles(in: path, entries: entries, listFolder: listFolder)
            } else {
                swiftFiles.append(path)
            }
        }
        for path in swiftFiles {
            let file = SourceFile(path: path, text: try readFile(path))
            files.append(file)
            try index(file.tree.statements.map(\.item), file: file, scope: [])
        }
        // An extension's members go in the scope of the type it extends, found through typealiases
        // as Swift finds it (the name as written where it names no type declared in the source).
        while !extensions.isEmpty {
            let pending = extensions
            extensions = []
            for (x, file) in pending {
                let name = x.extendedType.trimmedDescription
                let target = resolve(name, from: [], in: { valueTypes[$0] != nil || models[$0] != nil }) ?? name
                for member in x.memberBlock.members {
                    try index(member.decl, file: file, scope: target.split(separator: ".").map(String.init))
                }
            }
        }
    }

    private static func swiftFiles(in folder: String, entries: [String], listFolder: (String) -> [String]?) -> [String] {
        var found: [String] = []
        for name in entries.sorted() where !name.hasPrefix(".") {
            let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
            if let inner = listFolder(path) {
                found += swiftFiles(in: path, entries: inner, listFolder: listFolder)
            } else if name.hasSuffix(".swift") {
                found.append(path)
            }
        }
        return found
    }

    /// The attributes of a declaration, those under `#if` taken as `SwiftConditions` reads it
    /// (`#if canImport(SwiftData) @Model #endif`).
    static func attributes(_ list: AttributeListSyntax) -> [AttributeSyntax] {
        list.flatMap { element -> [AttributeSyntax] in
            switch element {
            case .attribute(let a): return [a]
            case .ifConfigDecl(let i):
                guard case .attributes(let inner)? = SwiftConditions.active(i) else { return [] }
                return attributes(inner)
            }
        }
    }

    /// The member declarations of a type's body, those under `#if` taken as `SwiftConditions` reads it.
    static func members(_ list: MemberBlockItemListSyntax) -> [DeclSyntax] {
        list.flatMap { member -> [DeclSyntax] in
            guard let i = member.decl.as(IfConfigDeclSyntax.self) else { return [member.decl] }
            guard case .decls(let inner)? = SwiftConditions.active(i) else { return [] }
            return members(inner)
        }
    }

    private mutating func index(_ items: [CodeBlockItemSyntax.Item], file: SourceFile, scope: [String]) throws {
        for item in items {
            if case .decl(let decl) = item { try index(decl, file: file, scope: scope) }
        }
    }

    private mutating func index(_ decl: DeclSyntax, file: SourceFile, scope: [String]) throws {
        func qualified(_ name: TokenSyntax) -> String { (scope + [name.text]).joined(separator: ".") }
        func conformances(_ clause: InheritanceClauseSyntax?) -> [String] {
            clause?.inheritedTypes.map { $0.type.trimmedDescription } ?? []
        }
        func members(_ block: MemberBlockSyntax, _ name: TokenSyntax) throws {
            for member in block.members { try index(member.decl, file: file, scope: scope + [name.text]) }
        }
        if let c = decl.as(ClassDeclSyntax.self) {
            if SwiftDeclarations.attributes(c.attributes).contains(where: { $0.attributeName.trimmedDescription == "Model" }) {
                models[qualified(c.name)] = Located(node: c, file: file, scope: scope)
            }
            try members(c.memberBlock, c.name)
        } else if let e = decl.as(EnumDeclSyntax.self) {
            try typeDeclaration(DeclSyntax(e), name: e.name, inherited: conformances(e.inheritanceClause), file: file, scope: scope)
            if let raw = conformances(e.inheritanceClause).first, SwiftDeclarations.rawTypes.contains(raw) {
                rawEnums[qualified(e.name)] = (raw, file.place(e))
            }
            try members(e.memberBlock, e.name)
        } else if let s = decl.as(StructDeclSyntax.self) {
            try typeDeclaration(DeclSyntax(s), name: s.name, inherited: conformances(s.inheritanceClause), file: file, scope: scope)
            try members(s.memberBlock, s.name)
        } else if let x = decl.as(ExtensionDeclSyntax.self) {
            let name = x.extendedType.trimmedDescription
            extensions.append((x, file))
            if conformances(x.inheritanceClause).contains(where: { ["VersionedSchema", "SchemaMigrationPlan"].contains($0) }) {
                throw SwiftModelError(place: file.place(x), message: "expected VersionedSchema and SchemaMigrationPlan conformances "
                                      + "declared on the type itself, found one added by an extension of \(name)")
            }
        } else if let i = decl.as(IfConfigDeclSyntax.self) {
            // The clause an iOS release build compiles (SwiftConditions).
            switch SwiftConditions.active(i) {
            case .decls(let members)?: for member in members { try index(member.decl, file: file, scope: scope) }
            case .statements(let items)?: try index(items.map(\.item), file: file, scope: scope)
            default: break
            }
        } else if let t = decl.as(TypeAliasDeclSyntax.self) {
            typealiases[qualified(t.name)] = Located(node: t, file: file, scope: scope)
        } else if let v = decl.as(VariableDeclSyntax.self), v.modifiers.contains(where: { $0.name.text == "static" }) {
            for binding in v.bindings {
                if let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text {
                    staticProperties[(scope + [name]).joined(separator: ".")] = Located(node: binding, file: file, scope: scope)
                }
            }
        }
    }

    private mutating func typeDeclaration(_ decl: DeclSyntax, name: TokenSyntax, inherited: [String], file: SourceFile, scope: [String]) throws {
        let key = (scope + [name.text]).joined(separator: ".")
        if inherited.contains("VersionedSchema") { schemas[key] = Located(node: decl, file: file, scope: scope) }
        if inherited.contains("SchemaMigrationPlan") { plans[key] = Located(node: decl, file: file, scope: scope) }
        valueTypes[key] = file.place(decl)
        typeNodes[key] = decl
    }

    /// The qualified name `name` (as written: `Trip`, `SchemaV1.Trip`) refers to from `scope`, found
    /// as Swift finds it: the innermost enclosing type first, then outwards, through typealiases.
    func resolve(_ name: String, from scope: [String], in table: (String) -> Bool) -> String? {
        var written = name, base = scope
        for _ in 0..<8 {
            var s = base
            var followed = false
            while !followed {
                let candidate = (s + [written]).joined(separator: ".")
                if table(candidate) { return candidate }
                if let alias = typealiases[candidate] {
                    written = alias.node.initializer.value.trimmedDescription
                    base = alias.scope
                    followed = true
                } else if s.isEmpty {
                    return nil
                } else {
                    s.removeLast()
                }
            }
        }
        return nil
    }
}
