import TripKit

/// tripconv's runs for a Swift program that does without the command line: a server importing its
/// users' exports, an app's migration test in its CI on Linux. Each call is what one `tripconv`
/// command does, with the same checks, errors (`TripError`, whose `kind` is the exit status the man
/// page lists) and accounting; it prints nothing.
///
/// ```swift
/// import TripFormats
///
/// // Trips of any format and version, detected, migrated and deduplicated, to JSON Lines.
/// let summary = try TripConverter.convert(["samples/trips-v1.csv"], to: .file("trips.jsonl"))
/// print(summary.line(elapsedSeconds: 0))
///
/// // A store's model: its model cache, its tables, an Xcode model, model JSON or Swift source.
/// let store = try TripConverter.loadModel("samples/coredata-v3.store")
/// print(store.source, store.model.entities.map(\.name))
/// ```
///
/// The types it calls are public too, for a program that needs more than one call: `RunInput.resolve`
/// (inputs named as on the command line), `RunOptions.conversion(to:)` and `Conversion` (a SampleTrips
/// run), `ObjectConversion` (a run over another app's objects), `StoreModel`, `ModelPlanSource`.
public enum TripConverter {
    /// SampleTrips trips from `inputs` (paths, directories, archives, PostgreSQL addresses, `-` for
    /// standard input, as `tripconv convert` names them; the format from the extension, else the first
    /// bytes, unless `from` says), each detected and migrated on its own, deduplicated across all of
    /// them, to `output`, as `tripconv convert` with `options` runs them. The output's format is
    /// `options.outputFormat`, else the one `output`'s extension names, else (standard output) JSON
    /// Lines; the output is complete or absent. A directory with no file to read goes to `foundNothing`.
    public static func convert(_ inputs: [String], from: Format? = nil, to output: OutputLocation = .standardOutput,
                               options: RunOptions = RunOptions(), observer: some RunObserver = .silent,
                               foundNothing: (_ directory: String, _ passedOver: Int) -> Void = { _, _ in }) throws -> ConversionSummary {
        let resolved = try RunInput.resolve(inputs, from: from, options: options.readOptions, foundNothing: foundNothing)
        let conversion = try options.conversion(to: output)
        return try conversion.run(resolved, observer: observer)
    }

    /// The objects of another app's model in `input` (a Core Data or SwiftData store, read with the
    /// model it carries, or `model`'s; tripconv's SQLite or PostgreSQL store of one; or an export in
    /// `format`, else the one its extension names, read with `model`'s model) to `output` in
    /// `outputFormat`, as `tripconv convert --model` runs one input: every object written, or set
    /// aside to `setAside` with its reason. When `model` is an app's Swift source or plan JSON, the
    /// input is read at `sourceVersion` (else its store's version, else the version its data shows) and
    /// the plan's stages run to `targetVersion` (else the current one), duplicates resolved under `policy`.
    public static func convertObjects(_ input: String, format: Format? = nil, model: String? = nil, to output: OutputLocation,
                                      as outputFormat: Format, options: RunOptions = RunOptions(),
                                      sourceVersion: String? = nil, targetVersion: String? = nil, policy: DeduplicationPolicy = .merge,
                                      setAside: (SetAsideRecord) throws -> Void = { _ in }) throws -> ObjectConversionSummary {
        try ObjectConversion(input: input, format: format, modelPath: model, options: options,
                             sourceVersion: sourceVersion, targetVersion: targetVersion, policy: policy)
            .run(to: output, format: outputFormat, setAside: setAside)
    }

    /// The version of `plan` the objects of `input` are at, with the evidence, as `tripconv detect
    /// --model` tells it: a store's marker, else the names and kinds its data shows.
    public static func detectVersion(_ input: String, format: Format? = nil, plan: ModelPlan,
                                     options: RunOptions = RunOptions()) throws -> ModelVersionVerdict {
        try ObjectVersionDetection.verdict(input: input, format: format, plan: plan, options: options)
    }

    /// The model at `path`, as `tripconv schema --model PATH` reads it: a Core Data or SwiftData store
    /// (its model cache, else its tables; with its metadata, entity numbers and objects counted),
    /// tripconv's SQLite or PostgreSQL store of objects (its model table), an `.xcdatamodeld` or
    /// `.xcdatamodel` folder or its `contents`, model JSON, or the current version of an app's Swift
    /// source or plan JSON (all its versions: `loadPlan`). A PostgreSQL store's tables are looked for in
    /// `pgSchema` (the search path's first when nil).
    public static func loadModel(_ path: String, pgSchema: String? = nil) throws -> StoreModel {
        try ObjectConversion.model(at: path, pgSchema: pgSchema, counting: true)
    }

    /// Every version of an app's model and its migration plan, with each stage's derived steps: from
    /// its Swift source (a `.swift` file or a folder, read by the `tripconv-swift-model` program beside
    /// the running one, else `$TRIPCONV_SWIFT_MODEL`, else on `PATH`) or plan JSON.
    public static func loadPlan(_ path: String) throws -> ModelPlan { try ModelPlanSource.read(path) }
}
