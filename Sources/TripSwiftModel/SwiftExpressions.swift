import SwiftSyntax
import TripKit

/// The few expressions a model and a plan are declared with, read as values: literals, key paths,
/// option names, `Schema.Version(1, 0, 0)`, `[A.self, B.self]`. Anything else is an error naming
/// its place, never a guess.
enum SwiftExpressions {
    /// What a property's initial value gives its attribute.
    enum Default {
        case value(ObjectValue)
        /// Computed each time (`Date.now`, `UUID()`): no fixed default.
        case dynamic(String)
    }

    /// The type a literal implies (`"x"`: String, `1`: Int, `1.5`: Double, `true`: Bool).
    static func literalType(_ e: ExprSyntax) -> String? {
        if e.is(StringLiteralExprSyntax.self) { return "String" }
        if e.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if e.is(FloatLiteralExprSyntax.self) { return "Double" }
        if e.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let p = e.as(PrefixOperatorExprSyntax.self), p.operator.text == "-" { return literalType(p.expression) }
        return nil
    }

    /// The type an initial value gives a property declared without one, as Swift infers it: a
    /// literal's (`literalType`), a stored type's initializer (`Date()`, `UUID()`, `Data()`,
    /// `Int(…)`…), `Date.now` and the like, or an enum case written with its type (`Kind.meal`: the
    /// name `Kind`, which the reader then looks for among the source's enums). Nil otherwise.
    static func initialValueType(_ e: ExprSyntax) -> String? {
        if let literal = literalType(e) { return literal }
        // The types SwiftData stores by kind; not URL, whose `URL(string:)` gives an optional.
        let stored = { (name: String) in SwiftEntityReader.kinds[name] != nil && name != "URL" }
        if let call = e.as(FunctionCallExprSyntax.self) {
            var called = call.calledExpression
            if let m = called.as(MemberAccessExprSyntax.self), m.declName.baseName.text == "init", let base = m.base { called = base }
            if let name = called.as(DeclReferenceExprSyntax.self)?.baseName.text, stored(name) { return name }
            return nil
        }
        if let m = e.as(MemberAccessExprSyntax.self), let base = m.base?.trimmedDescription, !base.isEmpty {
            if base == "Date", ["now", "distantPast", "distantFuture"].contains(m.declName.baseName.text) { return "Date" }
            if m.declName.baseName.text.first?.isLowercase == true, base.first?.isUppercase == true, !stored(base) { return base }
        }
        return nil
    }

    static func defaultValue(_ e: ExprSyntax, kind: AttributeKind, declarations: SwiftDeclarations, scope: [String],
                             typeName: TypeSyntax) -> Default {
        if e.is(NilLiteralExprSyntax.self) { return .value(.null) }
        if let s = e.as(StringLiteralExprSyntax.self), let text = plainText(s) {
            return .value(ObjectValueText.value(text, kind: kind) ?? .string(text))
        }
        if let b = e.as(BooleanLiteralExprSyntax.self) { return .value(.bool(b.literal.text == "true")) }
        if let number = numberText(e) {
            if let v = ObjectValueText.value(number, kind: kind) { return .value(v) }
        }
        if let m = e.as(MemberAccessExprSyntax.self), case let name = m.declName.baseName.text,
           let enumName = declarations.resolve((m.base?.trimmedDescription ?? typeName.trimmedDescription)
                                                .filter { $0 != "?" }, from: scope,
                                               in: { declarations.rawEnums[$0] != nil }),
           let raw = rawValue(of: name, in: enumName, declarations: declarations), let v = ObjectValueText.value(raw, kind: kind) {
            return .value(v)
        }
        // `Lifecycle.library.rawValue`: a raw-valued enum's case's raw value, a literal of the source.
        if let m = e.as(MemberAccessExprSyntax.self), m.declName.baseName.text == "rawValue",
           let c = m.base?.as(MemberAccessExprSyntax.self), let written = c.base?.trimmedDescription,
           let enumName = declarations.resolve(written, from: scope, in: { declarations.rawEnums[$0] != nil }),
           let raw = rawValue(of: c.declName.baseName.text, in: enumName, declarations: declarations), let v = ObjectValueText.value(raw, kind: kind) {
            return .value(v)
        }
        if let empty = emptyValue(e, kind: kind, typeName: typeName) { return .value(empty) }
        return .dynamic(e.trimmedDescription)
    }

