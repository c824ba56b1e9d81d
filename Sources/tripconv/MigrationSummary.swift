import TripKit
import TripFormats

/// A migration in place as the command line tells it, the same for `migrate` and `convert
/// --migrate`: a line per stage (`-v`), the summary line, and the object `--report` keeps.
struct MigrationSummary {
    var report: StoreMigrationReport
    /// The store as messages name it (a PostgreSQL address without its password).
    var store: String
    /// Whether the store is one that is backed up (SQLite): its line then says which backup, or none.
    var backsUp: Bool

    /// `-v`: a line per stage, with the trips before and after it.
    var stageLines: [String] {
        report.stages.map { s in "tripconv: \(store): stage \(s.stages): \(s.tripsBefore) trip\(s.tripsBefore == 1 ? "" : "s") -> \(s.tripsAfter)" }
    }

    /// The summary line, without its elapsed time: what was migrated, the stages, the trips read,
    /// merged and dropped, the trips after, and the backup.
    var line: String {
        let r = report
        var parts = ["migrated \(r.from) -> \(r.to) in place", "stages \(r.stages.map(\.stages).joined(separator: ", "))",
                     "read \(r.tripsBefore) trip\(r.tripsBefore == 1 ? "" : "s")", "merged \(r.merged)", "dropped \(r.dropped)",
                     "\(r.tripsAfter) trip\(r.tripsAfter == 1 ? "" : "s") at \(r.to)"]
        if backsUp { parts.append(r.backup.map { "backup \($0)" } ?? "no backup") }
        if r.spilledTrips > 0 { parts.append(ConversionSummary.spilledPhrase(r.spilledTrips, "trip", bytes: r.spilledBytes)) }
        return "tripconv: \(store): " + parts.joined(separator: "; ")
    }

    /// `--report`'s `storeMigration`: the same figures as the line.
    var reportNode: JSONText.Node {
        let r = report
        var pairs: [(String, JSONText.Node)] = [
            ("store", .string(store)), ("from", .string(r.from.description)), ("to", .string(r.to.description)),
            ("stages", .array(r.stages.map { s in
                .object([("stage", .string(s.stages)), ("tripsBefore", .int(s.tripsBefore)), ("tripsAfter", .int(s.tripsAfter))])
            })),
            ("read", .int(r.tripsBefore)), ("merged", .int(r.merged)), ("dropped", .int(r.dropped)), ("tripsAfter", .int(r.tripsAfter)),
        ]
        if backsUp { pairs.append(("backup", r.backup.map { .string($0) } ?? .null)) }
        return .object(pairs)
    }
}
