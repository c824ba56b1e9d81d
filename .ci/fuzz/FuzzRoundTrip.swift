// The writers' round trip: `roundtrip`.
//
// The input is read by the JSON reader (the richest: typed strings with any escape, numbers, every
// version's marker and spelling). Its trips, one per name where the schema says names are unique (as
// the pipeline hands them to a writer), are written by every writer in the schema they were read in,
// and each output is read back by the same format's reader. A finding is a writer that fails where
// its format can say the trips, writes what its own reader refuses or rejects, or a read-back that
// loses, adds, reorders or changes a trip. What a format cannot say is named below, one rule each, and
// only that is forgiven.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

let fuzzRoundTripTarget = FuzzTarget(name: "roundtrip") { fuzzRoundTrip($0) }

/// A writer and the reader of what it writes.
struct FuzzRoundTripFormat {
    let name: String
    let format: Format
    let layout: CSVLayout
    /// Whether the output carries the version (a marker, a store's metadata); without one, 2.0.0 reads
    /// as 1.0.0, the oldest version its field names fit (the two have the same fields).
    let hasMarker: Bool
}

let fuzzRoundTripFormats: [FuzzRoundTripFormat] = [
    FuzzRoundTripFormat(name: "json", format: .json, layout: .rows, hasMarker: true),
    FuzzRoundTripFormat(name: "jsonl", format: .jsonl, layout: .rows, hasMarker: false),
    FuzzRoundTripFormat(name: "csv", format: .csv, layout: .rows, hasMarker: false),
    FuzzRoundTripFormat(name: "csv-tables", format: .csv, layout: .tables, hasMarker: false),
    FuzzRoundTripFormat(name: "tsv", format: .tsv, layout: .rows, hasMarker: false),
    FuzzRoundTripFormat(name: "tsv-tables", format: .tsv, layout: .tables, hasMarker: false),
    FuzzRoundTripFormat(name: "xml", format: .xml, layout: .rows, hasMarker: true),
    FuzzRoundTripFormat(name: "yaml", format: .yaml, layout: .rows, hasMarker: true),
    FuzzRoundTripFormat(name: "sqlite", format: .sqlite, layout: .rows, hasMarker: true),
]

func fuzzRoundTrip(_ input: UnsafeBufferPointer<UInt8>) {
    let path = fuzzPlace(input, format: .json, shape: .file)
    var trips: [ModelObject] = []
    let detection: Detection
    do {
        var reader = try FormatFactory.makeReader(.file(path), format: .json, options: ReadOptions())
        while let item = try reader.next() {
            if case .trip(let record) = item { trips.append(record.object) }
        }
        detection = reader.detection
    } catch let error as TripError {
        fuzzNote("the json reader refused the input: \(error.message)")
        return
    } catch {
        fuzzFinding("the json reader threw a \(type(of: error)), not a TripError: \(error)")
    }
    // The objects are in the layout of the version they were built in (a marker after the records may
    // name another, which the pipeline maps them to; here they are written as they were built).
    let version = detection.recordsVersion ?? detection.version ?? TripMigrationPlan.currentSchema.versionIdentifier
    guard let schema = TripMigrationPlan.schema(for: version) else { fuzzFinding("the json reader detected unknown version \(version)") }
    trips = fuzzOnePerName(trips, schema: schema)
    for format in fuzzRoundTripFormats {
        fuzzRoundTrip(trips, schema: schema, through: format)
    }
}

/// The first trip of each name where the schema says names are unique: what the pipeline's dedupe
/// leaves a writer (a store would merge the rest itself).
func fuzzOnePerName(_ trips: [ModelObject], schema: any VersionedSchema.Type) -> [ModelObject] {
    guard let unique = schema.rootEntity.attributes.firstIndex(where: \.isUnique) else { return trips }
    var seen = Set<Value>()
    return trips.filter { seen.insert($0.attributes[unique]).inserted }
}

