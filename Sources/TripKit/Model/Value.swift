/// One attribute value of an object.
public enum Value: Hashable, Sendable {
    case null
    case string(String)
    case date(Timestamp)
    case bool(Bool)
    case int(Int64)

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var dateValue: Timestamp? { if case .date(let d) = self { return d } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

/// An object of some entity, its values held positionally in the declaration order of its schema's entity.
///
/// Reading maps a field name to a slot once; a lightweight stage is a slot mapping, not a dictionary copy.
public struct ModelObject: Hashable, Sendable {
    /// Attribute values in the order of `Entity.attributes`.
    public var attributes: [Value]
    /// Related objects in the order of `Entity.relationships`.
    public var relationships: [Related]

    /// An object with its attributes and relationships in its entity's declared order.
    public init(attributes: [Value], relationships: [Related] = []) {
        self.attributes = attributes; self.relationships = relationships
    }

    /// The attribute at `index` in the entity's declared order.
    public subscript(attribute index: Int) -> Value {
        get { attributes[index] }
        set { attributes[index] = newValue }
    }
}

/// The objects at the other end of a relationship.
public enum Related: Hashable, Sendable {
    case toOne(ModelObject?)
    case toMany([ModelObject])

    public var objects: [ModelObject] {
        switch self {
        case .toOne(let o): return o.map { [$0] } ?? []
        case .toMany(let list): return list
        }
    }
}

/// Where a record came from: the input, its record number (1-based) and line where known.
public struct RecordOrigin: Hashable, Sendable, CustomStringConvertible {
    public var source: String
    public var record: Int
    public var line: Int?
    public var column: Int?

    /// The `record`th record of `source`, at a line and column where the format has them (1-based).
    public init(source: String, record: Int, line: Int? = nil, column: Int? = nil) {
        self.source = source; self.record = record; self.line = line; self.column = column
    }

    /// The same record, at the line and column of a place inside it (a value, a related object),
    /// when there is one.
    public func at(_ place: (line: Int, column: Int)?) -> RecordOrigin {
        guard let place, place.line > 0 else { return self }
        return RecordOrigin(source: source, record: record, line: place.line, column: place.column)
    }

    /// `file:line:column` when the line is known, else `file: record N`.
    public var description: String {
        if let line {
            return "\(source):\(line):\(column ?? 1)"
        }
        return "\(source): record \(record)"
    }
}

/// A trip read from an input, with where it came from.
public struct TripRecord: Sendable {
    public var object: ModelObject
    public var origin: RecordOrigin
    /// A trip as read, with where it came from.
    public init(object: ModelObject, origin: RecordOrigin) { self.object = object; self.origin = origin }
}

/// A record set aside rather than written as read, with why and where it came from: a record a
/// reader rejected, or a duplicate that was merged into another or dropped by the policy (`kind`
/// says which). The pipeline's `setAside` callback, a migration context's and a store writer's
/// `ledger`, and the CLI's `--rejects` file hold these.
public struct SetAsideRecord: Sendable, Hashable {
    /// Why a record was set aside.
    public enum Kind: String, Sendable {
        /// The record was bad: a field missing, a value of the wrong type, a line that does not parse.
        case rejected
        /// The record was a duplicate and the policy dropped it (first/last).
        case dropped
        /// The record was a duplicate and was merged into another.
        case merged
    }
    public var kind: Kind
    public var origin: RecordOrigin
    public var reason: String
    /// The record's own text, where the format allows.
    public var text: String?
    /// Where in the record the reason lies (the value, related object or unknown field it is
    /// about), when the reader knows and it is not the record's own place; `place` is what
    /// messages and the rejects file name.
    public var problemLine: Int?
    public var problemColumn: Int?

    /// A record set aside for `reason`, with its origin and, where the format allows, its text.
    public init(kind: Kind = .rejected, origin: RecordOrigin, reason: String, text: String? = nil) {
        self.kind = kind; self.origin = origin; self.reason = reason; self.text = text
    }

    /// Where the reason lies: the problem's line and column inside the record where known, else
    /// the record's origin (`file:line:column` of the record, or `file: record N`).
    public var place: RecordOrigin {
        guard let problemLine else { return origin }
        return origin.at((problemLine, problemColumn ?? 1))
    }

    /// Places the reason at a line and column inside the record (nothing for nil).
    public mutating func locate(at problem: (line: Int, column: Int)?) {
        guard let problem, problem.line > 0 else { return }
        problemLine = problem.line
        problemColumn = problem.column
    }
}

/// The earlier name of `SetAsideRecord`, which holds merged and dropped records as well as rejected ones.
@available(*, deprecated, renamed: "SetAsideRecord")
public typealias Rejection = SetAsideRecord
