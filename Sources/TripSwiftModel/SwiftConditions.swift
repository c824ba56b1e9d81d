import SwiftSyntax

/// `#if` in an app's source, read as an iOS release build of the app compiles it: `canImport(…)`
/// true (the app imports what its platform has: SwiftData, SwiftUI, UIKit), `os(iOS)` true and every
/// other `os(…)` false, `targetEnvironment(…)` false, `swift(…)` and `compiler(…)` true, `DEBUG`
/// and every other flag unset (false); `!`, `&&`, `||` and parentheses as Swift reads them. The
/// clause taken is the first whose condition holds, else `#else`'s, else none.
enum SwiftConditions {
    /// The elements of the clause of `ifConfig` such a build compiles, nil when none is.
    static func active(_ ifConfig: IfConfigDeclSyntax) -> IfConfigClauseSyntax.Elements? {
        for clause in ifConfig.clauses {
            if let condition = clause.condition {
                if holds(condition) { return clause.elements }
            } else {
                return clause.elements
            }
        }
        return nil
    }

    /// Whether `condition` holds in that build.
    static func holds(_ condition: ExprSyntax) -> Bool {
        if let p = condition.as(PrefixOperatorExprSyntax.self), p.operator.text == "!" { return !holds(p.expression) }
        if let t = condition.as(TupleExprSyntax.self), t.elements.count == 1, let inner = t.elements.first { return holds(inner.expression) }
        if let s = condition.as(SequenceExprSyntax.self) {
            // `a && b || c`: && binds tighter than ||.
            var anyTrue = false, all = true
            for element in s.elements {
                if let op = element.as(BinaryOperatorExprSyntax.self) {
                    if op.operator.text == "||" { anyTrue = anyTrue || all; all = true }
                } else {
                    all = all && holds(element)
                }
            }
            return anyTrue || all
        }
        if let call = condition.as(FunctionCallExprSyntax.self), let name = call.calledExpression.as(DeclReferenceExprSyntax.self)?.baseName.text {
            let argument = call.arguments.first?.expression.trimmedDescription ?? ""
            switch name {
            case "canImport", "swift", "compiler", "hasFeature", "hasAttribute": return true
            case "os": return argument == "iOS"
            default: return false
            }
        }
        if let b = condition.as(BooleanLiteralExprSyntax.self) { return b.literal.text == "true" }
        return false
    }
}
