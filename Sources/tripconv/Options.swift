import ArgumentParser
import TripKit
import TripFormats

extension SchemaVersion: ExpressibleByArgument {
    public init?(argument: String) {
        guard let v = SchemaVersion(argument), TripMigrationPlan.schema(for: v) != nil else { return nil }
        self = v
    }
    public static var allValueStrings: [String] { TripMigrationPlan.versions.map(\.description) }
}

extension Format: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { Format.allCases.map(\.rawValue) }
}

extension DeduplicationPolicy: ExpressibleByArgument {}
extension DateEpoch: ExpressibleByArgument {}

/// The options every command that reads shares.
struct ReadingOptions: ParsableArguments {
    @Option(name: .long, help: "The input format, where no extension says (\(Format.allCases.map(\.rawValue).joined(separator: ", "))).")
    var from: Format?

    @Option(name: .long, help: ArgumentHelp("Read every input as this schema version instead of detecting it.", valueName: "version"))
    var sourceVersion: SchemaVersion?

    @Option(name: .long, help: ArgumentHelp("How numbers in date fields count time: reference (seconds since 2001-01-01, the default), unix (seconds since 1970), unix-ms.", valueName: "epoch"))
    var dateEpoch: DateEpoch = .reference

    @Option(name: .long, help: ArgumentHelp("The encoding of CSV and TSV inputs (and other text that declares none): utf-8 (the default) or latin1.", valueName: "encoding"))
    var inputEncoding: InputEncoding = .utf8

    @Flag(name: .long, help: "Ignore fields or columns that no schema version declares, instead of rejecting the record.")
    var ignoreUnknown = false

    var readOptions: ReadOptions {
        ReadOptions(dateEpoch: dateEpoch, sourceVersion: sourceVersion, ignoreUnknown: ignoreUnknown,
                    inputEncoding: inputEncoding.rawValue)
    }
}

enum InputEncoding: String, ExpressibleByArgument, CaseIterable {
    case utf8 = "utf-8"
    case latin1

    init?(argument: String) {
        switch argument.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "latin1", "latin-1", "iso-8859-1": self = .latin1
        default: return nil
        }
    }
}

extension CSVLayout: ExpressibleByArgument {}
