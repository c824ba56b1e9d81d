/// What happened to one input.
public struct InputSummary: Sendable {
    public var name: String
    public var detection = Detection(format: "")
    public var read = 0
    public var rejected = 0
    public var stages: [String] = []
    /// Records merged or dropped by the custom stage of this input (within the input).
    public var deduplicatedInStages = 0
    /// An input's summary before it is read.
    public init(name: String) { self.name = name }
}

/// What a conversion did, with the accounting: read = written + merged + dropped + rejected.
public struct ConversionSummary: Sendable {
    public var targetVersion: SchemaVersion
    public var policy: DeduplicationPolicy
    public var inputs: [InputSummary] = []
    public var deduplicatedAcrossInputs = 0
    public var merged = 0
    public var dropped = 0
    public var rejectedByWriter = 0
    public var written = 0
    /// Of the trips written, those that replaced a trip the target store held (`--dedupe last`).
    public var replacedInStore = 0
    /// Trips that went to temporary files because the run's memory budget was reached, counted
    /// each time a holding spilled them, and the bytes written there (filled in by the run that
    /// holds trips in files: `Pipeline` itself holds them in memory).
    public var spilledTrips = 0
    public var spilledBytes = 0

    /// A conversion's summary before any input is read.
    public init(targetVersion: SchemaVersion, policy: DeduplicationPolicy) {
        self.targetVersion = targetVersion; self.policy = policy
    }

    public var read: Int { inputs.reduce(0) { $0 + $1.read } }
    public var rejected: Int { inputs.reduce(0) { $0 + $1.rejected } + rejectedByWriter }

    /// The one line printed at the end of a run.
    public func line(elapsedSeconds: Double) -> String {
        var parts: [String] = []
        parts.append("read \(read) trip\(read == 1 ? "" : "s") from \(inputs.count) input\(inputs.count == 1 ? "" : "s")")
        let detected = inputs.map { i -> String in
            let v = i.detection.version.map { $0.description } ?? "no version"
            return inputs.count > 1 ? "\(i.name) \(i.detection.format) \(v) by \(i.detection.evidence)" : "\(i.detection.format) \(v) by \(i.detection.evidence)"
        }
        if !detected.isEmpty { parts.append(detected.joined(separator: ", ")) }
        var stages: [String] = []
        for i in inputs { for s in i.stages where !stages.contains(s) { stages.append(s) } }
        parts.append(stages.isEmpty ? "no stages" : "stages " + stages.joined(separator: ", "))
        let transient = inputs.reduce(0) { $0 + $1.detection.transientIgnored }
        if transient > 0 { parts.append("ignored transient tripViews in \(transient)") }
        let unknown = inputs.reduce(0) { $0 + $1.detection.unknownIgnored }
        if unknown > 0 { parts.append("ignored \(unknown) unknown field\(unknown == 1 ? "" : "s")") }
        parts.append("merged \(merged)")
        parts.append("dropped \(dropped)")
        parts.append("rejected \(rejected)")
        parts.append("wrote \(written) at \(targetVersion)"
                     + (replacedInStore > 0 ? " (\(replacedInStore) replacing stored trip\(replacedInStore == 1 ? "" : "s"))" : ""))
        if spilledTrips > 0 { parts.append(ConversionSummary.spilledPhrase(spilledTrips, "trip", bytes: spilledBytes)) }
        parts.append(String(format3(elapsedSeconds)) + " s")
        return parts.joined(separator: "; ")
    }
}

extension ConversionSummary {
    /// "spilled 3 trips (12 MiB) to temporary files": how every summary says what went to disk.
    public static func spilledPhrase(_ count: Int, _ noun: String, bytes: Int) -> String {
        "spilled \(count) \(noun)\(count == 1 ? "" : "s") (\(mebibytes(bytes)) MiB) to temporary files"
    }

    /// Bytes in whole MiB, rounded: the unit every figure of spilled bytes is given in (the progress bar's too).
    public static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 19)) >> 20 }
}

/// `1.234`: seconds to the millisecond, as summaries and reports write them.
package func format3(_ x: Double) -> String {
    let ms = Int((x * 1000).rounded())
    let frac = ms % 1000
    return "\(ms / 1000)." + String(repeating: "0", count: frac < 10 ? 2 : frac < 100 ? 1 : 0) + "\(frac)"
}
