// The whole pipeline: `pipeline`.
//
// The input's first byte picks the run (`FuzzPipelineRun`); the rest is split at "\n%%\n" lines into
// up to three inputs of one format. The pipeline runs over them once per dedupe policy, as the CLI
// runs it (decoding ahead for a store under every other policy), and every run that ends must account
// for every record: read = written + merged + dropped + rejected (ConversionSummary), each merged,
// dropped or rejected record set aside once with its kind,
// the writer given exactly the trips counted written, in the target's layout and, where the target's
// names are unique, one per name. A store written into a second time must hold what it held plus
// what the run counts written. A thrown TripError (a syntax error, `--dedupe fail` meeting a
// duplicate, a bad record without rejects) is a clean end.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

let fuzzPipelineTarget = FuzzTarget(name: "pipeline") { fuzzPipeline($0) }

/// What the first byte picks: bits 0-1 the target version (1.0.0, 2.0.0, 3.0.0, 3.0.0); bits 2-3
/// the inputs' format (json, jsonl, yaml, csv); bit 4 the output is a SQLite store, else a writer
/// that keeps what it gets; bit 5 the store is written twice, the second run upserting into the
/// first's store; bit 6 set: no rejects, so the first bad record fails the run; bit 7
/// `--ignore-unknown`.
struct FuzzPipelineRun {
    let target: any VersionedSchema.Type
    let format: Format
    let toStore: Bool
    let twice: Bool
    let keepsGoing: Bool
    let options: ReadOptions

    init(byte: UInt8) {
        let versions = TripMigrationPlan.schemas
        target = versions[min(Int(byte & 3), versions.count - 1)]
        format = [Format.json, .jsonl, .yaml, .csv][Int(byte >> 2 & 3)]
        toStore = byte & 16 != 0
        twice = byte & 32 != 0
        keepsGoing = byte & 64 == 0
        options = ReadOptions(ignoreUnknown: byte & 128 != 0)
    }
}

/// A writer that keeps what it is given.
final class FuzzKeepingWriter: RecordWriter {
    var objects: [ModelObject] = []
    var finished = 0
    func write(_ object: ModelObject) throws { objects.append(object) }
    func finish() throws { finished += 1 }
}

func fuzzPipeline(_ input: UnsafeBufferPointer<UInt8>) {
    let run = FuzzPipelineRun(byte: input.first ?? 0)
    let parts = fuzzParts(UnsafeBufferPointer(rebasing: input.dropFirst()), limit: 3)
    let ext = run.format.extensions.first ?? run.format.rawValue
    var paths: [String] = []
    for (i, part) in parts.enumerated() {
        let path = fuzzScratch("pipeline-input-\(i + 1).\(ext)")
        fuzzWrite(path, part)
        paths.append(path)
    }
    let inputs = paths.map { path in
        PipelineInput(name: path) { try FormatFactory.makeReader(.file(path), format: run.format, options: run.options) }
    }
    let itemsRead = paths.reduce(0) { $0 + fuzzCountItems(path: $1, format: run.format, options: run.options) }
    for (p, policy) in DeduplicationPolicy.allCases.enumerated() {
        var pipeline = Pipeline()
        pipeline.targetVersion = run.target.versionIdentifier
        pipeline.policy = policy
        pipeline.keepsGoing = run.keepsGoing
        // Every other policy decodes trips for a store ahead on a thread, as the CLI does with
        // --jobs 2 or more; the others on one thread, as with --jobs 1.
        pipeline.decodesAhead = p % 2 == 1
        let label = "the pipeline (\(run.format.rawValue) to \(run.toStore ? "a store" : "a writer") at \(run.target.versionIdentifier), --dedupe \(policy.rawValue)\(run.keepsGoing ? ", rejects set aside" : ""))"
        if run.toStore {
            let store = fuzzScratch("pipeline-out.sqlite")
            fuzzRemove(store)
            defer { for suffix in ["", "-journal", "-wal", "-shm"] { unlink(store + suffix) } }
            var stored = 0
            for pass in 1...(run.twice ? 2 : 1) {
                let options = WriteOptions(schema: run.target, policy: policy)
                guard let summary = fuzzRunPipeline(pipeline, inputs, label: label + " pass \(pass)", read: itemsRead,
                                                    into: { try FormatFactory.makeWriter(.file(store), format: .sqlite, options: options) })
                else { break }
                let now = fuzzCountStored(store, label: label)
                // A trip written over one the store held (`last`) adds no row.
                if now != stored + summary.written - summary.replacedInStore {
                    fuzzFinding("\(label) pass \(pass): the store held \(stored) trip(s), the run wrote \(summary.written) (\(summary.replacedInStore) over stored ones), and it holds \(now)")
                }
                stored = now
            }
        } else {
            let writer = FuzzKeepingWriter()
            guard let summary = fuzzRunPipeline(pipeline, inputs, label: label, read: itemsRead, into: { writer }) else { continue }
            if writer.finished != 1 { fuzzFinding("\(label): the writer was finished \(writer.finished) times") }
            if writer.objects.count != summary.written {
                fuzzFinding("\(label): the writer was given \(writer.objects.count) trip(s), the summary says \(summary.written) written")
            }
            fuzzCheckLayout(writer.objects, schema: run.target, label: label)
        }
    }
}