/// Writes the trips in one format, reads them back and compares.
func fuzzRoundTrip(_ trips: [ModelObject], schema: any VersionedSchema.Type, through f: FuzzRoundTripFormat) {
    let out = fuzzScratch("out-\(f.name)" + (f.layout == .tables ? "" : ".\(f.format.extensions.first ?? f.format.rawValue)"))
    fuzzRemove(out)
    defer { fuzzRemove(out) }
    let refusal = fuzzExpectedRefusal(trips, format: f)
    do {
        var writer = try FormatFactory.makeWriter(.file(out), format: f.format,
                                                  options: WriteOptions(schema: schema, csvLayout: f.layout))
        for trip in trips { try writer.write(trip) }
        try writer.finish()
    } catch let error as TripError {
        if let refusal, error.kind == .data { fuzzNote("\(f.name) at \(schema.versionIdentifier): refused, as it must (\(refusal)): \(error.message)"); return }
        fuzzFinding("the \(f.name) writer refused \(trips.count) trip(s) at \(schema.versionIdentifier): \(error.message)")
    } catch {
        fuzzFinding("the \(f.name) writer threw a \(type(of: error)), not a TripError: \(error)")
    }
    if let refusal { fuzzFinding("the \(f.name) writer wrote trips holding \(refusal), which it must refuse") }

    var back: [ModelObject] = []
    let detection: Detection
    do {
        var reader = try FormatFactory.makeReader(.file(out), format: f.format, options: ReadOptions())
        while let item = try reader.next() {
            switch item {
            case .trip(let record): back.append(record.object)
            case .rejected(let rejection):
                fuzzFinding("the \(f.name) reader rejects what its writer wrote at \(schema.versionIdentifier): \(rejection.origin): \(rejection.reason)")
            }
        }
        detection = reader.detection
    } catch {
        fuzzFinding("the \(f.name) reader cannot read what its writer wrote at \(schema.versionIdentifier): \(error)")
    }

    let written = schema.versionIdentifier
    let expectedVersions: [SchemaVersion?] = trips.isEmpty && !f.hasMarker ? [nil]
        : !f.hasMarker && written == SchemaVersion(2, 0, 0) ? [SchemaVersion(1, 0, 0)] : [written]
    if !expectedVersions.contains(detection.recordsVersion ?? detection.version) {
        fuzzFinding("the \(f.name) output written at \(written) reads as \(detection.version.map(\.description) ?? "no version") by \(detection.evidence)")
    }
    // Compared as written: no format needs forgiving beyond the refusal and the version above. (CSV
    // and TSV read an empty cell back as the empty string written; the builder reads an
    // accommodation of nothing but defaults as none, so the JSON reader never yields one.)
    let expected = trips
    guard back.count == expected.count else {
        fuzzFinding("the \(f.name) round trip at \(written) wrote \(expected.count) trip(s) and read back \(back.count)")
    }
    for (i, (a, b)) in zip(expected, back).enumerated() where a != b {
        fuzzFinding("the \(f.name) round trip at \(written) changed trip \(i + 1):\n  wrote \(fuzzDescribe(a))\n  read  \(fuzzDescribe(b))")
    }
    fuzzNote("\(f.name) at \(written): \(back.count) trip(s) back as written")
}

// MARK: - What a format cannot say

/// Why a writer must refuse these trips, if it must: XML 1.0 cannot carry the control characters
/// other than tab, line feed and carriage return, nor U+FFFE and U+FFFF, in any form (not even as
/// character references), and the XML writer refuses a trip holding one (XMLRecordWriter's doc).
func fuzzExpectedRefusal(_ trips: [ModelObject], format: FuzzRoundTripFormat) -> String? {
    guard format.format == .xml else { return nil }
    for trip in trips {
        for s in fuzzStrings(trip) {
            for u in s.unicodeScalars where (u.value < 0x20 && u != "\t" && u != "\n" && u != "\r") || u.value == 0xFFFE || u.value == 0xFFFF {
                return "U+" + String(u.value, radix: 16, uppercase: true)
            }
        }
    }
    return nil
}

/// Every string value of a trip and its related objects.
func fuzzStrings(_ object: ModelObject) -> [String] {
    object.attributes.compactMap(\.stringValue) + object.relationships.flatMap { $0.objects.flatMap(fuzzStrings) }
}

/// A trip on one line, strings escaped, for a finding's message.
func fuzzDescribe(_ object: ModelObject) -> String {
    let values = object.attributes.map { v -> String in
        switch v {
        case .null: return "null"
        case .string(let s): return s.debugDescription
        case .date(let t): return "\(t.iso8601) (\(t.milliseconds) ms)"
        case .bool(let b): return "\(b)"
        case .int(let n): return "\(n)"
        }
    }
    let related = object.relationships.map { r -> String in
        switch r {
        case .toOne(let o): return o.map(fuzzDescribe) ?? "none"
        case .toMany(let list): return "[" + list.map(fuzzDescribe).joined(separator: ", ") + "]"
        }
    }
    return "(" + (values + related).joined(separator: ", ") + ")"
}
