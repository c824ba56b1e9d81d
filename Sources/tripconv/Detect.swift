import ArgumentParser
import TripKit
import TripFormats

/// `tripconv detect`: what each input is.
struct Detect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each input's format, version and counts.")

    @Argument(help: ArgumentHelp("Input files or directories; - for standard input.", valueName: "input"))
    var inputs: [String] = []

    @OptionGroup var reading: ReadingOptions

    @Flag(name: .long, help: "Print a JSON array with one object per input.")
    var json = false

    func run() throws {
        try runReportingErrors {
            let inputs = try InputResolver.resolve(self.inputs, from: reading.from)
            var nodes: [JSONText.Node] = []
            var lines: [String] = []
            for input in inputs {
                let report = try InputReport(input, options: reading.readOptions)
                nodes.append(report.node)
                lines.append(report.line)
            }
            let text = json ? JSONText.Node.array(nodes).render(indent: 2) + "\n" : lines.map { $0 + "\n" }.joined()
            writeAll(1, text)
        }
    }
}

/// The facts `detect` reports of one input.
struct InputReport {
    var name: String
    var detection: Detection
    var trips = 0
    var rejected = 0
    var repeatedNames = 0

    init(_ input: ResolvedInput, options: ReadOptions) throws {
        name = input.location.name
        var reader = try FormatFactory.makeReader(input.location, format: input.format, options: options)
        var counts: [String: Int] = [:]
        var nameSlot: Int?
        var layout: SchemaVersion?
        while let item = try reader.next() {
            switch item {
            case .trip(let record):
                trips += 1
                if nameSlot == nil || layout != (reader.detection.recordsVersion ?? reader.detection.version) {
                    layout = reader.detection.recordsVersion ?? reader.detection.version
                    nameSlot = layout.flatMap { TripMigrationPlan.schema(for: $0)?.rootEntity.attributeIndex("name") }
                }
                if let slot = nameSlot, let n = record.object.attributes[slot].stringValue { counts[n, default: 0] += 1 }
            case .rejected:
                rejected += 1
            }
        }
        detection = reader.detection
        repeatedNames = counts.values.filter { $0 > 1 }.count
    }

    var line: String {
        let version = detection.version.map(\.description) ?? "unknown"
        var s = "\(name): \(detection.format) \(version) (\(detection.evidence)), \(trips) trip\(trips == 1 ? "" : "s"), \(repeatedNames) name\(repeatedNames == 1 ? "" : "s") repeated"
        if rejected > 0 { s += ", \(rejected) bad record\(rejected == 1 ? "" : "s")" }
        return s
    }

    var node: JSONText.Node {
        .object([
            ("input", .string(name)),
            ("format", .string(detection.format)),
            ("version", detection.version.map { .string($0.description) } ?? .null),
            ("evidence", .string(detection.evidence.description)),
            ("trips", .int(trips)),
            ("repeatedNames", .int(repeatedNames)),
            ("badRecords", .int(rejected)),
        ])
    }
}
