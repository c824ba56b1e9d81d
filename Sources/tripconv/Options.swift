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

    var readOptions: ReadOptions {
        ReadOptions(dateEpoch: dateEpoch, sourceVersion: sourceVersion)
    }
}