    /// A value type's empty initializer, which gives the same value each time: `Data()` (no bytes),
    /// `String()` (""), `Int()` and the other integers (0), `Double()`, `Float()` (0), `Bool()` (false),
    /// `Decimal()` (0), or `.init()` of the property's type. Nil for anything else (`Date()`, `UUID()`
    /// differ each time).
    private static func emptyValue(_ e: ExprSyntax, kind: AttributeKind, typeName: TypeSyntax) -> ObjectValue? {
        guard let call = e.as(FunctionCallExprSyntax.self), call.arguments.isEmpty, call.trailingClosure == nil else { return nil }
        var name: String
        if let r = call.calledExpression.as(DeclReferenceExprSyntax.self) {
            name = r.baseName.text
        } else if let m = call.calledExpression.as(MemberAccessExprSyntax.self), m.declName.baseName.text == "init" {
            name = m.base?.trimmedDescription ?? typeName.trimmedDescription.filter { $0 != "?" }
        } else {
            return nil
        }
        if name.hasPrefix("Swift.") || name.hasPrefix("Foundation.") { name = String(name.split(separator: ".", maxSplits: 1)[1]) }
        switch (name, kind) {
        case ("Data", .binary): return .data([])
        case ("String", .string): return .string("")
        case ("Int", _), ("Int64", _), ("Int32", _), ("Int16", _), ("Int8", _), ("UInt", _), ("UInt64", _), ("UInt32", _), ("UInt16", _), ("UInt8", _):
            return kind.isInteger ? .int(0) : nil
        case ("Double", .double), ("Double", .float), ("Float", .float), ("Float", .double), ("CGFloat", .double): return .double(0)
        case ("Bool", .bool): return .bool(false)
        case ("Decimal", .decimal): return .decimal("0")
        default: return nil
        }
    }

    /// The raw value of `case name` of a raw-valued enum: its literal, else its name (String) or its
    /// position counted from the last explicit integer (Int).
    static func rawValue(of name: String, in enumName: String, declarations: SwiftDeclarations) -> String? {
        guard let e = declarations.valueTypesNode(enumName)?.as(EnumDeclSyntax.self), let raw = declarations.rawEnums[enumName] else { return nil }
        var next = 0
        for member in e.memberBlock.members {
            guard let c = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in c.elements {
                var value: String
                if let v = element.rawValue?.value {
                    value = (v.as(StringLiteralExprSyntax.self).flatMap(plainText)) ?? numberText(v) ?? v.trimmedDescription
                } else {
                    value = raw.raw == "String" ? element.name.text : String(next)
                }
                if let n = Int(value) { next = n + 1 } else { next += 1 }
                if element.name.text == name { return value }
            }
        }
        return nil
    }

    /// The text of a string literal without interpolation.
    static func plainText(_ s: StringLiteralExprSyntax) -> String? {
        var text = ""
        for segment in s.segments {
            guard let plain = segment.as(StringSegmentSyntax.self) else { return nil }
            text += unescape(plain.content.text)
        }
        return text
    }

    private static func unescape(_ raw: String) -> String {
        guard raw.contains("\\") else { return raw }
        var out = "", escaped = false
        for ch in raw {
            if escaped {
                switch ch {
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "0": out.append("\0")
                default: out.append(ch)
                }
                escaped = false
            } else if ch == "\\" {
                escaped = true
            } else {
                out.append(ch)
            }
        }
        return out
    }

    /// An integer or floating-point literal's digits (with its sign, without `_`).
    static func numberText(_ e: ExprSyntax) -> String? {
        if let i = e.as(IntegerLiteralExprSyntax.self) { return i.literal.text.filter { $0 != "_" } }
        if let f = e.as(FloatLiteralExprSyntax.self) { return f.literal.text.filter { $0 != "_" } }
        if let p = e.as(PrefixOperatorExprSyntax.self), p.operator.text == "-", let n = numberText(p.expression) { return "-" + n }
        return nil
    }

