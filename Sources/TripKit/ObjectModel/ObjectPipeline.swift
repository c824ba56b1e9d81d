/// The whole flow for objects of any model: a reader's objects to a writer, every record accounted
/// for (read = written + rejected). No version is detected and no stage runs: a store of another app
/// is read at the version it is (issue 27 brings that app's plan).
///
/// ```swift
/// var summary = ObjectConversionSummary()
/// try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { rejected in log(rejected) }
/// print(summary.line(elapsedSeconds: 0.1))
/// ```
public enum ObjectPipeline {
    /// Reads every object of `reader` into `writer`, counting into `summary`; a record the reader sets
    /// aside goes to `setAside`. On an error the writer is aborted (it leaves no output) and the error
    /// rethrown.
    public static func run<R: ObjectRecordReader, W: ObjectRecordWriter>(
        _ reader: inout R, into writer: inout W, summary: inout ObjectConversionSummary,
        setAside: (SetAsideRecord) throws -> Void
    ) throws {
        let model = reader.model
        if summary.entities.isEmpty { summary.entities = model.entities.map(\.name) }
        if summary.counts.count < model.entities.count {
            summary.counts += Array(repeating: 0, count: model.entities.count - summary.counts.count)
        }
        // Per entity, the attributes an object must have a value of (not optional, not transient).
        let required = model.entities.indices.map { e in
            model.allAttributes(of: e).enumerated().filter { !$0.element.isOptional && !$0.element.isTransient }.map { ($0.offset, $0.element.name) }
        }
        do {
            try writer.begin(model)
            while let item = try reader.next() {
                switch item {
                case .object(let object):
                    summary.read += 1
                    if let missing = required[object.entity].first(where: { object.attributes[$0.0].isNull }) {
                        // A store row the model forbids (Core Data never writes one): set aside, never written.
                        summary.rejected += 1
                        try setAside(SetAsideRecord(origin: object.origin, reason: "\(model.entities[object.entity].name).\(missing.1): "
                                                    + "no value, and the model requires one"))
                        continue
                    }
                    try writer.write(object)
                    summary.written += 1
                    summary.counts[object.entity] += 1
                case .rejected(let record):
                    summary.read += 1
                    summary.rejected += 1
                    try setAside(record)
                }
            }
            try writer.finish()
        } catch {
            writer.abort()
            throw error
        }
    }
}

/// What a run over objects of any model did: read = written + rejected, and the objects written per entity.
public struct ObjectConversionSummary: Sendable, Hashable {
    public var read = 0
    public var written = 0
    public var rejected = 0
    /// The model's entity names, and the objects written of each, in the model's order.
    public var entities: [String] = []
    public var counts: [Int] = []

    /// A summary before any object is read.
    public init() {}

    /// The line printed at the end of a run: `read 7 objects; wrote 7 (Component 1, CraftingRecipe 2,
    /// Item 4); rejected 0; 0.004 s`.
    public func line(elapsedSeconds: Double) -> String {
        let per = zip(entities, counts).map { "\($0) \($1)" }.joined(separator: ", ")
        return "read \(read) object\(read == 1 ? "" : "s"); wrote \(written)"
            + (per.isEmpty ? "" : " (\(per))") + "; rejected \(rejected); \(format3(elapsedSeconds)) s"
    }
}
