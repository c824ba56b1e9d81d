// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "tripconv",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "tripconv", targets: ["tripconv"]),
        .executable(name: "tripgen", targets: ["tripgen"]),
        .executable(name: "tripconv-swift-model", targets: ["tripconv-swift-model"]),
        .library(name: "TripKit", targets: ["TripKit"]),
        .library(name: "TripFormats", targets: ["TripFormats"]),
        .library(name: "TripSwiftModel", targets: ["TripSwiftModel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Reads an app's model and migration plan from its Swift source (issue 27); only the
        // tripconv-swift-model executable links it (docs/DESIGN-NOTES.md, "A model read from Swift source").
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // `swift package generate-documentation --target TripFormats` (and TripKit): the DocC catalogs of the
        // library products. A command plugin: no target builds or links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C libraries, linked through pkg-config; Debian's -dev packages provide them.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // Compressed inputs (issue 17): gzip through zlib, which checks each member's CRC; bzip2, xz
        // and zstd through libarchive.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Headers only (libpq-dev, libarchive-dev): libpq and libarchive are opened when a run needs
        // them (SharedLibrary.swift), not linked, so that a run without PostgreSQL or an archive does
        // not load them and the 25 others they bring (docs/DESIGN-NOTES.md, "Libraries loaded on
        // first use"). No pkgConfig: SwiftPM would link its libs; the headers are in /usr/include.
        .systemLibrary(name: "CLibPQ"),
        .systemLibrary(name: "CLibArchive"),
        // libxml2's headers (libxml2-dev), opened the same way (LibXML2.swift): a C target, whose
        // include/ every dependent gets with -I; include/libxml links to /usr/include/libxml2/libxml.
        .target(name: "CLibXML2"),

        // Threads, their one condition variable, and the hand-off of batches between two threads:
        // pthreads behind `package` access, outside the domain (docs/DESIGN-NOTES.md, "The map").
        .target(name: "TripThreads"),
        // The domain: schemas, the plan, migration, dedupe, the pipeline. No file I/O, no C.
        .target(name: "TripKit", dependencies: ["TripThreads"]),
        // One folder per format, each a reader and a writer, and the factory.
        .target(name: "TripFormats", dependencies: ["TripKit", "TripThreads", "CSQLite", "CLibXML2", "CYAML", "CLibPQ", "CZlib", "CLibArchive"]),
        // The executable: the only target that imports ArgumentParser.
        .executableTarget(name: "tripconv", dependencies: [
            "TripKit", "TripFormats", "TripThreads",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // An app's `@Model` classes, `VersionedSchema`s and `SchemaMigrationPlan` read from its Swift
        // source into a `ModelPlan`, and the executable tripconv runs for `--model app/Sources`: a
        // process of its own, so that swift-syntax's types cost every other run nothing.
        .target(name: "TripSwiftModel", dependencies: [
            "TripKit",
            .product(name: "SwiftSyntax", package: "swift-syntax"),
            .product(name: "SwiftParser", package: "swift-syntax"),
        ]),
        .executableTarget(name: "tripconv-swift-model", dependencies: ["TripKit", "TripFormats", "TripSwiftModel"]),

        // A deterministic generator of large trip exports, for the benchmark and large tests.
        .executableTarget(name: "tripgen", dependencies: ["TripKit", "TripFormats"]),

        // What the test targets share: the seeded generator, arbitrary trips, paths, external tools.
        .target(name: "TripTestSupport", dependencies: ["TripKit"], path: "Tests/TripTestSupport"),

        .testTarget(name: "TripKitTests", dependencies: ["TripKit", "TripThreads", "TripTestSupport"]),
        .testTarget(name: "TripFormatsTests", dependencies: ["TripKit", "TripFormats", "TripThreads", "TripTestSupport"]),
        .testTarget(name: "TripSwiftModelTests", dependencies: ["TripKit", "TripSwiftModel", "TripTestSupport"]),
        .testTarget(name: "TripCLITests", dependencies: ["TripKit", "TripTestSupport"], exclude: ["Cases"]),
    ]
)
