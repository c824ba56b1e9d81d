import TripKit

/// The rows of a query of a tripconv store, a row at a time, columns numbered from 0: a SQLite
/// statement, or a PostgreSQL cursor read in batches.
protocol ObjectStoreRows: AnyObject {
    func step() throws -> Bool
    func isNull(_ column: Int32) -> Bool
    func int64(_ column: Int32) -> Int64
    func text(_ column: Int32) -> String
    /// A column's value (not NULL) as an attribute of `kind`; `.data` when the column cannot hold one.
    func value(_ column: Int32, _ kind: AttributeKind) throws -> ObjectValue
}

/// The objects of one entity of a tripconv store (`ObjectStoreLayout.entityQueries`): its rows in
/// key order and, per to-many, rows in owner order, merge-joined by owner key.
final class ObjectStoreEntityCursor<Rows: ObjectStoreRows> {
    private final class List {
        let statement: Rows
        var hasRow = false
        var owner: Int64 = 0
        init(_ statement: Rows) throws { self.statement = statement; try advance() }
        func advance() throws {
            hasRow = try statement.step()
            if hasRow { owner = statement.int64(0) }
        }
    }

    private let entity: Int
    private let model: ObjectModel
    private let path: String
    private let rows: Rows
    private let kinds: [AttributeKind?]
    private let toOnes: [Bool]
    private let lists: [List?]
    /// Per relationship slot: the destination entity, for a reference whose row names none.
    private let destinations: [Int]

    /// The cursor over `rows` and `lists`, the statements of `layout.entityQueries(e)`.
    init(_ layout: ObjectStoreLayout, _ e: Int, path: String, rows: Rows, lists: [Rows?]) throws {
        entity = e; model = layout.model; self.path = path
        let attributes = model.allAttributes(of: e)
        kinds = layout.attributeColumns[e].enumerated().map { $1 == nil ? nil : attributes[$0].kind }
        toOnes = layout.toOneColumns[e].map { $0 != nil }
        destinations = layout.destinations[e].map { $0 ?? 0 }
        self.rows = rows
        self.lists = try lists.map { try $0.map(List.init) }
    }

    /// The next object of the entity, nil after its last.
    func next(record: Int) throws -> ObjectRecord? {
        guard try rows.step() else { return nil }
        let key = rows.int64(0)
        var values: [ObjectValue] = []
        values.reserveCapacity(kinds.count)
        var n: Int32 = 1
        for kind in kinds {
            guard let kind else { values.append(.null); continue }
            values.append(rows.isNull(n) ? .null : try rows.value(n, kind))
            n += 1
        }
        var references = ObjectRelationships()
        references.reset(count: toOnes.count)
        for slot in toOnes.indices {
            if toOnes[slot] {
                if !rows.isNull(n) { references.append(reference(rows, n, fallback: destinations[slot]), to: slot) }
                n += 2
            } else if let list = lists[slot] {
                while list.hasRow, list.owner < key { try list.advance() }
                while list.hasRow, list.owner == key {
                    references.append(reference(list.statement, 1, fallback: destinations[slot]), to: slot)
                    try list.advance()
                }
            }
        }
        return ObjectRecord(entity: entity, key: key, attributes: values, relationships: references,
                            origin: RecordOrigin(source: path, record: record))
    }

    /// The reference in columns `n` (key) and `n + 1` (the entity's name, NULL where the
    /// destination's table holds one entity, or the row is not there).
    private func reference(_ s: Rows, _ n: Int32, fallback: Int) -> ObjectReference {
        let entity = s.isNull(n + 1) ? fallback : (model.entityIndex(s.text(n + 1)) ?? fallback)
        return ObjectReference(entity: entity, key: s.int64(n))
    }
}

extension SQLiteStatement: ObjectStoreRows {
    /// A column's value as an attribute of `kind` (`ObjectStoreDialect.sqlite`'s types).
    func value(_ n: Int32, _ kind: AttributeKind) -> ObjectValue {
        let s = self
        switch s.storage(n) {
        case .null: return .null
        case .integer:
            let i = s.int64(n)
            switch kind {
            case .bool: return .bool(i != 0)
            case .double, .float: return .double(Double(i))
            case .date: return .date(Double(i))
            default: return .int(i)
            }
        case .real: return kind == .date ? .date(s.double(n)) : .double(s.double(n))
        case .blob: return .data(s.bytes(n))
        case .text:
            let text = s.text(n)
            switch kind {
            case .string, .binary, .transformable, .undefined, .objectID, .composite: return .string(text)
            case .uri: return .url(text)
            case .decimal: return .decimal(text)
            default: return ObjectValueText.value(text, kind: kind) ?? .string(text)
            }
        }
    }
}