    static func stringLiteral(_ e: ExprSyntax, file: SwiftDeclarations.SourceFile) throws -> String {
        guard let s = e.as(StringLiteralExprSyntax.self), let text = plainText(s) else {
            throw SwiftModelError(place: file.place(e), message: "expected a string literal, found \(e.trimmedDescription)")
        }
        return text
    }

    /// The property a key path names: `\Trip.name` and `\.name` give `name`.
    static func keyPathName(_ e: ExprSyntax, file: SwiftDeclarations.SourceFile) throws -> String {
        guard let k = e.as(KeyPathExprSyntax.self), k.components.count == 1,
              let p = k.components.first?.component.as(KeyPathPropertyComponentSyntax.self) else {
            throw SwiftModelError(place: file.place(e), message: "expected a key path to one property (\\.name), found \(e.trimmedDescription)")
        }
        return p.declName.baseName.text
    }

    /// The name of an option: `.unique` and `.transformable(by: X.self)` give `unique` and `transformable`.
    static func optionName(_ e: ExprSyntax) -> String {
        if let m = e.as(MemberAccessExprSyntax.self) { return m.declName.baseName.text }
        if let c = e.as(FunctionCallExprSyntax.self) { return optionName(c.calledExpression) }
        return e.trimmedDescription
    }

    /// The transformer `.transformable(by: X.self)` or `.transformable(by: "name")` names.
    static func transformerName(_ e: ExprSyntax) -> String? {
        guard let c = e.as(FunctionCallExprSyntax.self), let a = c.arguments.first?.expression else { return nil }
        if let s = a.as(StringLiteralExprSyntax.self) { return plainText(s) }
        return typeReference(a)
    }

    /// `X.self` as the name `X` (qualified as written).
    static func typeReference(_ e: ExprSyntax) -> String? {
        guard let m = e.as(MemberAccessExprSyntax.self), m.declName.baseName.text == "self", let base = m.base else { return nil }
        let written = base.trimmedDescription
        // `self.Alert.self` or `Self.Alert.self` in a static property of the type that declares
        // `Alert`: the same type as `Alert.self`, looked for from that type's scope.
        for prefix in ["self.", "Self."] where written.hasPrefix(prefix) && written.count > prefix.count {
            return String(written.dropFirst(prefix.count))
        }
        return written
    }

    /// The value a static property is declared with: its initializer, or the one expression its getter returns.
    static func declaredValue(_ binding: PatternBindingSyntax) -> ExprSyntax? {
        if let i = binding.initializer?.value { return i }
        guard let block = binding.accessorBlock else { return nil }
        switch block.accessors {
        case .getter(let items): return singleExpression(items)
        case .accessors(let list):
            guard let get = list.first(where: { $0.accessorSpecifier.text == "get" }), let body = get.body else { return nil }
            return singleExpression(body.statements)
        }
    }

    private static func singleExpression(_ items: CodeBlockItemListSyntax) -> ExprSyntax? {
        guard items.count == 1, let item = items.first?.item else { return nil }
        if case .expr(let e) = item { return e }
        if case .stmt(let s) = item, let r = s.as(ReturnStmtSyntax.self) { return r.expression }
        return nil
    }

    /// `Schema.Version(1, 0, 0)` (or `.init(1, 0, 0)`, `Version(1, 0, 0)`) as "1.0.0".
    static func version(_ e: ExprSyntax, file: SwiftDeclarations.SourceFile) throws -> String {
        guard let c = e.as(FunctionCallExprSyntax.self),
              ["Schema.Version", "Version", ".init", "Schema.Version.init"].contains(c.calledExpression.trimmedDescription),
              c.arguments.count == 3,
              case let parts = c.arguments.compactMap({ $0.expression.as(IntegerLiteralExprSyntax.self)?.literal.text }), parts.count == 3 else {
            throw SwiftModelError(place: file.place(e), message: "expected Schema.Version(major, minor, patch) with integer literals, found "
                                  + e.trimmedDescription)
        }
        return parts.joined(separator: ".")
    }
}

extension SwiftDeclarations {
    /// The declaration of a type declared in the source (an enum or struct), by qualified name.
    func valueTypesNode(_ name: String) -> DeclSyntax? { typeNodes[name] }
}
