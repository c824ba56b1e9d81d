import TripKit

/// Why a column's value is not one of its attribute's kind.
struct CoreDataValueProblem: Error {
    let text: String
}

/// The values of a Core Data store's columns, per `AttributeKind`, as Core Data stores them: text,
/// INTEGER (Int16/32/64, Bool as 0 and 1), REAL (Double, Float, Date as seconds since 2001), DECIMAL
/// (kept as its digits), BLOB (Data, transformables, a UUID's 16 bytes), NULL for nil.
enum CoreDataValues {
    /// The value of column `c` of the current row, or why it is not a value of `kind`.
    static func value(_ s: SQLiteStatement, _ c: Int32, _ kind: AttributeKind) -> Result<ObjectValue, CoreDataValueProblem> {
        let storage = s.storage(c)
        if storage == .null { return .success(.null) }
        func wrong(_ expected: String) -> Result<ObjectValue, CoreDataValueProblem> {
            .failure(CoreDataValueProblem(text: "holds \(name(storage)) where \(article(kind)) \(kind) is stored as \(expected)"))
        }
        switch kind {
        case .string, .uri:
            guard storage == .text else { return wrong("TEXT") }
            guard let text = s.validText(c) else { return .failure(CoreDataValueProblem(text: "holds text that is not UTF-8")) }
            return .success(kind == .uri ? .url(text) : .string(text))
        case .int16, .int32, .int64:
            guard storage == .integer else { return wrong("INTEGER") }
            let v = s.int64(c)
            let fits = kind == .int16 ? Int64(Int16.min)...Int64(Int16.max) : kind == .int32 ? Int64(Int32.min)...Int64(Int32.max) : Int64.min...Int64.max
            guard fits.contains(v) else { return .failure(CoreDataValueProblem(text: "holds \(v), out of the range of \(kind)")) }
            return .success(.int(v))
        case .double, .float, .date:
            let v: Double
            switch storage {
            case .real: v = s.double(c)
            case .integer: v = Double(s.int64(c))
            default: return wrong("REAL")
            }
            return .success(kind == .date ? .date(v) : .double(v))
        case .decimal:
            guard storage != .blob else { return wrong("DECIMAL") }
            let text = s.text(c)
            guard storage != .text || isDecimal(text) else { return .failure(CoreDataValueProblem(text: "holds text that is not a decimal number")) }
            return .success(.decimal(text))
        case .bool:
            guard storage == .integer else { return wrong("INTEGER 0 or 1") }
            let v = s.int64(c)
            guard v == 0 || v == 1 else { return .failure(CoreDataValueProblem(text: "holds \(v) where a Bool is stored as 0 or 1")) }
            return .success(.bool(v == 1))
        case .binary, .transformable:
            guard storage == .blob else { return wrong("BLOB") }
            return .success(.data(s.bytes(c)))
        case .uuid:
            guard storage == .blob else { return wrong("a BLOB of 16 bytes") }
            guard let u = UUIDBytes(s.bytes(c)) else {
                return .failure(CoreDataValueProblem(text: "holds a BLOB of \(s.byteCount(c)) bytes where a UUID is stored as 16"))
            }
            return .success(.uuid(u))
        case .undefined, .objectID, .composite:
            return wrong("nothing tripconv reads")
        }
    }

    /// "an Int16", "a String".
    private static func article(_ kind: AttributeKind) -> String {
        "AEIOU".contains(kind.description.first ?? "x") ? "an" : "a"
    }

    private static func name(_ storage: SQLiteStatement.Storage) -> String {
        switch storage {
        case .null: return "NULL"
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        }
    }

    /// Whether text is a decimal number: a sign, digits with at most one point, an exponent.
    static func isDecimal(_ text: String) -> Bool {
        var u = Array(text.utf8)[...]
        if let f = u.first, f == UInt8(ascii: "-") || f == UInt8(ascii: "+") { u = u.dropFirst() }
        let isDigit = { (b: UInt8) in b >= 48 && b <= 57 }
        let mantissa = u.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        let parts = mantissa.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.contains(where: { !$0.isEmpty }), parts.allSatisfy({ $0.allSatisfy(isDigit) }) else {
            return false
        }
        var exponent = u.dropFirst(mantissa.count)
        guard !exponent.isEmpty else { return true }
        exponent = exponent.dropFirst()
        if let f = exponent.first, f == UInt8(ascii: "-") || f == UInt8(ascii: "+") { exponent = exponent.dropFirst() }
        return !exponent.isEmpty && exponent.allSatisfy(isDigit)
    }
}
