import TripKit

/// A Core Data store's objects to JSON or JSON Lines with no stage between (issue 26, speed): each
/// row written by the JSON writer straight from SQLite's columns, on one thread, with no `ObjectRecord`
/// made of it (no boxed `ObjectValue` per value, no `String` per text, no hand-off between threads).
///
/// The bytes, the records set aside, their reasons and order, the errors and the counts are those of
/// `ObjectPipeline.run` over the same reader into the same writer (docs/DESIGN-NOTES.md, "A store's
/// rows written straight as JSON"): a value is written from its column where the column holds what its
/// kind stores (TEXT for a String, INTEGER in range for an Int, …), through `CoreDataValues.value` and
/// `JSONObjectWriter.append` otherwise; references are read by the reader's own code
/// (`CoreDataEntityCursor.readReferences`); an object is set aside for the first problem of its values,
/// else for the first required attribute without one, after its references were read. The objects
/// of an entity that waits for names (it names by value an entity at or after it) go the general
/// way, as `ObjectRecord`s through `JSONObjectWriter.write`.
///
/// Memory: the row being written (its bytes and its references) besides what the writer and the
/// reader hold on the general path.
enum CoreDataJSONRun {
    /// Writes every object of `reader` to `writer` (begun and finished here; aborted on an error),
    /// counting into `summary`; a record set aside goes to `setAside`.
    static func run(_ reader: CoreDataObjectReader, into writer: inout JSONObjectWriter, summary: inout ObjectConversionSummary,
                    setAside: (SetAsideRecord) throws -> Void) throws {
        let model = reader.model
        summary.prepare(for: model)
        let required = ObjectPipeline.requiredAttributes(model)
        // Per entity, per attribute: whether an object must have a value of it.
        let requires = model.entities.indices.map { e in
            var flags = [Bool](repeating: false, count: model.allAttributes(of: e).count)
            for (n, _) in required[e] { flags[n] = true }
            return flags
        }
        var references = ObjectRelationships()
        var entity = -1, straight = false
        var named: Int?
        do {
            try writer.begin(model)
            while let (cursor, key, record) = try reader.nextRow() {
                let e = cursor.plan.index
                if e != entity {
                    entity = e
                    straight = writer.takesRows(of: e)
                    named = writer.notedSlot(of: e)
                }
                guard straight else {
                    let item = try reader.reading {
                        var none: ObjectReadItem?
                        return try cursor.item(key: key, record: record, reusing: &none)
                    }
                    try ObjectPipeline.pass(item, model, required: required, into: &writer, summary: &summary, setAside: setAside)
                    continue
                }
                var problem: (Int, CoreDataValueProblem)?
                var missing: Int?
                requires[e].withUnsafeBufferPointer { requires in
                    writer.encodeRow(e, key: key) { n, out in
                        switch cursor.appendJSON(n, to: &out) {
                        case .value: break
                        case .null: if missing == nil, requires[n] { missing = n }
                        case .problem(let why): if problem == nil { problem = (n, why) }
                        }
                    }
                }
                try reader.reading { try cursor.readReferences(key, into: &references) }
                summary.read += 1
                if let (n, why) = problem {
                    summary.rejected += 1
                    try setAside(SetAsideRecord(origin: RecordOrigin(source: reader.path, record: record), reason: cursor.problem(key, n, why)))
                    continue
                }
                if let missing {
                    summary.rejected += 1
                    let name = model.allAttributes(of: e)[missing].name
                    try setAside(ObjectPipeline.lacking(model, e, name, origin: RecordOrigin(source: reader.path, record: record)))
                    continue
                }
                var name = ObjectValue.null
                if let named, case .success(let v) = cursor.value(named) { name = v }
                try writer.writeRow(e, key: key, relationships: references, name: name)
                summary.written += 1
                summary.counts[e] += 1
            }
            try writer.finish()
        } catch {
            writer.abort()
            reader.finish()
            throw error
        }
    }
}

/// What `CoreDataEntityCursor.appendJSON` wrote: a value, `null`, or `null` for a value that is not
/// one of its attribute's kind (the object is set aside).
enum CoreDataJSONCell {
    case value, null
    case problem(CoreDataValueProblem)
}

extension CoreDataEntityCursor {
    /// Appends the value of attribute `n` of the current row as JSON: the bytes `JSONObjectWriter.append`
    /// writes of `value(n)`, from the column itself where it holds what the kind stores, else through
    /// `value(n)` (decimals, data, external data, URIs' odd cases, every value of the wrong storage class).
    @inline(__always)
    func appendJSON(_ n: Int, to out: inout RecordBuffer) -> CoreDataJSONCell {
        let c = columns[n]
        guard c >= 0 else {
            out.append("null")
            return .null
        }
        if !external[n] {
            let s = rows
            let storage = s.storage(c)
            if storage == .null {
                out.append("null")
                return .null
            }
            switch kinds[n] {
            case .string, .uri:
                if storage == .text {
                    let text = s.textBytes(c)
                    if Self.isASCII(text) || String(validating: text, as: UTF8.self) != nil {
                        JSONRecordWriter.appendString(text, to: &out)
                        return .value
                    }
                }
            case .int64:
                if storage == .integer {
                    JSONObjectWriter.appendInteger(s.int64(c), to: &out)
                    return .value
                }
            case .int32, .int16:
                if storage == .integer {
                    let v = s.int64(c)
                    if kinds[n] == .int32 ? Int64(Int32(truncatingIfNeeded: v)) == v : Int64(Int16(truncatingIfNeeded: v)) == v {
                        JSONObjectWriter.appendInteger(v, to: &out)
                        return .value
                    }
                }
            case .date:
                if storage == .real || storage == .integer {
                    JSONObjectWriter.appendDate(storage == .real ? s.double(c) : Double(s.int64(c)), to: &out)
                    return .value
                }
            case .double, .float:
                if storage == .real || storage == .integer {
                    let d = storage == .real ? s.double(c) : Double(s.int64(c))
                    if d.isFinite {
                        var text = d.description
                        text.withUTF8 { out.append(UnsafeRawBufferPointer($0)) }
                        return .value
                    }
                }
            case .bool:
                if storage == .integer {
                    let v = s.int64(c)
                    if v == 0 || v == 1 {
                        out.append(v == 1 ? "true" : "false")
                        return .value
                    }
                }
            case .uuid:
                if storage == .blob {
                    let bytes = s.blobBytes(c)
                    if bytes.count == 16 {
                        JSONObjectWriter.appendUUID(bytes, to: &out)
                        return .value
                    }
                }
            default: break
            }
        }
        switch value(n) {
        case .success(let v):
            JSONObjectWriter.append(v, to: &out)
            return v.isNull ? .null : .value
        case .failure(let why):
            out.append("null")
            return .problem(why)
        }
    }

    /// Whether every byte is below 0x80 (then the text is UTF-8), eight at a time.
    @inline(__always)
    private static func isASCII(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = text.count
        var i = 0
        while i &+ 8 <= n {
            let word = UnsafeRawPointer(text.baseAddress! + i).loadUnaligned(as: UInt64.self)
            if word & 0x8080_8080_8080_8080 != 0 { return false }
            i &+= 8
        }
        while i < n {
            if text[i] >= 0x80 { return false }
            i &+= 1
        }
        return true
    }
}
