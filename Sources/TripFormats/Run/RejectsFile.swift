import Synchronization
import TripKit

/// The rejects file (`--rejects FILE`): one JSON object per record set aside, a line each, with its
/// kind, origin, reason and source text. Complete or absent, as every output: `commit()` makes it
/// visible, `discard()` (or the end of the run without a commit) leaves the target as it was.
/// Workers of a bulk run write to it at once; each record's line is written whole.
///
/// ```swift
/// let rejects = try RejectsFile(.file("bad.jsonl"))
/// try pipeline.run(inputs, into: makeWriter, setAside: { try rejects.write($0) })
/// try rejects.commit()
/// ```
public final class RejectsFile: Sendable {
    private let output: Mutex<ByteOutput>

    /// Opens the file (its temporary file beside it) or the device or pipe.
    public init(_ location: OutputLocation) throws {
        let opened = try ByteOutput(location)
        output = Mutex(opened)
    }

    /// Writes the record's line.
    public func write(_ record: SetAsideRecord) throws {
        let line = RejectsFile.line(record)
        try output.withLock { try $0.write(line) }
    }

    /// Flushes, and for a file makes it visible under its name.
    public func commit() throws {
        try output.withLock { try $0.commit() }
    }

    /// Throws away what was written; the target is left as it was.
    public func discard() {
        output.withLock { $0.discard() }
    }

    /// A record's line: kind, source, record, line, column, reason and, where the reader kept it, the text.
    /// The line and column are the reason's place (`SetAsideRecord.place`): the value or object it
    /// is about, else the record's.
    public static func line(_ r: SetAsideRecord) -> String {
        var pairs: [(String, JSONText.Node)] = [
            ("kind", .string(r.kind.rawValue)),
            ("source", .string(r.origin.source)),
            ("record", .int(r.origin.record)),
            ("line", r.place.line.map { .int($0) } ?? .null),
            ("column", r.place.line == nil ? .null : .int(r.place.column ?? 1)),
            ("reason", .string(r.reason)),
        ]
        if let text = r.text { pairs.append(("text", .string(text))) }
        return JSONText.Node.object(pairs).render() + "\n"
    }
}
