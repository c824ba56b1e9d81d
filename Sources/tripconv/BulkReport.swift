import TripKit
import TripFormats

/// What a bulk run (`--output-dir`) tells when it is done: with -v a line per input, the summary
/// line, and `--report`.
enum BulkReport {
    /// With -v: per input, its output, format, version and counts, or that it failed.
    static func printLines(_ outcomes: [BulkConversion.Outcome]) {
        for o in outcomes {
            if let s = o.summary, let i = s.inputs.first {
                Diagnostics.print("tripconv: \(o.input) -> \(o.output): \(i.detection.format) \(i.detection.version.map(\.description) ?? "no version"); read \(s.read), merged \(s.merged), dropped \(s.dropped), rejected \(s.rejected), wrote \(s.written)")
            } else {
                Diagnostics.print("tripconv: \(o.input): failed")
            }
        }
    }

    /// The summary line of a bulk run.
    static func line(_ outcomes: [BulkConversion.Outcome], elapsed: Double) -> String {
        let ok = outcomes.filter { $0.error == nil }
        let read = ok.reduce(0) { $0 + ($1.summary?.read ?? 0) }
        let written = ok.reduce(0) { $0 + ($1.summary?.written ?? 0) }
        let merged = ok.reduce(0) { $0 + ($1.summary?.merged ?? 0) }
        let dropped = ok.reduce(0) { $0 + ($1.summary?.dropped ?? 0) }
        let rejected = ok.reduce(0) { $0 + ($1.summary?.rejected ?? 0) }
        return "converted \(ok.count) of \(outcomes.count) inputs, \(outcomes.count - ok.count) failed; read \(read); merged \(merged); dropped \(dropped); rejected \(rejected); wrote \(written); \(format3(elapsed)) s"
    }

    /// `--report` for a bulk run: per input its format, version, evidence, counts, time and status; and the totals.
    /// A run that failed as a whole (`error`: inputs that would be written to one file, nothing to
    /// read) has its error and exit status, as a run into one output has.
    static func write(_ path: String, _ outcomes: [BulkConversion.Outcome], elapsed: Double, error: (any Error)?) throws {
        let ok = outcomes.filter { $0.error == nil }
        func total(_ f: (ConversionSummary) -> Int) -> JSONText.Node { .int(ok.reduce(0) { $0 + ($1.summary.map(f) ?? 0) }) }
        let node = JSONText.Node.object([
            ("status", .string(error == nil && ok.count == outcomes.count ? "ok" : "failed")),
        ] + RunReport.failure(error) + [
            ("inputs", .int(outcomes.count)), ("converted", .int(ok.count)), ("failed", .int(outcomes.count - ok.count)),
            ("read", total { $0.read }), ("written", total { $0.written }), ("merged", total { $0.merged }),
            ("dropped", total { $0.dropped }), ("rejected", total { $0.rejected }),
            ("replacedInStore", total { $0.replacedInStore }),
            ("perInput", .array(outcomes.map { o in
                var pairs: [(String, JSONText.Node)] = [
                    ("input", .string(o.input)), ("output", .string(o.output)),
                    ("status", .string(o.error == nil ? "ok" : "failed")),
                    ("seconds", .milliseconds(o.seconds)),
                ]
                if let e = o.error { pairs += [("error", .string(e.message)), ("exitStatus", .int(Int(e.kind.rawValue)))] }
                if let s = o.summary, let i = s.inputs.first {
                    pairs += [("format", .string(i.detection.format)),
                              ("version", i.detection.version.map { .string($0.description) } ?? .null),
                              ("evidence", .string(i.detection.evidence.description)),
                              ("read", .int(s.read)), ("written", .int(s.written)), ("merged", .int(s.merged)),
                              ("dropped", .int(s.dropped)), ("rejected", .int(s.rejected)),
                              ("replacedInStore", .int(s.replacedInStore)),
                              ("stages", .array(i.stages.map { .string($0) }))]
                }
                return .object(pairs)
            })),
            ("elapsedSeconds", .milliseconds(elapsed)),
        ])
        let output = try ByteOutput(.file(path))
        try output.write(node.render(indent: 2) + "\n")
        try output.commit()
    }
}
