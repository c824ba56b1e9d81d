import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

@Suite("YAMLRoundTrip")
struct YAMLRoundTripTests {
    typealias S = YAMLTestSupport

    static let example: [ModelObject] = [
        S.trip("Paris", "Paris, France", "2024-05-01T09:30:00Z", "2024-05-08T18:00:00.250Z",
               items: [S.item("Louvre", details: "Book: online #1", hasReservation: true),
                       S.item("no", details: "line one\nline two\n", isInPlan: true)],
               accommodation: S.accommodation("12 Rue de Rivoli", "Hôtel du Louvre")),
        S.trip("2024-05-01", " Lisbon ", "1999-12-31T23:59:59.999Z", "2000-01-01T00:00:00Z"),
        S.trip("~", "", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", items: [S.item("'quoted' \"too\"")]),
    ]

    @Test("an example round-trips through the writer and the reader")
    func example() throws {
        let path = try S.writeFile(Self.example)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try S.readFile(path)
        #expect(r.rejections.isEmpty)
        #expect(r.objects == Self.example)
        #expect(r.detection.version == SchemaVersion(3, 0, 0))
        #expect(r.trips.map { $0.origin.line } == [3, 19, 25])
    }

    @Test("a 1.0.0 file round-trips at 1.0.0")
    func exampleV1() throws {
        let trips = [S.tripV1("Rome", "Italy", "2023-04-01T08:00:00Z", "2023-04-03T08:00:00Z", items: [S.item("Colosseum")]),
                     S.tripV1("Rome", "Italy, again", "2023-05-01T08:00:00Z", "2023-05-03T08:00:00Z")]
        let path = try S.writeFile(trips, schema: TripSchemaV1.self)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try S.readFile(path)
        #expect(r.objects == trips)
        #expect(r.detection.version == SchemaVersion(1, 0, 0))
    }

    @Test("arbitrary trips round-trip exactly", arguments: [1, 2, 3, 4] as [UInt64])
    func property(seed: UInt64) throws {
        var generator = ArbitraryTrips.yaml(seed: seed)
        let trips = (0..<150).map { _ in generator.trip() }
        let path = try S.writeFile(trips)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try S.readFile(path)
        #expect(r.rejections.isEmpty, "seed \(seed): \(r.rejections.prefix(3))")
        #expect(r.objects.count == trips.count)
        for (i, (got, want)) in zip(r.objects, trips).enumerated() where got != want {
            Issue.record("seed \(seed), trip \(i): read \(got), wrote \(want)")
            break
        }
    }

    // MARK: - PyYAML

    /// Our trips as PyYAML's safe_load gives them back, through `pyyamlToJSON`.
    static func expectedTree(_ trips: [ModelObject], version: String = "3.0.0") -> YAMLValue {
        func value(_ v: Value) -> YAMLValue {
            switch v {
            case .null: return .null
            case .string(let s): return .string(s)
            case .bool(let b): return .bool(b)
            case .int(let n): return .number(Double(n))
            case .date(let t): return .mapping(["$date": .number(Double(t.milliseconds))])
            }
        }
        func object(_ o: ModelObject, _ names: [String]) -> YAMLValue {
            .mapping(Dictionary(uniqueKeysWithValues: zip(names, o.attributes.map(value))))
        }
        let itemNames = ["title", "details", "hasReservation", "isInPlan"]
        return .mapping([
            "schemaVersion": .string(version),
            "trips": .sequence(trips.map { t in
                var fields: [String: YAMLValue] = [:]
                for (name, v) in zip(["name", "destination", "startDate", "endDate"], t.attributes) { fields[name] = value(v) }
                fields["bucketList"] = .sequence(t.relationships[0].objects.map { object($0, itemNames) })
                fields["livingAccommodation"] = t.relationships[1].objects.first.map { object($0, ["address", "placeName"]) } ?? .null
                return .mapping(fields)
            }),
        ])
    }

    /// Python's `conv`: a loaded YAML value in the JSON shape `expectedTree` gives (dates as
    /// `{"$date": ms}`, days as `{"$day": text}`, keys and string subclasses as plain strings).
    static let pythonConvert = """
    import sys, json, datetime
    def conv(x):
        if isinstance(x, datetime.datetime):
            if x.tzinfo is not None:
                x = x.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            return {"$date": (x - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1)}
        if isinstance(x, datetime.date):
            return {"$day": str(x)}
        if isinstance(x, dict):
            return {str(k): conv(v) for k, v in x.items()}
        if isinstance(x, list):
            return [conv(v) for v in x]
        if isinstance(x, str):
            return str(x)
        return x

    """

    static let pyyamlToJSON = pythonConvert + """
    import yaml
    with open(sys.argv[1], encoding="utf-8") as f:
        print(json.dumps(conv(yaml.safe_load(f)), ensure_ascii=True))
    """

    @Test("PyYAML's safe_load reads our output as exactly the values written, strings staying strings",
          .enabled(if: S.hasPyYAML, "python3 with PyYAML is not installed"), arguments: [11, 12, 13] as [UInt64])
    func pyyamlReadsOurOutput(seed: UInt64) throws {
        var generator = ArbitraryTrips.yaml(seed: seed)
        var trips = Self.example
        trips += (0..<200).map { _ in generator.trip() }
        let path = try S.writeFile(trips)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try S.runPython(Self.pyyamlToJSON, arguments: [path])
        try #require(result.status == 0, "PyYAML failed: \(result.error)")
        let got = try YAMLTestJSON.parseAll(result.output)
        let want = Self.expectedTree(trips)
        guard case .mapping(let g)? = got.first, case .sequence(let gotTrips)? = g["trips"],
              case .mapping(let w) = want, case .sequence(let wantTrips)? = w["trips"] else {
            Issue.record("unexpected shape: \(result.output.prefix(200))")
            return
        }
        #expect(g["schemaVersion"] == .string("3.0.0"))
        #expect(gotTrips.count == wantTrips.count)
        for (i, (a, b)) in zip(gotTrips, wantTrips).enumerated() where a != b {
            Issue.record("seed \(seed), trip \(i): PyYAML read \(a), we wrote \(b)")
            break
        }
    }

    static let pyyamlWriter = """
    import sys, json, random, datetime, yaml
    rng = random.Random(int(sys.argv[2]))
    words = ["no", "yes", "on", "off", "y", "n", "true", "null", "~", "", "1_000", "0x1F", "0o17", "1e3", ".inf",
             "2024-05-01", "12:30", "- x", "? y", "a: b", "a #b", "'q'", '"d"', "|", ">", "!t", "&a", "*a", "%", "@",
             " lead", "trail ", "l1\\nl2", "end\\n", "cr\\r", "\\ttab", "Zürich", "東京", "🧳", "\\u0085", "\\u2028",
             "\\ufeff", "\\x01", "\\x7f", "\\x9f", "\\\\back", "a" * 120, "word " * 30]
    def text():
        k = rng.randrange(4)
        if k == 0:
            return rng.choice(words)
        if k == 1:
            return rng.choice(words) + rng.choice(words)
        pool = [chr(rng.randrange(0x20, 0x7f)) for _ in range(6)] + ["\\n", "\\r", "\\t", " ", ":", "#", "é", "ß",
                "\\u4e2d", "\\U0001F600", "\\u00a0", "\\u0300"]
        return "".join(rng.choice(pool) for _ in range(rng.randrange(0, 25)))
    def when():
        ms = rng.randrange(-2208988800000, 4102444799999)
        if rng.randrange(2) == 0:
            ms -= ms % 1000
        return datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
    trips = []
    for _ in range(int(sys.argv[3])):
        items = [{"title": text(), "details": text(), "hasReservation": rng.random() < 0.5, "isInPlan": rng.random() < 0.5}
                 for _ in range(rng.choice([0, 0, 1, 2, 5]))]
        acc = None
        if rng.random() < 0.6:
            acc = {"address": text(), "placeName": text() or "x"}
        trips.append({"name": text(), "destination": text(), "startDate": when(), "endDate": when(),
                      "bucketList": items, "livingAccommodation": acc})
    doc = {"schemaVersion": "3.0.0", "trips": trips}
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, allow_unicode=rng.random() < 0.5, sort_keys=False, width=rng.choice([20, 80, 1000]),
                       default_flow_style=rng.choice([False, None]))
    def conv(x):
        if isinstance(x, datetime.datetime):
            return {"$date": (x - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(milliseconds=1)}
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        if isinstance(x, list):
            return [conv(v) for v in x]
        return x
    # What PyYAML itself reads back is the expectation: its emitter writes a NEL inside single quotes
    # as a line break, which every YAML 1.1 reader (PyYAML's own too) folds into a space.
    with open(sys.argv[1], encoding="utf-8") as f:
        print(json.dumps(conv(yaml.safe_load(f)), ensure_ascii=True))
    """

    @Test("our reader reads what PyYAML's safe_dump writes", .enabled(if: S.hasPyYAML, "python3 with PyYAML is not installed"),
          arguments: [21, 22, 23, 24] as [UInt64])
    func weReadPyYAMLOutput(seed: UInt64) throws {
        let path = S.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try S.runPython(Self.pyyamlWriter, arguments: [path, String(seed), "150"])
        try #require(result.status == 0, "PyYAML failed: \(result.error)")
        let want = try YAMLTestJSON.parseAll(result.output).first
        let r = try S.readFile(path)
        #expect(r.rejections.isEmpty, "\(r.rejections.prefix(3))")
        let got = Self.expectedTree(r.objects)
        guard case .mapping(let g) = got, case .sequence(let gotTrips)? = g["trips"],
              case .mapping(let w)? = want, case .sequence(let wantTrips)? = w["trips"] else {
            Issue.record("unexpected shape")
            return
        }
        #expect(gotTrips.count == wantTrips.count)
        for (i, (a, b)) in zip(gotTrips, wantTrips).enumerated() where a != b {
            Issue.record("seed \(seed), trip \(i): we read \(a), PyYAML wrote \(b)")
            break
        }
    }
}