/// Runs the pipeline; nil when it ended with a TripError. Checks the accounting of a run that ended.
func fuzzRunPipeline(_ pipeline: Pipeline, _ inputs: [PipelineInput], label: String, read: Int,
                     into makeWriter: () throws -> any RecordWriter) -> ConversionSummary? {
    var setAside: [SetAsideRecord.Kind: Int] = [:]
    let summary: ConversionSummary
    do {
        summary = try pipeline.run(inputs, into: makeWriter, setAside: { setAside[$0.kind, default: 0] += 1 })
    } catch let error as TripError {
        fuzzNote("\(label): \(error.message)")
        return nil
    } catch {
        fuzzFinding("\(label) threw a \(type(of: error)), not a TripError: \(error)")
    }
    let s = summary
    fuzzNote("\(label): read \(s.read), written \(s.written), merged \(s.merged), dropped \(s.dropped), rejected \(s.rejected)")
    if s.read != s.written + s.merged + s.dropped + s.rejected {
        fuzzFinding("\(label): read \(s.read) != written \(s.written) + merged \(s.merged) + dropped \(s.dropped) + rejected \(s.rejected)")
    }
    if s.read != read {
        fuzzFinding("\(label): the summary says \(s.read) read; the readers yield \(read) trips and rejections")
    }
    let counted: [SetAsideRecord.Kind: Int] = [.merged: s.merged, .dropped: s.dropped, .rejected: s.rejected]
    for (kind, n) in counted where setAside[kind, default: 0] != n {
        fuzzFinding("\(label): \(setAside[kind, default: 0]) record(s) set aside as \(kind.rawValue), the summary says \(n)")
    }
    if [s.written, s.merged, s.dropped, s.rejected].contains(where: { $0 < 0 }) {
        fuzzFinding("\(label): a negative count: written \(s.written), merged \(s.merged), dropped \(s.dropped), rejected \(s.rejected)")
    }
    return summary
}

/// Trips and rejections a reader yields from one input; 0 when it throws (the pipeline then fails too).
func fuzzCountItems(path: String, format: Format, options: ReadOptions) -> Int {
    var n = 0
    do {
        var reader = try FormatFactory.makeReader(.file(path), format: format, options: options)
        while try reader.next() != nil { n += 1 }
    } catch is TripError {
        return 0
    } catch {
        fuzzFinding("the \(format.rawValue) reader threw a \(type(of: error)), not a TripError: \(error)")
    }
    return n
}

/// The trips a store holds, read back with the store's reader; a rejection is a finding.
func fuzzCountStored(_ store: String, label: String) -> Int {
    var n = 0
    do {
        var reader = try FormatFactory.makeReader(.file(store), format: .sqlite, options: ReadOptions())
        while let item = try reader.next() {
            if case .rejected(let r) = item { fuzzFinding("\(label): the store it wrote holds a trip its reader rejects: \(r.origin): \(r.reason)") }
            n += 1
        }
    } catch {
        fuzzFinding("\(label): the store it wrote cannot be read: \(error)")
    }
    return n
}

/// What a writer is given: objects in the target's layout, one per name where names are unique.
func fuzzCheckLayout(_ objects: [ModelObject], schema: any VersionedSchema.Type, label: String) {
    let root = schema.rootEntity
    let unique = root.attributes.firstIndex(where: \.isUnique)
    var names = Set<Value>()
    for (i, o) in objects.enumerated() {
        if o.attributes.count != root.attributes.count || o.relationships.count != root.relationships.count {
            fuzzFinding("\(label): trip \(i + 1) has \(o.attributes.count) attributes and \(o.relationships.count) relationships; \(schema.versionIdentifier) declares \(root.attributes.count) and \(root.relationships.count)")
        }
        if let unique, !names.insert(o.attributes[unique]).inserted {
            fuzzFinding("\(label): the writer was given a second trip named \(o.attributes[unique]) at \(schema.versionIdentifier), whose names are unique")
        }
    }
}
