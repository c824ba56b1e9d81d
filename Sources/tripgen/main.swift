// tripgen: a deterministic generator of trip exports, for benchmarks and large tests.
//
//   tripgen --trips N [--version 1.0.0|2.0.0|3.0.0] [--duplicates 0.10] [--nasty 0.02] [--seed S]
//           [--to FORMAT] [-o FILE]
//   tripgen --drain-coredata STORE   (reads a .ci/bench/coredata_graph.py store; see DrainCoreData.swift)
//
// N trips at the chosen schema version; the given share of them repeat an earlier trip's name with a
// differing bucket list; 0-5 bucket-list items and 0-1 accommodation per trip; about 2 % of strings
// carry nasty text (quotes, separators, newlines, non-ASCII). The same seed gives the same bytes.
import TripKit
import TripFormats
#if canImport(Glibc)
import Glibc
#endif

struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }
}

/// Prints `message` on standard error and exits with `status`: 64 (a usage error) unless a caller says,
/// as tripconv's man page lists them (65 bad data, 66 a missing input, 74 an I/O error).
func fail(_ message: String, status: Int32 = 64) -> Never {
    let text = "tripgen: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

struct Settings {
    var trips = 1000, version = SchemaVersion(3, 0, 0), duplicates = 0.10, nasty = 0.02, seed: UInt64 = 1
    var format = Format.jsonl, output: String? = nil

    init(_ arguments: [String]) {
        var args = arguments[...]
        while let a = args.popFirst() {
            func value() -> String { guard let v = args.popFirst() else { fail("\(a) needs a value") }; return v }
            func parsed<T>(_ make: (String) -> T?) -> T {
                guard let v = make(value()) else { fail("\(a) takes a different value") }
                return v
            }
            switch a {
            case "--trips": trips = parsed { Int($0) }
            case "--version": version = parsed { SchemaVersion($0) }
            case "--duplicates": duplicates = parsed { Double($0) }
            case "--nasty": nasty = parsed { Double($0) }
            case "--seed": seed = parsed { UInt64($0) }
            case "--to": format = parsed { Format(name: $0) }
            case "-o": output = value()
            case "-h", "--help":
                print("usage: tripgen --trips N [--version V] [--duplicates SHARE] [--nasty SHARE] [--seed S] [--to FORMAT] [-o FILE]")
                exit(0)
            default: fail("unknown argument \(a)")
            }
        }
        if output == "-" { output = nil }
        if let o = output, let f = Format(path: o) { format = f }
    }
}

let words = ["Lisbon", "Kyoto", "Reykjavík", "Cape Town", "Oaxaca", "Tromsø", "Hanoi", "Marrakesh", "Quebec", "Bruges",
             "Valparaíso", "Tbilisi", "Hobart", "Cusco", "Zanzibar", "Ljubljana", "Porto", "Kraków", "Seville", "Busan"]
let nastyBits = ["\"quoted\"", "comma, separated", "tab\tseparated", "line\nbreak", "semi;colon", "ünïcødé ✈️", " padded ",
                 "no", "=SUM(A1)", "- dash", "a: b # c", "<tag>&amp;", "CR\r\nLF", "'single'", "null", "2024-05-01"]

struct Generator {
    var rng: SplitMix64
    let settings: Settings
    let schema: any VersionedSchema.Type

    mutating func text(_ base: String) -> String {
        if rng.chance(settings.nasty) { return base + " " + nastyBits[rng.below(nastyBits.count)] }
        return base
    }

    mutating func word() -> String { words[rng.below(words.count)] }

    mutating func makeTrip(name: String) -> ModelObject {
        let start = Int64(1_700_000_000_000) + Int64(rng.below(60_000_000)) * 1000 + (rng.chance(0.2) ? Int64(rng.below(1000)) : 0)
        let end = start + Int64(1 + rng.below(20)) * 86_400_000
        var attributes: [Value] = schema.rootEntity.attributes.map { $0.defaultValue ?? .null }
        attributes[0] = .string(name)
        attributes[1] = .string(text(word()))
        attributes[2] = .date(Timestamp(milliseconds: start))
        attributes[3] = .date(Timestamp(milliseconds: end))
        var items: [ModelObject] = []
        for i in 0..<rng.below(6) {
            let title = text("Item \(i + 1) \(word())")
            let details = rng.chance(0.3) ? "" : text("Details for item \(i + 1), book ahead")
            items.append(ModelObject(attributes: [.string(title), .string(details), .bool(rng.chance(0.4)), .bool(rng.chance(0.6))]))
        }
        var accommodation: ModelObject? = nil
        if rng.chance(0.5) {
            let address = text("\(rng.below(999) + 1) Main Street")
            let place = text("Hotel \(word())")
            accommodation = ModelObject(attributes: [.string(address), .string(place)])
        }
        return ModelObject(attributes: attributes, relationships: [.toMany(items), .toOne(accommodation)])
    }

    mutating func run() throws {
        var writer = try FormatFactory.makeWriter(OutputLocation(settings.output), format: settings.format,
                                                  options: WriteOptions(schema: schema, policy: .merge))
        var names: [String] = []
        names.reserveCapacity(settings.trips)
        for i in 0..<settings.trips {
            let name: String
            if !names.isEmpty, rng.chance(settings.duplicates) {
                name = names[rng.below(names.count)]
            } else {
                name = text("Trip \(i + 1) to \(word())")
                names.append(name)
            }
            try writer.write(makeTrip(name: name))
        }
        try writer.finish()
    }
}

if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--drain-coredata" { drainCoreData(CommandLine.arguments[2]) }
let settings = Settings(Array(CommandLine.arguments.dropFirst()))
guard let schema = TripMigrationPlan.schema(for: settings.version) else { fail("unknown version \(settings.version)") }
var generator = Generator(rng: SplitMix64(state: settings.seed), settings: settings, schema: schema)
do {
    try generator.run()
} catch let e as TripError {
    fail(e.message)
} catch {
    fail("\(error)")
}
